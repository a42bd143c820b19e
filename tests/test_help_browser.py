"""Help and accessibility in a real browser: the exported page from file://, and the widget in JupyterLab.

Every word explains itself on hover and on keyboard focus (an opcode, a tracker class, a
guard kind, a symbol: a role="tooltip" element the word points at with aria-describedby,
its text the help file's); a graph break shows its GB id and Dynamo's explanation and hints
from the installed torch's registry, once for all the compiles that met it; guards and
graph nodes are reached with Tab and followed with Enter (keyboard-only provenance); each
step is said in an aria-live region and by the slider; pane titles are headings, the
current row has aria-current and a mark of at least 3:1 against its pane; the page takes
the focus on load and follows prefers-color-scheme: dark.

    flock /tmp/dynamo-lab-heavy.lock .venv/bin/python -m pytest tests/test_help_browser.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bench import lab_server
from capture import help as help_data
from capture import internals

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

VIEWPORT = {"width": 1400, "height": 900}
READY = 20_000
STEP = re.compile(r"step (\d+) / (\d+)")

PROGRAM = '''\
def f(x):
    y = torch.sin(x) + x.shape[0]
    print("between graphs")
    return y.cos()
'''

# WCAG's contrast ratio of two computed colours (rgb()/rgba() over the pane's colour).
CONTRAST_JS = """([a, b]) => {
    const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
        const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const [x, y] = [lum(rgb(a)), lum(rgb(b))];
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """The program recorded from a file of its own (so the source pane has its lines)."""
    import importlib.util

    import torch

    import capture

    path = tmp_path_factory.mktemp("program") / "help_program.py"
    path.write_text("import torch\n\n\n" + PROGRAM, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("help_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.randn(5, 3)
    torch._dynamo.mark_dynamic(x, 0)
    return capture.trace(module.f, x)


@pytest.fixture(scope="module")
def exported(recording, tmp_path_factory) -> Path:
    from widgets.viewer import page

    return page.write_html(recording, tmp_path_factory.mktemp("help") / "help.html")


@pytest.fixture(scope="module")
def browser():
    if not lab_server.CHROMIUM.exists():
        pytest.skip(f"{lab_server.CHROMIUM} not found")
    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture
def page_of(browser):
    made = []

    def open_(path: Path, scheme: str = "light"):
        context = browser.new_context(viewport=VIEWPORT, color_scheme=scheme)
        made.append(context)
        page = context.new_page()
        page.dl_errors = []
        page.on("pageerror", lambda e: page.dl_errors.append(str(e)))
        page.goto(path.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)
        return page

    yield open_
    for context in made:
        context.close()


def step_of(root) -> tuple[int, int]:
    m = STEP.search(root.locator(".dl-caption .dl-stepno").first.text_content())
    return int(m[1]), int(m[2])


def wait_step(root, i: int) -> None:
    root.page.wait_for_function(
        "([root, i]) => (root.querySelector('.dl-caption .dl-stepno') || {}).textContent.startsWith(`step ${i} /`)",
        arg=[root.element_handle(), i], timeout=5_000)


# -- the words, on hover and on focus ------------------------------------------------------

def _words(recording) -> dict[str, tuple[str, str]]:
    """selector -> (the word's name, a piece of its help) for the four kinds of word."""
    d = help_data.data()
    return {
        ".dl-bytecode [data-help-op='LOAD_FAST']": ("LOAD_FAST", d["opcodes"]["LOAD_FAST"]["does"]),
        ".dl-stack [data-help-tracker='TensorVariable']": ("TensorVariable", d["trackers"]["TensorVariable"]),
        ".dl-guards [data-help-guard='TENSOR_MATCH']": ("TENSOR_MATCH", d["guards"]["TENSOR_MATCH"]),
        ".dl-stack [data-help-symbol]": ("s", d["symbols"]["s"]),
    }


def check_words(page, root, recording) -> None:
    """Each kind of word shows its help on hover and on focus, and hides it after."""
    root.focus()
    page.keyboard.press("End")                # the last step: guards and symbols exist by then
    tip = root.locator("[role=tooltip]")
    assert tip.count() == 1
    tip_id = tip.get_attribute("id")
    for selector, (name, text) in _words(recording).items():
        word = root.locator(selector).first
        word.wait_for(timeout=5_000)
        word.scroll_into_view_if_needed()
        word.hover()
        page.wait_for_function("t => !t.hidden", arg=tip.element_handle(), timeout=2_000)
        said = tip.text_content()
        assert name in said and text[:60] in said, (selector, said)
        assert word.get_attribute("aria-describedby") == tip_id
        page.mouse.move(1, 1)
        page.wait_for_function("t => t.hidden", arg=tip.element_handle(), timeout=2_000)
        assert word.get_attribute("aria-describedby") is None
        # The keyboard reaches it (it is focusable: ↓ ↑ from its pane's one tab stop, roving.js)
        # and focus shows the same help.
        assert word.get_attribute("tabindex") == "-1", selector
        assert word.evaluate("w => w.closest('.dl-pane-body').tabIndex") == 0, selector
        word.focus()
        assert word.evaluate("w => document.activeElement === w")
        page.wait_for_function("t => !t.hidden", arg=tip.element_handle(), timeout=2_000)
        assert tip.text_content() == said
        assert word.get_attribute("aria-describedby") == tip_id
        page.keyboard.press("Escape")
        assert tip.is_hidden()
    sym = root.locator(".dl-stack [data-help-symbol]").first
    sym.focus()
    assert "dimension 0 of L['x']" in tip.text_content(), "where the symbol came from, from the recording"
    root.focus()


def test_help_shows_on_hover_and_on_focus_in_the_page(page_of, exported, recording):
    page = page_of(exported)
    root = page.locator(".dl-viewer")
    check_words(page, root, recording)
    python = ".".join(recording.python_version.split(".")[:2])
    root.locator(".dl-bytecode [data-help-op]").first.focus()
    assert f"this recording: Python {python}" in root.locator("[role=tooltip]").text_content()
    assert page.dl_errors == []


# -- the graph break, in Dynamo's words ---------------------------------------------------------

def check_break(page, root, recording) -> None:
    k = next(j for j, c in enumerate(recording.compiles) if c.graph_break is not None)
    gb = recording.compiles[k].graph_break
    entry = next(v for v in internals.graph_break_registry()[gb.gb_id] if v == gb.registry)
    root.focus()
    page.keyboard.press("b")
    wait_step(root, gb.step)
    box = root.locator(".dl-caption-bar .dl-gb")
    box.wait_for(timeout=5_000)
    assert box.get_attribute("tabindex") == "0"   # the keyboard reaches it in the caption of fixed height
    box.locator(".dl-gb-id").scroll_into_view_if_needed()
    gb_box, bar = box.locator(".dl-gb-id").bounding_box(), root.locator(".dl-caption-bar").bounding_box()
    assert bar["y"] - 1 <= gb_box["y"] and gb_box["y"] + gb_box["height"] <= bar["y"] + bar["height"] + 1, (gb_box, bar)
    text = box.text_content()
    assert gb.gb_id in text and entry["Gb_type"] in text
    assert entry["Explanation"] in text, "the registry's explanation, as torch ships it"
    hints = box.locator(".dl-gb-hints li").all_text_contents()
    assert hints and len(hints) == len(set(hints)), hints
    assert all(h.strip() in hints for h in gb.hints)
    # The restarted attempt met the same break: one explanation, the other compile named.
    others = [c.compile_id for c in recording.compiles if c.graph_break is not None and c is not recording.compiles[k]]
    assert others and all(f"[{cid}]" in text for cid in others)


def test_a_graph_break_shows_its_gb_id_explanation_and_hints_in_the_page(page_of, exported, recording):
    page = page_of(exported)
    check_break(page, page.locator(".dl-viewer"), recording)
    assert page.dl_errors == []


# -- keyboard only --------------------------------------------------------------------------------

def tab_to(page, root, selector: str, limit: int = 600) -> None:
    """Reach an element matching `selector` inside the viewer from the keyboard: from where the
    focus is, ↓ inside its pane (roving.js), else Tab on to the next pane and ↓ there."""
    at = "([r, s]) => r.contains(document.activeElement) && document.activeElement.matches(s)"
    for _ in range(limit):
        if page.evaluate("() => { window.dlFrom = document.activeElement; return !!dlFrom.closest('.dl-pane-body'); }"):
            page.keyboard.press("ArrowDown")
            if page.evaluate(at, [root.element_handle(), selector]):
                return
            if page.evaluate("() => document.activeElement !== window.dlFrom"):
                continue   # moved on inside the pane; at its last item, Tab on
        page.keyboard.press("Tab")
        if page.evaluate(at, [root.element_handle(), selector]):
            return
    raise AssertionError(f"the keyboard never reached {selector}")


def check_keyboard_provenance(page, root) -> None:
    root.focus()
    page.keyboard.press("End")
    last = step_of(root)
    # A guard the last step installed leads to the last step itself: Tab on to an older one.
    for _ in range(50):
        tab_to(page, root, "li[data-guard]")
        guard = page.evaluate("document.activeElement.dataset.guard")
        page.keyboard.press("Enter")
        page.wait_for_timeout(50)
        if step_of(root)[0] != last[0]:
            break
    at = step_of(root)
    assert at[0] < last[0], "Enter on a guard went to the step that installed it"
    assert root.locator(f".dl-guards li.dl-flash[data-guard='{guard}']").count() == 1
    page.keyboard.press("Backspace")
    wait_step(root, last[0])
    # Nodes made after the last step (the output, a symbol's input) lead to the last step itself:
    # Tab on to the first node that some step made.
    for _ in range(50):
        tab_to(page, root, ".dl-graph g.node[data-node]")
        page.keyboard.press("Enter")
        page.wait_for_timeout(50)
        if step_of(root)[0] != last[0]:
            break
    assert step_of(root)[0] < last[0], "Enter on a graph node went to the step that made it"
    assert "This step made the graph node" in root.locator(".dl-note").text_content()
    page.keyboard.press("Backspace")
    wait_step(root, last[0])


def test_guards_and_graph_nodes_are_reached_and_followed_from_the_keyboard_in_the_page(page_of, exported):
    page = page_of(exported)
    check_keyboard_provenance(page, page.locator(".dl-viewer"))
    assert page.dl_errors == []


def check_announced(page, root) -> None:
    root.focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    live = root.locator("[aria-live=polite]")
    page.wait_for_function("l => /^step 1 of \\d+, line \\d+/.test(l.textContent)", arg=live.element_handle(),
                           timeout=3_000)
    n = step_of(root)[1]
    assert live.text_content().startswith(f"step 1 of {n}, line ")
    assert root.locator(".dl-slider").get_attribute("aria-valuetext").startswith(f"step 1 of {n}, line ")


def test_aria_live_announces_the_step_and_the_slider_says_it_in_the_page(page_of, exported):
    page = page_of(exported)
    check_announced(page, page.locator(".dl-viewer"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_headings_current_rows_and_contrast_in_the_page(page_of, exported, scheme):
    page = page_of(exported, scheme)
    root = page.locator(".dl-viewer")
    assert page.evaluate("document.activeElement.classList.contains('dl-viewer')"), "the page takes the focus"
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (body == "rgb(17, 17, 17)") == (scheme == "dark"), body
    titles = root.locator(".dl-panes .dl-title")
    assert titles.count() >= 5
    assert all(t.get_attribute("role") == "heading" for t in titles.all())
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    for pane in (".dl-source", ".dl-bytecode"):
        current = root.locator(f"{pane} [aria-current]")
        assert current.count() == 1, pane
        assert "dl-current" in current.get_attribute("class")
        mark = current.evaluate("r => getComputedStyle(r).borderLeftColor")
        under = root.locator(pane).evaluate("p => getComputedStyle(p).backgroundColor")
        assert page.evaluate(CONTRAST_JS, [mark, under]) >= 3, (pane, mark, under)
    # The new-node mark outlines the node and leaves its label's contrast alone.
    root.focus()
    page.keyboard.press("Home")
    page.keyboard.press("n")                  # the next step that adds a graph node
    new = root.locator(".dl-graph .dl-marks .dl-new").first
    new.wait_for(state="attached", timeout=5_000)
    assert new.evaluate("m => getComputedStyle(m).fill") == "none"
    k = new.get_attribute("data-node")
    label = root.locator(f".dl-graph g.node[data-node='{k}'] text").first
    fill = label.evaluate("t => getComputedStyle(t).fill")
    shape = root.locator(f".dl-graph g.node[data-node='{k}'] :is(ellipse, path, polygon)").first
    ground = shape.evaluate("s => getComputedStyle(s).fill")
    assert page.evaluate(CONTRAST_JS, [fill, ground]) >= 4.5, (fill, ground)
    assert page.dl_errors == []


# -- the same in JupyterLab ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab_viewer(browser, tmp_path_factory):
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    cells = ["%load_ext widgets\nimport torch",
             f"{PROGRAM}\nx = torch.randn(5, 3)\ntorch._dynamo.mark_dynamic(x, 0)",
             '%%capture_trace\ntorch.compile(f, backend="eager")(x)']
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": c} for c in cells],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (root / "help.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.dl_errors = []
        page.on("pageerror", lambda e: page.dl_errors.append(str(e)))
        try:
            page.goto(lab.url("lab/tree/help.ipynb"))
            page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
            page.locator(".jp-Notebook .jp-Cell").first.click()
            lab_server.run_all(page)
            page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=180_000)
            yield page, page.locator(".dl-viewer").first
        finally:
            context.close()


def test_help_break_keyboard_and_live_region_in_jupyterlab(lab_viewer, recording):
    page, root = lab_viewer
    # The kernel's recording, not this process's: the same program, so the same words.
    check_words(page, root, recording)
    shots = os.environ.get("DYNAMO_LAB_HELP_SHOTS")   # a folder: look at what a learner sees
    if shots:
        for size in ({"width": 1400, "height": 900}, {"width": 1000, "height": 800}):
            page.set_viewport_size(size)
            root.locator(".dl-stack [data-help-tracker]").first.hover()
            page.screenshot(path=str(Path(shots) / f"lab_help_{size['width']}.png"))
        page.set_viewport_size(VIEWPORT)
    check_break(page, root, recording)
    check_keyboard_provenance(page, root)
    check_announced(page, root)
    assert root.locator(".dl-panes .dl-title").first.get_attribute("role") == "heading"
    assert page.dl_errors == []


def test_a_word_painted_under_a_resting_pointer_shows_no_help_until_the_pointer_moves(page_of, exported):
    """Stepping by key while the pointer rests on the stack: the words painted under it at
    each step open no tooltip by themselves; moving the pointer opens the one under it."""
    page = page_of(exported)
    root = page.locator(".dl-viewer")
    tip = root.locator("[role=tooltip]")
    root.focus()
    word = root.locator(".dl-stack .dl-pane-body [data-help-tracker]").first
    for _ in range(40):   # a step whose stack shows a tracker's kind
        if word.count():
            break
        page.keyboard.press("ArrowRight")
    box = word.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_function("t => !t.hidden", arg=tip.element_handle(), timeout=2_000)
    page.keyboard.press("Escape")
    assert tip.is_hidden()
    shown = []
    for _ in range(6):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(150)
        under = page.evaluate("([x, y]) => { const e = document.elementFromPoint(x, y); "
                              "return !!(e && e.closest('[data-help-tracker]')); }", [x, y])
        shown.append((under, tip.is_visible()))
    assert any(under for under, _ in shown), "no word came under the pointer"
    assert not any(visible for _, visible in shown), shown
    page.mouse.move(x + 1, y)
    if page.evaluate("([x, y]) => !!document.elementFromPoint(x, y).closest('[data-help-tracker]')", [x + 1, y]):
        page.wait_for_function("t => !t.hidden", arg=tip.element_handle(), timeout=2_000)
    assert page.dl_errors == []
