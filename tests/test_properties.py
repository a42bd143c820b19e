"""Random small tensor programs: recording changes nothing Dynamo makes, and undoes itself.

Hypothesis writes the source of a function `f(x)` from a small vocabulary: elementwise
ops, reductions broadcast back, views, Python `for` loops over small ranges,
data-dependent `if x.sum() > 0` (a graph break), shape tests `if x.shape[0] > k`
(guards), and `print` (a graph break). Each program is written to a real file,
called on a 4x6 and then a 5x6 tensor (a recompile, with dynamic shapes), once
plainly and once inside `capture.record()`. The oracle is Dynamo itself: the graphs
handed to the backend, the guard trees, the rewritten bytecode and the results must
be the same, the results must equal eager execution, and no hook may remain.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import capture
from capture import hooks
from dynamo_oracle import artifacts_of, eager_results, force_restore, recorded_artifacts, seams

EXAMPLES = 40

# Every 2-D tensor of any shape stays 2-D through each of these.
UNARY = ["x = x.sin()", "x = x.cos()", "x = torch.relu(x)", "x = torch.exp(x.clamp(max=3.0))",
         "x = x.tanh()", "x = -x"]
SCALAR = ["x = x + {c}", "x = x * {c}", "x = x - {c}"]
REDUCE = ["x = x + x.sum(dim={d}, keepdim=True)", "x = x - x.mean()",
          "x = x * x.mean(dim={d}, keepdim=True).sigmoid()", "t = x.sum()\nx = x / (1 + t.abs())"]
VIEW = ["x = x.transpose(0, 1)", "x = x.reshape(x.shape[1], x.shape[0])",
        "x = x.unsqueeze(0).squeeze(0)", "x = x.reshape(-1).reshape(x.shape)",
        "x = x.t().contiguous()"]

constants = st.sampled_from(["2", "0.5", "-1", "3.0"])
dims = st.sampled_from(["0", "1", "-1"])
messages = st.text(alphabet="abcxyz <>&", min_size=0, max_size=8)


@st.composite
def simple_statement(draw):
    kind = draw(st.sampled_from(["unary", "scalar", "reduce", "view", "print"]))
    if kind == "unary":
        return draw(st.sampled_from(UNARY))
    if kind == "scalar":
        return draw(st.sampled_from(SCALAR)).format(c=draw(constants))
    if kind == "reduce":
        return draw(st.sampled_from(REDUCE)).format(d=draw(dims))
    if kind == "view":
        return draw(st.sampled_from(VIEW))
    return f"print({draw(messages)!r})"


def indent(lines):
    return ["    " + line for block in lines for line in block.splitlines()]


@st.composite
def block(draw, depth):
    """A list of statements (each maybe several lines) at one indentation level."""
    n = draw(st.integers(min_value=1, max_value=3))
    out = []
    for _ in range(n):
        kinds = ["simple", "simple"] + (["loop", "data_if", "shape_if"] if depth < 2 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "simple":
            out.append(draw(simple_statement()))
        elif kind == "loop":
            body = draw(block(depth + 1))
            use_i = draw(st.booleans())
            head = f"for i in range({draw(st.integers(min_value=1, max_value=3))}):"
            inner = body + (["x = x + i"] if use_i else [])
            out.append("\n".join([head, *indent(inner)]))
        else:
            test = ("x.sum() > 0" if kind == "data_if"
                    else f"x.shape[0] > {draw(st.integers(min_value=3, max_value=6))}")
            then, other = draw(block(depth + 1)), draw(block(depth + 1))
            out.append("\n".join([f"if {test}:", *indent(then), "else:", *indent(other)]))
    return out


programs = block(0).map(lambda body: "\n".join(["import torch", "", "", "def f(x):",
                                                   *indent(body), "    return x", ""]))

_files = itertools.count()
_directory = tempfile.TemporaryDirectory(prefix="dl-properties-")  # removed at exit


def load(source):
    """The function `f` of this source, from a real file (so its lines can be shown)."""
    path = Path(_directory.name) / f"program_{next(_files)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def calls(f):
    def make():
        torch.manual_seed(0)
        return [(f, (torch.randn(4, 6),)), (f, (torch.randn(5, 6),))]
    return make


def close(a, b):
    """Results equal up to float rounding (compiled and eager may fuse differently)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b)) or (a != a and b != b)
    return a == b


SETTINGS = dict(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
examples_run = {"fidelity": 0}


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(max_examples=EXAMPLES, **SETTINGS)
@given(source=programs)
def test_recording_a_random_program_changes_nothing_and_restores_everything(source):
    f = load(source)
    before = seams()
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        make = calls(f)
        plain = artifacts_of(make)
        with_recording, recordings = recorded_artifacts(make)
        eager = eager_results(make)
    try:
        assert seams() == before and hooks.installed() == [] and not capture.active()
    finally:
        if seams() != before:
            force_restore(before)
    assert with_recording == plain, source
    assert close(plain["results"], eager), source
    # the recording saw every graph Dynamo handed to the backend, in order
    seen = [c.graph_code for r in recordings for c in r.compiles if c.graph_code]
    assert len(seen) == len(plain["graphs"]), source
    for r in recordings:
        exported = r.to_json()
        assert capture.Recording.from_json(exported).to_json() == exported
        # the viewer's form: steps as columns, read back to the same steps
        assert capture.Recording.from_json(r.to_json(columns=True)).to_json() == exported
        assert str(r)
    examples_run["fidelity"] += 1


def test_the_generator_writes_programs_that_run(capsys):
    """The vocabulary itself is sound: a fixed sample of programs runs eagerly."""
    source = "\n".join(["import torch", "", "", "def f(x):", "    for i in range(2):",
                        "        x = x.reshape(x.shape[1], x.shape[0])",
                        "        if x.sum() > 0:", "            x = x + x.sum(dim=1, keepdim=True)",
                        "        else:", "            print('<b>')", "    return x", ""])
    out = load(source)(torch.ones(4, 6))
    assert out.shape == (4, 6)


@pytest.mark.slow
@pytest.mark.timeout(300)
@settings(max_examples=10, phases=[Phase.explicit, Phase.generate], **SETTINGS)
@given(source=programs)
def test_every_tensor_on_the_stack_or_in_a_local_names_a_node_of_its_graph(source):
    """...by the name the node had at that step (a store renames it: `sin` becomes `x`)."""
    f = load(source)
    with contextlib.redirect_stdout(io.StringIO()):
        _, recordings = recorded_artifacts(calls(f))
    for r in recordings:
        for c in r.compiles:
            for s in c.steps:
                names = {n.name_at(s.index) for n in c.nodes if n.step is None or n.step <= s.index}
                for v in [*s.stack, *s.locals.values()]:
                    assert v.node is None or v.node in names, (
                        f"[{c.compile_id}] step {s.index} {s.opname}: {v} not in {sorted(names)}"
                        f"\n{source}")
