"""A lesson stores what its viewers showed (the recording), never the viewer's module.

No lesson holds `_esm`/`_css`; stripping keeps every recording and changes nothing else;
JupyterLab's save (through the pre-save hook `./lab` installs) and executing a lesson
with `python -m widgets.course.stored --execute` both leave the module out.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from widgets.course import stored

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _viewer(esm: bool = True) -> dict:
    state = {"_anywidget_id": stored.VIEWER_ID, "_model_name": "AnyModel", "step": 3,
             "data": {}, "titles": ["[0/0] f"]}
    if esm:
        state |= {"_esm": "export default { render() {} }", "_css": ".dl-viewer {}"}
    return {"model_name": "AnyModel", "state": state,
            "buffers": [{"data": "aGk=", "encoding": "base64", "path": ["data"]}]}


def _notebook(*models: dict) -> dict:
    other = {"model_name": "AnyModel", "state": {"_anywidget_id": "someone.Else", "_esm": "x"}}
    state = {f"m{i}": m for i, m in enumerate(models)} | {"other": other}
    return {"cells": [], "metadata": {"widgets": {stored.WIDGET_STATE: {"state": state}}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_no_lesson_stores_the_viewers_module(lesson):
    nb = json.loads(lesson.read_text(encoding="utf-8"))
    found = [(model_id, key) for model_id, model in stored.viewer_models(nb).items()
             for key in stored.MODULE_KEYS if key in model.get("state", {})]
    assert found == [], (f"{lesson.name} stores the viewer's module; run "
                         f"python -m widgets.course.stored {lesson.relative_to(ROOT)}")


def test_the_lessons_still_store_recordings_to_strip_around():
    kept = [values for lesson in LESSONS
            for values in stored.stored_viewers(json.loads(lesson.read_text("utf-8"))).values()]
    assert len(kept) >= 10 and all(isinstance(v["data"], bytes) and v["data"] for v in kept)


def test_strip_drops_the_module_and_keeps_the_recording_and_other_widgets():
    nb = _notebook(_viewer(), _viewer(esm=False))
    before = copy.deepcopy(nb)
    assert stored.modules_stored(nb) == 1
    assert stored.strip_modules(nb) == 1
    assert stored.modules_stored(nb) == 0 and stored.strip_modules(nb) == 0
    state = nb["metadata"]["widgets"][stored.WIDGET_STATE]["state"]
    assert state["m0"]["state"] == {k: v for k, v in before["metadata"]["widgets"][
        stored.WIDGET_STATE]["state"]["m0"]["state"].items() if k not in ("_esm", "_css")}
    assert state["m0"]["buffers"] == before["metadata"]["widgets"][stored.WIDGET_STATE][
        "state"]["m0"]["buffers"]
    assert state["other"]["state"]["_esm"] == "x"   # not a TraceViewer: not ours to change
    assert stored.stored_viewers(nb)["m0"] == {"step": 3, "data": b"hi", "titles": ["[0/0] f"]}


def test_jupyterlabs_save_goes_through_the_hook_without_the_module():
    nb = _notebook(_viewer())
    stored.pre_save_hook(model={"type": "notebook", "content": nb}, path="x.ipynb",
                         contents_manager=None)
    assert stored.modules_stored(nb) == 0
    stored.pre_save_hook(model={"type": "file", "content": "text"}, path="x.txt")  # left alone


def test_lab_starts_jupyterlab_with_the_hook():
    lab = (ROOT / "lab").read_text(encoding="utf-8")
    assert "--ContentsManager.pre_save_hook=widgets.course.stored.pre_save_hook" in lab
    from traitlets.utils.importstring import import_item

    assert import_item("widgets.course.stored.pre_save_hook") is stored.pre_save_hook


@pytest.mark.timeout(120)
def test_a_jupyter_server_started_as_lab_starts_it_saves_lessons_without_the_module(tmp_path):
    import os
    import socket
    import time
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, **{f"JUPYTER_{k}_DIR": str(tmp_path / k) for k in ("CONFIG", "DATA", "RUNTIME")},
           "IPYTHONDIR": str(tmp_path / "ipython")}
    (tmp_path / "root").mkdir()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--IdentityProvider.token=t",
         f"--ServerApp.root_dir={tmp_path / 'root'}", "--allow-root",
         "--ContentsManager.pre_save_hook=widgets.course.stored.pre_save_hook"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api/contents/lesson.ipynb"
    body = json.dumps({"type": "notebook", "content": _notebook(_viewer())}).encode()
    try:
        for _ in range(100):
            try:
                request = urllib.request.Request(url, data=body, method="PUT", headers={
                    "Authorization": "token t", "Content-Type": "application/json"})
                assert urllib.request.urlopen(request, timeout=10).status in (200, 201)
                break
            except OSError:
                time.sleep(0.3)
        else:
            pytest.fail("the Jupyter server did not start")
    finally:
        server.terminate()
        server.wait(timeout=30)
    saved = json.loads((tmp_path / "root" / "lesson.ipynb").read_text(encoding="utf-8"))
    assert len(stored.stored_viewers(saved)) == 1 and stored.modules_stored(saved) == 0


def test_the_command_strips_in_place_and_check_says_which_file(tmp_path):
    path = tmp_path / "lesson.ipynb"
    path.write_text(json.dumps(_notebook(_viewer()), indent=1, sort_keys=True) + "\n")
    command = [sys.executable, "-m", "widgets.course.stored"]
    check = subprocess.run([*command, "--check", str(path)], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
    assert check.returncode == 1 and "lesson.ipynb: 1 viewer(s)" in check.stderr
    assert subprocess.run([*command, str(path)], cwd=ROOT, capture_output=True,
                          timeout=120).returncode == 0
    assert stored.modules_stored(json.loads(path.read_text())) == 0
    again = subprocess.run([*command, "--check", str(path)], capture_output=True, cwd=ROOT,
                           timeout=120)
    assert again.returncode == 0
    wrong = subprocess.run([*command, str(tmp_path / "nope.ipynb")], capture_output=True,
                           text=True, cwd=ROOT, timeout=120)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "not a notebook" in wrong.stderr


TINY = {
    "cells": [{"cell_type": "code", "id": "trace", "metadata": {}, "execution_count": None,
               "outputs": [], "source": "%load_ext widgets\nimport torch\n"
                                        "from widgets import TraceViewer\nimport capture\n"
                                        "TraceViewer(capture.trace(lambda x: x.sin(), torch.ones(2)))"}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_executing_a_lesson_stores_its_viewer_without_the_module(tmp_path):
    path = tmp_path / "tiny.ipynb"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "widgets.course.stored", "--execute", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=280)
    assert result.returncode == 0, result.stderr[-2000:]
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert len(stored.stored_viewers(nb)) == 1 and stored.modules_stored(nb) == 0
    assert "the module dropped from 1 viewer(s)" in result.stderr


def _code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}


EXERCISE = {
    "cells": [_code("class Exercise:\n    def check(self, answer):\n"
                    "        print('q1: no prediction yet')\n\nq1 = Exercise()\nq1_answer = ..."),
              _code("q1.check(q1_answer)"),
              {"cell_type": "markdown", "metadata": {}, "source": "The evidence:"},
              _code("print('graphs: 2')"),
              _code("print('the next section')")],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


@pytest.mark.timeout(200)
def test_storing_a_lesson_folds_the_evidence_after_each_check_and_keeps_its_output(tmp_path):
    """`--execute` runs the lesson and stores the cell after the check with its output folded,
    the output kept (nbval compares it), and the check with its code folded; the prediction
    and later cells stay open."""
    path = tmp_path / "exercise.ipynb"
    path.write_text(json.dumps(EXERCISE), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "widgets.course.stored", "--execute", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    hidden = [bool(c["metadata"].get("jupyter", {}).get("outputs_hidden")) for c in cells]
    assert hidden == [False, False, False, True, False]
    code_hidden = [bool(c["metadata"].get("jupyter", {}).get("source_hidden")) for c in cells]
    assert code_hidden == [False, True, False, False, False]
    assert cells[3]["metadata"]["collapsed"] is True
    assert ["".join(o["text"]) for o in cells[3]["outputs"]] == ["graphs: 2\n"]
    assert "q1: no prediction yet" in "".join(cells[1]["outputs"][0]["text"])
