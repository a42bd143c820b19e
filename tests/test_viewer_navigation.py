"""Navigating a recording in a real browser: the timeline, "go to step", stepping over and
out of an inlined call, the keys list, the caption's words, and a 3,000-node graph that
keeps only what the pane shows in the page.

A module whose forward calls a submodule (inlined by Dynamo's InliningInstructionTranslator)
and a closure, and breaks at a print, is recorded once with the real Dynamo and written as
the standalone page (widgets/viewer/page.py); Debian's Chromium opens it from file:// and
the viewer is driven by its keys and by clicks, as a learner would.

    .venv/bin/python -m pytest tests/test_viewer_navigation.py     # -m "not browser" skips it
"""

from __future__ import annotations

import re

import pytest
import torch

import capture
from bench import lab_server
from widgets.viewer import page as page_export

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

STEP = re.compile(r"step (\d+) / (\d+)")
VIEWER_JS = "document.querySelector('.dl-viewer').parentElement.dynamoLab.viewer"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.scale = 2.0

    def forward(self, x):
        y = x.sin()
        k = self.scale

        def times(z):
            return z * k

        y = times(y)
        print("half way")
        return self.block(y)


def _chain(x):
    for _ in range(3000):
        x = x + 1
    return x


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("navigation")
    net = capture.trace(Net(), torch.ones(2, 4))
    chain = capture.trace(_chain, torch.ones(3), max_steps=100_000)
    out = {}
    for name, rec in (("net", net), ("chain", chain)):
        out[name] = folder / f"{name}.html"
        page_export.write_html(rec, out[name])
    return out


