"""The viewer on a real model, in a real browser: what each step added is in view, the
viewer fits the window, and nothing moves between steps.

A GPT-2 from a `transformers` config (2 layers, random weights; a TransformerEncoderLayer
when transformers is missing) is recorded once and written as the standalone page
(widgets/viewer/page.py), which Debian's Chromium opens from file:// at 1400×900 and
1000×800. The viewer is stepped with its keys: `g` (next guard) and `n` (next node), and
after each step every new guard is inside the guards pane's visible area or counted by its
"N more new guards ↓" badge, every new node's outline is inside the drawing, the current
source line and instruction are inside their panes, and no pane's top has moved.

    .venv/bin/python -m pytest tests/test_viewer_at_scale.py     # -m "not browser" skips it
"""

from __future__ import annotations

import re

import pytest

from bench import lab_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

JUMPS = 30   # steps visited by each of `g` and `n`

# What the learner sees after a step: pane tops, the new guards and nodes, the current rows.
LOOK_JS = """root => {
  const within = (el, box) => { const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    return r.top >= b.top - 1 && r.bottom <= b.bottom + 1 && r.left >= b.left - 1 && r.right <= b.right + 1; };
  const vertical = (el, box) => { const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    return r.top >= b.top - 1 && r.bottom <= b.bottom + 1; };
  const body = sel => root.querySelector(sel + ' .dl-pane-body');
  const guards = body('.dl-guards');
  const fresh = [...guards.querySelectorAll('li.dl-new')];
  const badge = root.querySelector('.dl-guards .dl-below:not([hidden])');
  const drawing = root.querySelector('.dl-drawing');
  const current = sel => { const el = root.querySelector(sel + ' .dl-current'); return el ? vertical(el, body(sel)) : true; };
  return {
    step: root.querySelector('.dl-caption .dl-stepno').textContent,
    height: root.getBoundingClientRect().height,
    tops: [...root.querySelectorAll('.dl-panes .dl-pane')].map(p => Math.round(p.getBoundingClientRect().top))
      .concat([...root.querySelectorAll('.dl-panes .dl-pane-body')].map(p => Math.round(p.getBoundingClientRect().top))),
    newGuards: fresh.length,
    guardsInView: fresh.filter(e => vertical(e, guards)).length,
    badge: badge ? badge.textContent : null,
    nodesOut: [...root.querySelectorAll('.dl-marks .dl-new')].filter(m => !within(m, drawing)).length,
    sourceInView: current('.dl-source'),
    bytecodeInView: current('.dl-bytecode'),
  };
}"""


def _model():
    import torch

    try:
        from bench.models import build

        model, args = build("gpt2-2")
        return model, args
    except ImportError:
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True).eval()
        return layer, (torch.randn(2, 8, 32),)


@pytest.fixture(scope="module")
def model_page(tmp_path_factory):
    import torch

    import capture
    from widgets.viewer import page as page_export

    model, args = _model()
    with torch.no_grad():
        recording = capture.trace(model, *args, max_steps=200_000)
    path = tmp_path_factory.mktemp("scale") / "model.html"
    page_export.write_html(recording, path)
    return path


@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_each_step_brings_what_it_added_into_view_and_nothing_moves(browser, model_page, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = context.new_page()
        page.goto(model_page.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        root.focus()
        first = root.evaluate(LOOK_JS)
        assert first["height"] <= size[1], f"the viewer is {first['height']} px tall in a {size[1]} px window"
        looked = 0
        for key in ("g", "n"):
            page.keyboard.press("Home")
            for _ in range(JUMPS):
                before = root.evaluate(LOOK_JS)["step"]
                page.keyboard.press(key)
                try:
                    page.wait_for_function("([r, b]) => r.querySelector('.dl-caption .dl-stepno').textContent !== b",
                                           arg=[root.element_handle(), before], timeout=5_000)
                except Exception:
                    break   # nothing ahead
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
                now = root.evaluate(LOOK_JS)
                looked += 1
                where = f"{key} at {now['step']} ({size[0]}×{size[1]})"
                assert now["tops"] == first["tops"], f"a pane moved: {where}"
                assert now["height"] == first["height"], where
                if now["newGuards"]:
                    below = int(re.match(r"(\d+)", now["badge"]).group(1)) if now["badge"] else 0
                    assert now["guardsInView"] >= 1, f"no new guard in view: {where}"
                    assert now["guardsInView"] + below >= now["newGuards"], f"new guards out of view and uncounted: {where} {now}"
                assert now["nodesOut"] == 0, f"a new node is outside the drawing: {where}"
                assert now["sourceInView"] and now["bytecodeInView"], f"the current row is out of view: {where}"
        assert looked >= 20, "the recording has too few guard and node steps to say anything"
        page.screenshot(path=str(model_page.with_name(f"model-{size[0]}.png")))
    finally:
        context.close()


def test_the_overview_shows_only_once_a_node_is_drawn(browser, model_page):
    """The graph's corner overview frames the pane's part of a drawing larger than the pane:
    at step 0, with no node drawn, there is nothing to frame and no empty box; at the last
    step of the biggest compile the drawing is larger than the pane and the overview shows."""
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    try:
        page = context.new_page()
        page.goto(model_page.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        viewer = "r.parentElement.dynamoLab.viewer"
        k = root.evaluate(f"""r => {{ const cs = {viewer}.rec.compiles;
            return cs.reduce((b, c, j) => c.nodes.length > cs[b].nodes.length ? j : b, 0); }}""")
        look = """r => { const o = r.querySelector('.dl-overview-box');
            return { hidden: !o || o.hidden }; }"""
        root.evaluate(f"r => {viewer}.go({k}, 0)")
        page.wait_for_timeout(300)
        assert root.evaluate(look)["hidden"], "an empty overview box at step 0"
        root.evaluate(f"r => {viewer}.go({k}, {viewer}.rec.compiles[{k}].steps.length - 1)")
        page.wait_for_timeout(500)
        assert not root.evaluate(look)["hidden"], "no overview of a graph larger than its pane"
    finally:
        context.close()
