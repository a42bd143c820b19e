"""Guards, search and the linked panes in a real browser, on a real model's recording.

A GPT-2 built from a `transformers` config (2 layers, random weights; a
TransformerEncoderLayer when transformers is missing) is recorded with the real Dynamo
and opened as the exported page from file:// (1400×900 and 1000×800, light and dark) and
as the widget in JupyterLab. There, from the keyboard only:

- "/" puts the cursor in the search box; a guard's source, typed, finds that guard, the
  arrows choose it and Enter goes to the step that installed it, the guard marked in view;
  a graph node's name finds the node and goes to the step that made it; return comes back;
- the guards pane groups guards by the value they guard, says each kind once (the kind
  Dynamo installed), names what an object id stands for, and filters by kind or source
  (typing there never steps the viewer);
- focusing a stack entry that holds a graph node marks the node and the guards on its
  source; hovering the node marks the entry.

    flock /tmp/dynamo-lab-heavy.lock .venv/bin/python -m pytest tests/test_viewer_search.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bench import lab_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[1]
READY = 60_000
STEP = re.compile(r"step (\d+) / (\d+)")

# The model, as the kernel builds it too.
MODEL = """\
import sys, torch
sys.path.insert(0, {root!r})
try:
    from bench.models import build
    model, args = build("gpt2-2")
except ImportError:
    model = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True).eval()
    args = (torch.randn(2, 8, 32),)
