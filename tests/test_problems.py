"""`explain` on real problems users reported on GitHub, each rebuilt in tests/problems/.

Each problem script's header links its thread and says what a right answer must say; each
test here records the script in-process (the real Dynamo, backend "eager"), asserts those
statements and that no false one is made, and, for each fix the answer gives, applies it
to the script and shows the recompile or the break gone.
"""

from __future__ import annotations

import contextlib
import sys
import io
import json
import runpy
from pathlib import Path

import pytest
import torch

import capture
from capture.explain import compile_answer, explanation, explanation_text

PROBLEMS = Path(__file__).parent / "problems"


def record(name: str, *changes: tuple[str, str], replace: tuple[str, str] | None = None,
           config: dict | None = None, tmp_path: Path | None = None):
    """Record problem `name` run as a script; with `replace` (and further `changes`), a
    copy of it with that text changed (the fix); with `config`, under those Dynamo
    settings (restored after)."""
    path = PROBLEMS / f"{name}.py"
    changes = ((replace,) if replace else ()) + changes
    if changes:
        text = path.read_text(encoding="utf-8")
        for old, new in changes:
            assert old in text, old
            text = text.replace(old, new)
        path = tmp_path / path.name
        path.write_text(text, encoding="utf-8")
    torch._dynamo.reset()
    patch = torch._dynamo.config.patch(**config) if config else contextlib.nullcontext()
    try:
        with patch, contextlib.redirect_stdout(io.StringIO()), capture.record() as rec:
            runpy.run_path(str(path), run_name="__main__")
    finally:
        torch._dynamo.reset()
    return rec


def answer(rec):
    return explanation(rec), explanation_text(rec)


