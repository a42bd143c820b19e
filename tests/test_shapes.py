"""Shapes as data (`Compile.shapes`): eight programs, each one known mechanism of dynamic
shapes, recorded and checked three ways: against the shape environment Dynamo itself handed
the backend (the same object, read by the test after the compile), against what
`TORCH_LOGS=dynamic` prints for the same program in a fresh process, and against the step
the recording says made each symbol and guard (its opcode and line).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import capture
from capture.explain import explanation, explanation_text
from capture.shapes import (
    AUTOMATIC, DYNAMIC_TRUE, MARK_DYNAMIC, MARK_UNBACKED, SPECIALIZED, STATIC, ZERO_ONE, Shapes,
)

# Each program defines `run(backend)`, which compiles and calls; the line marked `# here`
# is the one that asks the size a question.
PROGRAMS = {
    "automatic": """
        def f(x, y):
            return x + y  # here
        def run(backend):
            c = torch.compile(f, backend=backend)
            c(torch.randn(3), torch.randn(3))
            c(torch.randn(5), torch.randn(5))
    """,
    "zero_one": """
        def f(x):
            return x * 2  # here
        def run(backend):
            c = torch.compile(f, backend=backend)
            c(torch.randn(3)); c(torch.randn(5)); c(torch.randn(1))
    """,
    "marked_broadcast": """
        def f(x, y):
            return x + y  # here
        def run(backend):
            x = torch.randn(4)
            torch._dynamo.mark_dynamic(x, 0)
            try:
                torch.compile(f, backend=backend)(x, torch.randn(4))
            except Exception as e:
                assert type(e).__name__ == "ConstraintViolationError", e
    """,
    "duck": """
        def f(x, y):
            return x.sum() + y.sum()  # here
        def run(backend):
            torch.compile(f, backend=backend, dynamic=True)(torch.randn(6), torch.randn(6))
    """,
    "unbacked_check": """
        def f(x):
            torch._check(x.shape[0] > 2)  # here
            return x * 2
        def run(backend):
            x = torch.randn(5)
            torch._dynamo.decorators.mark_unbacked(x, 0)
            torch.compile(f, backend=backend)(x)
    """,
    "nonzero": """
        def f(x):
            n = x.nonzero()  # here
            return n * 2
        def run(backend):
            with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
                torch.compile(f, backend=backend)(torch.tensor([1, 0, 1, 1]))
    """,
    "python_if": """
        def f(x):
            if x.shape[0] > 8:  # here
                return x * 2
            return x + 1
        def run(backend):
            x = torch.randn(10)
            torch._dynamo.mark_dynamic(x, 0)
            torch.compile(f, backend=backend)(x)
    """,
    "dynamic_true": """
        def f(x, y):
            return x @ y  # here
        def run(backend):
            torch.compile(f, backend=backend, dynamic=True)(torch.randn(3, 4), torch.randn(4, 5))
    """,
}


def _namespace(name: str) -> dict:
    ns = {"torch": torch, "__name__": f"shapes_{name}"}
    source = textwrap.dedent(PROGRAMS[name])
    exec(compile(source, f"<{name}>", "exec"), ns)
    ns["here"] = 1 + next(i for i, line in enumerate(source.splitlines()) if "# here" in line)
    return ns


def _record(name: str):
    """The recording of program `name`, and the shape environments Dynamo handed the
    backend (by compile id: each compile's own)."""
    envs = {}

    def backend(gm, example_inputs):
        ctx = torch._guards.TracingContext.get()
        envs[str(torch._guards.CompileContext.current_compile_id())] = ctx.fake_mode.shape_env
        return gm.forward

    ns = _namespace(name)
    torch._dynamo.reset()   # compile ids from 0/0 for each program, as in the logged run
    with capture.record() as rec:
        ns["run"](backend)
    return rec, envs, ns["here"]


@pytest.fixture(scope="module")
def recorded():
    out = {name: _record(name) for name in PROGRAMS}
    torch._dynamo.reset()
    return out


@pytest.fixture(scope="module")
def torch_logs():
    """What `TORCH_LOGS=dynamic` prints for each program in a fresh process: per program,
    the symbols made (id, symbol, source) and the guards added (id, expression)."""
    script = ["import torch"]
    for name in PROGRAMS:
        script += ["torch._dynamo.reset()", f"exec({textwrap.dedent(PROGRAMS[name])!r})",
                   "run('eager')"]
    env = dict(os.environ, TORCH_LOGS="dynamic", TORCHDYNAMO_EXTENDED_ADVICE="0")
    done = subprocess.run([sys.executable, "-c", "\n".join(script)], capture_output=True,
                          text=True, timeout=240, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def _symbols_logged(stderr: str) -> set[tuple[str, str]]:
    return set(re.findall(r"create_symbol (s\d+) = \S+ for (\S+\.size\(\)\[\d+\]|L\['\w+'\])", stderr))


def _guards_logged(stderr: str) -> set[str]:
    return set(re.findall(r"\] eval (.+?) \[guard added\]", stderr))


def _compile(rec, compile_id: str):
    [c] = [c for c in rec.compiles if c.compile_id == compile_id]
    return c


def test_every_symbol_and_guard_is_what_dynamos_own_shape_environment_holds(recorded):
    for name, (rec, envs, _) in recorded.items():
        for cid, env in envs.items():
            shapes = _compile(rec, cid).shapes
            assert isinstance(shapes, Shapes), (name, cid)
            assert [s.name for s in shapes.symbols] == [str(s) for s in env.var_to_range], name
            for s in shapes.symbols:
                sym = next(k for k in env.var_to_range if str(k) == s.name)
                names = [src.name() if callable(src.name) else src.name
                         for src in env.var_to_sources.get(sym, ())]
                if names:
                    assert list(s.sources) == names, (name, s)
                vr = env.var_to_range[sym]
                assert s.range == f"[{vr.lower}, {vr.upper}]", (name, s)
                assert s.replacement == (str(env.replacements[sym]) if sym in env.replacements
                                         else None), (name, s)
            assert [g.expr for g in shapes.guards] == [str(g.expr) for g in env.guards], name


def test_symbols_and_guards_agree_with_torch_logs_dynamic(recorded, torch_logs):
    logged_symbols = _symbols_logged(torch_logs)
    logged_guards = _guards_logged(torch_logs)
    ours_symbols, ours_guards = set(), set()
    for rec, _, _ in recorded.values():
        for c in rec.compiles:
            for s in (c.shapes.symbols if c.shapes else ()):
                if s.hint is not None:
                    ours_symbols.add((s.name, s.sources[0]))
            ours_guards |= {g.expr for g in (c.shapes.guards if c.shapes else ())}
    # a symbol duck shaping reuses is logged once, for its first source
    assert ours_symbols == logged_symbols
    assert ours_guards == logged_guards
    assert any(re.fullmatch(r"Eq\(s\d+, s\d+\)", g) for g in ours_guards)
    assert any(re.fullmatch(r"s\d+ > 8", g) for g in ours_guards)


def _step(rec, c, index):
    return c.steps[index]


def test_automatic_dynamic_on_the_second_size(recorded):
    rec, _, here = recorded["automatic"]
    first, second = _compile(rec, "0/0"), _compile(rec, "0/1")
    assert [d.how for d in first.shapes.dims] == [STATIC, STATIC] and not first.shapes.symbols
    x, y = second.shapes.dims
    assert (x.how, y.how) == (AUTOMATIC, AUTOMATIC) and x.dynamic and y.dynamic
    [guard] = second.shapes.guards
    assert guard.expr == f"Eq({x.value}, {y.value})" and guard.lineno == here
    assert guard.why.startswith("a broadcast") and guard.node == "add"
    step = second.steps[guard.step]
    assert step.opname == "BINARY_OP" and step.lineno == here
    # the broadcast tied the two: one symbol now stands for both
    assert second.shapes.symbol(x.value).replacement == y.value
    # the text view says it all, and says nothing where every size was static
    text = str(second)
    assert f"[step {guard.step}] {guard.expr} (a broadcast" in text
    assert f"{x.source} = {x.value}  (automatic dynamic; size 5 on this call)" in text
    assert "shapes (" not in str(first)


def test_zero_one_specialization_and_its_fix(recorded):
    rec, _, _ = recorded["zero_one"]
    dynamic, third = _compile(rec, "0/1"), _compile(rec, "0/2")
    [sym] = dynamic.shapes.symbols
    assert sym.range == "[2, int_oo]" and sym.sources == ("L['x'].size()[0]",)
    [d] = third.shapes.dims
    assert d.how == ZERO_ONE and d.value == "1" and not d.dynamic
    data = explanation(rec)
    [cause] = [c for c in data["causes"] if c["recompiles"] == ["0/2"]]
    assert cause["mechanism"] == "size_0_1"
    assert cause["shape"]["symbol"] == sym.name and cause["shape"]["range"] == "[2, int_oo]"
    assert "mark_unbacked(x, 0)" in cause["advice"][0]
    # the fix: marked unbacked before the first call, size 1 reuses the compile
    ns = _namespace("zero_one")
    torch._dynamo.reset()
    c = torch.compile(ns["f"], backend="eager")
    x = torch.randn(3)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    with capture.record() as fixed:
        c(x)
        c(torch.randn(1))
    assert len(fixed.compiles) == 1
    [d] = fixed.compiles[0].shapes.dims
    assert d.how == MARK_UNBACKED and d.value.startswith("u")


def test_a_marked_dimension_specialized_by_a_broadcast(recorded):
    rec, _, here = recorded["marked_broadcast"]
    [c] = rec.compiles
    x, y = c.shapes.dims
    assert x.how == SPECIALIZED and x.marks == (MARK_DYNAMIC,) and y.how == STATIC
    [spec] = c.shapes.specializations()
    assert spec.replacement == "4" and spec.sources == ("L['x'].size()[0]",)
    assert c.steps[spec.replaced_step].lineno == here
    assert f"set to 4 at step {spec.replaced_step}, node add" in explanation_text(rec)


def test_duck_shaping_ties_two_equal_inputs(recorded):
    rec, _, _ = recorded["duck"]
    [c] = rec.compiles
    x, y = c.shapes.dims
    assert x.value == y.value and x.how == y.how == DYNAMIC_TRUE and x.policy == "DUCK"
    [sym] = c.shapes.symbols
    assert sym.sources == ("L['x'].size()[0]", "L['y'].size()[0]")


def test_mark_unbacked_with_torch_check(recorded):
    rec, _, here = recorded["unbacked_check"]
    [c] = rec.compiles
    [d] = c.shapes.dims
    assert d.how == MARK_UNBACKED and d.value.startswith("u")
    sym = c.shapes.symbol(d.value)
    assert sym.unbacked and sym.hint is None and sym.sources == ("L['x'].size()[0]",)
    assert sym.range == "[3, int_oo]"   # torch._check(x.shape[0] > 2) narrowed it


def test_an_unbacked_size_from_nonzero(recorded):
    rec, _, here = recorded["nonzero"]
    [c] = rec.compiles
    [sym] = c.shapes.symbols
    assert sym.unbacked and sym.node == "nonzero" and not sym.sources
    step = c.steps[sym.step]
    assert step.lineno == here and "nonzero" in step.nodes_added


def test_a_python_if_on_a_size(recorded):
    rec, _, here = recorded["python_if"]
    [c] = rec.compiles
    [d] = c.shapes.dims
    assert d.how == MARK_DYNAMIC
    [guard] = c.shapes.guards
    assert guard.expr == f"{d.value} > 8" and guard.lineno == here
    assert guard.why == "a Python condition on the size" and guard.node is None
    assert c.steps[guard.step].lineno == here
    assert c.shapes.symbol(d.value).range == "[9, int_oo]"


def test_a_dynamic_true_compile(recorded):
    rec, _, here = recorded["dynamic_true"]
    [c] = rec.compiles
    assert not c.shapes.assume_static
    assert {d.how for d in c.shapes.dims} == {DYNAMIC_TRUE}
    # x's second size and y's first must match for the matmul: duck shaping had made them one
    x1 = c.shapes.dim("L['x'].size()[1]")
    y0 = c.shapes.dim("L['y'].size()[0]")
    assert x1.value == y0.value


def test_shapes_survive_json(recorded):
    rec, _, _ = recorded["automatic"]
    again = capture.Recording.from_json(rec.to_json())
    assert [c.shapes for c in again.compiles] == [c.shapes for c in rec.compiles]
    assert capture.Recording.from_json(rec.to_json(columns=True)).compiles[1].shapes == \
        rec.compiles[1].shapes


def test_a_branch_on_a_size_is_expected_not_zero_one():
    """`if x.shape[0] > 8` on an automatically dynamic size: the size 4 after 12 takes the
    other side (expected), and only then size 1 is the 0/1 specialization."""
    ns = _namespace("python_if")
    torch._dynamo.reset()
    c = torch.compile(ns["f"], backend="eager")
    with capture.record() as rec:
        for n in (10, 12, 4, 1):
            c(torch.randn(n))
    data = explanation(rec)
    by = {tuple(cause["recompiles"]): cause for cause in data["causes"]}
    branch, zero_one = by[("0/2",)], by[("0/3",)]
    assert branch["mechanism"] == "size_branch" and branch["expected"]
    assert branch["shape"]["guards"][0]["lineno"] == ns["here"]
    assert zero_one["mechanism"] == "size_0_1"
    assert re.search(r"s\d+ > 8 by line", explanation_text(rec))
    # the compare view says the same: which dimension changed how, and where the failed
    # size guard came from
    first = capture.compare(rec, "0/0", "0/1")
    assert first.dims_changed == [("L['x'].size()[0]", ("10", STATIC), (rec.compiles[1].shapes.dims[0].value, AUTOMATIC))]
    second = capture.compare(rec, "0/1", "0/2")
    assert not second.dims_changed   # s77 in both, automatic dynamic in both
    [origin] = second.shape_origins.values()
    assert f"guarded {rec.compiles[1].shapes.guards[0].expr} by line {ns['here']}" in origin
    assert second.to_dict()["shape_origins"] == {"0": origin}
    assert f"    shape: {origin}" in str(second)


def test_duck_shaping_recompile_names_the_shared_symbol_and_the_fix_works():
    ns = _namespace("duck")
    torch._dynamo.reset()
    with capture.record() as rec:
        c = torch.compile(ns["f"], backend="eager", dynamic=True)
        c(torch.randn(6), torch.randn(6))
        c(torch.randn(7), torch.randn(9))
    [cause] = explanation(rec)["causes"]
    assert cause["mechanism"] == "duck_shape"
    assert "one symbol shared with L['x'].size()[0] (duck shaping" in cause["shape"]["statement"]
    assert "use_duck_shape = False" in cause["advice"][0]
    import torch.fx.experimental._config as fx_config
    torch._dynamo.reset()
    with fx_config.patch(use_duck_shape=False), capture.record() as fixed:
        c = torch.compile(ns["f"], backend="eager", dynamic=True)
        c(torch.randn(6), torch.randn(6))
        c(torch.randn(7), torch.randn(9))
    [one] = fixed.compiles
    x, y = one.shapes.dims
    assert x.value != y.value and x.dynamic and y.dynamic


def test_maybe_mark_dynamic_lets_the_broadcast_specialize():
    """The fix explain gives for a marked dimension a broadcast specialized."""
    rec, _, _ = _record("marked_broadcast")
    [frame] = explanation(rec)["frames"]
    assert "maybe_mark_dynamic(x, 0)" in frame["advice"][0]
    ns = _namespace("marked_broadcast")
    torch._dynamo.reset()
    x = torch.randn(4)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    with capture.record() as fixed:
        out = torch.compile(ns["f"], backend="eager")(x, torch.randn(4))
    assert out.shape == (4,)
    [c] = fixed.compiles
    assert c.outcome == "compiled"
    [d, _] = c.shapes.dims
    assert d.how == SPECIALIZED and d.marks == ("maybe_mark_dynamic",)


EQ_PROGRAM = """
def g(x):
    if x.shape[0] == 8:  # here
        return x * 2
    return x + 1
"""


def test_a_size_the_code_compares_with_a_constant_is_specialized_and_said():
    """Automatic dynamic makes the size a symbol, then `== 8` sets it to 8: that compile
    serves size 8 alone. explain says so, and its fix is maybe_mark_dynamic: mark_dynamic
    would fail the compile."""
    ns = {"torch": torch}
    exec(compile(EQ_PROGRAM, "<eq>", "exec"), ns)
    here = 3
    sizes = (10, 8, 12, 8)
    torch._dynamo.reset()
    c = torch.compile(ns["g"], backend="eager")
    with capture.record() as rec:
        for n in sizes:
            c(torch.randn(n))
    assert len(rec.compiles) == 3
    [spec] = rec.compiles[1].shapes.specializations()
    assert spec.replacement == "8" and rec.compiles[1].steps[spec.replaced_step].lineno == here
    [cause] = explanation(rec)["causes"]
    assert cause["mechanism"] == "size_specialized" and cause["expected"]
    assert cause["shape"]["specialized_to"] == "8"
    assert "maybe_mark_dynamic(x, 0)" in cause["advice"][0]
    assert "Do not mark_dynamic" in cause["advice"][0]
    counts = {}
    for mark in ("maybe_mark_dynamic", "mark_dynamic"):
        torch._dynamo.reset()
        c = torch.compile(ns["g"], backend="eager")
        try:
            with capture.record() as fixed:
                for n in sizes:
                    x = torch.randn(n)
                    getattr(torch._dynamo, mark)(x, 0)
                    c(x)
            counts[mark] = len(fixed.compiles)
        except Exception as e:  # noqa: BLE001 - the error is what is checked
            counts[mark] = type(e).__name__
    assert counts == {"maybe_mark_dynamic": 2, "mark_dynamic": "ConstraintViolationError"}


LOOP_PROGRAM = """
def g(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total

def g_vectorized(x):
    return x.sum(0)
"""


def test_a_size_used_as_a_plain_int_specializes_every_size_and_no_mark_helps():
    """`range(x.shape[0])` needs a plain int: each new size compiles again. explain says so
    (not the comparison's "other sizes share a dynamic one"), and each claim of its advice
    is measured: mark_dynamic fails the compile, maybe_mark_dynamic still compiles once per
    size, and a tensor operation over the dimension shares one dynamic compile."""
    ns = {"torch": torch}
    exec(compile(LOOP_PROGRAM, "<loop>", "exec"), ns)
    sizes = (4, 6, 8, 6, 10)
    torch._dynamo.reset()
    c = torch.compile(ns["g"], backend="eager")
    with capture.record() as rec:
        for n in sizes:
            c(torch.randn(n, 3))
    assert len(rec.compiles) == 4   # one per distinct size
    guard = rec.compiles[1].shapes.guards[0]
    assert guard.expr.startswith("Eq(") and guard.lineno == 4
    assert guard.why.startswith("the size used as a plain int")
    assert rec.compiles[1].steps[guard.step].opname == "CALL"   # range(...), not a jump
    [cause] = explanation(rec)["causes"]
    assert cause["mechanism"] == "size_as_int" and not cause["expected"]
    assert "share a dynamic one" not in cause["advice"][0]
    assert "line 4 uses the size as a plain Python int" in cause["advice"][0]
    counts = {}
    for mark in ("maybe_mark_dynamic", "mark_dynamic", None):
        torch._dynamo.reset()
        fn = torch.compile(ns["g"] if mark else ns["g_vectorized"], backend="eager")
        try:
            with capture.record() as fixed:
                for n in sizes:
                    x = torch.randn(n, 3)
                    if mark:
                        getattr(torch._dynamo, mark)(x, 0)
                    fn(x)
            counts[mark] = len(fixed.compiles)
        except Exception as e:  # noqa: BLE001 - the error is what is checked
            counts[mark] = type(e).__name__
    assert counts == {"maybe_mark_dynamic": 4, "mark_dynamic": "ConstraintViolationError", None: 2}
