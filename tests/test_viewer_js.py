"""The viewer's own tests: node's test runner on its modules (widgets/viewer/js/), over real recordings.

pytest records a few programs with the real Dynamo (the viewer fixture's graph break,
inlined call and HTML string; a node renamed by STORE_FAST; a recompile; bytecode Dynamo
cleans), writes each as the engine's JSON and as the exact bytes the widget sends
(`viewer_state`), and runs `node --test` on tests/js/ with DL_FIXTURES naming the folder.
What the panes show at a step, where each jump and link goes, how original and walked
bytecode line up and what predict mode asks are checked there, in the module itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import capture
from widgets.viewer import viewer_state

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")


def _sin_then_double(x):
    y = x.sin()
    return y * 2 + 1


def _scale(x):
    return x * 2


def _maybe(x, y=None):
    if y is None:          # POP_JUMP_IF_NOT_NONE: Dynamo walks LOAD_CONST None; IS_OP; POP_JUMP
        return x + 1
    return x + y


def _recompiled() -> capture.Recording:
    torch._dynamo.reset()
    f = torch.compile(_scale, backend="eager")
    with capture.record() as rec:
        f(torch.ones(3))
        f(torch.ones(4))
    torch._dynamo.reset()
    return rec


@pytest.fixture(scope="module")
def fixtures(viewer_recording, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("js-fixtures")
    recordings = {
        "viewer": viewer_recording,
        "tour": capture.trace(_sin_then_double, torch.ones(3)),
        "recompiled": _recompiled(),
        "cleaned": capture.trace(_maybe, torch.ones(3)),
    }
    for name, rec in recordings.items():
        state = viewer_state(rec)
        (out / f"{name}.json").write_text(rec.to_json(), encoding="utf-8")
        (out / f"{name}.data.gz").write_bytes(state["data"])
        (out / f"{name}.graphs.gz").write_bytes(state["graphs"])
        (out / f"{name}.titles.json").write_text(json.dumps(state["titles"]), encoding="utf-8")
    return out


def test_the_viewer_module_passes_its_node_tests(fixtures):
    if NODE is None:
        pytest.fail("node is not installed: ./lab test installs it (apt-get install nodejs)")
    files = sorted(str(p) for p in (HERE / "js").glob("*.test.mjs"))
    assert files, "no tests in tests/js"
    run = subprocess.run([NODE, "--test", *files], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "DL_FIXTURES": str(fixtures)})
    summary = "\n".join(line for line in run.stdout.splitlines() if line.startswith("# "))
    assert run.returncode == 0, f"node --test failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert "# fail 0" in summary and "# pass 0" not in summary, summary
    print(summary)
