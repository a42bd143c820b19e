"""The stages after Dynamo: recorded with after_dynamo=True, linked back, and changing nothing.

Inductor compiles C++ here (seconds a program): run this file under the heavy lock.
The programs live in stages_programs.py, which also runs them in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import capture
from capture import hooks, internals
from capture.stages import became, steps_of
from stages_programs import gelu_block, inputs, mlp, pointwise_chain, W1, W2

HERE = Path(__file__).resolve().parent

STAGE_NAMES = {"aot_joint", "aot_forward", "aot_backward", "inductor_post_grad",
               "inductor_output_code"}


@pytest.fixture
def fresh_compiles():
    """Dynamo reset and Inductor's and AOTAutograd's caches off, so every stage is built."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        yield
    torch._dynamo.reset()


def _record(fn, x, backend, backward=True):
    compiled = torch.compile(fn, backend=backend)
    with capture.record(after_dynamo=True) as rec:
        rec.result = out = compiled(x)
        if backward:
            out.sum().backward()  # Inductor compiles the backward at the first backward()
    return rec


def _stage(c, name, graph=None):
    found = [s for s in c.stages if s.name == name and (graph is None or s.graph == graph)]
    assert found, f"no {name} ({graph}) stage in {[(s.name, s.graph) for s in c.stages]}"
    return found[0]


def _assert_linked(c, stage):
    """Every unit names Dynamo nodes of this compile and the steps that made them, or is invented."""
    names = {n.name for n in c.nodes}
    assert stage.units, f"{stage.name} ({stage.graph}) has no units"
    for u in stage.units:
        if u.invented:
            assert not u.dynamo_nodes and not u.via
            continue
        assert u.dynamo_nodes and set(u.dynamo_nodes) <= names, (stage.name, u)
        assert steps_of(c, u), (stage.name, u)  # made by a step of the trace


def test_mlp_under_inductor_every_node_and_kernel_links_to_a_step(fresh_compiles):
    W1.grad = W2.grad = None
    rec = _record(mlp, inputs("mlp"), "inductor")
    (c,) = rec.compiles
    assert [s.name for s in c.stages] == ["aot_joint", "aot_forward", "aot_backward",
                                          "inductor_post_grad", "inductor_output_code",
                                          "inductor_post_grad", "inductor_output_code"]
    assert [s.graph for s in c.stages] == ["joint", "forward", "backward", "forward", "forward",
                                           "backward", "backward"]
    for stage in c.stages:
        assert not stage.from_cache and stage.code
        _assert_linked(c, stage)
        assert not any(u.invented for u in stage.units)
    forward, backward = _stage(c, "aot_forward"), _stage(c, "aot_backward")
    # relu's output is what the backward needs (threshold_backward): the partitioner saves it
    assert "relu" in forward.saved and "relu" in backward.inputs
    assert forward.unit("relu").dynamo_nodes == ("h",) and forward.unit("relu").via == "from_node"
    # backward nodes link through their forward op's autograd sequence number
    assert backward.unit("le").dynamo_nodes == ("h",) and backward.unit("le").via == "seq_nr"
    assert backward.unit("tangents_1").dynamo_nodes == ("sum_1",)
    assert forward.unit("primals_2").dynamo_nodes == ("l_x_",)
    code = _stage(c, "inductor_output_code", "forward")
    kernels = [u for u in code.units if u.op == "kernel"]
    assert kernels and all(u.name.startswith("cpp_") for u in kernels)
    relu_kernel = next(u for u in kernels if "relu" in u.post_grad_nodes)
    assert relu_kernel.dynamo_nodes == ("h",)
    assert relu_kernel.lines and all(relu_kernel.name in code.code.splitlines()[i - 1]
                                     for i in relu_kernel.lines)
    # the other direction: what the Dynamo node `h` became, in every stage
    assert {s.name for s, _ in became(c, "h")} == STAGE_NAMES
    # gradients as without recording
    expected = torch.autograd.grad(mlp(inputs("mlp")), (W1, W2))
    assert torch.allclose(W1.grad, expected[0]) and torch.allclose(W2.grad, expected[1])


