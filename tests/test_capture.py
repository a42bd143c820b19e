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


class _Base(torch.nn.Module):
    def scaled(self, x):
        return x * 2


class _Child(_Base):
    def forward(self, x):
        return self.scaled(x) + 1


def test_each_code_keeps_its_qualified_name_the_class_that_defined_it():
    rec = capture.trace(_Child(), torch.randn(3))
    back = capture.Recording.from_json(rec.to_json())
    for r in (rec, back):
        names = {info.name: info.qualname for info in r.compiles[0].codes}
        assert names["forward"] == "_Child.forward"
        assert names["scaled"] == "_Base.scaled", "the defining class, not self's"


def test_json_round_trip_loses_nothing():
    rec = capture.trace(breaks, torch.randn(3))
    text = rec.to_json()
    back = capture.Recording.from_json(text)
    assert back.to_json() == text
    assert back.compiles == rec.compiles
    assert dataclasses.replace(back, result=None) == dataclasses.replace(rec, result=None)
    json.loads(text)  # plain JSON


def test_steps_as_columns_read_back_to_the_same_steps(viewer_recording):
    """The viewer's form of the JSON (`columns=True`): renamed nodes, guards, a
    restart, a resume function, locals that change and locals that stay, all back as
    they were."""
    steps = [list(c.steps) for c in viewer_recording.compiles]
    flat = [s for ss in steps for s in ss]
    assert any(s.nodes_renamed for s in flat) and any(s.guards_added for s in flat)
    assert any(s.nodes_added for s in flat) and any(s.stack for s in flat)
    text = viewer_recording.to_json(columns=True)
    for c, cols in zip(viewer_recording.compiles, json.loads(text)["compiles"]):
        assert cols["steps"]["length"] == len(c.steps)
        assert len(cols["steps"]["locals_table"]) < max(len(c.steps), 2)
    back = capture.Recording.from_json(text)
    assert [list(c.steps) for c in back.compiles] == steps
    assert back.to_json() == viewer_recording.to_json()


def test_steps_as_columns_keep_inlined_calls_and_their_callers():
    rec = capture.trace(calls_helper, torch.randn(3))
    back = capture.Recording.from_json(rec.to_json(columns=True))
    assert list(back.compiles[0].steps) == list(rec.compiles[0].steps)
    assert any(s.inline_stack for s in back.compiles[0].steps)
