"""Recording changes nothing Dynamo produces: the oracle is Dynamo run without us."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import capture
from dynamo_oracle import LARGE_CASES, backend_views, dynamos_own_texts, realizations
from scenarios import SCENARIOS, artifacts

HERE = Path(__file__).parent


def recorded(name: str) -> tuple[dict, capture.Recording]:
    holder = {}

    def run(call):
        with capture.record() as rec:
            out = call()
        holder.setdefault("recs", []).append(rec)
        return out

    arts = artifacts(name, run)
    return arts, holder["recs"]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_recording_changes_nothing_dynamo_produces(name):
    plain = artifacts(name)
    with_recording, recs = recorded(name)
    assert with_recording == plain
    # and the recording itself saw the same graphs
    seen_graphs = [c.graph_code for r in recs for c in r.compiles if c.graph_code]
    assert len(seen_graphs) == len(plain["graphs"])


@pytest.mark.parametrize("name", ["branch", "module", "print"])
def test_recorded_process_matches_a_process_that_never_imported_capture(name):
    """A fresh interpreter without the project is the oracle for `as if never imported`."""
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    # imported as `scenarios`, not run as __main__, so class names in guards agree
    script = f"import json, scenarios; print(json.dumps(scenarios.artifacts({name!r})))"
    out = subprocess.run([sys.executable, "-c", script], env=env,
                         capture_output=True, text=True, check=True, timeout=300)
    fresh = json.loads(out.stdout.splitlines()[-1])
    # record something else first, then compile the scenario plainly in this process
    capture.trace(lambda x: x.cos() * 3, __import__("torch").randn(2))
    assert artifacts(name) == fresh


def test_recording_matches_the_graphs_handed_to_a_user_backend():
    """Whatever backend the user chose, Compile.graph_code is the GraphModule it received."""
    import torch

    received = []

    def backend(gm, example_inputs):
        received.append(gm.code.strip("\n"))
        return gm.forward

    torch._dynamo.reset()
    with capture.record() as rec:
        torch.compile(SCENARIOS["branch"]()[0][0], backend=backend)(torch.ones(3))
    assert [c.graph_code for c in rec.compiles if c.graph_code] == received
    assert len(received) == 2


@pytest.mark.parametrize("name", ["module", "list_loop", "inlined", "transformer"])
def test_recording_realizes_no_lazy_tracker_that_dynamo_did_not(name):
    """Reading a LazyVariableTracker the wrong way builds it (and installs guards).

    The oracle: the sequence of lazy realizations, by source, is the same with
    and without recording. A reader that called e.g. `python_type()` on a
    container of lazies would realize them earlier or more often.
    """
    plain = realizations(lambda: artifacts(name))
    with_recording = realizations(lambda: recorded(name))
    assert plain and with_recording == plain


# -- what Dynamo wrote, kept exactly -------------------------------------------------------

def _leaf_lines(tree: str) -> list[str]:
    """Each leaf check line of a rendered guard tree, after its `+- ` (comments and all)."""
    return [m.group(1) for m in re.finditer(r"^[| ]*\+- ([A-Z][A-Z0-9_]*: .*)$", tree, re.M)]


@pytest.mark.parametrize("name", sorted(SCENARIOS) + sorted(LARGE_CASES))
def test_recorded_graph_code_guards_and_bytecode_are_dynamos_own_strings(name):
    """Every recorded graph code, guard tree, guard text and modified listing equals what
    Dynamo itself wrote in the same run: nothing cut, nothing reworded. The large cases
    have graph-code lines of thousands of characters and guard trees past 100 000."""
    recordings = []

    def run(call):
        with capture.record() as rec:
            try:
                return call()
            finally:
                recordings.append(rec)

    own = dynamos_own_texts(SCENARIOS.get(name) or LARGE_CASES[name], run)
    compiles = [c for r in recordings for c in r.compiles]
    assert not any(r.truncated for r in recordings)
    assert [c.graph_code for c in compiles if c.graph_code is not None] == own["graphs"]
    assert sorted(c.guard_tree for c in compiles if c.guard_tree) == sorted(own["guard_trees"])
    for c in compiles:
        if not c.guard_tree:
            continue
        lines = _leaf_lines(c.guard_tree)
        assert len(c.guards) == len(lines), c.compile_id
        for text, line in zip(c.guards, lines):
            # the check whole, then only the tree's (padded) trailing comments
            rest = line[len(text):]
            assert line.startswith(text) and re.fullmatch(r"\s*|\s{2,}#.*", rest), (text, line)
        assert {g.text for g in c.guard_details if g.tree_kind} <= set(c.guards)
    modified = [c for c in compiles if c.modified_bytecode]
    assert [[(i.offset, i.opname, i.argrepr) for i in c.modified_instructions]
            for c in modified] == own["modified"]
    for c, rows in zip(modified, own["modified"]):
        listed = c.modified_bytecode.splitlines()[1:]  # after the header
        assert len(listed) == len(rows)
        for line, (offset, opname, arg) in zip(listed, rows):
            assert f" {offset:4d} {opname}" in line and line.endswith(arg), (line, arg)
    for c in compiles:
        candidates = own["originals"].get((c.code_name, c.firstlineno))
        if candidates is not None:
            assert [(i.offset, i.opname, i.argrepr) for i in c.codes[0].instructions] in candidates


@pytest.mark.parametrize("name", ["module", "transformer", "branch", "inlined"])
def test_the_backend_receives_the_module_a_plain_run_hands_it(name):
    """Dynamo hands the backend a lazy GraphModule; a recorder that read `gm.code` would
    realize it (its `_code` appears mid-`__dict__`) and change what AOTAutograd hashes."""
    plain = backend_views(SCENARIOS[name])

    def run(call):
        with capture.record():
            return call()

    recorded = backend_views(SCENARIOS[name], run)
    assert recorded == plain
    assert all(view[1] is True and view[2] is False for view in plain), "lazy when handed over"


_AOT_CACHE_SCRIPT = """
import json, sys
import torch
from torch._dynamo.utils import counters