def test_gelu_decomposed_under_aot_eager_decomp_partition(fresh_compiles):
    rec = _record(gelu_block, inputs("gelu_block"), "aot_eager_decomp_partition")
    (c,) = rec.compiles
    assert [s.name for s in c.stages] == ["aot_joint", "aot_forward", "aot_backward"]
    for stage in c.stages:
        _assert_linked(c, stage)
    forward = _stage(c, "aot_forward")
    gelu_node = next(n.name for n in c.nodes if "gelu" in n.target)
    from_gelu = [u for u in forward.units if u.dynamo_nodes == (gelu_node,)]
    assert len(from_gelu) >= 3  # one Dynamo node, decomposed into several ATen ops
    assert {"aten.erf.default", "aten.mul.Tensor"} <= {u.target for u in from_gelu}
    backward = _stage(c, "aot_backward")
    assert any(u.via == "seq_nr" and u.dynamo_nodes == (gelu_node,) for u in backward.units)
    # min-cut recomputes cheap forward ops in the backward rather than saving them
    assert backward.recomputed and set(backward.recomputed) <= {u.name for u in forward.units}


def test_fused_pointwise_chain_is_one_kernel_covering_its_dynamo_nodes(fresh_compiles):
    x = inputs("pointwise_chain")
    rec = _record(pointwise_chain, x, "inductor", backward=False)
    (c,) = rec.compiles
    assert [s.name for s in c.stages] == ["aot_forward", "inductor_post_grad",
                                          "inductor_output_code"]
    assert {s.graph for s in c.stages} == {"inference"}
    for stage in c.stages:
        _assert_linked(c, stage)
    (kernel,) = [u for u in _stage(c, "inductor_output_code").units if u.op == "kernel"]
    computed = [n.name for n in c.nodes if n.op != "placeholder" and n.in_graph and n.op != "output"]
    assert set(kernel.dynamo_nodes) == set(computed)  # many Dynamo nodes, one kernel
    assert list(kernel.dynamo_nodes) == [n for n in computed if n in kernel.dynamo_nodes]
    assert len(steps_of(c, kernel)) >= 5
    assert torch.allclose(rec.result, pointwise_chain(x))


def test_stages_survive_a_json_round_trip_and_print_like_torch_logs(fresh_compiles):
    rec = _record(pointwise_chain, inputs("pointwise_chain"), "inductor", backward=False)
    again = capture.Recording.from_json(rec.to_json())
    assert again.compiles[0].stages == rec.compiles[0].stages
    assert isinstance(again.compiles[0].stages, tuple)
    assert isinstance(again.compiles[0].stages[0], capture.Stage)
    assert isinstance(again.compiles[0].stages[0].units[0], capture.StageUnit)
    text = str(rec.compiles[0])
    assert "===== Forward graph (inference) =====" in text
    assert "Output code (inference):" in text
    kernel = next(u for u in rec.compiles[0].stages[-1].units if u.op == "kernel")
    assert f"{kernel.name:<24} <- " in text and "[origins]" in text
    assert str(again.compiles[0]) == text


def test_without_after_dynamo_nothing_listens_to_the_trace(fresh_compiles):
    compiled = torch.compile(pointwise_chain, backend="aot_eager")
    with capture.record() as rec:
        assert "logging handler on torch.__trace" not in hooks.installed()
        compiled(inputs("pointwise_chain"))
    assert rec.compiles[0].stages == ()
    assert "===== Forward graph" not in str(rec)


def test_eager_backend_has_no_stages(fresh_compiles):
    compiled = torch.compile(pointwise_chain, backend="eager")
    with capture.record(after_dynamo=True) as rec:
        compiled(inputs("pointwise_chain"))
    assert rec.compiles[0].stages == ()


def test_after_dynamo_must_be_a_bool():
    with pytest.raises(TypeError, match="after_dynamo must be True or False"):
        with capture.record(after_dynamo="yes"):
            pass


# -- restoration ---------------------------------------------------------------------


def _trace_handlers():
    from torch._logging._internal import trace_log

    return list(trace_log.handlers), trace_log.level, trace_log.propagate


def test_trace_handler_is_in_place_only_inside_the_block(fresh_compiles):
    before = _trace_handlers()
    with capture.record(after_dynamo=True):
        assert "logging handler on torch.__trace" in hooks.installed()
    assert _trace_handlers() == before
    assert hooks.installed() == []


