"""Every guard that failed on a recompile, as data: which compile's guard, expected and seen,
and the step (and so the line) that installed it. Held-out recompiles of the kinds users meet."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

import capture
from capture import FailedGuard
from capture.recompiles import step_line
from scenarios import normalise


def line_of(fn, marker: str) -> int:
    """The line of `fn`'s source that carries `# <marker>`."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, text in enumerate(lines) if f"# {marker}" in text]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def recompiled(fn, *calls, **compile_options):
    """Record `fn` compiled and called with each (args, kwargs); the recording."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", **compile_options)
    with capture.record() as rec:
        for args, kwargs in calls:
            compiled(*args, **kwargs)
    torch._dynamo.reset()
    return rec


def the_failure(rec, source: str) -> tuple[FailedGuard, capture.Compile]:
    """The one failed guard about `source` of the recording's last compile, and its compile."""
    c = rec.compiles[-1]
    assert c.replaces is not None, [x.compile_id for x in rec.compiles]
    hits = [fg for fg in c.failed_guards if fg.source == source]
    assert len(hits) == 1, (source, c.failed_guards)
    return hits[0], rec.compile(hits[0].compile_id)


def installed_line(fg: FailedGuard, old: capture.Compile) -> int:
    """The line of the step that installed the failed guard, read through the records."""
    guard = old.guard_details[fg.detail]
    # `guard` names the failing line of the guard tree, the same check as the record
    assert fg.guard is not None and guard.leaf == fg.guard
    assert old.guards[fg.guard] == guard.text
    step = guard.step if guard.step is not None else fg.step
    assert fg.step == step
    assert step_line(old, step) == fg.lineno
    return fg.lineno


# -- the programs ------------------------------------------------------------------


def positional(x):
    y = x.sin()  # reads x
    return y + 1


def keyword(**kwargs):
    h = kwargs["x"] * 2  # reads x
    return h.relu()


class KVCache:
    def __init__(self, k, v):
        self.k, self.v = k, v


def attend(q, cache):
    scores = q @ cache.k.T  # reads k
    return scores.softmax(-1)


def scaled(x, n):
    y = x.cos()
    return y * n  # reads n


def greet(x, s):
    y = x + 1
    if s == "Hello":  # reads s
        return y
    return -y


FACTOR = 2


def by_global(x):
    y = x.exp()
    return y * FACTOR  # reads FACTOR


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        y = x.tanh()
        return y * self.scale  # reads scale


def square(x):
    y = x.sum(0)  # reads x
    return y * 2


def counted(x, n):
    return x + n  # reads n


def broken(x, n):
    y = x * n  # reads n
    print("a graph break")
    return y + 1


# -- held-out recompiles ----------------------------------------------------------


def test_a_shape_change_on_a_positional_tensor():
    rec = recompiled(positional, ((torch.randn(4, 3),), {}), ((torch.randn(8, 3),), {}))
    fg, old = the_failure(rec, "L['x']")
    assert (fg.compile_id, fg.kind, fg.what, fg.expected, fg.seen) == (
        "0/0", "TENSOR_MATCH", "size", "[4, 3]", "[8, 3]")
    assert rec.compiles[-1].replaces == "0/0"
    assert installed_line(fg, old) == line_of(positional, "reads x")
    assert old.guard_details[fg.detail].tree_kind == "TENSOR_MATCH"


def test_a_shape_change_on_a_keyword_tensor():
    """`tensor 'kwargs['x']' size mismatch`: every input of a Hugging Face model."""
    rec = recompiled(keyword, ((), {"x": torch.randn(2, 5)}), ((), {"x": torch.randn(3, 5)}))
    assert "kwargs['x']" in rec.compiles[-1].recompile_reasons[0]
    fg, old = the_failure(rec, "L['kwargs']['x']")
    assert (fg.what, fg.expected, fg.seen) == ("size", "[2, 5]", "[3, 5]")
    assert installed_line(fg, old) == line_of(keyword, "reads x")


