"""`capture.compare`: two compiles of one code object aligned, on the lessons' recompiles."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

import capture


def line_of(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    [hit] = [start + i for i, text in enumerate(lines) if f"# {marker}" in text]
    return hit


def recorded(fn, *calls, **options):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", **options)
    with capture.record() as rec:
        for args in calls:
            compiled(*args)
    torch._dynamo.reset()
    return rec


def double(x):  # lesson 05: a size change makes the second compile symbolic
    return x * 2  # reads x


def halves(a):  # lesson 05: each entry covers the lengths for which its branch is taken
    if a.shape[0] * 2 < 16:  # branches
        return a + 1  # small
    return a - 1  # large


def shout(x, word):  # lesson 07: a guard on a str
    return x * len(word)  # reads word


class Stepper(nn.Module):  # lesson 10: a counter on the module recompiles every call
    def __init__(self, start=0):
        super().__init__()
        self.step = start

    def forward(self, x):
        self.step += 1  # counts
        return x * self.step


def test_a_size_change_diverges_at_the_tensor_and_changes_its_guard():
    rec = recorded(double, (torch.ones(4),), (torch.ones(8),))
    cmp = capture.compare(rec, "0/0", "0/1")
    d = cmp.divergence
    assert d is not None and d.why == "shape" and d.lineno == line_of(double, "reads x")
    assert "f32[4]" in d.was and "f32[s" in d.now
    [changed] = cmp.guards_changed
    assert (changed.kind, changed.source) == ("TENSOR_MATCH", "L['x']")
    assert "size=[4]" in cmp.a.guard_details[changed.a].text
    assert "size=[None]" in cmp.b.guard_details[changed.b].text
    # the symbolic compile takes the size as an input: a node only in 0/1, and shapes changed
    assert any(n.startswith("s") for n in cmp.nodes_added)
    assert {n.name for n in cmp.nodes_changed} >= {"l_x_", "mul"}
    assert all("shape" in n.what for n in cmp.nodes_changed)
    [fg] = [fg for fg in cmp.failed_guards if fg.source == "L['x']"]
    assert (fg.expected, fg.seen) == ("[4]", "[8]")
    text = str(cmp)
    assert "first divergence" in text and "~ TENSOR_MATCH L['x']" in text
    assert "    - TENSOR_MATCH:" in text and "    + TENSOR_MATCH:" in text


def test_the_other_branch_taken_is_the_first_divergence():
    rec = recorded(halves, (torch.ones(8),), (torch.ones(4),), dynamic=True)
    cmp = capture.compare(rec, "0/0", "0/1")
    d = cmp.divergence
    assert d.why == "branch taken"
    assert cmp.a.steps[d.a].lineno == line_of(halves, "large")
    assert cmp.b.steps[d.b].lineno == line_of(halves, "small")
    # every step before it was the same instruction at the same line
    before = cmp.aligned[:cmp.aligned.index((d.a, None)) if (d.a, None) in cmp.aligned else 0]
    assert before and all(x is not None and y is not None for x, y in before)
    assert cmp.nodes_removed == ["sub"] and cmp.nodes_added == ["add"]
    [changed] = cmp.guards_changed
    assert "8 <= L['a'].size()[0]" in cmp.a.guard_details[changed.a].text


def test_a_changed_str_changes_one_guard_and_object_ids_do_not_count():
    rec = recorded(shout, (torch.ones(2), "hi"), (torch.ones(2), "hey"))
    cmp = capture.compare(rec, "0/0", "0/1")
    [changed] = cmp.guards_changed
    assert changed.source == "L['word']"
    assert (cmp.a.guard_details[changed.a].text, cmp.b.guard_details[changed.b].text) == (
        "EQUALS_MATCH: L['word'] == 'hi'", "EQUALS_MATCH: L['word'] == 'hey'")
    # `len` is guarded by id in a dict Dynamo numbers per process: the same, not a change
    assert cmp.guards_only_in_a == [] and cmp.guards_only_in_b == []
    assert cmp.divergence.why == "value" and cmp.divergence.lineno == line_of(shout, "reads word")
    assert cmp.nodes_added == cmp.nodes_removed == [] and cmp.nodes_changed == []


def test_the_counter_storm_of_lesson_10():
    torch._dynamo.reset()
    model = torch.compile(Stepper(), backend="eager")
    with capture.record() as storm:
        for _ in range(3):
            model(torch.ones(2))
    torch._dynamo.reset()
    cmp = capture.compare(storm, "0/1", "0/2")
    assert cmp.b.replaces == "0/1"
    assert cmp.divergence.lineno == line_of(Stepper.forward, "counts")
    assert (cmp.divergence.was, cmp.divergence.now) == ("ConstantVariable 2", "ConstantVariable 3")
    [changed] = cmp.guards_changed
    assert changed.source == "L['self'].step"
    assert cmp.same_steps == len(cmp.a.steps) == len(cmp.b.steps)
    d = cmp.to_dict()
    assert d["a"] == "0/1" and d["divergence"]["why"] == "value"
    assert d["guards_changed"] == [{"a": changed.a, "b": changed.b, "kind": "EQUALS_MATCH",
                                    "source": "L['self'].step"}]


def test_compiles_of_two_code_objects_are_refused_with_the_ones_that_would_do():
    torch._dynamo.reset()
    with capture.record() as rec:
        torch.compile(double, backend="eager")(torch.ones(3))
        torch.compile(shout, backend="eager")(torch.ones(3), "a")
    torch._dynamo.reset()
    with pytest.raises(ValueError, match="one code object"):
        capture.compare(rec, "0/0", "1/0")


def test_every_recompile_beside_the_compile_it_replaces():
    rec = recorded(double, (torch.ones(4),), (torch.ones(8),), (torch.ones(8, dtype=torch.float64),))
    from capture.compare import recompiles

    pairs = [(cmp.a.compile_id, cmp.b.compile_id) for cmp in recompiles(rec)]
    assert pairs == [("0/0", "0/1"), ("0/1", "0/2")]
    assert all(cmp.failed_guards for cmp in recompiles(rec))


# -- alignment: by code object and offset, through the inlining calls ----------------------

def repeat(x, n):  # a loop that runs once more in the recompile
    for _ in range(n):  # loops
        x = x + 1  # adds
    return x.sin()  # after the loop


def helper(x):
    return x.cos()  # in helper


def either(x, flag):  # one helper, called from one site or the other
    if flag:
        y = helper(x)  # first site
    else:
        y = helper(x) + 1  # second site
    # Longer than the few instructions 3.12 and later copy into each branch of an if (their
    # compiler duplicates a small exit block): one block, at one offset, on every Python.
    return (y * 2).sin() + y  # after the call


def places(c, i):
    s = c.steps[i]
    return (s.depth, s.code_name, s.offset, tuple(s.inline_stack))


def test_an_extra_loop_iteration_is_only_in_the_recompile_and_the_rest_lines_up():
    rec = recorded(repeat, (torch.ones(2), 2), (torch.ones(2), 5), dynamic=False)
    cmp = capture.compare(rec, "0/0", "0/1")
    a, b = cmp.a, cmp.b
    # every step of the shorter trace has a partner that ran the same instruction
    assert cmp.same_steps == len(a.steps) < len(b.steps)
    assert all(places(a, x) == places(b, y) for x, y in cmp.aligned if x is not None and y is not None)
    extra = [y for x, y in cmp.aligned if x is None]
    assert len(extra) == len(b.steps) - len(a.steps)
    loop = {line_of(repeat, "loops"), line_of(repeat, "adds")}
    assert {b.steps[y].lineno for y in extra} <= loop
    # after the extra iterations the two meet again: the line after the loop is paired
    after = line_of(repeat, "after the loop")
    assert all(x is not None and y is not None for x, y in cmp.aligned
               if (x is not None and a.steps[x].lineno == after) or (y is not None and b.steps[y].lineno == after))
    assert [p for p in cmp.aligned if None not in p][-1] == (len(a.steps) - 1, len(b.steps) - 1)


def test_a_function_inlined_from_another_call_site_is_not_the_same_step():
    rec = recorded(either, (torch.ones(2), True), (torch.ones(2), False))
    cmp = capture.compare(rec, "0/0", "0/1")
    a, b = cmp.a, cmp.b
    in_a = [x for x in range(len(a.steps)) if a.steps[x].depth == 1]
    in_b = [y for y in range(len(b.steps)) if b.steps[y].depth == 1]
    # both inlined helper's code, the same instructions at the same offsets...
    assert [a.steps[x].offset for x in in_a] == [b.steps[y].offset for y in in_b] and in_a
    # ...called from different lines: no step inside helper is paired with the other's
    paired = {x for x, y in cmp.aligned if x is not None and y is not None}
    assert not paired & set(in_a)
    # and the two meet again after the call
    after = line_of(either, "after the call")
    assert any(a.steps[x].lineno == after and b.steps[y].lineno == after
               for x, y in cmp.aligned if x is not None and y is not None)
    assert cmp.divergence.why in ("value", "branch taken")


def test_align_steps_meets_again_after_a_difference_and_ends_with_what_is_left():
    from capture.compare import _aligned

    assert _aligned([1, 2, 3, 4], [1, 2, 3, 4]) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    # a runs 7 8 where b runs 9; then both run 4
    assert _aligned([1, 7, 8, 4], [1, 9, 4]) == [(0, 0), (1, None), (2, None), (None, 1), (2 + 1, 2)]
    # a loop body (5 6) once more in b
    assert _aligned([1, 5, 6, 2], [1, 5, 6, 5, 6, 2]) == [
        (0, 0), (1, 1), (2, 2), (None, 3), (None, 4), (3, 5)]
    # the two never meet again: the rest of each is alone
    assert _aligned([1, 2], [1, 3, 4]) == [(0, 0), (1, None), (None, 1), (None, 2)]
    assert _aligned([], [1]) == [(None, 0)]


def test_a_restarted_attempt_s_guards_are_paired_by_kind_and_source_only():
    # a print breaks the graph: Dynamo's first attempt at each compile restarts, and the
    # restarted attempt builds no guard tree (its guards are a kind and a source each)
    def printed(x):
        y = x * 2
        print("y")  # breaks
        return y + 1

    rec = recorded(printed, (torch.ones(2),), (torch.ones(3),))
    kept = [c.compile_id for c in rec.compiles if c.code_name == "printed" and not c.restarted]
    restarted = [c.compile_id for c in rec.compiles if c.code_name == "printed" and c.restarted]
    assert len(kept) == 2 and restarted
    both_kept = capture.compare(rec, *kept)
    assert both_kept.guard_checks_compared
    [changed] = both_kept.guards_changed   # the size of x, and nothing else
    assert changed.source == "L['x']"
    with_restarted = capture.compare(rec, kept[0], restarted[-1])
    assert not with_restarted.guard_checks_compared and with_restarted.guards_changed == []
    assert "their checks not compared" in str(with_restarted)
    assert with_restarted.to_dict()["guard_checks_compared"] is False