def test_train_eval_toggle_is_one_expected_recompile_named_at_the_users_line():
    data, text = answer(record("train_eval"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "training" and cause["expected"]
    assert cause["recompiles"] == ["0/1"] and cause["values"] == ["True", "False"]
    assert cause["installed"]["file"].endswith("dropout.py")
    assert cause["user"]["line"].startswith("return self.drop(h)")
    assert "your line: train_eval.py:" in text and "Nothing to fix" in text
    assert data["summary"]["recompiles"] == 1 and not data["graph_breaks"]
    assert "mark_dynamic" not in text


def test_print_is_a_break_fixed_by_reorderable_logging_functions(tmp_path):
    data, text = answer(record("print_in_forward"))
    [b] = data["graph_breaks"]
    assert b["line"].startswith('print("y computed")') and b["gb_id"] == "GB0059"
    assert "reorderable_logging_functions.add(print)" in b["advice"][0]
    assert "Avoid calling" not in text and "no graph breaks" not in text
    [frame] = data["frames"]
    assert frame["outcome"] == "graph_break" and frame["graphs"] == 2
    assert data["summary"]["compiles"] == 2  # the restarted attempt is not a compile
    fixed = record("print_in_forward", replace=(
        "compiled = torch.compile",
        "torch._dynamo.config.reorderable_logging_functions.add(print)\ncompiled = torch.compile"),
        tmp_path=tmp_path)
    torch._dynamo.config.reorderable_logging_functions.discard(print)
    assert not explanation(fixed)["graph_breaks"]


# transformers' logger.warning_once: a method it sets on logging.Logger, cached per message
WARNING_ONCE = ('logger = logging.getLogger("problem")\n',
                'logger = logging.getLogger("problem")\n'
                'import functools\n'
                'logging.Logger.warning_once = functools.lru_cache(None)('
                'lambda self, *args: self.warning(*args))\n')


@pytest.mark.parametrize("method", ["warning", "warning_once"])
def test_logger_warning_is_a_break_fixed_by_ignore_logging_functions(method, tmp_path):
    import logging

    changes = [] if method == "warning" else [
        WARNING_ONCE, ('logger.warning("scaling")', 'logger.warning_once("scaling")')]
    # transformers, if a test imported it, set its own warning_once: put it back after
    missing = object()
    before = logging.Logger.__dict__.get("warning_once", missing)
    fix = f"torch._dynamo.config.ignore_logging_functions.add(logging.Logger.{method})"
    try:
        data, text = answer(record("logger_warning", *changes, tmp_path=tmp_path))
        # the fix exactly as said, applied before the compile
        fixed = record("logger_warning", *changes,
                       ("compiled = torch.compile", f"{fix}\ncompiled = torch.compile"),
                       tmp_path=tmp_path)
    finally:
        torch._dynamo.config.ignore_logging_functions.clear()
        if before is not missing:
            logging.Logger.warning_once = before
        elif "warning_once" in logging.Logger.__dict__:
            del logging.Logger.warning_once
    [b] = data["graph_breaks"]
    assert b["line"].startswith(f'logger.{method}("scaling")') and b["gb_id"] == "GB0291"
    assert b["advice"] == [f"skip the logger call while compiling: {fix}"]
    assert not explanation(fixed)["graph_breaks"]


@pytest.mark.parametrize("name, line", [("boolean_mask", "return t[t > 0.5]"),
                                        ("nonzero", "idx = torch.nonzero(x > 0)")])
def test_dynamic_output_ops_break_fixed_by_capture_dynamic_output_shape_ops(name, line):
    data, text = answer(record(name))
    [b] = data["graph_breaks"]
    assert b["line"].startswith(line) and b["gb_id"] == "GB0036"
    assert "capture_dynamic_output_shape_ops = True" in b["advice"][0]
    # the kept attempt records no break of its own where the break is in a return
    # expression (boolean_mask); the frame still stopped there
    [frame] = data["frames"]
    assert frame["outcome"] == "graph_break" and "compiled whole" not in text
    fixed = record(name, config={"capture_dynamic_output_shape_ops": True})
    assert not explanation(fixed)["graph_breaks"]


def test_size_one_recompile_advises_mark_unbacked_and_never_duck_shaping(tmp_path):
    data, text = answer(record("size_one"))
    by = {c["mechanism"]: c for c in data["causes"]}
    assert set(by) == {"size", "size_0_1"}
    assert by["size"]["made_dynamic"] == "0/1"  # automatic dynamic, said
    assert "torch._dynamo.decorators.mark_unbacked(x, 0)" in by["size_0_1"]["advice"][0]
    assert "duck" not in text and "dynamic=True" not in by["size_0_1"]["advice"][0].split("say")[1]
    # the fix: x marked unbacked before its first call: the size-1 call reuses the compile
    fixed = record("size_one", replace=("compiled(torch.randn(2, 3))\ncompiled(torch.randn(3, 3))\n"
                                        "compiled(torch.randn(1, 3))",
                                        "for n in (2, 3, 1):\n    x = torch.randn(n, 3)\n"
                                        "    torch._dynamo.decorators.mark_unbacked(x, 0)\n    compiled(x)"),
                   tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_a_failed_compile_is_said_never_as_success(tmp_path):
    rec = record("mark_dynamic_broadcast")
    data, text = answer(rec)
    [frame] = data["frames"]
    assert frame["outcome"] == "failed" and "ConstraintViolationError" in frame["errors"][0]
    assert "the compile failed" in text and "no graph breaks" not in text
    assert data["summary"]["failed"] == 1
    assert "maybe_mark_dynamic(x, 0)" in frame["advice"][0]
    # Dynamo's whole message is kept: the dimension, its constant and the user's line
    failure = dict(frame["failure"])
    shape = failure.pop("shape")
    assert failure.pop("source") == "L['x'].size()[0]"
    # the recording's shapes say which symbol, which step and which operation did it
    assert shape["how"] == "specialized" and shape["marks"] == ["mark_dynamic"]
    assert shape["specialized_to"] == "4" and shape["sources"] == ["L['x'].size()[0]"]
    [guard] = shape["guards"]
    assert guard["expr"] == f"Eq({shape['symbol']}, 4)" and guard["why"].startswith("a broadcast")
    step = rec.compiles[0].steps[guard["step"]]
    assert step.opname == "BINARY_OP" and list(step.nodes_added)[-1] == guard["node"] == "add"
    assert f"set to 4 at step {guard['step']}, node add" in text
    assert failure == {"name": "x", "dim": 0, "constant": "4", "file": frame["file"],
                                "lineno": frame["lineno"] + 1, "function": "f",
                                "line": "return x + y  # user line"}
    assert "specialized it to the constant 4, at line" in text
    assert "in f: return x + y" in text
    # every view gets explain's own words for one compile
    one = compile_answer(rec, frame["compiles"][0])
    assert one["frame"]["statement"] == frame["statement"] and one["advice"] == frame["advice"]
    with pytest.raises(KeyError):
        compile_answer(rec, "7/7")
    # a recording made before the whole message was kept loads, and says only what it holds
    old = json.loads(rec.to_json())
    for c in old["compiles"]:
        del c["error_message"]
    old_data, old_text = answer(capture.Recording.from_json(json.dumps(old)))
    assert old_data["frames"][0]["failure"] is None and "the compile failed" in old_text
    assert "specialized it to the constant" not in old_text
    fixed = record("mark_dynamic_broadcast", replace=("torch._dynamo.mark_dynamic(x, 0)",
                                                      "torch._dynamo.maybe_mark_dynamic(x, 0)"),
                   tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["failed"] == 0


def test_grad_mode_switch_is_one_expected_recompile():
    rec = record("grad_mode")
    data, text = answer(rec)
    [cause] = data["causes"]
    assert cause["mechanism"] == "grad_mode" and cause["expected"] and cause["recompiles"] == ["0/1"]
    # one compile's answer: the recompile carries its cause and failed guards, the first none
    one = compile_answer(rec, "0/1")
    assert one["statements"][-1] == cause["statement"] and one["recompile"]["failed_guards"]
    assert compile_answer(rec, "0/0")["causes"] == []
    assert data["summary"]["recompiles"] == 1 and "(expected)" in text


def test_requires_grad_recompile_names_the_tensor_and_its_line():
    data, text = answer(record("requires_grad"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "requires_grad" and cause["name"] == "a"
    assert cause["values"] == ["False", "True"]
    assert cause["installed"]["line"].startswith("return (a + b).clip(0)")


def test_a_branch_in_a_loop_is_a_skipped_frame_said_with_its_fix(tmp_path):
    data, text = answer(record("for_loop_branch"))
    [frame] = data["frames"]
    assert frame["outcome"] == "skipped" and "Data-dependent branching" in frame["skipped_because"]
    assert "runs eagerly on every call" in text and "no graph breaks" not in text
    [b] = data["graph_breaks"]
    assert b["skipped"] and b["line"].startswith("if x.sum() > 0:") and "torch.where" in b["advice"][0]
    fixed = record("for_loop_branch", replace=(
        "        if x.sum() > 0:  # user line\n            x = x - 1\n        else:\n"
        "            x = x + 1\n",
        "        x = torch.where(x.sum() > 0, x - 1, x + 1)\n"), tmp_path=tmp_path)
    d = explanation(fixed)
    assert not d["graph_breaks"] and [f["outcome"] for f in d["frames"]] == ["compiled"]


def test_a_per_object_string_key_is_one_line_and_the_limit_is_said(tmp_path):
    data, text = answer(record("string_key"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "string" and len(cause["recompiles"]) == 7
    assert "'blocks.{0..7}.attn.v.weight'" in text
    assert text.count("blocks.") < 6   # one line, not one per cache entry
    [frame] = data["frames"]
    assert frame["refused"] == ["0/8"] and "run eagerly" in frame["statement"]
    [refusal] = data["refusals"]
    assert refusal["causes"] == [cause["statement"]]
    # the fix: the scale looked up outside, passed in as a tensor
    fixed = record("string_key", (
        "def apply(patch, x):\n    return x * scales[patch.key]  # user line",
        "def apply(scale, x):\n    return x * scale"), (
        "compiled(Patch(f\"blocks.{i}.attn.v.weight\"), x)",
        "compiled(torch.tensor(scales[Patch(f\"blocks.{i}.attn.v.weight\").key]), x)"),
        tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_a_global_dict_and_a_string_failing_together_get_one_fix_for_both(tmp_path):
    data, text = answer(record("global_dict"))
    by = {c["mechanism"]: c for c in data["causes"]}
    assert set(by) == {"string", "global_dict"}
    assert by["global_dict"]["name"] == "seen" and by["global_dict"]["values"] == ["0", "1", "2"]
    assert all("bookkeeping outside the compiled call" in c["advice"][0] for c in by.values())
    fixed = record("global_dict", (
        "    seen[mod.name] = True  # user line\n", ""), (
        "    compiled(Mod(f\"layer{i}\"), x)",
        "    mod = Mod(f\"layer{i}\")\n    compiled(mod, x)\n    seen[mod.name] = True"),
        tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_a_scheduler_changing_a_float_lr_is_fixed_by_a_tensor_lr(tmp_path):
    data, text = answer(record("lr_scheduler"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "optimizer_number" and cause["values"] == ["0.1", "0.05"]
    assert cause["installed"]["file"].endswith("sgd.py")
    assert "lr=torch.tensor(0.1)" in cause["advice"][0]
    # Dynamo's hints for its own developers are not passed on as fixes
    assert "Remove the `torch._dynamo.graph_break()` call" not in " ".join(data["advice"])
    assert "Avoid calling" not in " ".join(data["advice"])
    [library] = [b for b in data["graph_breaks"] if b["file"].endswith("optimizer.py")]
    assert library["advice"] == [] and library["hint"] is None  # torch's own break, on purpose
    assert library["note"].startswith("not in your code: _use_grad in optimizer.py calls "
                                      "torch._dynamo.graph_break() itself")
    assert f"  note: {library['note']}" in text
    # a break in the user's own code gets no such note
    assert [b["note"] for b in answer(record("print_in_forward"))[0]["graph_breaks"]] == [None]
    assert data["summary"]["compiles"] == 5  # 7 attempts, 2 of them restarted
    fixed = record("lr_scheduler", replace=("lr=0.1)", "lr=torch.tensor(0.1))"),
                   tmp_path=tmp_path)
    assert not [c for c in explanation(fixed)["causes"] if "lr" in (c["source"] or "")]


def test_a_module_int_counter_is_fixed_by_allow_unspec_int_on_nn_module():
    data, text = answer(record("module_counter"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "module_int" and cause["name"] == "self.counter"
    assert len(cause["recompiles"]) == 4 and "0..4" in text
    assert "allow_unspec_int_on_nn_module = True" in cause["advice"][0]
    fixed = record("module_counter", config={"allow_unspec_int_on_nn_module": True})
    assert explanation(fixed)["summary"]["recompiles"] == 1  # once, then a symbol


def test_a_new_sequence_length_says_automatic_dynamic_and_mark_dynamic_spares_it(tmp_path):
    data, text = answer(record("seq_len"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "size" and cause["dims"] == [1] and cause["made_dynamic"] == "0/1"
    assert data["summary"]["recompiles"] == 1   # 4 lengths, one recompile: said, not feared
    assert cause["installed"]["file"].endswith("sparse.py")
    assert cause["user"]["line"].startswith("return emb(tokens).sum(1)")
    assert "torch._dynamo.mark_dynamic(tokens, 1)" in cause["advice"][0]
    fixed = record("seq_len", replace=("    compiled(tokens)",
                                       "    torch._dynamo.mark_dynamic(tokens, 1)\n    compiled(tokens)"),
                   tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_item_is_a_break_fixed_by_capture_scalar_outputs():
    data, text = answer(record("item_scalar"))
    [b] = data["graph_breaks"]
    assert b["gb_id"] == "GB0124" and b["line"].startswith("scale = x.abs().max().item()")
    assert "capture_scalar_outputs = True" in b["advice"][0]
    fixed = record("item_scalar", config={"capture_scalar_outputs": True})
    assert not explanation(fixed)["graph_breaks"]


def test_an_int_argument_made_dynamic_is_said_and_not_given_a_needless_fix():
    data, text = answer(record("int_argument"))
    [cause] = data["causes"]
    assert cause["made_dynamic"] == "0/1" and data["summary"]["recompiles"] == 1
    assert "Nothing to fix" in cause["advice"][0] and "tensor" not in cause["advice"][0]


def test_duck_shaping_is_advised_only_where_sizes_shared_a_symbol():
    data, text = answer(record("duck_shape"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "duck_shape" and "use_duck_shape = False" in cause["advice"][0]
    import torch.fx.experimental._config as fx_config  # the setting lives in torch.fx's config
    with fx_config.patch(use_duck_shape=False):
        fixed = record("duck_shape")
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_an_inference_tensor_recompile_is_bounded_and_said_so(tmp_path):
    data, text = answer(record("inference_mode"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "dispatch_keys" and cause["expected"]
    assert cause["installed"]["line"].startswith("return x.sin()")
    assert not data["graph_breaks"]
    fixed = record("inference_mode", replace=("y = torch.randn(3)", "    y = torch.randn(3)"),
                   tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_warnings_warn_is_a_break_fixed_by_reordering_it():
    import warnings

    data, text = answer(record("warnings_warn"))
    [b] = data["graph_breaks"]
    assert b["gb_id"] == "GB0007" and b["line"].startswith('warnings.warn("aaa")')
    assert "reorderable_logging_functions.add(warnings.warn)" in b["advice"][0]
    assert "file an issue" not in " ".join(data["advice"])
    fixed = record("warnings_warn", config={"reorderable_logging_functions": {warnings.warn}})
    assert not explanation(fixed)["graph_breaks"]


def test_user_code_is_the_users_files_and_what_user_code_widens(tmp_path):
    from capture.usercode import is_user_file

    installed = "/venv/lib/python3.11/site-packages/mylib/layers.py"
    assert is_user_file(str(tmp_path / "train.py"))
    assert not is_user_file(installed) and not is_user_file(torch.nn.__file__)
    assert is_user_file(installed, ["/venv/lib/python3.11/site-packages/mylib"])
    assert not is_user_file(installed, ["/venv/lib/python3.11/site-packages/my"])  # a folder, not a prefix


def test_the_readmes_explain_answer_is_the_one_explain_gives():
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ dynamo-lab explain -q tests/problems/train_eval.py\n", 1)[1]
    shown = block.split("```", 1)[0].rstrip()
    # The README shows the learner's torch; the answer is the same on the other releases.
    said = explanation_text(record("train_eval")).replace(f"(torch {torch.__version__})",
                                                          "(torch 2.13.0+cpu)")
    assert "(torch 2.13.0+cpu)" in shown and said == shown


def test_the_recompile_limit_under_fullgraph_is_said_to_raise_not_to_run_eagerly(tmp_path):
    data, text = answer(record("fullgraph_limit"))
    [frame] = data["frames"]
    assert frame["refused"] == ["0/3"] and "raised FailOnRecompileLimitHit" in frame["statement"]
    assert "run eagerly" not in frame["statement"] and "runs eagerly" not in text.split("refused (")[0]
    [cause] = data["causes"]
    assert cause["mechanism"] == "string" and cause["name"] == "mode"
    # the fix: the gain looked up outside, passed in as a tensor
    fixed = record("fullgraph_limit", (
        "def f(x, mode):\n    return x * gains[mode]  # user line",
        "def f(x, gain):\n    return x * gain"), (
        'compiled(x, f"mode{i}")', 'compiled(x, torch.tensor(gains[f"mode{i}"]))'),
        tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0 and not explanation(fixed)["refusals"]


def test_user_code_widens_to_an_installed_library_for_its_developers(tmp_path):
    # a library as pip would install it: a guard installed in its code, reached from a script
    installed = tmp_path / "site-packages" / "mylayers"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text(
        "def scaled(x, layer):\n    return x * layer.scale  # library line\n", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport torch\nfrom mylayers import scaled\n\n\n"
        "class Layer:\n    def __init__(self, scale):\n        self.scale = scale\n\n\n"
        "def step(x, layer):\n    return scaled(x, layer)  # script line\n\n\n"
        "compiled = torch.compile(step, backend='eager')\n"
        "compiled(torch.randn(2), Layer(2))\ncompiled(torch.randn(2), Layer(3))\n"
        % str(tmp_path / "site-packages"), encoding="utf-8")
    torch._dynamo.reset()
    try:
        with capture.record() as rec:
            runpy.run_path(str(script), run_name="__main__")
    finally:
        torch._dynamo.reset()
        sys.modules.pop("mylayers", None)
    [cause] = explanation(rec)["causes"]
    assert cause["installed"]["line"].startswith("return x * layer.scale")
    assert cause["user"]["line"].startswith("return scaled(x, layer)")
    [cause] = explanation(rec, user_code=[str(installed)])["causes"]
    assert cause["user"]["line"].startswith("return x * layer.scale")


def test_a_break_inside_a_library_names_the_users_line_and_user_code_moves_it(tmp_path, capsys):
    from widgets.cli import main

    installed = tmp_path / "site-packages" / "chatty"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text(
        "def block(x):\n    print('in block')  # library line\n    return x.relu()\n",
        encoding="utf-8")
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport torch\nfrom chatty import block\n\n\n"
        "def model(x):\n    return block(x * 2)  # script line\n\n\n"
        "torch.compile(model, backend='eager')(torch.randn(3))\n"
        % str(tmp_path / "site-packages"), encoding="utf-8")
    torch._dynamo.reset()
    try:
        assert main(["explain", "-q", "--format", "json", str(script)]) == 0
        plain = json.loads(capsys.readouterr().out)
        torch._dynamo.reset()
        assert main(["explain", "-q", "--user-code", str(installed), "--format", "json",
                     str(script)]) == 0
        widened = json.loads(capsys.readouterr().out)
    finally:
        torch._dynamo.reset()
        sys.modules.pop("chatty", None)
    [b] = [b for b in plain["graph_breaks"] if b["line"].startswith("print(")]
    assert b["file"].endswith("chatty/__init__.py")
    assert b["user"]["line"].startswith("return block(x * 2)")
    [b] = [b for b in widened["graph_breaks"] if b["line"].startswith("print(")]
    assert b["user"]["line"].startswith("print('in block')")


def test_a_number_kept_static_is_fixed_by_passing_a_tensor(tmp_path):
    # automatic dynamic off (as some training scripts set it): the int stays guarded by value
    static = {"automatic_dynamic_shapes": False}
    data, text = answer(record("int_argument", config=static))
    [cause] = data["causes"]
    assert cause["mechanism"] == "number" and cause["made_dynamic"] is None
    assert len(cause["recompiles"]) == 3 and "pass it as a tensor" in cause["advice"][0]
    fixed = record("int_argument", replace=("compiled(torch.randn(4), n)",
                                            "compiled(torch.randn(4), torch.tensor(n))"),
                   config=static, tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_a_parameter_then_a_tensor_is_one_bounded_recompile_on_the_type(tmp_path):
    data, text = answer(record("parameter_input"))
    [cause] = data["causes"]
    assert cause["mechanism"] == "tensor_type" and cause["expected"]
    assert cause["values"] == ["Parameter", "Tensor"]
    assert cause["installed"]["line"].startswith("return x.sin() + 1.0")
    fixed = record("parameter_input", replace=("compiled(torch.nn.Parameter(torch.ones(2, 2)))",
                                               "compiled(torch.nn.Parameter(torch.ones(2, 2)).detach())"),
                   tmp_path=tmp_path)
    assert explanation(fixed)["summary"]["recompiles"] == 0


def test_recompiles_on_a_value_carried_across_a_break_point_back_to_the_break(tmp_path):
    data, text = answer(record("mask_rows"))
    [b] = data["graph_breaks"]
    assert b["gb_id"] == "GB0036" and b["line"].startswith("attn_mask[torch.where(")
    [cause] = data["causes"]
    assert cause["from_break"] and cause["function"] == "forward (after its graph break)"
    assert "remove the break" in cause["advice"][0]
    assert "mark_unbacked" not in text and "mark_dynamic" not in text  # nothing of theirs to mark
    # both fixes of the break take the recompiles with it
    for fixed in (
            record("mask_rows", config={"capture_dynamic_output_shape_ops": True}),
            record("mask_rows", replace=(
                "    attn_mask[torch.where(attn_mask.sum(-1) == 0)] = True  # user line",
                "    attn_mask = attn_mask | (attn_mask.sum(-1, keepdim=True) == 0)"),
                tmp_path=tmp_path)):
        d = explanation(fixed)
        assert not d["graph_breaks"] and d["summary"]["recompiles"] == 0


def test_a_recompile_refused_by_the_stance_names_the_guard_and_the_line():
    data, text = answer(record("fail_on_recompile"))
    [frame] = data["frames"]
    assert "fail_on_recompile stance refused a recompile" in frame["statement"]
    assert data["summary"]["recompiles"] == 0 and data["summary"]["refused"] == 1
    assert "1 recompile refused" in text.splitlines()[0] and "recompile limit" not in text
    [refusal] = data["refusals"]
    [guard] = refusal["guards"]
    assert (guard["what"], guard["expected"], guard["seen"]) == ("dtype", "float32", "float64")
    assert guard["user"]["line"].startswith("return x.relu() * 2")
    assert guard["mechanism"] == "dtype" and guard["advice"]
