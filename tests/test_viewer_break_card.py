"""What takes room from the panes, in Chromium at 1400×900 and 1000×800: the break card (at a
graph break the viewer says Dynamo's message as one block to read, light and dark) and the
folds below the panes (the original and modified bytecode, the guard tree).

A compiled function that prints (a graph break; Dynamo's first attempt restarts) is called
with two lengths (a recompile): its restarted recompile once showed three banners in a
three-line box, and at the break Dynamo's explanation and hints ran together in a two-line
one (issue 31). Now: the summary says each fact in a line, and at the break the caption holds
the card (the reason with its GB id and link, the user's line, the explanation, each hint on
its own line, what Dynamo does next) whole, with no scrolling inside it; the panes give it
room and take it back at the next step. Opening both folds never shrinks a pane below its
minimum (a few rows; the graph a node and its neighbours): the viewer grows instead.

    .venv/bin/python -m pytest tests/test_viewer_break_card.py     # -m "not browser" skips it
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import capture

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def last_token(ids):
    logits = (ids * 2).float()
    print("logits", tuple(logits.shape))  # breaks
    return logits[:, -1]


@pytest.fixture(scope="module")
def recording() -> capture.Recording:
    torch._dynamo.reset()
    compiled = torch.compile(last_token, backend="eager")
    try:
        with capture.record() as rec:
            for length in (16, 24):
                compiled(torch.ones(1, length))
    finally:
        torch._dynamo.reset()
    return rec


@pytest.fixture(scope="module")
def restarted_recompile(recording) -> int:
    return next(k for k, c in enumerate(recording.compiles)
                if c.replaces is not None and c.outcome == "restarted" and c.graph_break is not None)


@pytest.fixture(scope="module")
def page_path(recording, restarted_recompile, tmp_path_factory) -> Path:
    from widgets.viewer.page import write_html

    return write_html(recording, tmp_path_factory.mktemp("break-card") / "card.html", compile=restarted_recompile)


@pytest.fixture(scope="module")
def browser():
    from bench import lab_server

    with lab_server.chromium() as chromium:
        yield chromium


# What the learner sees: each box's height and what it would scroll, and where the card is.
LOOK_JS = """root => {
  const box = (sel) => { const e = sel === ':scope' ? root : root.querySelector(sel); if (!e) return null;
    const r = e.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, height: r.height, client: e.clientHeight, scroll: e.scrollHeight }; };
  return { card: box('.dl-caption-bar .dl-card'), bar: box('.dl-caption-bar'), summary: box('.dl-summary'),
           panes: box('.dl-panes'), viewer: box(':scope'), banners: root.querySelectorAll('.dl-summary .dl-banner').length,
           viewport: window.innerHeight };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_the_break_card_is_read_whole_and_the_panes_take_their_room_back(
        browser, page_path, recording, restarted_recompile, size, scheme, tmp_path):
    c = recording.compiles[restarted_recompile]
    gb = c.graph_break
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        root.focus()
        page.keyboard.press("b")
        page.wait_for_selector(".dl-caption-bar .dl-card", timeout=5_000)
        at = root.evaluate(LOOK_JS)
        where = f"{size[0]}×{size[1]} {scheme}"
        # the summary: a recompile and a break (which restarted the frame), a line each, unscrolled
        assert at["banners"] == 2, where
        summary = root.locator(".dl-summary").text_content()
        assert "Dynamo restarted the frame" in summary and "Restarted:" not in summary
        assert at["summary"]["scroll"] <= at["summary"]["client"] + 1, f"the summary scrolls: {where}"
        # the card: whole, in the window, nothing to scroll inside it or the caption
        card, bar = at["card"], at["bar"]
        assert bar["scroll"] <= bar["client"] + 1 and card["scroll"] <= card["client"] + 1, f"the card scrolls: {where}"
        assert card["top"] >= 0 and card["bottom"] <= at["viewport"], f"the card is out of the window: {where} {card}"
        box = root.locator(".dl-caption-bar .dl-card")
        head = box.locator(".dl-card-head").text_content()
        assert gb.reason in head and gb.gb_id in head and f"line {gb.lineno}" in head
        assert 'print("logits", tuple(logits.shape))' in head
        assert box.locator(".dl-gb-explanation").text_content() == gb.explanation
        assert box.locator(".dl-gb-hints li").all_text_contents() == [x.strip() for x in gb.hints]
        said = box.locator(".dl-card-head, .dl-gb-explanation, .dl-gb-hints").all_text_contents()
        assert len(said) == 3 and not any("Explanation:" in t or "Hint:" in t for t in said), said
        link = box.locator("button.dl-gb-link")
        assert link.text_content() == gb.link
        # it opens the registry's page in a new tab (answered here: the test has no network)
        context.route(gb.link, lambda route: route.fulfill(body="the registry's page", content_type="text/plain"))
        with context.expect_page() as opened:
            link.click()
        opened.value.wait_for_load_state()
        assert opened.value.url == gb.link
        opened.value.close()
        root.focus()
        assert "traces the frame again" in box.locator(".dl-card-then").text_content()
        # each hint is a line of its own: one below the other
        tops = [b["y"] for b in (li.bounding_box() for li in box.locator(".dl-gb-hints li").all())]
        assert tops == sorted(tops) and len(set(tops)) == len(tops)
        page.screenshot(path=str(tmp_path / f"card-{size[0]}-{scheme}.png"))
        # a step away: the card is gone, the caption and the panes as they were
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("r => !r.querySelector('.dl-caption-bar .dl-card')", arg=root.element_handle(), timeout=5_000)
        away = root.evaluate(LOOK_JS)
        assert away["bar"]["height"] < bar["height"], where
        # the panes gave the card room (down to their minimum; past it the viewer grew)
        assert away["panes"]["height"] > at["panes"]["height"] or at["viewer"]["height"] > away["viewer"]["height"], where
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(".dl-caption-bar .dl-card", timeout=5_000)
        page.keyboard.press("Home")
        page.wait_for_function("r => !r.querySelector('.dl-caption-bar .dl-card')", arg=root.element_handle(), timeout=5_000)
        back = root.evaluate(LOOK_JS)
        assert (back["panes"]["height"], back["viewer"]["height"]) == (away["panes"]["height"], away["viewer"]["height"]), \
            "the panes and the viewer are as they were without the card"
        assert errors == [], errors
    finally:
        context.close()