"""

# Things to look for, chosen in the page from the recording the viewer holds.
PICK_JS = """root => {
  const v = root.parentElement.dynamoLab.viewer, c = v.rec.compiles[v.compile];
  const last = c.steps.length - 1;
  const mid = (xs) => xs[Math.floor(xs.length / 2)];
  const guards = c.guard_details.map((g, k) => ({ ...g, k }))
    .filter((g) => g.step != null && g.step > 0 && g.step < last && g.source && /_modules/.test(g.source));
  const bySource = new Map();
  for (const g of c.guard_details) if (g.source) bySource.set(g.source, (bySource.get(g.source) || 0) + 1);
  const guard = mid(guards.filter((g) => bySource.get(g.source) <= 8)) || mid(guards);
  const nodes = c.nodes.map((n, k) => ({ ...n, k })).filter((n) => n.step != null && n.step > 0 && n.op === "call_function");
  const node = mid(nodes);
  // a step whose stack holds a reading of a graph input (a parameter or an argument) with a source
  let held = null;
  const byName = new Map(c.nodes.map((n, k) => [n.name, k]));
  for (let j = 0; j < c.steps.length && !held; j++) {
    for (const id of c.steps[j].stack) {
      const r = c.vars[id];
      if (r.node && r.source && byName.has(r.node) && c.nodes[byName.get(r.node)].op === "placeholder" &&
          c.guard_details.some((g) => g.source === r.source && g.step != null && g.step <= j)) {
        held = { step: j, id, node: byName.get(r.node), source: r.source }; break;
      }
    }
  }
  return { guard: { k: guard.k, step: guard.step, source: guard.source }, node: { k: node.k, step: node.step, name: node.name }, held, last };
}"""


@pytest.fixture(scope="module")
def recording():
    import torch

    import capture

    scope: dict = {}
    exec(MODEL.format(root=str(ROOT)), scope)
    with torch.no_grad():
        return capture.trace(scope["model"], *scope["args"], max_steps=200_000)


@pytest.fixture(scope="module")
def exported(recording, tmp_path_factory) -> Path:
    from widgets.viewer import page

    return page.write_html(recording, tmp_path_factory.mktemp("search") / "model.html")


@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


def step_of(root) -> int:
    return int(STEP.search(root.locator(".dl-caption .dl-stepno").first.text_content())[1])


def wait_step(root, i: int) -> None:
    root.page.wait_for_function(
        "([root, i]) => (root.querySelector('.dl-caption .dl-stepno') || {}).textContent.startsWith(`step ${i} /`)",
        arg=[root.element_handle(), i], timeout=10_000)


def in_view(el, box) -> bool:
    """Whether element `el` is inside the visible area of the scrolling box `box` (vertically)."""
    return el.evaluate("""(e, b) => { const r = e.getBoundingClientRect(), q = b.getBoundingClientRect();
        return r.top >= q.top - 1 && r.top < q.bottom - 4; }""", box.element_handle())


def search_and_go(page, root, query: str, attr: str, k: int) -> None:
    """From the viewer: "/", type the query, arrow down to the result for `attr`=k, Enter."""
    root.focus()
    page.keyboard.press("/")
    box = root.locator(".dl-search-input")
    assert box.evaluate("b => document.activeElement === b"), '"/" puts the cursor in the search box'
    page.keyboard.type(query)
    results = root.locator(".dl-search-results")
    results.wait_for(state="visible", timeout=5_000)
    options = results.locator("[role=option]")
    keys = [o.get_attribute(attr) for o in options.all()]
    assert str(k) in keys, f"{query!r} did not find {attr}={k}: {options.all_text_contents()}"
    for _ in range(keys.index(str(k))):
        page.keyboard.press("ArrowDown")
    chosen = box.get_attribute("aria-activedescendant")
    assert chosen and results.locator(f"#{chosen}").get_attribute(attr) == str(k)
    page.keyboard.press("Enter")
    assert results.is_hidden()
    assert page.evaluate("r => document.activeElement === r", root.element_handle()), "the keys step again after a jump"


def check_search(page, root, picked) -> None:
    root.focus()
    page.keyboard.press("End")
    last = step_of(root)
    g = picked["guard"]
    search_and_go(page, root, g["source"], "data-guard", g["k"])
    wait_step(root, g["step"])
    flashed = root.locator(f".dl-guards li.dl-flash[data-guard-row='{g['k']}']")
    assert flashed.count() == 1, "the guard found is marked in the guards pane"
    assert in_view(flashed, root.locator(".dl-guards .dl-pane-body")), "and scrolled into view"
    assert "installed the guard" in root.locator(".dl-note").text_content()
    page.keyboard.press("Backspace")
    wait_step(root, last)
    n = picked["node"]
    search_and_go(page, root, n["name"], "data-node", n["k"])
    wait_step(root, n["step"])
    assert root.locator(f".dl-graph .dl-marks .dl-flash[data-node='{n['k']}']").count() == 1
    assert "made the graph node" in root.locator(".dl-note").text_content()
    page.keyboard.press("Backspace")
    wait_step(root, last)
    # Escape leaves the box; nothing typed there stepped the viewer.
    page.keyboard.press("/")
    page.keyboard.type("no such name at all")
    assert "nothing in this compile matches" in root.locator(".dl-search-results").text_content()
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    assert step_of(root) == last
    assert page.evaluate("r => document.activeElement === r", root.element_handle())


GUARD_ROWS_JS = """root => {
  const v = root.parentElement.dynamoLab.viewer, c = v.rec.compiles[v.compile];
  return [...root.querySelectorAll('.dl-guards li[data-guard-row]')].map((li) => {
    const g = c.guard_details[Number(li.dataset.guardRow)];
    const group = li.closest('[data-guard-group]');
    return { kind: li.querySelector('.dl-guard-kind').textContent, installed: g.kind, raw: g.text,
             text: li.textContent, group: group ? group.dataset.guardGroup : null, source: g.source };
  });
}"""


def check_guards_pane(page, root) -> None:
    root.focus()
    page.keyboard.press("End")
    last = step_of(root)
    rows = root.evaluate(GUARD_ROWS_JS)
    assert len(rows) > 20
    assert root.locator(".dl-guards [data-guard-group]").count() > 5, "guards are grouped by the value they guard"
    for r in rows:
        assert r["kind"] == r["installed"], f"one kind name: {r}"
        assert not r["text"].startswith(f"{r['kind']}{r['kind']}")
        if r["source"] and r["group"] not in (None, "other"):
            assert r["group"] in r["source"], f"a guard sits with the value it guards: {r}"
    named = [r for r in rows if "___check_obj_id(" in r["raw"]]
    assert named, "the model's guards check object ids"
    for r in named:
        assert not re.search(r"\b\d{9,}\b", r["text"]), f"an object id left as a number: {r['text']}"
    # "as written" shows Dynamo's own text
    root.locator(".dl-as-written").check()
    assert any("___check_obj_id(" in t for t in root.locator(".dl-guards li[data-guard-row]").all_text_contents())
    root.locator(".dl-as-written").uncheck()
    # The filter: typed (the letters are the viewer's keys elsewhere), it keeps the guards of that kind.
    box = root.locator(".dl-guard-filter")
    box.focus()
    page.keyboard.type("TENSOR_MATCH")
    page.wait_for_function("r => /\\d+ of \\d+ match/.test(r.querySelector('.dl-guard-count').textContent)",
                           arg=root.element_handle(), timeout=5_000)
    kept = root.evaluate(GUARD_ROWS_JS)
    assert kept and all(r["kind"] == "TENSOR_MATCH" or "TENSOR_MATCH" in r["raw"] for r in kept), kept[:3]
    assert step_of(root) == last, "typing in the filter never steps the viewer"
    page.keyboard.press("Escape")   # clears it
    page.wait_for_function("r => r.querySelector('.dl-guard-count').textContent === ''", arg=root.element_handle(), timeout=5_000)
    assert box.input_value() == ""


def check_linked(page, root, picked) -> None:
    held = picked["held"]
    assert held, "some step holds a graph input on the stack"
    root.evaluate("(r, j) => r.parentElement.dynamoLab.viewer.go(0, j)", held["step"])
    wait_step(root, held["step"])
    entry = root.locator(f".dl-stack li[data-var='{held['id']}']").first
    entry.locator(".dl-kind").focus()   # the keyboard reaches the entry's word
    node = root.locator(f".dl-graph g.node[data-node='{held['node']}']")
    page.wait_for_function("n => n.classList.contains('dl-peer')", arg=node.element_handle(), timeout=3_000)
    marked = root.locator(".dl-guards .dl-peer")
    assert marked.count() >= 1, "the guards on the entry's source are marked"
    root.focus()
    assert root.locator(".dl-peer").count() == 0, "leaving it unmarks them"
    node.dispatch_event("mouseover")
    page.wait_for_function("e => e.classList.contains('dl-peer')", arg=entry.element_handle(), timeout=3_000)
    node.dispatch_event("mouseout")


def shots(page, name: str) -> None:
    folder = os.environ.get("DYNAMO_LAB_SEARCH_SHOTS")   # a folder: look at what a learner sees
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize("size,scheme", [((1400, 900), "light"), ((1000, 800), "dark")])
def test_search_guards_and_linked_panes_in_the_page(browser, exported, size, scheme):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(exported.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)
        root = page.locator(".dl-viewer").first
        picked = root.evaluate(PICK_JS)
        check_search(page, root, picked)
        check_guards_pane(page, root)
        check_linked(page, root, picked)
        assert root.bounding_box()["height"] <= size[1], "the search box keeps the viewer inside the window"
        root.focus()
        page.keyboard.press("/")
        page.keyboard.type(picked["node"]["name"][:6])
        shots(page, f"search_{size[0]}_{scheme}")
        assert errors == []
    finally:
        context.close()


@pytest.fixture(scope="module")
def lab_viewer(browser, tmp_path_factory):
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    cells = ["%load_ext widgets\n" + MODEL.format(root=str(ROOT)),
             "import capture\nfrom widgets import TraceViewer\nwith torch.no_grad():\n"
             "    rec = capture.trace(model, *args, max_steps=200_000)\nTraceViewer(rec)"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": c} for c in cells],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (root / "search.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.dl_errors = []
        page.on("pageerror", lambda e: page.dl_errors.append(str(e)))
        try:
            page.goto(lab.url("lab/tree/search.ipynb"))
            page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
            page.locator(".jp-Notebook .jp-Cell").first.click()
            lab_server.run_all(page)
            page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=240_000)
            yield page, page.locator(".dl-viewer").first
        finally:
            context.close()


def test_search_guards_and_linked_panes_in_jupyterlab(lab_viewer):
    page, root = lab_viewer
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    picked = root.evaluate(PICK_JS)
    check_search(page, root, picked)
    check_guards_pane(page, root)
    check_linked(page, root, picked)
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells, "typing in the boxes never reached JupyterLab"
    shots(page, "search_lab")
    assert page.dl_errors == []
