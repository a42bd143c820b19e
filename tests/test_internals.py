"""Every accessor of `capture.internals`, the one seam for torch's private state, on the
torch that is installed (CI runs this file on 2.13 and 2.14).

Each test reads live Dynamo objects in the middle of a real compile and checks the
accessor against something public that must agree with it.
"""

from __future__ import annotations

import dis
import re
from pathlib import Path

import pytest
import torch

import capture
from capture import internals
from capture.attempt import AttemptRecorder


def test_this_torch_is_one_the_seam_was_checked_on():
    assert torch.__version__.split("+")[0].rsplit(".", 1)[0] in internals.CHECKED_ON


def test_what_changed_between_releases_is_one_table():
    """The releases and what changed in each are `RELEASES`, and nothing else in the seam
    names a release: adding one is a row there (and the accessors it changes)."""
    assert internals.CHECKED_ON == tuple(internals.RELEASES)
    assert list(internals.CHECKED_ON) == sorted(internals.CHECKED_ON, key=lambda v: tuple(map(int, v.split("."))))
    for release, changes in internals.RELEASES.items():
        for accessor, what in changes.items():
            assert callable(getattr(internals, accessor, None)), (release, accessor)
            assert what.strip(), (release, accessor)
    source = Path(internals.__file__).read_text(encoding="utf-8")
    table = source[source.index("RELEASES: dict"):source.index("CHECKED_ON = tuple(RELEASES)")]
    rest = source.replace(table, "")
    assert not re.findall(r"\b2\.1\d\b", rest), "a release named outside RELEASES"


def test_trackers_that_realize_when_asked_their_type_are_not_asked():
    from torch._dynamo.variables.misc import GetAttrVariable

    call_method = type("CallMethodVariable", (GetAttrVariable,), {"python_type": lambda self: int})
    assert not internals.asks_python_type(call_method)
    assert internals.asks_python_type(type("Other", (GetAttrVariable,), {"python_type": lambda self: int}))


@pytest.fixture
def live(monkeypatch):
    """What the accessors read at every step of a compile of `f` (with an inlined helper)."""
    seen = []
    original = AttemptRecorder.step

    def step(self, tx, inst):
        original(self, tx, inst)
        output = internals.output_of(tx)
        graph = internals.current_graph(output)
        seen.append({
            "inst": inst, "fields": internals.instruction_fields(inst),
            "walked": list(internals.walked_instructions(tx)),
            "parent": internals.parent(tx), "code": internals.code_of(tx),
            "line": internals.current_line(tx), "stack": list(internals.stack(tx)),
            "locals": dict(internals.symbolic_locals(tx)), "output": output,
            "size": internals.graph_size(graph), "nodes": list(graph.nodes),
            "tail": internals.graph_tail(graph), "root": internals.root_graph(output),
            "guards": list(internals.guard_set(output)),
            "guard_count": internals.guard_count(internals.guard_set(output)),
            "trace_id": internals.trace_id(),
        })
        x = seen[-1]["locals"].get("x")
        if x is not None and issubclass(type(x), internals.lazy_tracker_class()):
            before = x.is_realized()
            node = internals.tracker_node(x, internals.lazy_tracker_class())
            seen[-1]["x"] = (before, node, x.is_realized())

    monkeypatch.setattr(AttemptRecorder, "step", step)

    def helper(t):
        return t.cos() * 2

    def f(x, a=None):
        y = x.sin()
        if a is not None:
            y = y + a
        return helper(y) + 1

    torch._dynamo.reset()
    rec = capture.trace(f, torch.ones(3))
    return seen, rec