# Each pane's body as it is, in px: the panes' titles and their bodies' heights.
PANES_JS = """root => [...root.querySelectorAll('.dl-panes .dl-pane')].filter(p => p.offsetParent).map(p => ({
  title: p.querySelector('.dl-title').textContent, body: p.querySelector('.dl-pane-body').clientHeight,
  row: parseFloat(getComputedStyle(p).fontSize) * 1.35 }))"""


@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_opening_the_folds_never_squeezes_a_pane_the_viewer_grows(browser, recording, tmp_path, size):
    from widgets.viewer.page import write_html

    # the compile that broke and resumed: it has installed code and a guard tree to unfold
    k = next(k for k, c in enumerate(recording.compiles) if c.graph_break is not None and c.outcome != "restarted")
    path = write_html(recording, tmp_path / "folds.html", compile=k)
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        closed = root.evaluate(PANES_JS)
        height = root.bounding_box()["height"]
        for summary in root.locator("details.dl-details > summary").all():
            summary.click()
        page.wait_for_timeout(300)
        assert root.locator("details.dl-details[open]").count() >= 2
        opened = root.evaluate(PANES_JS)
        assert [p["title"] for p in opened] == [p["title"] for p in closed]
        for p in opened:
            # at least four rows of a listing (the graph: 9em, a node and its neighbours)
            assert p["body"] >= 4 * p["row"], f"{p['title']} is {p['body']} px with the folds open at {size}"
        assert root.bounding_box()["height"] > height, "the viewer grows to hold the folds"
        tree = root.locator(".dl-details .dl-pane", has_text="Guard tree").locator(".dl-pane-body")
        assert tree.evaluate("e => e.clientHeight") >= 4 * opened[0]["row"], "the fold's own pane is readable"
    finally:
        context.close()


def test_the_compile_menu_and_the_card_say_what_explain_says(browser, page_path, recording, restarted_recompile):
    from capture.explain import compile_answer

    c = recording.compiles[restarted_recompile]
    said = compile_answer(recording, c.compile_id)
    [gb] = said["graph_breaks"]
    [cause] = said["causes"]
    assert gb["advice"] and cause["advice"] and said["frame"]["statement"]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        root = page.locator(".dl-viewer").first
        # under the compile menu, a fold: closed, the cause of the recompile and how many fixes
        answer = root.locator(".dl-bar .dl-answer")
        assert answer.is_visible() and answer.get_attribute("open") is None
        summary = answer.locator("summary").text_content()
        assert cause["statement"] in summary and f"({len(said['advice'])} fixes)" in summary
        # opened: explain's statement of the frame, the cause with its guard and the user's
        # line, then every fix, each as explain words it
        answer.locator("summary").click()
        assert said["frame"]["statement"] in answer.locator(".dl-answer-outcome").text_content()
        line = answer.locator(".dl-answer-cause").text_content()
        assert cause["statement"] in line and f"guard: {cause['kind']} {cause['source']}" in line
        assert answer.locator(".dl-answer-cause code").text_content().endswith(cause["user"]["line"])
        assert answer.locator(".dl-answer-fix").all_text_contents() == [f"fix: {a}" for a in said["advice"]]
        assert "reorderable_logging_functions.add(print)" in gb["advice"][0]
        # the menu's option says the same, as its title
        title = root.locator(f".dl-compile option[value='{restarted_recompile}']").get_attribute("title")
        assert cause["statement"] in title and all(f"fix: {a}" in title for a in said["advice"])
        # the card at the break: the user's line as explain gives it, and explain's fix, no other
        root.focus()
        page.keyboard.press("b")
        page.wait_for_selector(".dl-caption-bar .dl-card", timeout=5_000)
        card = root.locator(".dl-caption-bar .dl-card")
        assert card.locator(".dl-card-fix").all_text_contents() == [f"Fix: {a}" for a in gb["advice"]]
        # the user's line is the break's own line here: the card says it once, in its head
        assert card.locator(".dl-card-user").count() == 0
        # a compile that did not recompile has no cause to say
        first = next(k for k, x in enumerate(recording.compiles) if x.replaces is None and x.graph_break is not None
                     and x.outcome != "restarted")
        root.locator(".dl-compile").select_option(str(first))
        page.wait_for_function("r => !r.querySelector('.dl-bar .dl-answer-cause')", arg=root.element_handle(), timeout=5_000)
        assert answer.get_attribute("open") is not None, "the fold stays open from compile to compile"
        first_said = compile_answer(recording, recording.compiles[first].compile_id)
        assert not first_said["causes"]
        assert answer.locator(".dl-answer-fix").all_text_contents() == [f"fix: {a}" for a in first_said["advice"]]
        assert errors == [], errors
    finally:
        context.close()
