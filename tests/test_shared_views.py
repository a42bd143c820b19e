"""Two views of one viewer in JupyterLab: the recording is decoded once and shared.

anywidget calls the front end's `initialize` once per widget and `render` once per view;
the viewer decodes the recording there once and every view reads the same decoded
recording (`el.dynamoLab.viewer.rec`). The two views still step together: both follow
the widget's `step`.

    .venv/bin/python -m pytest tests/test_shared_views.py
"""

from __future__ import annotations

import json

import pytest

from bench import lab_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CELLS = ["import torch, capture\nfrom widgets import TraceViewer\n"
         "viewer = TraceViewer(capture.trace(lambda x: x.sin() * 2 + 1, torch.ones(3)))",
         "display(viewer)\ndisplay(viewer)"]
KERNEL_START = 90_000
RUN_ALL = 120_000

HANDLES_JS = "() => [...document.querySelectorAll('.dl-viewer')].map(r => r.parentElement.dynamoLab)"


@pytest.fixture(scope="module")
def lab_page(tmp_path_factory):
    home = tmp_path_factory.mktemp("shared")
    root = home / "notebooks"
    root.mkdir()
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": c} for c in CELLS],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (root / "twice.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab, lab_server.chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(lab.url("lab/tree/twice.ipynb"))
        page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=KERNEL_START)
        page.locator(".jp-Notebook .jp-Cell").first.click()
        lab_server.run_all(page)
        page.wait_for_function("() => document.querySelectorAll(\".dl-viewer[data-ready='1']\").length == 2",
                               timeout=RUN_ALL)
        yield page


def test_both_views_read_one_decoded_recording(lab_page):
    same = lab_page.evaluate(f"() => {{ const [a, b] = ({HANDLES_JS})(); "
                             "return a.viewer !== b.viewer && a.viewer.rec === b.viewer.rec; }")
    assert same, "each view decoded the recording again"


def test_a_step_in_one_view_is_shown_in_the_other(lab_page):
    first, second = lab_page.locator(".dl-viewer").nth(0), lab_page.locator(".dl-viewer").nth(1)
    first.locator("button.dl-forward").click()
    first.locator("button.dl-forward").click()
    lab_page.wait_for_function(
        "el => /^step 2 \\//.test(el.querySelector('.dl-caption .dl-stepno').textContent)",
        arg=second.element_handle(), timeout=10_000)