def test_translator_accessors_agree_with_the_code_being_run(live):
    seen, rec = live
    assert len(seen) == rec.step_count > 10
    for s in seen:
        code = s["code"]
        f = s["fields"]
        assert f.opname == s["inst"].opname and f.opname in dis.opmap
        assert internals.instruction_offset(s["inst"]) == f.offset
        assert s["inst"] in s["walked"]  # the instruction run is one of the walked list's
        assert f.lineno is None or code.co_firstlineno <= f.lineno
        if f.target is not None:
            assert f.target in {i.offset for i in s["walked"]}
        assert s["trace_id"] == "0/0"
    depths = {s["parent"] is not None for s in seen}
    assert depths == {True, False}  # the helper was inlined
    inner = next(s for s in seen if s["parent"] is not None)
    assert internals.code_of(inner["parent"]).co_name == "f" and inner["code"].co_name == "helper"
    assert any("x" in s["locals"] for s in seen) and any(s["stack"] for s in seen)
    # a line, or None before the translator's first line (Dynamo's -1 is never passed on)
    assert all(s["line"] is None or isinstance(s["line"], int) and s["line"] > 0 for s in seen)


def test_graph_accessors_read_size_and_tail_without_walking(live):
    seen, _ = live
    for s in seen:
        assert s["size"] == len(s["nodes"])
        assert s["tail"] is (s["nodes"][-1] if s["nodes"] else s["tail"])
        assert s["root"] is internals.current_graph(s["output"])  # no higher-order op here
    last = seen[-1]
    values = [internals.example_value(n) for n in last["nodes"] if n.op == "call_method"]
    assert values and all(tuple(v.shape) == (3,) for v in values)


def test_guard_accessors_count_and_describe_installed_guards(live):
    seen, _ = live
    counts = [s["guard_count"] for s in seen]
    assert counts == [len(s["guards"]) for s in seen] and counts[-1] > counts[0]
    fields = [internals.guard_fields(g) for g in seen[-1]["guards"]]
    tensor = next(f for f in fields if f.kind == "TENSOR_MATCH")
    assert tensor.source == "L['x']" and tensor.lineno is not None and "sin" in tensor.line
    assert any(f.kind == "GLOBAL_STATE" and f.lineno is None for f in fields)


def test_tracker_accessors_look_through_realized_lazies_only(live):
    seen, _ = live
    lazy = internals.lazy_tracker_class()
    readings = [s["x"] for s in seen if "x" in s]
    assert readings[0][0] is False and readings[-1][0] is True  # realized while tracing
    for before, node, after in readings:
        assert before == after  # reading never realizes
        assert (node is None) == (not before)
    later = next(s["locals"]["x"] for s in seen if "x" in s and s["x"][0])
    node = internals.tracker_node(later, lazy)
    assert node is not None and node.op == "placeholder"
    assert internals.tracker_proxy(later.unwrap()).node is node
    assert internals.tracker_value(later.unwrap()) is internals.ABSENT   # a tensor's holds none
    assert internals.tracker_own_source(later.unwrap()) is not None
    assert callable(internals.base_python_type())


def test_guard_tree_and_its_leaves(live):
    _, rec = live
    c = rec.compiles[0]
    assert c.guard_tree and "TENSOR_MATCH" in c.guard_tree
    leaves = internals.guard_tree_leaves(c.guard_tree)
    assert ("NONE_MATCH", "L['a'] is None") in leaves
    assert all(kind.isupper() and "  # " not in text for kind, text in leaves)


def test_results_skip_reasons_and_guard_trees_of_missing_results():
    assert internals.guard_tree(None) is None and internals.skip_reason(None) is None


def test_compile_flags_bind_by_name():
    from torch._dynamo import convert_frame

    params = list(internals._compile_signature().parameters)
    assert params[:1] == ["code"] and "one_graph" in params and "export" in params
    args = [None] * (params.index("export") - 1)  # every argument before `export`
    args[params.index("one_graph") - 1] = True
    one_graph, export, box = internals.compile_flags(f_code := (lambda: 0).__code__, tuple(args), {
        "export": False, "convert_frame_box": None})
    assert (one_graph, export, box) == (True, False, None)
    assert internals.compile_flags(f_code, (), {}) == (True, True, None)  # missing: strict
    assert convert_frame._compile is not None


