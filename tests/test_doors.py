"""Both doors say the same thing in the same situation: `%%capture_trace` in a real IPython
shell and `dynamo-lab record` in a subprocess, each through `capture.run`.

A compiled generator, a step cap and a program that compiles nothing each give the same
note at both doors (only the prefix and the code's name differ); an unsupported Python or
torch is one line at both, naming the supported ones.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import capture

COMMAND = Path(sys.executable).parent / "dynamo-lab"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SITUATIONS = {
    "generator": (
        "import torch\n"
        "def numbers(x):\n"
        "    yield x + 1\n"
        "    yield x.sin()\n"
        "values = list(torch.compile(numbers, backend='eager')(torch.ones(2)))\n", []),
    "step_cap": (
        "import torch\n"
        "f = torch.compile(lambda x: x.sin().cos() * 2 + 1, backend='eager')\n"
        "f(torch.ones(3))\n", ["--max-steps", "5"]),
    "nothing_compiled": ("total = sum(range(10))\n", []),
}


def magic_notes(shell, capsys, monkeypatch, source: str, options: list[str]) -> list[str]:
    import widgets.magic

    monkeypatch.setattr(widgets.magic, "display", lambda obj: None)
    capsys.readouterr()
    shell.run_cell(f"%%capture_trace {' '.join(options)}\n{source}")
    err = ANSI.sub("", capsys.readouterr().err)
    return [line.removeprefix("capture_trace: ") for line in err.splitlines() if line.strip()]


def cli_notes(tmp_path: Path, source: str, options: list[str]) -> list[str]:
    (tmp_path / "prog.py").write_text(source, encoding="utf-8")
    result = subprocess.run([str(COMMAND), "record", *options, "prog.py", "-o", "t.json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return [line.removeprefix("dynamo-lab: note: ") for line in result.stderr.splitlines()
            if line.startswith("dynamo-lab: note: ")]


@pytest.mark.parametrize("situation", list(SITUATIONS))
def test_both_doors_say_the_same_note(situation, ipython_shell, capsys, monkeypatch, tmp_path):
    source, options = SITUATIONS[situation]
    at_magic = magic_notes(ipython_shell, capsys, monkeypatch, source, options)
    at_cli = cli_notes(tmp_path, source, options)
    assert len(at_magic) == 1, at_magic
    assert at_cli == [note.replace("the cell", "prog.py") for note in at_magic]
    recording = ipython_shell.user_ns["_trace"]
    kinds = {"generator": "is a generator function", "step_cap": "step cap (--max-steps 5)",
             "nothing_compiled": "nothing was compiled while the cell ran"}
    assert kinds[situation] in at_magic[0]
    assert bool(recording.compiles) == (situation == "step_cap")


def test_run_gives_the_notes_and_the_value_without_a_door():
    result = capture.run(lambda: sum(range(4)), name="the test")
    assert result.value == 6 and result.error is None and not result.refused
    assert [n.kind for n in result.notes] == ["nothing_compiled"]
    assert result.notes[0].text.startswith("nothing was compiled while the test ran")


def test_run_refuses_a_compiled_coroutine_before_running_anything():
    ran = []
    source = "async def later(x):\n    return x\nf = torch.compile(later)\n"
    result = capture.run(lambda: ran.append(1), source=source)
    assert result.refused and ran == [] and result.recording is None
    assert [n.kind for n in result.notes] == ["refused"] and "`later`" in result.notes[0].text


def test_run_cuts_the_error_to_the_learners_frames():
    import torch

    def learners(x):
        raise ValueError("mine\nsecond line")

    compiled = torch.compile(lambda x: learners(x.sin()), backend="eager")
    result = capture.run(lambda: compiled(torch.ones(2)))
    assert isinstance(result.error, ValueError)
    assert result.error_line == "ValueError: mine"
    files = []
    tb = result.error.__traceback__
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert files and all(f == __file__ for f in files), files


# -- an unsupported Python or torch, in one line at each door --------------------------------

def test_an_unsupported_python_is_one_line_at_both_doors(ipython_shell, capsys, monkeypatch):
    import widgets.cli

    monkeypatch.setattr(sys.modules["capture.run"], "SUPPORTED_PYTHON", ((3, 99),))
    assert widgets.cli.main(["record", "prog.py", "-o", "t.json"]) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith("dynamo-lab: error: Dynamo Lab supports Python")
    ipython_shell.run_line_magic("unload_ext", "widgets")
    try:
        ipython_shell.run_cell("%load_ext widgets")
        text = ANSI.sub("", "".join(capsys.readouterr()))
        lines = [line for line in text.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("UsageError: Dynamo Lab supports Python")
        assert "capture_trace" not in ipython_shell.magics_manager.magics["cell"]
    finally:
        monkeypatch.undo()
        ipython_shell.run_cell("%load_ext widgets")
    assert "capture_trace" in ipython_shell.magics_manager.magics["cell"]


def test_the_cli_on_torch_2_12_says_which_are_supported_in_one_line(tmp_path):
    import os

    info = tmp_path / "torch-2.12.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.12.1\n")
    (tmp_path / "prog.py").write_text("print('ran')\n")
    result = subprocess.run([str(COMMAND), "record", "prog.py", "-o", "t.json"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 2 and "ran" not in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Python 3.11–3.13 and torch 2.13–2.14" in lines[0] and "torch 2.12.1" in lines[0]


def test_the_supported_releases_are_said_once_and_the_package_metadata_agrees():
    import tomllib

    from packaging.specifiers import SpecifierSet
    from packaging.requirements import Requirement

    from capture import internals
    from capture.run import SUPPORTED_PYTHON, SUPPORTED_TORCH, SUPPORTED_TORCH_RELEASES

    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    pythons = SpecifierSet(meta["project"]["requires-python"])
    admitted = [(3, minor) for minor in range(8, 16) if pythons.contains(f"3.{minor}.0")]
    assert admitted == list(SUPPORTED_PYTHON)
    torch = [Requirement(d) for d in meta["project"]["dependencies"] if d.startswith("torch")]
    assert [str(r.specifier) for r in torch] == [str(SpecifierSet(SUPPORTED_TORCH))]
    assert [f"{a}.{b}" for a, b in SUPPORTED_TORCH_RELEASES] == list(internals.CHECKED_ON)