def test_a_shape_change_on_a_tensor_inside_an_object():
    q = torch.randn(1, 4)
    rec = recompiled(attend, ((q, KVCache(torch.randn(2, 4), torch.randn(2, 4))), {}),
                     ((q, KVCache(torch.randn(3, 4), torch.randn(3, 4))), {}))
    fg, old = the_failure(rec, "L['cache'].k")
    assert (fg.what, fg.expected, fg.seen) == ("size", "[2, 4]", "[3, 4]")
    assert installed_line(fg, old) == line_of(attend, "reads k")


def test_a_dtype_change():
    rec = recompiled(positional, ((torch.randn(3),), {}),
                     ((torch.randn(3, dtype=torch.float64),), {}))
    fg, old = the_failure(rec, "L['x']")
    assert (fg.what, fg.expected, fg.seen) == ("dtype", "float32", "float64")
    assert installed_line(fg, old) == line_of(positional, "reads x")


def test_a_changed_python_int():
    rec = recompiled(scaled, ((torch.randn(3), 2), {}), ((torch.randn(3), 3), {}))
    fg, old = the_failure(rec, "L['n']")
    assert (fg.kind, fg.what, fg.expected, fg.seen) == ("EQUALS_MATCH", "value", "2", "3")
    assert installed_line(fg, old) == line_of(scaled, "reads n")


def test_a_changed_str_local():
    rec = recompiled(greet, ((torch.randn(3), "Hello"), {}), ((torch.randn(3), "World"), {}))
    fg, old = the_failure(rec, "L['s']")
    assert (fg.expected, fg.seen) == ("'Hello'", "'World'")
    assert installed_line(fg, old) == line_of(greet, "reads s")


def test_a_changed_global():
    global FACTOR
    torch._dynamo.reset()
    compiled = torch.compile(by_global, backend="eager")
    try:
        with capture.record() as rec:
            compiled(torch.randn(3))
            FACTOR = 5
            compiled(torch.randn(3))
    finally:
        FACTOR = 2
        torch._dynamo.reset()
    fg, old = the_failure(rec, "G['FACTOR']")
    assert (fg.expected, fg.seen) == ("2", "5")
    assert installed_line(fg, old) == line_of(by_global, "reads FACTOR")


def test_a_changed_module_attribute():
    m = Scaled()
    torch._dynamo.reset()
    compiled = torch.compile(m, backend="eager")
    with capture.record() as rec:
        compiled(torch.randn(3))
        m.scale = 3.0
        compiled(torch.randn(3))
    torch._dynamo.reset()
    fg, old = the_failure(rec, "L['self'].scale")
    assert (fg.expected, fg.seen) == ("2.0", "3.0")
    assert installed_line(fg, old) == line_of(Scaled.forward, "reads scale")


def test_a_requires_grad_change():
    rec = recompiled(positional, ((torch.randn(3),), {}),
                     ((torch.randn(3, requires_grad=True),), {}))
    fg, old = the_failure(rec, "L['x']")
    assert (fg.what, fg.expected, fg.seen) == ("requires_grad", "False", "True")
    assert installed_line(fg, old) == line_of(positional, "reads x")


def test_a_duck_shaping_split():
    """Two equal sizes get one symbol (duck shaping); a call where they differ fails the
    equality Dynamo added after tracing: the step that read the tensor installed it."""
    rec = recompiled(square, ((torch.randn(4, 4),), {}), ((torch.randn(4, 5),), {}),
                     dynamic=True)
    c = rec.compiles[-1]
    [fg] = [fg for fg in c.failed_guards if fg.source == "L['x'].size()[1]"]
    assert fg.what == "check" and fg.expected == "L['x'].size()[1] == L['x'].size()[0]"
    assert "= 5" in fg.seen and "= 4" in fg.seen
    old = rec.compile(fg.compile_id)
    guard = old.guard_details[fg.detail]
    assert guard.step is None and guard.text.startswith("LAMBDA_GUARD")  # built after tracing
    assert step_line(old, fg.step) == fg.lineno == line_of(square, "reads x")


