"""The viewer in notebook hosts other than JupyterLab, and what shows where it cannot load.

Jupyter Notebook 7 and marimo each run as a real server of the test's own (bench/lab_server.py)
and are driven in Debian's Chromium through Playwright, like tests/test_browser.py: the viewer
renders, and a step forward changes the step shown. Where anywidget's front end does not load
(a host without the widget manager, an export to Markdown, a notebook viewer), the display's
`text/html` (widgets/viewer/fallback.py) says what the recording holds and how to write it as
a page; a Notebook 7 without the widget manager shows it, as text. nbval still validates
lessons stored before that HTML existed (notebooks/conftest.py).

    .venv/bin/python -m pytest tests/test_hosts.py            # -m "not browser" skips the servers
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import capture
from bench import lab_server
from widgets.viewer import TraceViewer
from widgets.viewer.fallback import CLASS, COMMAND, MAX_LINES, SAVE

import hostile

ROOT = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FALLBACK_TAGS = {"div", "p", "pre", "code"}


def _broken(x):
    y = x.sin()
    print("a graph break")
    return y * 2


def _bundle(viewer):
    bundle = viewer._repr_mimebundle_()
    return bundle[0] if isinstance(bundle, tuple) else bundle


# -- the fallback, from Python -----------------------------------------------------------------

def test_the_display_carries_the_widget_view_and_a_fallback_saying_what_was_recorded():
    recording = capture.trace(_broken, torch.ones(3))
    data = _bundle(TraceViewer(recording))
    assert WIDGET_VIEW in data
    assert data["text/plain"] == repr(TraceViewer(recording))     # nbval compares it: unchanged
    tags, _, text = hostile.markup_of(data["text/html"])
    assert tags <= FALLBACK_TAGS, tags
    assert f"{len(recording.compiles)} compile(s)" in text
    # explain's words: the break, its line and reason, and the fix
    assert "graph break" in text and 'print("a graph break")' in text
    assert "reorderable_logging_functions" in text
    assert COMMAND in text and SAVE in text
    assert "%%capture_trace --html trace.html" in text


def test_the_fallback_of_a_recording_with_nothing_compiled_says_so():
    text = hostile.markup_of(_bundle(TraceViewer(capture.Recording()))["text/html"])[2]
    assert "nothing was compiled while recording" in text and COMMAND in text


def test_the_fallback_is_bounded_and_says_where_the_rest_is(tmp_path):
    # twenty graph breaks, each at a line of its own: explain says each
    body = "".join(f"    x = x + {i}\n    print({i})\n" for i in range(20))
    module = hostile._load(tmp_path, "many_breaks.py", f"def many_breaks(x):\n{body}    return x\n")
    recording = capture.trace(module.many_breaks, torch.ones(2))
    assert recording.graph_break_count >= 20
    html = _bundle(TraceViewer(recording))["text/html"]
    summary = re.search(r"<pre>(.*?)</pre>", html, re.S).group(1)
    lines = summary.splitlines()
    assert MAX_LINES - 2 <= len(lines) <= MAX_LINES + 1, len(lines)   # a blank line is not kept last
    assert "graph break 1 of 20" in summary and "graph break 20 of 20" not in summary
    assert re.fullmatch(r"… \d+ more line\(s\): `dynamo-lab explain trace.json` prints them all",
                        lines[-1]), lines[-1]
    assert len(html) < 6000


def test_program_text_in_the_fallback_is_text_never_markup(tmp_path):
    for name, recording in hostile.recordings(tmp_path).items():
        html = _bundle(TraceViewer(recording))["text/html"]
        tags, attributes, text = hostile.markup_of(html)
        assert tags <= FALLBACK_TAGS, (name, tags)
        assert attributes <= {"class"}, (name, attributes)
    # The hostile names reach the text as the characters the program wrote.
    rec = hostile.recordings(tmp_path)
    shown = "".join(hostile.markup_of(_bundle(TraceViewer(r))["text/html"])[2] for r in rec.values())
    assert "<dl-evil onerror=alert(3)>" in shown


def test_the_command_the_fallback_gives_writes_the_page(tmp_path, monkeypatch):
    from widgets import cli

    recording = capture.trace(_broken, torch.ones(3))
    monkeypatch.chdir(tmp_path)
    exec(SAVE, {"recording": recording})
    args = COMMAND.split()
    assert args[0] == "dynamo-lab"
    assert cli.main(args[1:]) == 0
    page = (tmp_path / "trace.html").read_text(encoding="utf-8")
    assert "_broken" in page and len(page) > 10_000


# -- stored notebooks: nbval and nbconvert -----------------------------------------------------

def _viewer_notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        "import torch, capture\nfrom widgets import TraceViewer\n"
        "def f(x):\n    y = x.sin()\n    print('<b>a graph break</b>')\n    return y * 2\n\n"
        "TraceViewer(capture.trace(f, torch.ones(2)))"))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _jupyter_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    """A notebook with one viewer, executed by nbconvert as a learner's would be saved."""
    folder = tmp_path_factory.mktemp("stored")
    path = folder / "viewer.ipynb"
    _viewer_notebook(path)
    run = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                          "--execute", "--inplace", str(path)],
                         capture_output=True, text=True, timeout=300, env=_jupyter_env(), cwd=folder)
    assert run.returncode == 0, run.stderr[-2000:]
    return path


@pytest.mark.timeout(300)
def test_an_export_to_markdown_shows_the_fallback_as_text(executed, tmp_path):
    run = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "markdown",
                          "--output-dir", str(tmp_path), str(executed)],
                         capture_output=True, text=True, timeout=120, env=_jupyter_env())
    assert run.returncode == 0, run.stderr[-2000:]
    md = (tmp_path / "viewer.md").read_text(encoding="utf-8")
    assert f'<div class="{CLASS}">' in md
    tags, _, text = hostile.markup_of(md[md.index(f'<div class="{CLASS}">'):])
    assert "b" not in tags                                 # the program's <b> stays text
    assert "print('<b>a graph break</b>')" in text and COMMAND in text


@pytest.mark.timeout(300)
def test_nbval_validates_a_lesson_stored_before_the_fallback(executed, tmp_path):
    """A stored viewer output without the fallback HTML still matches a fresh run; a changed
    text/plain still fails: only the fallback is left out of the comparison."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    out = nb["cells"][0]["outputs"][-1]
    assert WIDGET_VIEW in out["data"] and "text/html" in out["data"]
    del out["data"]["text/html"]
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copy(ROOT / "notebooks" / "conftest.py", folder / "conftest.py")
    (folder / "old.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    plain = out["data"]["text/plain"]
    out["data"]["text/plain"] = (plain if isinstance(plain, str) else "".join(plain)).replace("steps", "step")
    (folder / "changed.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval",
                          "--nbval-current-env", "-o", "addopts=", "old.ipynb", "changed.ipynb"],
                         capture_output=True, text=True, timeout=240, env=_jupyter_env(), cwd=folder)
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-3000:]
    assert "FAILED changed.ipynb" in run.stdout and "text/plain" in run.stdout
