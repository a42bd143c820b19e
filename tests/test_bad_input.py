"""Whatever a learner throws at the engine and the magic: a correct recording or a clear error.

Each program below is compiled twice, once plainly and once inside `capture.record()`;
Dynamo's graphs, guard trees, rewritten bytecode and results must be the same (the
oracle is Dynamo itself, see `dynamo_oracle`), the results must equal eager
execution, and the recording must say the specific things a learner reads for that
program: the instructions that matter, the graph, where it broke and why.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import inspect
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import capture
from capture import hooks
from dynamo_oracle import (ROOT, artifacts_of, eager_results, force_restore, recorded_artifacts,
                           seams)


@pytest.fixture(autouse=True)
def restored():
    """Every test leaves no hook behind; if a bug did, undo it so later tests still mean it."""
    before = seams()
    yield
    left = hooks.installed()
    if seams() != before or capture.active():
        force_restore(before)
    assert left == [], f"hooks left installed: {left}"


def line_of(fn, text):
    """The file line number of the first line of fn containing text."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def opnames(c, code_name=None):
    return {s.opname for s in c.steps if code_name is None or s.code_name == code_name}


def the_compile(recordings):
    """The one compile of a one-call recording."""
    (rec,) = recordings
    (c,) = rec.compiles
    return c


# -- programs that compile: each must give the right recording ---------------------------

def gen_fn(x):
    def g(n):
        for i in range(n):
            yield x * i
    return sum(g(3))


def try_fn(x):
    try:
        y = x.sin()
        raise ValueError("handled inside")
    except ValueError:
        y = y + 1
    finally:
        y = y * 2
    return y


def with_fn(x):
    with torch.no_grad():
        y = x * 2
    with contextlib.nullcontext():
        y = y + 1
    return y