def test_exception_accessors_on_real_dynamo_exceptions():
    from torch._dynamo import exc as dynamo_exc

    def breaks(x):
        print("no")
        return x + 1

    torch._dynamo.reset()
    with pytest.raises(dynamo_exc.Unsupported) as info:
        torch.compile(breaks, backend="eager", fullgraph=True)(torch.ones(2))
    e = info.value
    assert internals.is_unsupported(e) and not internals.is_restart(e)
    assert internals.break_type(e) and internals.break_type(e) in internals.break_message(e) + \
        internals.break_type(e)
    frame = internals.user_frame(e)
    assert frame is not None and frame[1] == "breaks" and "print" in frame[2]
    assert internals.is_soft_failure(e)
    assert internals.errors_on_graph_break(None)
    restart = dynamo_exc.RestartAnalysis(restart_reason="because")
    assert internals.is_restart(restart) and internals.restart_reason(restart) == "because"
    assert not internals.recompile_limit_hit(e)
    assert internals.breaks_one_graph(e) and not internals.breaks_one_graph(ValueError("x"))
    assert internals.breaks_one_graph(dynamo_exc.UserError(dynamo_exc.UserErrorType.DYNAMIC_CONTROL_FLOW, "x"))
    frames = internals.break_frames(e)
    assert frames and frames[-1].name == "breaks" and internals.break_frames(ValueError()) == []


def test_dynamic_marks_are_read_by_name():
    t = torch.ones(3, 4)
    assert internals.marked_dims(t, "_dynamo_dynamic_indices") == []
    torch._dynamo.mark_dynamic(t, 1)
    torch._dynamo.mark_dynamic(t, 0)
    assert internals.marked_dims(t, "_dynamo_dynamic_indices") == [0, 1]
    assert internals.DYNAMIC_MARKS["_dynamo_dynamic_indices"] == "mark_dynamic"
    with pytest.raises(ValueError, match="not a mark"):
        internals.marked_dims(t, "shape")


def test_recompile_limit_is_recognised_by_its_type():
    def g(x, n):
        return x + n

    torch._dynamo.reset()
    compiled = torch.compile(g, backend="eager", fullgraph=True, dynamic=False)
    limit, accumulated = internals.recompile_limits()
    assert limit >= 1 and accumulated >= limit
    from torch._dynamo import config

    with config.patch(recompile_limit=1, automatic_dynamic_shapes=False):
        compiled(torch.ones(2), 1)
        with pytest.raises(Exception) as info:
            compiled(torch.ones(3), 2)
    assert internals.recompile_limit_hit(info.value)


def test_resume_offsets_are_read_from_dynamos_names_only():
    assert internals.resume_offset("__resume_at_76_3") == 76
    assert internals.resume_offset("__resume_at_x_3") is None
    assert internals.resume_offset("__compiled_fn_1_abc") is None
    assert internals.refusals("no message starts like this, ever") == 0


def test_counters_resume_functions_and_compiled_functions():
    before = internals.counters()
    assert set(before) == {"unique_graphs", "calls_captured", "graph_breaks"}

    def shout(x):
        y = x * 2
        print("between")
        return y + 1

    torch._dynamo.reset()
    compiled = torch.compile(shout, backend="eager")
    assert internals.compiled_function(compiled) is shout
    assert internals.compiled_function(shout) is shout
    rec_holder = {}
    original = AttemptRecorder.record_bytecode

    def bytecode(self, new_code):
        rec_holder.setdefault("fn", []).extend(
            internals.resume_function(self.output, n) for n in new_code.co_names
            if n.startswith("__resume_at_"))
        original(self, new_code)

    AttemptRecorder.record_bytecode = bytecode
    try:
        with capture.record():
            compiled(torch.ones(2))
    finally:
        AttemptRecorder.record_bytecode = original
    after = internals.counters()
    assert after["unique_graphs"] >= before["unique_graphs"] + 2
    assert after["graph_breaks"] >= before["graph_breaks"] + 1
    fns = rec_holder["fn"]
    assert fns and all(fn.__code__.co_name.startswith("torch_dynamo_resume_in_shout") for fn in fns)