@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture
def opened(browser, pages):
    """open(name, size=(1400, 900)) -> (page, root) with the viewer focused."""
    contexts = []

    def open_(name, size=(1400, 900)):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        contexts.append(context)
        page = context.new_page()
        page.goto(pages[name].resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        root.focus()
        return page, root

    yield open_
    for context in contexts:
        context.close()


def step_of(root) -> tuple[int, int]:
    m = STEP.search(root.locator(".dl-caption .dl-stepno").text_content())
    return int(m.group(1)), int(m.group(2))


def caption(root) -> str:
    return root.locator(".dl-caption").first.text_content()


def settle(page) -> None:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")


def go(page, compile_index: int, step: int) -> None:
    page.evaluate(f"([k, i]) => {VIEWER_JS}.go(k, i)", [compile_index, step])
    settle(page)


def kept_attempt(page) -> int:
    """The index of the attempt that was kept (the first compile whose outcome is a graph break)."""
    return page.evaluate(f"() => {VIEWER_JS}.rec.compiles.findIndex(c => c.outcome === 'graph_break')")


def test_a_click_on_the_timeline_goes_to_the_marked_step_under_it(opened):
    page, root = opened("net")
    k = kept_attempt(page)
    go(page, k, 0)
    strip = root.locator(".dl-timeline")
    assert strip.is_visible()
    box = strip.bounding_box()
    assert box["width"] > 300 and box["height"] >= 8
    n, node_step = page.evaluate(f"""() => {{ const c = {VIEWER_JS}.current;
        return [c.steps.length, c.steps.findIndex(s => s.nodes_added.length && s.depth === 0 && s.index > 2)]; }}""")
    assert node_step > 0
    x = (node_step + 0.5) / n * box["width"]
    strip.click(position={"x": x, "y": box["height"] / 2})
    settle(page)
    assert step_of(root) == (node_step, n - 1)
    page.keyboard.press("Backspace")   # a click on the timeline is a jump: return comes back
    settle(page)
    assert step_of(root)[0] == 0
    strip.click(position={"x": box["width"] - 3, "y": 4})
    settle(page)
    assert step_of(root)[0] == n - 1, "the right end of the strip is the last step"
    tip = strip.get_attribute("title") or ""
    assert tip.startswith("step ") and "click to go there" in tip


def test_go_to_a_typed_step_then_the_keys_step_on_from_there(opened):
    page, root = opened("net")
    _, last = step_of(root)
    page.keyboard.press("j")
    assert page.evaluate("() => document.activeElement.classList.contains('dl-goto')")
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    settle(page)
    assert step_of(root) == (7, last)
    page.wait_for_function("() => document.activeElement.classList.contains('dl-viewer')")
    page.keyboard.press("ArrowRight")
    settle(page)
    assert step_of(root)[0] == 8, "after Enter the arrows step again"
    goto = root.locator(".dl-goto")
    goto.fill("9999")
    goto.press("Enter")
    settle(page)
    assert step_of(root)[0] == last
    assert f"0 to {last}" in root.locator(".dl-note").text_content()
    goto.fill("seven")
    goto.press("Enter")
    settle(page)
    assert step_of(root)[0] == last and "Type a step number" in root.locator(".dl-note").text_content()


def test_step_over_an_inlined_call_and_run_to_its_end(opened):
    page, root = opened("net")
    k = page.evaluate(f"() => {VIEWER_JS}.rec.compiles.length - 1")   # the resume function calls self.block
    before, after = page.evaluate(f"""(k) => {{ const c = {VIEWER_JS}.rec.compiles[k];
        const i = c.steps.findIndex((s, j) => j + 1 < c.steps.length && c.steps[j + 1].depth > s.depth);
        let j = i + 1; while (c.steps[j].depth > c.steps[i].depth) j++;
        return [i, j]; }}""", k)
    go(page, k, before)
    over = root.locator(".dl-step-over")
    assert over.is_enabled() and root.locator(".dl-step-out").is_disabled()
    page.keyboard.press("o")
    settle(page)
    assert step_of(root)[0] == after
    assert re.search(r"CALL", caption(root)), caption(root)
    page.keyboard.press("Backspace")
    settle(page)
    assert step_of(root)[0] == before
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    settle(page)
    assert "Block.forward" in caption(root), caption(root)
    assert root.locator(".dl-step-out").is_enabled()
    root.locator(".dl-step-out").click()
    settle(page)
    assert step_of(root)[0] == after, "run to the end of the call: back in the caller's CALL"
    assert "returned here" in root.locator(".dl-note").text_content()


def test_the_keys_list_opens_over_the_panes_and_names_every_key(opened):
    page, root = opened("net")
    tops = root.evaluate("r => [...r.querySelectorAll('.dl-panes .dl-pane')].map(p => p.getBoundingClientRect().top)")
    page.keyboard.press("?")
    keys = root.locator(".dl-keys")
    assert keys.is_visible()
    text = keys.text_content()
    for word in ("step over", "end of this inlined call", "go to a step", "graph break", "timeline", "predict"):
        assert word in text, word
    assert root.evaluate("r => [...r.querySelectorAll('.dl-panes .dl-pane')].map(p => p.getBoundingClientRect().top)") == tops
    assert root.locator(".dl-keys-toggle").get_attribute("aria-pressed") == "true"
    page.keyboard.press("Escape")
    assert keys.is_hidden()
    root.locator(".dl-keys-toggle").click()
    assert keys.is_visible()
    root.locator(".dl-keys-close").click()
    assert keys.is_hidden()


def test_the_caption_names_classes_renames_and_the_line_a_prologue_comes_before(opened):
    page, root = opened("net")
    k = kept_attempt(page)
    steps = page.evaluate(f"""(k) => {{ const c = {VIEWER_JS}.rec.compiles[k];
        return c.steps.map(s => [s.opname, s.argrepr, s.lineno, s.depth, s.code_name]); }}""", k)
    rename = next(i for i, s in enumerate(steps) if s[0] == "STORE_FAST" and s[1] == "y")
    go(page, k, rename)
    assert "renamed graph node sin to y" in caption(root), caption(root)
    assert "in Net.forward" in caption(root)
    free = next(i for i, s in enumerate(steps) if s[2] is None and s[3] == 1)   # COPY_FREE_VARS in times()
    go(page, k, free)
    first = next(s[2] for s in steps[free:] if s[2] is not None and s[3] == 1)
    assert f"before line {first} in times (inlined from Net.forward)" in caption(root), caption(root)
    assert "line ?" not in caption(root)
    source = root.locator(".dl-source")
    assert source.locator(".dl-row.dl-current").count() == 0, "no line is marked as the one running"
    assert source.locator(".dl-row.dl-before").count() == 1
    assert source.locator(".dl-row.dl-before").text_content().strip().startswith(str(first))
    assert "steps 0–" in root.locator(".dl-summary").text_content()
    assert f"/ {len(steps) - 1}" in root.locator(".dl-caption .dl-stepno").text_content()
    # the step's number is said once, in the caption (the slider speaks it to a screen reader)
    assert root.locator(".dl-stepno").count() == 1
    assert "/ " not in root.locator(".dl-controls").text_content()


@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_the_source_pane_shows_at_least_five_lines(opened, size):
    page, root = opened("net", size)
    go(page, kept_attempt(page), 10)
    shown = root.evaluate("""r => { const body = r.querySelector('.dl-source .dl-pane-body'), b = body.getBoundingClientRect();
        return [...body.querySelectorAll('.dl-row')].filter(e => { const x = e.getBoundingClientRect();
            return x.top >= b.top - 1 && x.bottom <= b.bottom + 1; }).length; }""")
    assert shown >= 5, f"{shown} source lines in view at {size}"
    assert root.evaluate("r => r.getBoundingClientRect().height") <= size[1]


def test_a_big_graph_keeps_only_the_nodes_near_the_pane_in_the_page(opened):
    page, root = opened("chain")
    total = page.evaluate(f"() => {VIEWER_JS}.current.nodes.length")
    n = page.evaluate(f"() => {VIEWER_JS}.current.steps.length")
    assert total > 3000
    looked = []
    for i in [n - 1, 0, n // 2, n // 3, n - 1]:
        go(page, 0, i)
        looked.append(root.evaluate("""r => {
            const drawing = r.querySelector('.dl-drawing').getBoundingClientRect();
            const nodes = [...r.querySelectorAll('.dl-nodes > g.node')];
            const inView = nodes.filter(n => { const b = n.getBoundingClientRect();
                return b.bottom > drawing.top && b.top < drawing.bottom && b.right > drawing.left && b.left < drawing.right; });
            const marks = [...r.querySelectorAll('.dl-marks .dl-new')].map(m => m.getBoundingClientRect());
            return {inPage: nodes.length, inView: inView.length, hidden: nodes.filter(n => n.style.display === 'none').length,
                    marksInside: marks.every(b => b.top >= drawing.top - 1 && b.bottom <= drawing.bottom + 1),
                    edges: r.querySelectorAll('.dl-edges > g.edge').length}; }"""))
    for i, seen in zip([n - 1, 0, n // 2, n // 3, n - 1], looked):
        assert seen["inPage"] <= 300, f"step {i}: {seen['inPage']} of {total} nodes in the page"
        assert seen["hidden"] == 0
        assert seen["marksInside"], f"step {i}: the new node is outside the drawing"
        if i > 20:
            assert seen["inView"] >= 3 and seen["edges"] >= 2, f"step {i}: {seen}"
    # Zooming out and panning bring other nodes in: still bounded.
    for key in ["-"] * 6 + ["Shift+ArrowUp"] * 3:
        page.keyboard.press(key)
    settle(page)
    in_page = root.evaluate("r => r.querySelectorAll('.dl-nodes > g.node').length")
    assert 0 < in_page <= 2500
