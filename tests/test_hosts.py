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
import time
from pathlib import Path

import pytest
import torch

import capture
from bench import lab_server
from widgets.viewer import TraceViewer
from widgets.viewer.fallback import CLASS, COMMAND, MAX_LINES, SAVE

import hostile

# Each test, a server and a kernel included, takes under a minute; a hung one stops here.
pytestmark = pytest.mark.timeout(300)

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
        "viewer = TraceViewer(capture.trace(f, torch.ones(2)))\nviewer"))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _jupyter_env(folder: Path) -> dict[str, str]:
    """Jupyter's environment for a subprocess: a `python3` kernel on this interpreter (found
    before any other: its own data folder), the checkout importable."""
    spec = folder / "jupyter-data" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}))
    env = dict(os.environ)
    env["JUPYTER_DATA_DIR"] = str(folder / "jupyter-data")
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
                         capture_output=True, text=True, timeout=300, env=_jupyter_env(folder), cwd=folder)
    assert run.returncode == 0, run.stderr[-2000:]
    return path


def test_an_export_to_markdown_shows_the_fallback_as_text(executed, tmp_path):
    run = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "markdown",
                          "--output-dir", str(tmp_path), str(executed)],
                         capture_output=True, text=True, timeout=120, env=_jupyter_env(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    md = (tmp_path / "viewer.md").read_text(encoding="utf-8")
    assert f'<div class="{CLASS}">' in md
    tags, _, text = hostile.markup_of(md[md.index(f'<div class="{CLASS}">'):])
    assert "b" not in tags                                 # the program's <b> stays text
    assert "print('<b>a graph break</b>')" in text and COMMAND in text


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
                         capture_output=True, text=True, timeout=240, env=_jupyter_env(tmp_path), cwd=folder)
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-3000:]
    assert "FAILED changed.ipynb" in run.stdout and "text/plain" in run.stdout


# -- real hosts in Chromium --------------------------------------------------------------------

MARIMO_APP = ROOT / "tests" / "data" / "marimo_viewer.py"
WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"   # ipywidgets' front end in Lab and Notebook 7
VIEWPORT = {"width": 1280, "height": 900}
READY = 180_000     # ms: open the page, start a kernel, import torch, record, render
CLICK = 10_000      # ms: a click until the step shown has changed
STEP = re.compile(r"step (\d+) / (\d+)")


@pytest.fixture
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport=VIEWPORT)
    page.dl_errors = []
    page.on("pageerror", lambda e: page.dl_errors.append(f"{e} @ {e.stack or ''}"))
    try:
        yield page
    finally:
        page.close()


def _own_errors(page, host_bundle: str) -> list[str]:
    """Errors in the page that the host's own code did not throw (Notebook 7's notebook_core
    throws one of its own while it loads)."""
    return [e for e in page.dl_errors if host_bundle not in e]


def _step_shown(root) -> tuple[int, int]:
    m = STEP.search(root.locator(".dl-caption .dl-stepno").text_content())
    assert m, root.locator(".dl-caption").text_content()
    return int(m[1]), int(m[2])


def _rendered_and_steps(page, root) -> None:
    """The viewer in this host: drawn from the recording, with its handle, and a step forward
    moves it (in the page and in the model the host keeps)."""
    page.wait_for_function("r => r.dataset.ready === '1'", arg=root.element_handle(), timeout=READY)
    compiles = root.evaluate("r => r.parentElement.dynamoLab.viewer.rec.compiles.length")
    assert compiles == 3                     # [0/0] restarted, [0/0_1], [1/0] the resume function
    assert _step_shown(root) == (0, 9)
    assert root.locator(".dl-pane").filter(has_text="Source").first.text_content().count("def f(x)") == 1
    root.get_by_role("button", name="forward", exact=True).click()
    page.wait_for_function("r => /step 1 \\//.test(r.querySelector('.dl-caption .dl-stepno').textContent)",
                           arg=root.element_handle(), timeout=CLICK)
    # sent to the model once stepping pauses (sync.js)
    page.wait_for_function("r => r.parentElement.dynamoLab.model.get('step') === 1",
                           arg=root.element_handle(), timeout=CLICK)
    # The program's own text stays text: the print's argument is in the source pane, no <b>.
    assert root.locator("b", has_text="a graph break").count() == 0
    assert "<b>a graph break</b>" in root.text_content()


