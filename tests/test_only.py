"""`record(only=...)` and `dynamo-lab record --only`: step-level detail for the named
functions (with what they inline and their resume functions), a compile-level summary for
every other compile, which must hold the same graph, guards and outcome a full recording
holds."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import capture
from capture.compare import normalised


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x).relu()
        print("a break inside forward")
        return y * 2


def loss_fn(out):
    return (out ** 2).mean()


def _run(**options):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block()
    with capture.record(**options) as rec:
        out = torch.compile(model, backend="eager")(torch.randn(4, 8))
        torch.compile(loss_fn, backend="eager")(out)
    return rec


@pytest.fixture(scope="module")
def both():
    return _run(), _run(only="Block.forward")


def test_only_the_named_function_and_its_resume_function_have_steps(both):
    full, only = both
    detailed = {c.code_name: bool(c.steps) for c in only.compiles}
    line = inspect.getsourcelines(Block.forward)[1] + 2   # the print
    assert detailed == {"forward": True, f"torch_dynamo_resume_in_forward_at_{line}": True,
                        "loss_fn": False}
    [loss] = [c for c in only.compiles if c.code_name == "loss_fn"]
    assert loss.summary_only and "summary only" in loss.title()
    assert not any(c.summary_only for c in full.compiles)
    [note] = [e for e in only.events if e.kind == "note"]
    assert "only Block.forward" in note.message
    # the named function's steps are the full recording's
    assert [s.opname for s in only.compiles[0].steps] == [s.opname for s in full.compiles[0].steps]


def test_a_summary_holds_what_a_full_recording_holds(both):
    full, only = both
    assert [c.compile_id for c in only.compiles] == [c.compile_id for c in full.compiles]
    for a, b in zip(full.compiles, only.compiles):
        assert b.outcome == a.outcome
        assert b.graph_code == a.graph_code
        # (Dynamo numbers some globals process-wide: compared normalised)
        assert [normalised(g) for g in b.guards] == [normalised(g) for g in a.guards]
        assert [n.name for n in b.nodes] == [n.name for n in a.nodes]
        assert (b.graph_break is None) == (a.graph_break is None)
        assert normalised(b.modified_bytecode or "") == normalised(a.modified_bytecode or "")
        assert [g.expr for g in b.shapes.guards] == [g.expr for g in a.shapes.guards]


def test_only_is_checked():
    for bad in ("", [], [""], 3):
        with pytest.raises(TypeError, match="only must name functions"):
            with capture.record(only=bad):
                pass
    assert not capture.recorder.active()


def test_the_command_records_only_what_it_is_told(tmp_path: Path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import torch

        def first(x):
            return x.sin() + 1

        def second(x):
            return x.cos() * 2

        torch.compile(first, backend="eager")(torch.ones(3))
        torch.compile(second, backend="eager")(torch.ones(3))
    """))
    command = Path(sys.executable).parent / "dynamo-lab"
    done = subprocess.run([str(command), "record", "--only", "second", "-q", "-o",
                           str(tmp_path / "t.json"), "-o", str(tmp_path / "t.html"), str(script)],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "t.json").read_text())
    steps = {c["code_name"]: c["summary_only"] for c in data["compiles"]}
    assert steps == {"first": True, "second": False}
    assert (tmp_path / "t.html").stat().st_size > 10_000
    bad = subprocess.run([str(command), "record", "--only", " ", "-o", str(tmp_path / "u.json"),
                          str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "--only needs a function's name" in bad.stderr
    assert not (tmp_path / "u.json").exists()
