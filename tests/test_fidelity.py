"""Recording changes nothing Dynamo produces: the oracle is Dynamo run without us."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import capture
from dynamo_oracle import realizations
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
                         capture_output=True, text=True, check=True)
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