def f(x, w):
    return (x @ w).relu().sum(dim=-1)

compiled = torch.compile(f, backend="inductor")
args = (torch.randn(4, 8), torch.randn(8, 8))
if sys.argv[1] == "recorded":
    import capture
    with capture.record():
        compiled(*args)
else:
    compiled(*args)
print(json.dumps(dict(counters["aot_autograd"])))
"""


@pytest.mark.slow
def test_a_recorded_run_hits_the_aot_cache_that_plain_runs_filled(tmp_path):
    """Plain, plain, recorded, recorded, each a fresh process sharing one Inductor cache:
    the first fills AOTAutograd's cache and every later one, recorded or not, hits it."""
    script = tmp_path / "aot_cache.py"
    script.write_text(_AOT_CACHE_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent),
           "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TORCHINDUCTOR_FORCE_DISABLE_CACHES", None)
    seen = []
    for mode in ["plain", "plain", "recorded", "recorded"]:
        out = subprocess.run([sys.executable, str(script), mode], env=env, cwd=tmp_path,
                             capture_output=True, text=True, check=True, timeout=600)
        counts = json.loads(out.stdout.splitlines()[-1])
        seen.append((mode, counts.get("autograd_cache_hit", 0), counts.get("autograd_cache_miss", 0)))
    assert seen == [("plain", 0, 1), ("plain", 1, 0), ("recorded", 1, 0), ("recorded", 1, 0)]


def _gpt2_two_lengths():
    """A transformers GPT-2 (random weights) called at two sequence lengths: the second
    call recompiles with the length dynamic, so the shapes reader has symbols to read."""
    transformers = pytest.importorskip("transformers")
    torch = __import__("torch")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                     n_positions=64)
    model = transformers.GPT2LMHeadModel(config).eval()

    def run(ids):
        with torch.no_grad():
            return model(ids).logits

    return [(run, (torch.randint(0, 100, (1, n)),)) for n in (8, 12, 16)]


@pytest.mark.slow
def test_a_transformers_model_with_dynamic_lengths_is_compiled_as_without_recording():
    """Plain and recorded, the same graphs, guard trees, bytecode and results, where the
    recorded run read symbols and symbolic guards at every compile."""
    from dynamo_oracle import artifacts_of, recorded_artifacts

    plain = artifacts_of(_gpt2_two_lengths)
    with_recording, recordings = recorded_artifacts(_gpt2_two_lengths)
    assert with_recording == plain
    assert len(plain["graphs"]) == 2
    symbols = [s for rec in recordings for c in rec.compiles if c.shapes
               for s in c.shapes.symbols]
    assert symbols, "the dynamic recompile recorded no symbol"