def test_trace_handler_is_removed_after_an_exception(fresh_compiles):
    before = _trace_handlers()

    def boom(x):
        y = x.sin()
        raise ValueError("user code failed")

    with pytest.raises(ValueError, match="user code failed"):
        with capture.record(after_dynamo=True):
            torch.compile(boom, backend="aot_eager")(torch.ones(2))
    assert _trace_handlers() == before
    assert hooks.installed() == []
    assert not capture.active()


def test_a_failing_stage_reader_is_an_event_not_a_broken_compile(fresh_compiles, monkeypatch):
    import capture.stages as stages_module

    def broken(*args):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(stages_module, "_graph_units", broken)
    compiled = torch.compile(pointwise_chain, backend="aot_eager")
    x = inputs("pointwise_chain")
    with capture.record(after_dynamo=True) as rec:
        out = compiled(x)
    assert torch.allclose(out, pointwise_chain(x))
    assert any(e.kind == "recorder_error" and "reader bug" in e.message for e in rec.events)


# -- fidelity and caches, in fresh processes --------------------------------------------


def _fresh(mode: str, program: str, cache_dir: Path) -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache_dir),
           "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    env.pop("TORCH_LOGS", None)
    env.pop("TORCH_TRACE", None)
    out = subprocess.run([sys.executable, str(HERE / "stages_programs.py"), mode, program],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_recording_the_stages_changes_nothing_dynamo_or_inductor_make(tmp_path):
    """Plain, record() and record(after_dynamo=True), each compiling afresh (own cache dir)."""
    runs = {mode: _fresh(mode, "mlp", tmp_path / mode) for mode in ("plain", "off", "on")}
    plain = runs["plain"]
    assert len(plain["output_code"]) == 2  # forward and backward
    for mode in ("off", "on"):
        for key in ("graphs", "guards", "bytecode", "output_code", "result", "grads"):
            assert runs[mode][key] == plain[key], (mode, key)
    assert runs["off"]["stages"] == [[]]
    stages = runs["on"]["stages"][0]
    # the recorded output code is the code Inductor generated, kernel by kernel
    recorded = [s["code"] for s in stages if s["name"] == "inductor_output_code"]
    from stages_programs import normalise

    assert [normalise(code) for code in recorded] == [c.rstrip("\n") for c in plain["output_code"]]


def _same_code(a: str, b: str) -> bool:
    """Two stages' code alike but for what names where and when it was compiled: the
    `# File:` comments (a cached graph names the program that filled the cache) and the
    compile's AOT id (numbered per process)."""
    def kept(code: str) -> list[str]:
        return [line for line in code.splitlines()
                if not line.strip().startswith("# File:") and not line.startswith("# AOT ID:")]
    return kept(a) == kept(b)


def _assert_every_stage_built_and_linked(stages):
    assert {s["name"] for s in stages} == STAGE_NAMES
    for s in stages:
        assert not s["from_cache"] and s["code"], s["name"]
        assert s["units"] and all(u["dynamo_nodes"] or u["invented"] for u in s["units"])
        assert any(u["dynamo_nodes"] for u in s["units"]), s["name"]


def test_a_warm_cache_is_compiled_past_in_a_second_process(tmp_path):
    """A second and third process over the cache a plain run filled: left on, the caches
    serve the Inductor stages as text that links nowhere; recording after Dynamo compiles
    past them, links every stage, says so, and gets the code the cache holds."""
    plain = _fresh("plain", "mlp", tmp_path)    # fills Inductor's and AOTAutograd's caches
    served = _fresh("served", "mlp", tmp_path)
    built = _fresh("on", "mlp", tmp_path)
    served_stages, built_stages = served["stages"][0], built["stages"][0]
    assert any(s["from_cache"] and not s["units"] for s in served_stages), "the cache was cold"
    assert served["notes"] == []
    _assert_every_stage_built_and_linked(built_stages)
    assert len(built["notes"]) == 1 and "Inductor's FX graph cache" in built["notes"][0]
    for key in ("graphs", "guards", "bytecode", "output_code", "result", "grads"):
        assert built[key] == plain[key], key
    assert [(s["name"], s["graph"]) for s in built_stages] == \
        [(s["name"], s["graph"]) for s in served_stages]
    for b, s in zip(built_stages, served_stages):
        assert _same_code(b["code"], s["code"]), (b["name"], b["graph"])


def test_a_warm_cache_is_compiled_past_in_the_same_process(tmp_path, monkeypatch):
    """A plain compile of the same function, then a recording of it: every stage is built
    and linked, and the caches are on again afterwards."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    x = inputs("mlp")
    torch._dynamo.reset()
    compiled = torch.compile(mlp, backend="inductor")
    compiled(x).backward()                       # fills the caches, forward and backward
    torch._dynamo.reset()
    with monkeypatch.context() as caches_on:      # what the caches serve, left on
        caches_on.setattr(internals, "compile_caches", lambda: [])
        served = _record(mlp, x, "inductor")
    assert any(s.from_cache and not s.units for s in served.compiles[0].stages), "cache was cold"
    torch._dynamo.reset()
    rec = _record(mlp, x, "inductor")
    torch._dynamo.reset()
    c = rec.compiles[0]
    assert [(s.name, s.graph) for s in c.stages] == \
        [(s.name, s.graph) for s in served.compiles[0].stages]
    for b, s in zip(c.stages, served.compiles[0].stages):
        assert _same_code(b.code, s.code), (b.name, b.graph)
    _assert_every_stage_built_and_linked([s.to_dict() for s in c.stages])
    for s in c.stages:
        _assert_linked(c, s)
    assert [e.kind for e in rec.events].count("note") == 1
    assert torch._inductor.config.fx_graph_cache and torch._functorch.config.enable_autograd_cache
    assert hooks.installed() == []


def test_trace_logger_is_left_exactly_as_found_by_a_recording_that_compiles():
    """In a fresh process torch's own lazy trace handler is in place until the first record."""
    script = (
        "import torch, capture, json\n"
        "from torch._logging._internal import trace_log\n"
        "before = [type(h).__name__ for h in trace_log.handlers]\n"
        "with capture.record(after_dynamo=True):\n"
        "    torch.compile(lambda x: x.sin() + 1, backend='aot_eager')(torch.ones(2))\n"
        "after = [type(h).__name__ for h in trace_log.handlers]\n"
        "torch._dynamo.reset()\n"
        "torch.compile(lambda x: x.cos() + 1, backend='aot_eager')(torch.ones(2))\n"
        "print(json.dumps([before, after, [type(h).__name__ for h in trace_log.handlers]]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    env.pop("TORCH_TRACE", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    before, after, later = json.loads(out.stdout.splitlines()[-1])
    # torch's LazyTraceHandler removes itself at the first record, as it would unrecorded
    assert before == ["LazyTraceHandler"] and after == [] and later == []


# -- the two doors ---------------------------------------------------------------------


def test_the_magic_records_the_stages_with_after_dynamo(ipython_shell, fresh_compiles):
    cell = ("f_stages = torch.compile(lambda x: x.sin() * 2, backend='aot_eager')\n"
            "f_stages(torch.ones(3))\n")
    assert ipython_shell.run_cell("%%capture_trace --text --after-dynamo -o with_stages\n"
                                  + cell).success
    assert ipython_shell.run_cell("%%capture_trace --text -o without_stages\n" + cell).success
    with_stages = ipython_shell.user_ns["with_stages"]
    assert [s.name for s in with_stages.compiles[0].stages] == ["aot_forward"]
    assert ipython_shell.user_ns["without_stages"].compiles[0].stages == ()


def test_the_command_line_records_the_stages_with_after_dynamo(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import torch\n"
                      "f = torch.compile(lambda x: x.cos() + 1, backend='aot_eager')\n"
                      "f(torch.ones(3))\n")
    command = Path(sys.executable).parent / "dynamo-lab"
    for flag, expected in (("--after-dynamo", ["aot_forward"]), (None, [])):
        out = tmp_path / f"{flag or 'plain'}.json"
        args = [str(command), "record", *([flag] if flag else []), "-q", "-o", str(out), str(script)]
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        rec = capture.Recording.from_json(out.read_text())
        assert [s.name for s in rec.compiles[0].stages] == expected


def test_every_accessor_in_internals_is_defined_once():
    """Two sections naming one accessor alike: the later silently replaces the earlier."""
    import ast

    tree = ast.parse((HERE.parent / "capture" / "internals.py").read_text())
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert sorted({n for n in names if names.count(n) > 1}) == []
