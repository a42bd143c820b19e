"""What a recording says about a compile, checked against what Dynamo did."""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys

import pytest
import torch

import capture


def f(x):
    y = torch.sin(x)
    return y + 1


def helper(x):
    return x.cos() * 2


def calls_helper(x):
    return helper(x) + 1


def breaks(x):
    y = x * 2
    print("mid")
    return y + 1


def line_of(fn, text):
    """The file line number of the first line of fn containing text."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def steps_of(c):
    return [(s.opname, [v.kind for v in s.stack]) for s in c.steps]


def call_of(c, node):
    """The step whose call made the graph node `node` (by what it did, not its opname)."""
    return next(s for s in c.steps if node in s.nodes_added)


def test_steps_are_the_instructions_dynamo_ran_with_the_stack_it_held():
    rec = capture.trace(f, torch.randn(4))
    (c,) = rec.compiles
    call = call_of(c, "sin")
    assert (call.opname, [v.kind for v in call.stack]) == ("CALL", ["TensorVariable"])
    # Before the call: the callable torch.sin, its NULL and x, the two lazy. 3.11 and
    # 3.12 push the NULL before the callable, 3.13 after it.
    before = [v.kind for v in c.steps[call.index - 1].stack]
    null_at = 1 if sys.version_info >= (3, 13) else 0
    assert before.index("NullVariable") == null_at and before.count("LazyVariableTracker") == 2
    store = c.steps[call.index + 1]
    assert (store.opname, store.argrepr, list(store.stack)) == ("STORE_FAST", "y", [])
    assert (c.steps[0].opname, c.steps[-1].opname) == ("RESUME", "RETURN_VALUE")
    sin_line, add_line = line_of(f, "torch.sin"), line_of(f, "y + 1")
    assert [s.lineno for s in c.steps][1:] == (
        [sin_line] * store.index + [add_line] * (len(c.steps) - store.index - 1))
    assert all(s.depth == 0 and s.code_name == "f" for s in c.steps)
    # `torch.sin` stays lazy until the call needs it: nothing is guarded on it before
    pushed = [s for s in c.steps[:call.index] if s.stack and s.stack[-1].source == "G['torch'].sin"]
    assert str(pushed[0].stack[-1]) == (
        "LazyVariableTracker unrealized builtin_function_or_method  <- G['torch'].sin")


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="3.11's bytecode: PRECALL, NULL first")
def test_on_3_11_the_steps_are_exactly_these():
    rec = capture.trace(f, torch.randn(4))
    (c,) = rec.compiles
    assert steps_of(c) == [
        ("RESUME", []),
        ("LOAD_GLOBAL", ["NullVariable", "LazyVariableTracker"]),
        ("LOAD_ATTR", ["NullVariable", "LazyVariableTracker"]),
        ("LOAD_FAST", ["NullVariable", "LazyVariableTracker", "LazyVariableTracker"]),
        ("PRECALL", ["NullVariable", "LazyVariableTracker", "LazyVariableTracker"]),
        ("CALL", ["TensorVariable"]),
        ("STORE_FAST", []),
        ("LOAD_FAST", ["TensorVariable"]),
        ("LOAD_CONST", ["TensorVariable", "ConstantVariable"]),
        ("BINARY_OP", ["TensorVariable"]),
        ("RETURN_VALUE", ["TensorVariable"]),
    ]
    sin_line, add_line = line_of(f, "torch.sin"), line_of(f, "y + 1")
    assert [s.lineno for s in c.steps][1:] == [sin_line] * 6 + [add_line] * 4
    assert all(s.depth == 0 and s.code_name == "f" for s in c.steps)
    # `torch.sin` stays lazy until the call needs it: nothing is guarded on it before
    assert str(c.steps[2].stack[-1]) == (
        "LazyVariableTracker unrealized builtin_function_or_method  <- G['torch'].sin")


def test_a_lazy_argument_is_shown_unrealized_with_its_type_and_source():
    rec = capture.trace(f, torch.randn(4))
    c = rec.compiles[0]
    load_x = next(s for s in c.steps if (s.opname, s.argrepr) == ("LOAD_FAST", "x"))
    x = load_x.stack[-1]
    assert (x.kind, x.lazy, x.realized, x.python_type, x.source) == (
        "LazyVariableTracker", True, False, "Tensor", "L['x']")
    assert str(x) == "LazyVariableTracker unrealized Tensor  <- L['x']"
    # after the call the local is realized: a TensorVariable standing for the input node
    after = call_of(c, "sin").locals["x"]
    assert (after.kind, after.lazy, after.realized, after.node) == ("TensorVariable", True, True, "l_x_")


def test_tensor_vars_say_shape_dtype_and_the_node_name_dynamo_held_at_that_step():
    rec = capture.trace(f, torch.randn(4, 3, dtype=torch.float64))
    c = rec.compiles[0]
    call = call_of(c, "sin")
    (out,) = call.stack
    # A new node is named after its op; the lazy input is realized by the call, so its
    # placeholder appears at the same step.
    assert str(out) == "TensorVariable f64[4, 3] node=sin"
    assert call.nodes_added == ["l_x_", "sin"] and call.graph_size == 2
    # `STORE_FAST y` renames it after the local: from that step on readings say `y`,
    # and the graph code does too (`y = torch.sin(l_x_)`).
    store = c.steps[call.index + 1]
    assert (store.opname, store.argrepr) == ("STORE_FAST", "y")
    assert store.nodes_renamed == [("sin", "y")]
    assert str(store.locals["y"]) == "TensorVariable f64[4, 3] node=y"
    assert "y = torch.sin(l_x_)" in c.graph_code
    assert str(call.stack[0]) == "TensorVariable f64[4, 3] node=sin"  # not rewritten
    sin = next(n for n in c.nodes if n.name == "y")
    assert (sin.created_name, sin.renamed_at, sin.step) == ("sin", store.index, call.index)
    assert (sin.name_at(call.index), sin.name_at(store.index)) == ("sin", "y")
    assert sin.target == "torch.sin" and sin.inputs == ("l_x_",)
    assert (sin.shape, sin.dtype) == ("[4, 3]", "f64")
    assert c.steps[-1].nodes_added == ["output"]
    assert [n.name for n in c.nodes] == ["l_x_", "y", "add", "output"]
    assert sum(len(s.nodes_renamed) for s in c.steps) == 1


def test_every_node_carries_the_step_that_created_it():
    rec = capture.trace(calls_helper, torch.randn(3))
    c = rec.compiles[0]
    by_step = {name: s.index for s in c.steps for name in s.nodes_added}
    for node in c.nodes:
        assert node.step == by_step[node.created_name or node.name]
    assert {n.name for n in c.nodes if n.in_graph} >= {"cos", "mul", "add"}


def test_guards_carry_the_step_and_user_line_that_installed_them():
    rec = capture.trace(f, torch.randn(4))
    c = rec.compiles[0]
    tensor = next(g for g in c.guard_details if g.kind == "TENSOR_MATCH")
    assert tensor.source == "L['x']" and not tensor.ambient
    line = line_of(f, "torch.sin")
    assert tensor.lineno == line and tensor.line == "y = torch.sin(x)"
    assert tensor.step is not None and c.steps[tensor.step].lineno == line
    assert tensor.text.startswith("TENSOR_MATCH: check_tensor(L['x']")
    assert tensor.text in c.guards
    ambient = {g.kind for g in c.guard_details if g.ambient}
    assert {"GLOBAL_STATE", "DEFAULT_DEVICE"} <= ambient
    assert all(g.step is None for g in c.guard_details if g.ambient)
    assert c.guard_tree.lstrip().startswith("TREE_GUARD_MANAGER")
    # the step that installed the guard lists it
    assert c.guard_details.index(tensor) in c.steps[tensor.step].guards_added


def test_a_graph_break_records_both_attempts_and_the_resume_function():
    rec = capture.trace(breaks, torch.randn(3))
    ids = [c.compile_id for c in rec.compiles]
    assert ids == ["0/0", "0/0_1", "1/0"]
    first, second, resume = rec.compiles
    assert first.outcome == "restarted" and first.modified_bytecode is None
    line = line_of(breaks, "print")
    assert first.graph_break.lineno == line and first.graph_break.line == 'print("mid")'
    assert first.title() == f"[0/0] breaks — graph break at line {line}, restarted"
    assert second.outcome == "graph_break" and second.modified_bytecode
    assert [r.code_name for r in second.resume_functions] == [f"torch_dynamo_resume_in_breaks_at_{line}"]
    assert resume.code_name == f"torch_dynamo_resume_in_breaks_at_{line}"
    assert resume.outcome == "compiled"
    assert "__compiled_fn" in second.modified_bytecode
    assert [e.kind for e in rec.events][:4] == ["compile", "graph_break", "restart", "compile"]
    assert rec.counters == {"unique_graphs": 2, "calls_captured": 2, "graph_breaks": 1}
    assert rec.counters_total["unique_graphs"] >= 2  # Dynamo's own, process-wide totals


def test_a_recompile_records_the_guard_that_failed():
    torch._dynamo.reset()
    g = torch.compile(f, backend="eager")
    g(torch.randn(4))
    with capture.record() as rec:
        g(torch.randn(4))          # cache hit: nothing compiled
        g(torch.randn(5))          # new shape: recompile
    (c,) = rec.compiles
    assert c.compile_id == "0/1"
    assert "size mismatch at index 0. expected 4, actual 5" in c.recompile_reasons[0]
    assert any(e.kind == "recompile" for e in rec.events)


def test_inlined_calls_are_steps_at_depth_one_with_a_breadcrumb():
    rec = capture.trace(calls_helper, torch.randn(3))
    c = rec.compiles[0]
    inner = [s for s in c.steps if s.depth == 1]
    assert inner and all(s.code_name == "helper" for s in inner)
    assert inner[0].inline_stack == (("calls_helper", line_of(calls_helper, "return helper")),)
    assert c.codes[inner[0].code].name == "helper"
    assert "helper" in c.codes[inner[0].code].source_lines[0]


def test_json_round_trip_loses_nothing():
    rec = capture.trace(breaks, torch.randn(3))
    text = rec.to_json()
    back = capture.Recording.from_json(text)
    assert back.to_json() == text
    assert back.compiles == rec.compiles
    assert dataclasses.replace(back, result=None) == dataclasses.replace(rec, result=None)
    json.loads(text)  # plain JSON


def test_text_view_gathers_steps_graph_guards_and_bytecode():
    rec = capture.trace(lambda x: x.sin() + 1, torch.randn(4))
    text = str(rec)
    for part in ["RESUME", "stack(top first)", "def forward", "TENSOR_MATCH",
                 "modified bytecode:", "__compiled_fn", "unique_graphs=1 "]:
        assert part in text
    assert torch.allclose(rec.result, torch.randn(0).new_tensor(0) + rec.result)


def test_trace_returns_the_result_and_refuses_non_callables():
    x = torch.randn(4)
    rec = capture.trace(f, x)
    assert torch.allclose(rec.result, torch.sin(x) + 1)
    try:
        capture.trace(42)
    except TypeError as e:
        assert "needs a function or module" in str(e)
    else:
        raise AssertionError("trace(42) should refuse")


def test_compile_lookup_names_the_known_ids():
    rec = capture.trace(f, torch.randn(4))
    assert rec.compile("0/0") is rec.compiles[0]
    with pytest.raises(KeyError, match="0/0"):
        rec.compile("9/9")


def test_hitting_the_recompile_limit_is_an_event_on_the_timeline():
    # config.patch, not monkeypatch: torch's config module hides an option that
    # monkeypatch deletes and re-sets, breaking every later compile in the process.
    with torch._dynamo.config.patch(recompile_limit=2):
        hit_the_limit()


def hit_the_limit():
    def scaled(x, s):
        return x * len(s)

    torch._dynamo.reset()
    g = torch.compile(scaled, backend="eager")
    with capture.record() as rec:
        results = [g(torch.ones(2), "a" * n) for n in range(4)]
    assert [r.tolist() for r in results] == [[n, n] for n in (0.0, 1.0, 2.0, 3.0)]
    assert [c.compile_id for c in rec.compiles] == ["0/0", "0/1"]
    assert rec.compiles[1].recompile_reasons[0].startswith("0/0: s == ''")
    (limit,) = [e for e in rec.events if e.kind == "cache_limit"]
    assert limit.compile_id == "0/2" and "recompile_limit=2" in limit.message


def inner_break(x):
    print("inside the helper")
    return x + 1


def outer(x):
    y = x * 2
    z = inner_break(y)
    return z - 1


def test_a_restarted_attempt_records_where_it_split_its_own_frame():
    rec = capture.trace(outer, torch.randn(3))
    first, second = rec.compiles[0], rec.compiles[1]
    assert first.graph_break.code_name == "inner_break"
    assert first.graph_break.lineno == line_of(inner_break, "print")
    at = first.steps[first.graph_break.step]
    assert (at.code_name, at.opname, at.depth) == ("inner_break", "CALL", 1)
    gb = second.graph_break
    assert gb.code_name == "outer" and gb.lineno == line_of(outer, "inner_break(y)")
    assert 0 <= gb.step < len(second.steps) and second.steps[gb.step].depth == 0
    assert second.steps[gb.step].opname == "CALL"


def test_under_fullgraph_the_break_is_recorded_with_the_error():
    def loud(x):
        y = x + 1
        print("no")
        return y

    torch._dynamo.reset()
    try:
        with capture.record() as rec:
            torch.compile(loud, backend="eager", fullgraph=True)(torch.ones(2))
    except torch._dynamo.exc.Unsupported:
        pass
    (c,) = rec.compiles
    assert c.outcome == "error"
    assert c.graph_break.lineno == line_of(loud, "print") and c.graph_break.line == 'print("no")'
    assert c.steps[c.graph_break.step].opname == "CALL"


def test_dynamo_warnings_become_timeline_events():
    def scalar(x):
        return x * x.sum().item()

    # Dynamo warns about .item() once per process (a functools.cache on the warning):
    # forget that it did, so the warning comes whichever test met .item() first.
    from torch._dynamo.variables.tensor import TensorVariable

    TensorVariable._warn_capture_scalar_outputs.cache_clear()
    rec = capture.trace(scalar, torch.ones(3))
    warnings = [e for e in rec.events if e.kind == "warning"]
    assert warnings and "Tensor.item()" in warnings[0].message
    assert rec.graph_break_count == 1


def test_resume_functions_keep_their_argument_names():
    rec = capture.trace(breaks, torch.randn(3))
    (rf,) = rec.compiles[1].resume_functions
    assert "y" in rf.argnames and "___stack0" in rf.argnames
    assert rf.bytecode.startswith(f"{rf.code_name} test_capture.py line ")


def test_a_guard_with_no_rendered_line_keeps_its_own_kind():
    class Tower(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(2))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    rec = capture.trace(Tower(), torch.randn(1, 2))
    for g in rec.compiles[0].guard_details:
        assert g.text.startswith(g.kind) or g.kind in ("MODULE_MATCH", "BUILTIN_MATCH",
                                                       "FUNCTION_MATCH", "CLOSURE_MATCH",
                                                       "AUTOGRAD_SAVED_TENSORS_HOOKS",
                                                       "TORCH_FUNCTION_STATE")


def test_a_guard_rendered_under_another_kind_keeps_its_step_and_line():
    def scale(x, n):
        return x * n if n > 1 else x

    rec = capture.trace(scale, torch.ones(3), 2)
    c = rec.compiles[0]
    (n_guard,) = [g for g in c.guard_details if g.source == "L['n']"]
    # installed as CONSTANT_MATCH while tracing, rendered as EQUALS_MATCH in the tree
    assert n_guard.kind == "CONSTANT_MATCH" and n_guard.text == "EQUALS_MATCH: L['n'] == 2"
    assert n_guard.tree_kind == "EQUALS_MATCH"
    assert all(g.tree_kind == g.text.split(":")[0] for g in c.guard_details if g.tree_kind)
    assert n_guard.step is not None and n_guard.lineno == line_of(scale, "return x * n")
    # a check about an expression of a source is not taken for the source's own guard
    from capture.guards import _leaf_source
    assert _leaf_source("EQUALS_MATCH: list(dict.keys(L['d']))[0] == 'a'") is None


def test_the_rewritten_code_and_resume_functions_are_instructions_too():
    def shout(x):
        y = x.cos() * 2
        print("halfway")
        return y - 1

    rec = capture.trace(shout, torch.ones(3))
    c = rec.compile("0/0_1")
    installed = c.modified_instructions
    lines = c.modified_bytecode.splitlines()[1:]  # after the header, one line an instruction
    assert len(installed) == len(lines) > 10
    assert all(f" {i.offset} {i.opname}" in " ".join(line.split()[-3:]) or i.opname in line
               for i, line in zip(installed, lines))
    # The compiled graph is loaded with its NULL: before it below 3.13, after it on 3.13.
    calls = [i.argrepr for i in installed if "__compiled_fn_" in i.argrepr]
    if sys.version_info >= (3, 13):
        assert any(a.startswith("__compiled_fn_") and a.endswith(" + NULL") for a in calls), calls
    else:
        assert any(a.startswith("NULL + __compiled_fn_") for a in calls), calls
    (resume,) = c.resume_functions
    # It resumes at the instruction after the CALL of print: the POP_TOP of its result
    # (an offset in the instructions Dynamo walks).
    original = {i.offset: i for i in c.codes[0].walked}
    assert original[resume.offset].opname == "POP_TOP"
    call = max((o for o in original if o < resume.offset and original[o].opname == "CALL"))
    assert original[call].lineno == original[resume.offset].lineno
    assert resume.global_name == f"__resume_at_{resume.offset}_{resume.global_name.rsplit('_', 1)[1]}"
    assert resume.instructions and resume.instructions[-1].opname == "RETURN_VALUE"
    assert "y" in resume.argnames and any(i.argrepr == "y" for i in resume.instructions)


def test_every_skipped_frame_is_on_the_timeline():
    def then_nothing(x):
        y = x * 2
        print("the rest is plain Python")
        return y

    rec = capture.trace(then_nothing, torch.ones(3))
    skipped = [c for c in rec.compiles if c.outcome == "skipped"]
    assert len(skipped) == 1
    assert skipped[0].code_name.startswith("torch_dynamo_resume_in_then_nothing_at_")
    events = [e for e in rec.events if e.kind == "skipped"]
    assert [e.compile_id for e in events] == [skipped[0].compile_id]
    assert "No ops traced" in events[0].message
