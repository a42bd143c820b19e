"""The `dynamo-lab` command line, run as a user runs it: the installed console script, in a subprocess.

A real script that graph-breaks and recompiles is recorded to JSON and to a page, the
JSON is read back, and each failure a user meets gets one clear line on stderr: a
missing file, a script that raises (its recording still written), a recording of
another schema, a file that is not a recording.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import capture
from capture.recording import SCHEMA_VERSION

COMMAND = Path(sys.executable).parent / "dynamo-lab"

# Graph-breaks at the print (so [0/0] restarts as [0/0_1] and the rest runs in the resume
# function [1/0]), then recompiles for another size; prints what `python prog.py` would see.
PROGRAM = '''\
import sys
import torch


def helper(x):
    return x * 2


@torch.compile(backend="eager")
def f(x):
    y = torch.sin(x)
    print("graph break here")
    return helper(y) + 1


print("argv:", sys.argv[1:], "name:", __name__, "path0:", sys.path[0])
if __name__ == "__main__":
    f(torch.ones(4))
    f(torch.ones(8))
    if "--fail" in sys.argv:
        raise ValueError("the script's own failure")
'''

RAISE_LINE = PROGRAM.splitlines().index('        raise ValueError("the script\'s own failure")') + 1


def run(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    if not COMMAND.exists():
        pytest.fail(f"{COMMAND} is not installed: run ./lab setup (pip install -e .) to get the "
                    "dynamo-lab console script")
    return subprocess.run([str(COMMAND), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def our_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("dynamo-lab:")]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "prog.py").write_text(PROGRAM, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def recorded(work) -> subprocess.CompletedProcess:
    """One run writing both JSON and a page; its options given after the script's arguments."""
    return run("record", "scripts/prog.py", "--size", "4", "-x", "-o", "trace.json",
               "-o", "trace.html", cwd=work)


def test_record_runs_the_script_as_python_would(recorded, work):
    assert recorded.returncode == 0, recorded.stderr
    # The script's own arguments, __main__, and its folder first on sys.path.
    assert (f"argv: ['--size', '4', '-x'] name: __main__ path0: {work / 'scripts'}"
            in recorded.stdout)
    assert recorded.stdout.count("graph break here") == 2


def test_record_writes_a_json_recording_with_the_break_and_the_recompile(recorded, work):
    assert recorded.returncode == 0, recorded.stderr
    r = capture.Recording.from_json((work / "trace.json").read_text(encoding="utf-8"))
    ids = [c.compile_id for c in r.compiles]
    assert ids[:3] == ["0/0", "0/0_1", "1/0"], ids         # break: restart, resume function
    assert "0/1" in ids                                      # the second size recompiles f
    assert r.compile("0/0").graph_break is not None
    assert any("size mismatch" in reason for reason in r.compile("0/1").recompile_reasons)
    kinds = {e.kind for e in r.events}
    assert "recompile" in kinds and r.graph_break_count >= 1
    assert all(c.steps for c in r.compiles)
    assert r.ended_by is None
    last = our_lines(recorded.stderr)[-1]
    assert "trace.json and trace.html" in last and f"{len(r.compiles)} compile(s)" in last