def test_a_cache_limit_refusal_carries_the_failed_guards():
    torch._dynamo.reset()
    compiled = torch.compile(counted, backend="eager")
    with torch._dynamo.config.patch(recompile_limit=2, automatic_dynamic_shapes=False):
        with capture.record() as rec:
            for n in (1, 2, 3):
                compiled(torch.randn(3), n)
    torch._dynamo.reset()
    [limit] = [e for e in rec.events if e.kind == capture.EventKind.CACHE_LIMIT]
    by_compile = {fg.compile_id: fg for fg in limit.failed_guards if fg.source == "L['n']"}
    assert set(by_compile) == {"0/0", "0/1"}  # every earlier entry, not only the first
    assert [(by_compile[i].expected, by_compile[i].seen) for i in ("0/0", "0/1")] == [
        ("1", "3"), ("2", "3")]
    for fg in by_compile.values():
        assert installed_line(fg, rec.compile(fg.compile_id)) == line_of(counted, "reads n")
    back = capture.Recording.from_json(rec.to_json())
    assert [e.failed_guards for e in back.events] == [e.failed_guards for e in rec.events]


def test_a_fail_on_recompile_error_carries_the_failed_guards():
    torch._dynamo.reset()
    compiled = torch.compile(counted, backend="eager")
    with capture.record() as rec:
        compiled(torch.randn(3), 1)
        with torch.compiler.set_stance("fail_on_recompile"):
            with pytest.raises(RuntimeError, match="fail_on_recompile"):
                compiled(torch.randn(3), 2)
    torch._dynamo.reset()
    [refusal] = [e for e in rec.events if e.kind == capture.EventKind.FAIL_ON_RECOMPILE]
    [fg] = [fg for fg in refusal.failed_guards if fg.source == "L['n']"]
    assert (fg.compile_id, fg.expected, fg.seen) == ("0/0", "1", "2")
    assert installed_line(fg, rec.compile("0/0")) == line_of(counted, "reads n")
    assert len(rec.compiles) == 1  # nothing was compiled for the refused call


def test_every_failing_guard_not_only_the_first():
    rec = recompiled(scaled, ((torch.randn(4), 2), {}), ((torch.randn(5, dtype=torch.float64), 3), {}))
    c = rec.compiles[-1]
    assert len(c.recompile_reasons) == 1  # Dynamo names one
    got = {(fg.source, fg.what) for fg in c.failed_guards}
    assert {("L['x']", "dtype"), ("L['n']", "value")} <= got


def test_a_restarted_compile_is_named_by_the_attempt_that_installed_the_guards():
    rec = recompiled(broken, ((torch.randn(3), 2), {}), ((torch.randn(3), 4), {}))
    assert [c.compile_id for c in rec.compiles][:3] == ["0/0", "0/0_1", "1/0"]
    fg, old = the_failure(rec, "L['n']")
    assert fg.compile_id == "0/0_1" and old.outcome == capture.Outcome.GRAPH_BREAK
    assert installed_line(fg, old) == line_of(broken, "reads n")


def test_failed_guards_survive_the_json_round_trip():
    rec = recompiled(scaled, ((torch.randn(4), 2), {}), ((torch.randn(4), 3), {}))
    back = capture.Recording.from_json(rec.to_json())
    assert back.compiles[-1].failed_guards == rec.compiles[-1].failed_guards
    assert isinstance(back.compiles[-1].failed_guards, tuple)
    assert back.compiles[-1].replaces == "0/0"
    assert back.compiles[0].guard_details == rec.compiles[0].guard_details