def test_logging_accessors_read_torchs_log_registry():
    import logging

    names = internals.log_names()
    assert {"recompiles", "guards", "dynamo", "bytecode"} <= names
    assert internals.is_log_artifact("recompiles") and not internals.is_log_artifact("dynamo")
    assert "torch._dynamo" in internals.log_qnames()
    loggers = internals.torch_loggers()
    assert logging.getLogger("torch._dynamo") in loggers
    levels, artifacts = internals.log_state()
    assert isinstance(levels, dict) and isinstance(artifacts, set)
    assert not internals.is_torch_log_handler(logging.StreamHandler())
    # set_logs installs torch's own handler on its registered logs; undone with set_logs()
    internals.set_logs(dynamo=logging.INFO)
    try:
        handlers = logging.getLogger("torch._dynamo").handlers
        assert any(internals.is_torch_log_handler(h) for h in handlers)
        artifact = next(lg for lg in loggers if getattr(lg, "artifact_name", None))
        saved = (artifact.level, artifact.propagate, list(artifact.handlers))
        internals.configure_artifact_log(artifact)  # torch's own treatment of a new artifact
        artifact.setLevel(saved[0])
        artifact.propagate = saved[1]
        artifact.handlers[:] = saved[2]
    finally:
        internals.set_logs()


def test_lazy_protocol_accessors_never_realize(live):
    seen, _ = live
    lazy = internals.lazy_tracker_class()
    first = next(s["locals"]["x"] for s in seen if "x" in s and not s["x"][0])
    assert issubclass(type(first), lazy)
    # read now, after the compile: realized while tracing, so only the realized side reads
    assert internals.is_realized(first) is True
    real = internals.unwrap(first)
    assert not issubclass(type(real), lazy) and internals.tracker_source(first) is not None
    assert internals.source_name(internals.tracker_source(first)) == "L['x']"
    assert internals.python_type(real) is torch.Tensor
    assert internals.overrides_python_type(type(real))
    plain = type("Plain", (), {"python_type": internals.base_python_type()})
    assert not internals.overrides_python_type(plain)


def test_an_unrealized_lazy_is_read_without_realizing():
    """A lazy made for a global that the function only passes along stays unrealized: the
    accessors read its type and source and it is still unrealized after."""
    from torch._dynamo.source import LocalSource
    from torch._dynamo.variables.lazy import LazyVariableTracker

    v = LazyVariableTracker.create(3.5, source=LocalSource("n"))
    assert internals.is_realized(v) is False
    assert internals.peek_type(v) is float
    assert internals.source_name(internals.tracker_source(v)) == "L['n']"
    assert internals.is_realized(v) is False


def test_hook_and_log_accessors(live):
    seen, _ = live
    walked = seen[0]["walked"]

    class Tx:
        instructions = walked
        instruction_pointer = 1

    assert internals.next_instruction(Tx()) is walked[1]
    Tx.instruction_pointer = None
    assert internals.next_instruction(Tx()) is None
    from torch._dynamo import exc as dynamo_exc

    e = dynamo_exc.Unsupported("x")
    assert internals.break_logged(e) is False
    e.logged = True
    assert internals.break_logged(e) is True
    before = internals.bytecode_hooks()
    with capture.record():
        during = internals.bytecode_hooks()
    assert len(during) == len(before) + 1 and internals.bytecode_hooks() == before
    import logging

    artifact = next(lg for lg in internals.torch_loggers() if internals.artifact_name(lg))
    assert internals.artifact_name(artifact) in internals.log_names()
    assert internals.artifact_name(logging.getLogger("torch._dynamo")) is None