def test_record_writes_a_page_holding_the_recording(recorded, work):
    assert recorded.returncode == 0, recorded.stderr
    text = (work / "trace.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert 'id="dl-viewer-module"' in text and "data-dl-buffer" in text
    assert "prog.py" in text.split("</title>")[0]


def test_html_turns_the_saved_json_into_a_page(recorded, work):
    result = run("html", "trace.json", "-o", "again.html", "--compile", "1/0", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "again.html").stat().st_size > 1000
    assert our_lines(result.stderr) == [l for l in result.stderr.splitlines() if l]
    # Without -o the page goes beside the recording.
    result = run("html", "trace.json", "-q", cwd=work)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert (work / "trace.html").exists()


def test_options_before_the_script_leave_every_later_argument_to_it(work):
    result = run("record", "-o", "own.json", "--max-steps", "40", "scripts/prog.py",
                 "-o", "theirs", cwd=work)
    assert result.returncode == 0, result.stderr
    assert "argv: ['-o', 'theirs']" in result.stdout
    r = capture.Recording.from_json((work / "own.json").read_text(encoding="utf-8"))
    assert sum(len(c.steps) for c in r.compiles) <= 40 and r.truncated


def test_a_script_that_raises_still_gets_its_recording_written_and_says_so(work):
    result = run("record", "scripts/prog.py", "--fail", "-o", "failed.json", cwd=work)
    assert result.returncode == 1
    # A run slower than widgets.progress.PROGRESS_AFTER (a busy machine) also says how far
    # the recording has got: that line is not the one asked about.
    lines = [l for l in our_lines(result.stderr)
             if not re.fullmatch(r"dynamo-lab: recording prog\.py: .* step\(s\), \d+ s", l)]
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("dynamo-lab: error: prog.py raised ValueError: the script's own failure")
    assert f"line {RAISE_LINE}" in line
    assert "the recording up to that point" in line and "failed.json" in line
    assert "Traceback" not in result.stderr   # the traceback only with --traceback
    r = capture.Recording.from_json((work / "failed.json").read_text(encoding="utf-8"))
    assert [c.compile_id for c in r.compiles][:3] == ["0/0", "0/0_1", "1/0"]
    assert r.ended_by.startswith("ValueError")      # the recording itself says how it ended


def test_traceback_shows_the_scripts_frames_only(work):
    result = run("record", "scripts/prog.py", "--fail", "-o", "failed.json", "--traceback",
                 cwd=work)
    assert result.returncode == 1
    tb = result.stderr[result.stderr.index("Traceback"):]
    assert f'prog.py", line {RAISE_LINE}' in tb and "runpy" not in tb and "cli.py" not in tb


@pytest.mark.parametrize("args, expected", [
    (("record", "nowhere.py", "-o", "t.json"), "nowhere.py: no such file"),
    (("record", "scripts", "-o", "t.json"), "scripts is a folder"),
    (("record", "scripts/prog.py", "-o", "t.txt"), "name it .json (the recording) or .html"),
    (("record", "scripts/prog.py", "-o", "no/such/dir/t.json"), "does not exist"),
    (("html", "missing.json", "-o", "p.html"), "missing.json: no such file"),
    (("explain", "--max-recompiles", "-1", "trace.json"), "--max-recompiles must be 0 or more"),
])
def test_a_missing_or_wrong_file_is_one_line_before_anything_runs(work, args, expected):
    result = run(*args, cwd=work, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dynamo-lab: error: "), result.stderr
    assert expected in lines[0]


def test_a_recording_of_another_schema_is_refused_in_one_line(recorded, work):
    data = json.loads((work / "trace.json").read_text(encoding="utf-8"))
    other = SCHEMA_VERSION + 1
    data["schema"] = other
    (work / "future.json").write_text(json.dumps(data), encoding="utf-8")
    result = run("html", "future.json", "-o", "future.html", cwd=work, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert f"schema {other}" in lines[0] and f"reads schema {SCHEMA_VERSION}" in lines[0]
    assert "record it again" in lines[0]
    assert not (work / "future.html").exists()


@pytest.mark.parametrize("content, expected", [
    ("{not json", "is not JSON (line 1, column 2"),
    ('{"hello": 1}', "is JSON but not a recording"),
    ("[1, 2]", "is JSON but not a recording"),
])
def test_a_file_that_is_not_a_recording_is_refused_in_one_line(work, content, expected):
    (work / "odd.json").write_text(content, encoding="utf-8")
    result = run("html", "odd.json", cwd=work, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr


def test_a_long_recording_reports_progress_on_stderr(work):
    slow = work / "scripts" / "slow.py"
    slow.write_text(textwrap.dedent('''\
        import time
        import torch
        f = torch.compile(lambda x: x.cos() * 2, backend="eager")
        f(torch.ones(3))
        time.sleep(3)
    '''), encoding="utf-8")
    result = run("record", "scripts/slow.py", "-o", "slow.json", cwd=work)
    assert result.returncode == 0, result.stderr
    progress = [l for l in our_lines(result.stderr) if l.startswith("dynamo-lab: recording slow.py")]
    assert progress and "1 compile(s)" in progress[-1], result.stderr
    # --quiet says nothing at all.
    quiet = run("record", "-q", "scripts/slow.py", "-o", "slow.json", cwd=work)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_a_script_that_compiles_nothing_is_written_and_noted(work):
    (work / "scripts" / "plain.py").write_text("print(1 + 1)\n", encoding="utf-8")
    result = run("record", "scripts/plain.py", "-o", "plain.json", cwd=work)
    assert result.returncode == 0
    assert "2" in result.stdout
    assert "nothing was compiled" in result.stderr
    r = capture.Recording.from_json((work / "plain.json").read_text(encoding="utf-8"))
    assert r.compiles == []


def test_a_script_that_exits_with_a_status_passes_it_on(work):
    (work / "scripts" / "exits.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    result = run("record", "scripts/exits.py", "-o", "exits.json", cwd=work)
    assert result.returncode == 3
    assert "exits.py exited with status 3" in result.stderr
    assert (work / "exits.json").exists()
    (work / "scripts" / "fine.py").write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    assert run("record", "scripts/fine.py", "-o", "fine.json", cwd=work).returncode == 0


# -- a module, as python -m runs it ---------------------------------------------------------

MODULE = '''\
import sys
import torch

print("argv:", sys.argv, "name:", __name__, "path0:", sys.path[0],
      "main:", sys.modules["__main__"].__file__)
torch.compile(lambda x: x.cos() + 1, backend="eager")(torch.ones(2))
'''


@pytest.fixture(scope="module")
def package(work) -> Path:
    folder = work / "pkgroot"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "pkg" / "train.py").write_text(MODULE, encoding="utf-8")
    (folder / "pkg" / "__main__.py").write_text(MODULE, encoding="utf-8")
    return folder


def test_record_m_runs_a_module_as_python_m_does(package):
    result = run("record", "-m", "pkg.train", "--lr", "3", "-o", "m.json", cwd=package)
    assert result.returncode == 0, result.stderr
    train = package / "pkg" / "train.py"
    plain = subprocess.run([sys.executable, "-m", "pkg.train", "--lr", "3"], cwd=package,
                           capture_output=True, text=True, timeout=240)
    assert plain.returncode == 0, plain.stderr
    said = [line for line in result.stdout.splitlines() if line.startswith("argv:")]
    assert said == [line for line in plain.stdout.splitlines() if line.startswith("argv:")]
    assert said[0].startswith(f"argv: [{str(train)!r}, '--lr', '3'] name: __main__ "
                              f"path0: {package} main: {train}")
    r = capture.Recording.from_json((package / "m.json").read_text(encoding="utf-8"))
    assert [c.compile_id for c in r.compiles] == ["0/0"]


def test_record_m_runs_a_packages_main(package):
    result = run("record", "-m", "pkg", "-o", "pkg.json", cwd=package)
    assert result.returncode == 0, result.stderr
    assert f"main: {package / 'pkg' / '__main__.py'}" in result.stdout


def test_record_m_of_a_module_that_is_not_there_is_one_line(package):
    result = run("record", "-m", "pkg.nowhere", "-o", "x.json", cwd=package, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "no module named 'pkg.nowhere'" in lines[0], result.stderr


def test_a_recording_that_cannot_be_made_exits_with_its_own_code(work):
    # a compiled coroutine is refused before it runs (capture.run): recording failed, not the script
    (work / "scripts" / "coro.py").write_text(
        "import torch\n\n\nasync def step(x):\n    return x + 1\n\n\n"
        "compiled = torch.compile(step, backend='eager')\n", encoding="utf-8")
    result = run("record", "scripts/coro.py", "-o", "coro.json", cwd=work)
    from widgets.cli import RECORDING_FAILED
    assert result.returncode == RECORDING_FAILED == 125, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "async function" in lines[0], result.stderr