@pytest.fixture
def notebook_folder(tmp_path) -> Path:
    root = tmp_path / "notebooks"
    root.mkdir()
    _viewer_notebook(root / "viewer.ipynb")
    return root


def _open_and_run(page, server) -> None:
    page.goto(server.url("notebooks/viewer.ipynb"))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=READY)
    page.locator(".jp-Notebook .jp-Cell").first.click()
    lab_server.run_all(page)


@pytest.mark.browser
def test_jupyter_notebook_7_renders_the_viewer_and_it_steps(notebook_folder, page, tmp_path):
    with lab_server.running_notebook(notebook_folder, tmp_path / "state") as server:
        _open_and_run(page, server)
        root = page.locator(".jp-OutputArea .dl-viewer").first
        root.wait_for(timeout=READY)
        _rendered_and_steps(page, root)
        # The model is the kernel's: Python sees the step the page took, and moves it.
        deadline = time.monotonic() + CLICK / 1000
        while server.execute("viewer.ipynb", "print(viewer.step)").strip() != "1":
            assert time.monotonic() < deadline, "the kernel never saw the step taken in the page"
            time.sleep(0.2)
        server.execute("viewer.ipynb", "viewer.step = 4")
        page.wait_for_function("r => /step 4 \\//.test(r.querySelector('.dl-caption .dl-stepno').textContent)",
                               arg=root.element_handle(), timeout=CLICK)
        # The fallback is not shown where the widget is drawn.
        assert page.locator(f".{CLASS}").count() == 0
        assert _own_errors(page, "/static/notebook/") == []


@pytest.mark.browser
def test_jupyterlab_draws_the_widget_view_not_the_fallback(notebook_folder, page, tmp_path):
    with lab_server.running(notebook_folder, tmp_path / "state") as lab:
        page.goto(lab.url("lab/tree/viewer.ipynb"))
        page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=READY)
        page.locator(".jp-Notebook .jp-Cell").first.click()
        lab_server.run_all(page)
        root = page.locator(".jp-OutputArea .dl-viewer").first
        root.wait_for(timeout=READY)
        _rendered_and_steps(page, root)
        assert page.locator(f".{CLASS}").count() == 0


@pytest.mark.browser
def test_marimo_renders_the_viewer_through_mo_ui_anywidget_and_it_steps(page, tmp_path):
    with lab_server.running_marimo(MARIMO_APP, tmp_path / "state") as server:
        page.goto(server.base)
        root = page.locator(".dl-viewer").first
        root.wait_for(timeout=READY)
        page.get_by_text("step in the kernel: 0").wait_for(timeout=READY)
        _rendered_and_steps(page, root)
        # marimo ran the cell that reads the viewer's value again, with the page's step.
        page.get_by_text("step in the kernel: 1").wait_for(timeout=CLICK)
        assert page.dl_errors == []


@pytest.mark.browser
def test_without_the_widget_front_end_notebook_7_shows_the_fallback_as_text(notebook_folder, page,
                                                                            tmp_path):
    with lab_server.running_notebook(notebook_folder, tmp_path / "state",
                                     disabled=(WIDGET_MANAGER,)) as server:
        _open_and_run(page, server)
        fallback = page.locator(f".jp-OutputArea .{CLASS}")
        fallback.wait_for(timeout=READY)
        text = fallback.inner_text()
        assert "did not load here" in text and "3 compile(s)" in text
        assert "print('<b>a graph break</b>')" in text and "GB0059" in text
        assert COMMAND in text and SAVE in text
        assert fallback.locator("b").count() == 0       # the program's <b> is text
        assert page.locator(".dl-viewer").count() == 0