def autocast_fn(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
    return y.float() + 1


def recursive(x, n=3):
    if n == 0:
        return x
    return recursive(x.sin(), n - 1)


COUNTER = 1


def global_fn(x):
    global COUNTER
    COUNTER = COUNTER + 1
    return x + COUNTER


def nonlocal_fn(x):
    k = 0

    def inc():
        nonlocal k
        k += 1
        return k

    inc()
    inc()
    return x * k


def comprehensions(x):
    return sum([x * i for i in range(3)]) + sum({i: x.cos() for i in range(2)}.values())


def kwargs_fn(x, **kwargs):
    return x * kwargs["a"] + kwargs.get("b", 0)


@dataclasses.dataclass
class Pair:
    a: torch.Tensor
    b: int


Point = collections.namedtuple("Point", "a b")


def dataclass_fn(d):
    return d.a * d.b


def namedtuple_fn(t):
    return t.a + t.b


class Tagged(torch.Tensor):
    """A tensor subclass that keeps its type through every op (the default __torch_function__)."""


def subclass_fn(x):
    return x.sin() + 1


@torch.compiler.disable
def hidden_helper(x):
    return x.cos()


def calls_disabled(x):
    return hidden_helper(x.sin()) + 1


def check_generator(c):
    assert {"YIELD_VALUE"} <= opnames(c, "g")
    assert {s.depth for s in c.steps if s.code_name == "g"} == {1}
    assert c.graph_code.count(" * ") == 3  # x * 0, x * 1, x * 2: the generator was unrolled


def check_try(c):
    assert {"RAISE_VARARGS", "PUSH_EXC_INFO", "CHECK_EXC_MATCH", "POP_EXCEPT"} <= opnames(c)
    raise_line = line_of(try_fn, "raise ValueError")
    assert any(s.opname == "RAISE_VARARGS" and s.lineno == raise_line for s in c.steps)
    assert c.graph_break is None and "sin" in c.graph_code


def check_with(c):
    assert sum(s.opname == "BEFORE_WITH" for s in c.steps) == 2
    assert "_set_grad_enabled(False)" in c.graph_code and "_set_grad_enabled(True)" in c.graph_code


def check_autocast(c):
    assert "BEFORE_WITH" in opnames(c)
    assert "_enter_autocast" in c.graph_code and "_exit_autocast" in c.graph_code


def check_recursion(c):
    assert {s.depth for s in c.steps if s.code_name == "recursive"} == {0, 1, 2, 3}
    assert c.graph_code.count(".sin()") == 3


def check_global(c):
    assert "STORE_GLOBAL" in opnames(c)
    assert any(g.source == "G['COUNTER']" for g in c.guard_details)


def check_nonlocal(c):
    assert {"STORE_DEREF", "LOAD_DEREF"} <= opnames(c, "inc")
    # The cell handed to the closure: LOAD_CLOSURE until 3.13, where it is a LOAD_FAST of the cell
    closure = "LOAD_FAST" if sys.version_info >= (3, 13) else "LOAD_CLOSURE"
    assert {closure, "BUILD_TUPLE"} <= opnames(c, "nonlocal_fn")


def check_comprehensions(c):
    if sys.version_info < (3, 12):  # each comprehension is a code of its own, inlined
        assert "LIST_APPEND" in opnames(c, "<listcomp>") and "MAP_ADD" in opnames(c, "<dictcomp>")
        assert {s.depth for s in c.steps if s.code_name in ("<listcomp>", "<dictcomp>")} == {1}
    else:  # PEP 709: the loops are in the function's own code
        assert {"LIST_APPEND", "MAP_ADD", "LOAD_FAST_AND_CLEAR"} <= opnames(c, "comprehensions")
        assert not any(s.code_name.startswith("<") for s in c.steps)


def check_kwargs(c):
    sources = {g.source for g in c.guard_details}
    assert {"L['kwargs']['a']", "L['kwargs']['b']"} <= sources


def check_dataclass(c):
    assert "LOAD_ATTR" in opnames(c)
    assert {"L['d'].a", "L['d'].b"} <= {g.source for g in c.guard_details}


def check_namedtuple(c):
    assert {"L['t'].a", "L['t'].b"} <= {g.source for g in c.guard_details}


def check_subclass(c):
    assert "__torch_function__" in {s.code_name for s in c.steps}  # inlined, at depth 1
    assert "Tagged" in c.graph_code  # the placeholder is typed with the subclass


def check_disabled(recording):
    first = recording.compiles[0]
    assert first.graph_break is not None
    assert "disable" in first.graph_break.reason
    assert first.graph_break.lineno == line_of(calls_disabled, "hidden_helper(")
    graph_breaks = [c for c in recording.compiles if c.outcome == "graph_break"]
    assert graph_breaks and graph_breaks[0].resume_functions


PROGRAMS = {
    "generator": (gen_fn, lambda: (torch.randn(3),), {}, check_generator),
    "try/except/finally": (try_fn, lambda: (torch.randn(3),), {}, check_try),
    "with blocks": (with_fn, lambda: (torch.randn(3, requires_grad=True),), {}, check_with),
    "autocast": (autocast_fn, lambda: (torch.randn(4, 4),), {}, check_autocast),
    "recursion": (recursive, lambda: (torch.randn(3),), {}, check_recursion),
    "global": (global_fn, lambda: (torch.randn(3),), {}, check_global),
    "nonlocal": (nonlocal_fn, lambda: (torch.randn(3),), {}, check_nonlocal),
    "comprehensions": (comprehensions, lambda: (torch.randn(3),), {}, check_comprehensions),
    "**kwargs": (kwargs_fn, lambda: (torch.randn(3),), {"a": 2, "b": 3}, check_kwargs),
    "dataclass": (dataclass_fn, lambda: (Pair(torch.randn(3), 3),), {}, check_dataclass),
    "namedtuple": (namedtuple_fn, lambda: (Point(torch.randn(3), torch.randn(3)),), {},
                   check_namedtuple),
    "tensor subclass": (subclass_fn, lambda: (torch.randn(3).as_subclass(Tagged),), {},
                        check_subclass),
}


def calls_for(fn, make_args, kwargs):
    def make():
        global COUNTER
        COUNTER = 1  # the global program mutates it: every run starts from the same value
        torch.manual_seed(0)
        return [(fn, make_args(), kwargs)]
    return make


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_that_compiles_is_recorded_faithfully_and_says_what_it_did(name):
    fn, make_args, kwargs, check = PROGRAMS[name]
    make = calls_for(fn, make_args, kwargs)
    plain = artifacts_of(make)
    counter_after_plain = COUNTER
    with_recording, recordings = recorded_artifacts(make)
    assert with_recording == plain
    assert COUNTER == counter_after_plain  # the same side effect, replayed once
    assert plain["results"] == eager_results(make)
    c = the_compile(recordings)
    assert c.outcome == "compiled" and c.error is None
    assert c.graph_code and c.modified_bytecode and c.guard_tree
    assert c.steps[-1].opname == "RETURN_VALUE" and c.steps[-1].depth == 0
    check(c)


def test_a_compiler_disabled_helper_is_a_graph_break_with_a_resume_function():
    make = calls_for(calls_disabled, lambda: (torch.randn(3),), {})
    plain = artifacts_of(make)
    with_recording, (recording,) = recorded_artifacts(make)
    assert with_recording == plain
    assert plain["results"] == eager_results(make)
    check_disabled(recording)
    # the helper's own code is not traced: no step runs inside it
    assert all(s.code_name != "hidden_helper" for c in recording.compiles for s in c.steps)


# -- programs that fail: the same failure, and a recording that says where ----------------

def raises_while_traced(x):
    y = x.sin()
    raise ValueError("the learner's own error")


def raises_only_while_traced(x):
    y = x.sin()
    if torch.compiler.is_compiling():
        raise RuntimeError("raised only while Dynamo traces")
    return y + 1


def shape_mismatch(x):
    y = x.cos()
    return y @ y


def index_out_of_range(x, i):
    return x.index_select(0, i) + 1


def breaks_under_fullgraph(x):
    y = x.sin()
    print("a graph break")
    return y.cos()


def test_an_exception_raised_in_traced_code_reaches_the_caller_and_the_break_is_recorded():
    make = calls_for(raises_while_traced, lambda: (torch.randn(3),), {})
    plain = artifacts_of(make)
    with_recording, (recording,) = recorded_artifacts(make)
    assert with_recording == plain
    assert plain["results"] == eager_results(make) == [
        ["raised", "ValueError", "the learner's own error"]]
    (c,) = recording.compiles
    raise_line = line_of(raises_while_traced, "raise ValueError")
    assert c.graph_break is not None and c.graph_break.lineno == raise_line
    assert c.steps[-1].opname == "RAISE_VARARGS" and c.steps[-1].lineno == raise_line
    assert recording.ended_by == "ValueError: the learner's own error"


def test_a_break_dynamo_gives_up_on_is_a_skipped_frame_not_an_error_the_caller_saw():
    make = calls_for(raises_only_while_traced, lambda: (torch.randn(3),), {})
    plain = artifacts_of(make)
    with_recording, (recording,) = recorded_artifacts(make)
    assert with_recording == plain
    assert plain["results"] == eager_results(make)  # eager ran it: no exception
    (c,) = recording.compiles
    assert c.graph_break is not None
    assert c.graph_break.lineno == line_of(raises_only_while_traced, "raise RuntimeError")
    assert recording.ended_by is None
    assert c.outcome != "error" and "error" not in c.title(), c.title()  # e.g. "skipped"


def test_an_error_found_while_tracing_is_an_error_at_the_instruction_that_made_it():
    make = calls_for(shape_mismatch, lambda: (torch.randn(3, 4),), {})
    plain = artifacts_of(make)
    with_recording, (recording,) = recorded_artifacts(make)
    assert with_recording == plain
    (outcome,) = plain["results"]
    assert outcome[0] == "raised"
    (eager,) = eager_results(make)
    assert eager[:2] == ["raised", "RuntimeError"]
    (c,) = recording.compiles
    assert c.outcome == "error" and c.error.startswith(outcome[1])
    last = c.steps[-1]
    assert (last.opname, last.lineno) == ("BINARY_OP", line_of(shape_mismatch, "y @ y"))
    info = c.codes[last.code]
    row = next(i for i in info.walked if i.offset == last.offset)  # a step's offset is walked
    instruction = info.instructions[row.original]
    assert (instruction.opname, instruction.argrepr) == ("BINARY_OP", "@")
    assert recording.ended_by.startswith(outcome[1])


def test_an_error_while_the_compiled_code_runs_keeps_the_compile_and_names_the_error():
    make = calls_for(index_out_of_range, lambda: (torch.randn(3), torch.tensor([7])), {})
    plain = artifacts_of(make)
    with_recording, (recording,) = recorded_artifacts(make)
    assert with_recording == plain
    assert plain["results"] == eager_results(make)
    assert plain["results"][0][:2] == ["raised", "IndexError"]
    (c,) = recording.compiles
    assert c.outcome == "compiled" and "index_select" in c.graph_code  # tracing went fine
    assert recording.ended_by == "IndexError: index out of range in self"
    assert [e.kind for e in recording.events][-1] == "ended"


def test_fullgraph_with_a_graph_break_is_an_error_whose_last_step_is_the_breaking_call():
    make = calls_for(breaks_under_fullgraph, lambda: (torch.randn(3),), {})
    plain = artifacts_of(make, fullgraph=True)
    with_recording, (recording,) = recorded_artifacts(make, fullgraph=True)
    assert with_recording == plain
    assert plain["results"][0][:2] == ["raised", "Unsupported"]
    (c,) = recording.compiles
    assert c.outcome == "error" and "Unsupported" in c.error
    last = c.steps[-1]
    assert last.opname == "CALL" and last.lineno == line_of(breaks_under_fullgraph, "print(")
    assert c.graph_code is None and c.modified_bytecode is None


def test_fullgraph_with_a_graph_break_records_the_break_line_and_reason():
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        with capture.record() as recording:
            torch.compile(breaks_under_fullgraph, backend="eager", fullgraph=True)(torch.ones(3))
    (c,) = recording.compiles
    assert c.graph_break is not None
    assert c.graph_break.lineno == line_of(breaks_under_fullgraph, "print(")
    assert "print" in c.graph_break.reason or "builtin" in c.graph_break.reason
    assert f"graph break at line {c.graph_break.lineno}" in c.title()


# -- the magic ----------------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def cell(ipython_shell, capsys, monkeypatch):
    """Run a cell through the real shell; return (stdout, stderr, what the magic displayed)."""
    import widgets.magic

    shown = []

    def display(obj):
        shown.append(obj)
        print(f"<display {obj!r}>")

    monkeypatch.setattr(widgets.magic, "display", display)

    def run(text):
        shown.clear()
        capsys.readouterr()
        ipython_shell.run_cell(textwrap.dedent(text))
        out, err = capsys.readouterr()
        return ANSI.sub("", out), ANSI.sub("", err), shown[:]

    yield run
    assert not capture.active()
    result = ipython_shell.run_cell("_bad_input_still_works = 6 * 7")
    assert result.success and ipython_shell.user_ns["_bad_input_still_works"] == 42


@pytest.mark.parametrize("source, line, what", [
    ("x = 1\ny = (2 +\n", 3, "SyntaxError"),
    ("x = 1\nreturn x\n", 3, "SyntaxError"),
    ("import torch\nf = torch.compile(lambda x: x, backend='eager')\nf(1 2)\n", 4, "SyntaxError"),
])
def test_a_syntax_error_is_a_short_message_at_the_learners_line_and_nothing_is_recorded(
        cell, ipython_shell, source, line, what):
    ipython_shell.user_ns.pop("_trace", None)
    out, err, shown = cell("%%capture_trace\n" + source)
    text = out + err
    assert what in text and f"line {line}" in text
    assert "Traceback" not in text and "torch/_dynamo" not in text
    assert len(text.strip().splitlines()) <= 5
    assert shown == [] and "_trace" not in ipython_shell.user_ns


def test_an_indentation_error_found_by_the_tokenizer_is_a_short_message_too(cell, ipython_shell):
    ipython_shell.user_ns.pop("_trace", None)
    out, err, shown = cell("%%capture_trace\ndef f(x):\n    return x\n  y = 2\n")
    text = out + err
    assert "IndentationError" in text and "y = 2" in text
    assert re.search(r"(line |:)4\b", text), text
    assert "Traceback" not in text and "magic.py" not in text
    assert len(text.strip().splitlines()) <= 5
    assert shown == [] and "_trace" not in ipython_shell.user_ns


def test_a_cell_that_compiles_the_same_function_twice_records_what_dynamo_compiled(
        cell, ipython_shell):
    out, err, shown = cell('''\
        %%capture_trace
        def twice(x):
            return x.sin() * 2
        a = torch.compile(twice, backend="eager")(torch.ones(3))
        b = torch.compile(twice, backend="eager")(torch.ones(3))     # served from the cache
        c = torch.compile(twice, backend="eager")(torch.ones(3, 2))  # a new rank: recompiled
        ''')
    assert err == ""
    r = ipython_shell.user_ns["_trace"]
    ns = ipython_shell.user_ns
    assert torch.equal(ns["a"], ns["b"]) and torch.equal(ns["a"], torch.ones(3).sin() * 2)
    assert torch.equal(ns["c"], torch.ones(3, 2).sin() * 2)
    assert [c.compile_id for c in r.compiles] == ["0/0", "0/1"]
    assert r.compiles[1].recompile_reasons
    assert "tensor 'x' rank mismatch" in r.compiles[1].recompile_reasons[0]
    assert all(c.outcome == "compiled" and c.graph_code for c in r.compiles)
    assert len(shown) == 1 and shown[0].recording is r


RESETS_ITSELF = '''\
    %%capture_trace
    def once(x):
        return x.cos() + 1
    first = torch.compile(once, backend="eager")(torch.ones(3))
    torch._dynamo.reset()
    second = torch.compile(once, backend="eager")(torch.ones(3))
    '''


def test_a_cell_that_resets_dynamo_itself_records_both_compiles(cell, ipython_shell):
    out, err, shown = cell(RESETS_ITSELF)
    r = ipython_shell.user_ns["_trace"]
    ns = ipython_shell.user_ns
    assert torch.equal(ns["first"], ns["second"])
    assert len(r.compiles) == 2
    assert all(c.outcome == "compiled" and c.code_name == "once" for c in r.compiles)
    assert r.compiles[0].graph_code == r.compiles[1].graph_code
    assert [e.kind for e in r.events].count("compile") == 2
    assert hooks.installed() == [] and shown


def test_after_a_reset_inside_the_cell_every_compile_can_be_told_apart(cell, ipython_shell):
    cell(RESETS_ITSELF)
    r = ipython_shell.user_ns["_trace"]
    # ids are Dynamo's own, which start again after a reset; the generation tells them apart
    assert [(c.compile_id, c.generation) for c in r.compiles] == [("0/0", 0), ("0/0", 1)]
    assert all(r.compile(c.compile_id, c.generation) is c for c in r.compiles)
    assert [e.kind for e in r.events].count("reset") == 1
    titles = [c.title() for c in r.compiles]
    assert len(set(titles)) == len(titles), titles


def test_a_cell_with_no_compile_leaves_an_empty_recording_and_nothing_installed(
        cell, ipython_shell):
    out, err, shown = cell("%%capture_trace\ntotal = sum(range(10))\ntotal\n")
    assert "45" in out and shown == []
    assert err.startswith("capture_trace: nothing was compiled") and err.count("\n") == 1
    r = ipython_shell.user_ns["_trace"]
    assert r.compiles == [] and r.ended_by is None and r.step_count == 0


def test_a_compiled_generator_function_gets_a_message_that_names_the_generator(
        cell, ipython_shell):
    out, err, shown = cell('''\
        %%capture_trace
        def numbers(x):
            yield x + 1
            yield x.sin()
        values = list(torch.compile(numbers, backend="eager")(torch.ones(2)))
        ''')
    values = ipython_shell.user_ns["values"]
    assert torch.equal(values[0], torch.ones(2) + 1)
    assert err.count("\n") == 1 and err.startswith("capture_trace:")
    assert "generator" in err and "Call one in the cell" not in err


COROUTINE_SESSION = r'''
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance(colors="nocolor")
shell.run_cell("%load_ext widgets")
shell.run_cell("import torch")
shell.run_cell("""%%capture_trace --text
async def later(x):
    return x + 1
co = torch.compile(later, backend="eager")(torch.ones(2))
try:
    co.send(None)
except StopIteration as stop:
    value = stop.value
""")
sys.stdout.flush()
# the next cell compiles something else: the kernel must still be there
result = shell.run_cell("torch.compile(lambda x: x.cos(), backend='eager')(torch.zeros(2))")
print("next cell:", result.success, flush=True)
'''


@pytest.mark.timeout(180)
def test_a_compiled_coroutine_does_not_crash_the_kernel():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", COROUTINE_SESSION], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=170)
    assert out.returncode == 0, f"exit code {out.returncode}\n{out.stderr[-2000:]}"
    assert "next cell: True" in out.stdout
    text = out.stdout + out.stderr
    recorded = "[0/0] later" in text
    refused = "coroutine" in text.lower()  # a short message that names the coroutine
    assert recorded or refused, text[-2000:]