def _trees(fn, calls):
    """Every cache entry's guard tree after the calls (its order follows Dynamo's fail
    counts, so a reader that asked a manager to check would show here)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    code = fn.__code__
    return [normalise(str(e.guard_manager)) for e in _debug_get_cache_entry_list(code)], [
        str(e.compile_id) for e in _debug_get_cache_entry_list(code)]


def test_reading_the_failures_changes_nothing_dynamo_holds():
    calls = [(torch.randn(4, 3), 2, "Hello"), (torch.randn(8, 3), 3, "World"),
             (torch.randn(8, 3), 3, "Hello"), (torch.randn(8, 3), 3, "World")]

    def run(recording: bool):
        torch._dynamo.reset()
        compiled = torch.compile(many, backend="eager")
        if recording:
            with capture.record() as rec:
                out = [compiled(*a) for a in calls]
        else:
            rec, out = None, [compiled(*a) for a in calls]
        trees = _trees(many, calls)
        torch._dynamo.reset()
        return trees, [o.shape for o in out], rec

    plain, plain_out, _ = run(False)
    seen, seen_out, rec = run(True)
    assert seen == plain and seen_out == plain_out
    assert any(c.failed_guards for c in rec.compiles)


def many(x, n, s):
    y = x * n
    if s == "Hello":
        return y + 1
    return y - 1


def added(a, b):
    return a + b  # reads a and b


def test_an_aliasing_change_is_found_without_calling_the_relational_guard():
    x = torch.randn(3)
    rec = recompiled(added, ((torch.randn(3), torch.randn(3)), {}), ((x, x), {}))
    [fg] = rec.compiles[-1].failed_guards
    assert (fg.kind, fg.what, fg.expected, fg.seen) == (
        "NO_TENSOR_ALIASING", "aliasing", "distinct tensors", "L['b'] is L['a']")
    old = rec.compile(fg.compile_id)
    assert old.guard_details[fg.detail].text.startswith("NO_TENSOR_ALIASING: check_no_aliasing(")
    assert step_line(old, fg.step) == line_of(added, "reads a and b")


def test_an_error_on_recompile_carries_the_failed_guards():
    torch._dynamo.reset()
    compiled = torch.compile(added, backend="eager")
    with torch._dynamo.config.patch(error_on_recompile=True):
        with capture.record() as rec:
            compiled(torch.randn(3), torch.randn(3))
            with pytest.raises(torch._dynamo.exc.RecompileError):
                compiled(torch.randn(4), torch.randn(4))
    torch._dynamo.reset()
    [error] = [e for e in rec.events if e.kind == capture.EventKind.ERROR]
    assert {(fg.source, fg.expected, fg.seen) for fg in error.failed_guards} == {
        ("L['a']", "[3]", "[4]"), ("L['b']", "[3]", "[4]")}


def test_a_grad_mode_change_and_a_new_dynamic_mark():
    torch._dynamo.reset()
    compiled = torch.compile(positional, backend="eager")
    with capture.record() as rec:
        compiled(torch.randn(3))
        with torch.no_grad():
            compiled(torch.randn(3))
        marked = torch.randn(3)
        torch._dynamo.mark_dynamic(marked, 0)
        compiled(marked)
    torch._dynamo.reset()
    [grad] = rec.compile("0/1").failed_guards
    assert (grad.kind, grad.what, grad.expected, grad.seen) == (
        "GLOBAL_STATE", "global state", "grad_mode true", "grad_mode false")
    third = rec.compile("0/2").failed_guards
    assert {(fg.compile_id, fg.what) for fg in third} == {
        ("0/1", "global state"), ("0/1", "marking"), ("0/0", "marking")}
    mark = next(fg for fg in third if fg.what == "marking")
    assert (mark.expected, mark.seen) == ("not marked by mark_dynamic",
                                          "marked by mark_dynamic (dims [0])")
    assert mark.lineno == line_of(positional, "reads x")


def test_a_str_with_a_hash_in_it():
    rec = recompiled(greet, ((torch.randn(3), "#tag  # not a comment"), {}),
                     ((torch.randn(3), "World"), {}))
    fg, _ = the_failure(rec, "L['s']")
    assert (fg.expected, fg.seen) == ("'#tag  # not a comment'", "'World'")
