"""The viewer by keyboard and screen reader, and at a model's size, in a real browser:

- axe-core finds nothing to report in the exported page (light and dark, at a step with a
  graph, with every fold, the keys list and predict mode open);
- Tab visits each pane once, the arrows moving inside it;
- predict mode's keys mean one choice each in every question, and its hint is in view;
- at a graph break the viewer fits a 1000×800 window;
- "fit graph" fits what is drawn so far, a parameter's label keeps its layer, a node lit
  from another pane comes into the graph's view, and the node counts agree or say why.

A Hugging Face GPT-2 (2 layers, random weights; a small module that breaks at a print
when transformers is missing), called at two lengths, is recorded with the real Dynamo and
written as the standalone page; Debian's Chromium opens it from file://. axe-core comes from npm
(tests/js/axe/package.json, pinned by its lock): the test installs it there with `npm ci`
when it is missing, and loads it into the page (the page's content security policy is
bypassed for that script only by Playwright's `bypass_csp`).

    .venv/bin/python -m pytest tests/test_viewer_a11y.py     # -m "not browser" skips it
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import capture
from widgets.viewer import page as page_export

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent
AXE_DIR = HERE / "js" / "axe"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
VIEWER_JS = "document.querySelector('.dl-viewer').parentElement.dynamoLab.viewer"
STEP = re.compile(r"step (\d+) / (\d+)")


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x).relu()
        print("half way")
        return y * 2


def _model_and_input():
    try:
        import transformers
    except ImportError:
        return Small(), (torch.ones(2, 4), torch.ones(3, 4))
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=64)
    model = transformers.GPT2LMHeadModel(config).eval()

    def last_token(ids):
        logits = model(ids).logits
        print("logits", tuple(logits.shape))   # a graph break
        return logits[:, -1].argmax(dim=-1)

    # two lengths: a recompile, whose restarted attempt makes nodes its final graph leaves out
    return last_token, (torch.randint(0, 1000, (1, 16)), torch.randint(0, 1000, (1, 24)))


@pytest.fixture(scope="module")
def axe_script() -> Path:
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: ./lab test installs it (apt-get install npm)")
        run = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=AXE_DIR, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0 and AXE.exists(), f"npm ci in {AXE_DIR} failed:\n{run.stderr[-2000:]}"
    return AXE


@pytest.fixture(scope="module")
def page_path(tmp_path_factory) -> Path:
    fn, xs = _model_and_input()
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    try:
        with torch.no_grad(), capture.record() as rec:
            for x in xs:
                compiled(x)
    finally:
        torch._dynamo.reset()
    return page_export.write_html(rec, tmp_path_factory.mktemp("a11y") / "model.html")


@pytest.fixture(scope="module")
def browser():
    from bench import lab_server

    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture
def opened(browser, page_path):
    """open(scheme, size) -> (page, root): the page at the longest compile's middle step."""
    contexts = []

    def open_(scheme="light", size=(1400, 900)):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme,
                                      bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.dl_errors = errors
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=60_000)
        page.evaluate(f"""() => {{
          const v = {VIEWER_JS};
          const k = v.rec.compiles.reduce((b, c, j) => c.steps.length > v.rec.compiles[b].steps.length ? j : b, 0);
          v.go(k, Math.floor(v.rec.compiles[k].steps.length * 0.6));
        }}""")
        settle(page)
        root = page.locator(".dl-viewer").first
        return page, root

    yield open_
    for context in contexts:
        context.close()


def settle(page) -> None:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")


def violations(page, axe_script) -> list[str]:
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script))
    found = page.evaluate("""async () => (await axe.run(document)).violations.map(v =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}` +
        (v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''))""")
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_at_a_step_with_folds_keys_and_predict_open(opened, axe_script, scheme):
    page, root = opened(scheme)
    assert root.locator(".dl-graph g.node[data-node]").count() > 0, "a step with graph nodes drawn"
    assert violations(page, axe_script) == []
    # Every fold open (the bytecode, the guard tree, each group of guards), the keys list shown.
    page.evaluate("r => { for (const d of r.querySelectorAll('details')) d.open = true; }", root.element_handle())
    root.locator(".dl-keys-toggle").click()
    settle(page)
    assert root.locator(".dl-keys").is_visible()
    assert violations(page, axe_script) == []
    root.locator(".dl-keys-toggle").click()
    # Predict mode, asking about the next instruction.
    root.focus()
    page.keyboard.press("p")
    page.keyboard.press("ArrowRight")
    settle(page)
    assert root.locator(".dl-predict .dl-chip").count() > 0, "predict mode asks"
    assert violations(page, axe_script) == []
    assert page.dl_errors == []


TAB_STOP_JS = """r => {
  const a = document.activeElement;
  if (!r.contains(a)) return null;
  const body = a.closest('.dl-pane-body');
  const pane = a.closest('.dl-pane');
  return { inBody: !!body, isBody: a === body, pane: pane ? pane.className : null, tag: a.tagName,
           name: a.getAttribute('aria-label') || (a.labels && a.labels.length ? a.labels[0].textContent : '') ||
                 (a.getAttribute('aria-labelledby') ? document.getElementById(a.getAttribute('aria-labelledby')).textContent : '') ||
                 a.textContent.slice(0, 40) };
}"""


@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_tab_visits_each_pane_once_and_the_arrows_move_inside_it(opened, size):
    page, root = opened("light", size)
    root.focus()
    stops = []
    for _ in range(120):
        page.keyboard.press("Tab")
        at = page.evaluate(TAB_STOP_JS, root.element_handle())
        if at is None:
            break
        stops.append(at)
    assert stops and len(stops) < 120, "Tab leaves the viewer"
    rows = [s for s in stops if s["inBody"] and not s["isBody"]]
    assert rows == [], f"Tab stopped inside a pane: {rows[:5]}"
    bodies = [s["pane"] for s in stops if s["isBody"]]
    shown = root.evaluate("""r => [...r.querySelectorAll('.dl-pane-body')]
        .filter(b => b.checkVisibility()).map(b => b.closest('.dl-pane').className)""")
    for name in ("dl-source", "dl-bytecode", "dl-stack", "dl-graph", "dl-guards"):
        assert sum(name in b.split() for b in bodies) == 1, (name, bodies)
    assert sorted(bodies) == sorted(shown), "every pane shown is one stop, each once"
    # Each stop is named: a pane by its title, a control by its label or text.
    assert all(s["name"].strip() for s in stops), [s for s in stops if not s["name"].strip()]
    assert root.evaluate("""r => [...r.querySelectorAll('.dl-pane-body')].every(b =>
        b.getAttribute('role') === 'group' && document.getElementById(b.getAttribute('aria-labelledby')))""")

    # In the bytecode pane ↓ goes to the current instruction, then the next one; ↑ back.
    body = root.locator(".dl-bytecode .dl-pane-body")
    body.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-current')") == "step"
    # the focus moved inside the pane's body: the pane's title did not scroll out of sight
    title = root.locator(".dl-bytecode > .dl-title").bounding_box()
    assert inside(title, root.locator(".dl-bytecode").bounding_box()), title
    first = page.evaluate("() => document.activeElement.dataset.offset")
    page.keyboard.press("ArrowDown")
    second = page.evaluate("() => document.activeElement.dataset.offset")
    assert second is not None and int(second) > int(first)
    page.keyboard.press("ArrowUp")
    assert page.evaluate("() => document.activeElement.dataset.offset") == first
    # Shift+Tab from a row leaves the pane for the stop before it (not the pane's own stop).
    j = next(n for n, s in enumerate(stops) if s["isBody"] and "dl-bytecode" in s["pane"].split())
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(TAB_STOP_JS, root.element_handle()) == stops[j - 1]
    # The arrows are the pane's: the step did not change; → still steps, the focus kept.
    body.focus()
    page.keyboard.press("ArrowDown")
    before = STEP.search(root.locator(".dl-caption .dl-stepno").text_content()).group(1)
    page.keyboard.press("ArrowRight")
    settle(page)
    after = STEP.search(root.locator(".dl-caption .dl-stepno").text_content()).group(1)
    assert int(after) == int(before) + 1
    assert page.evaluate("r => r.contains(document.activeElement)", root.element_handle()), "the focus stays in the viewer"

    # In the graph pane ↓ reaches a node, and Enter goes to the step that made it.
    graph = root.locator(".dl-graph .dl-pane-body")
    graph.focus()
    page.keyboard.press("ArrowDown")
    node = page.evaluate("() => document.activeElement.getAttribute('data-node')")
    assert node is not None
    assert page.dl_errors == []


FIND_QUESTION_JS = """([fewer, more]) => {
  const v = """ + VIEWER_JS + """;
  const k = v.compile, c = v.rec.compiles[k];
  for (let i = 0; i < c.steps.length - 1; i++) {
    const asked = v.predict.ask(c, i, []) && v.predict.asking;
    v.predict.asking = null;
    if (asked && asked.kinds.length >= fewer && asked.kinds.length <= more) return i;
  }
  return null;
}"""


def ask_at(page, i: int) -> dict:
    page.evaluate(f"i => {VIEWER_JS}.go({VIEWER_JS}.compile, i)", i)
    settle(page)
    page.keyboard.press("ArrowRight")
    settle(page)
    return page.evaluate(f"() => {VIEWER_JS}.predict.asking")


def inside(inner: dict, outer: dict) -> bool:
    return (outer["y"] - 1 <= inner["y"] and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
            and outer["x"] - 1 <= inner["x"] and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1)


def test_predict_mode_keys_mean_one_thing_each_and_its_feedback_is_in_view(opened):
    page, root = opened("light", (1000, 800))
    root.focus()
    page.keyboard.press("p")
    box = root.locator(".dl-predict")
    effect_keys = "b => Object.fromEntries([...b.querySelectorAll('[data-effect]')].map(c => [c.dataset.effect, c.dataset.key]))"
    seen = []
    for fewer, more in ((1, 4), (10, 99)):
        i = page.evaluate(FIND_QUESTION_JS, [fewer, more])
        if i is None:
            continue
        q = ask_at(page, i)
        assert q and fewer <= len(q["kinds"]) <= more
        seen.append((len(q["kinds"]), box.evaluate(effect_keys)))
        # a bare Enter: what is missing is said where the box shows it
        page.keyboard.press("Enter")
        hint = box.locator(".dl-hint")
        assert hint.count() == 1 and "First choose" in hint.text_content()
        assert inside(hint.bounding_box(), box.bounding_box()), "the hint is in the box's visible part"
        assert inside(hint.bounding_box(), {"x": 0, "y": 0, "width": 1000, "height": 800}), "and in the window"
        # 0 is nothing; each effect's letter ticks it and ticks it off
        page.keyboard.press("0")
        assert box.locator(".dl-chip[aria-pressed=true][data-answer=pushes]").text_content().endswith("nothing")
        assert box.locator(".dl-hint").count() == 0, "the hint goes once a choice is made"
        for effect, key in seen[-1][1].items():
            chip = box.locator(f".dl-chip[data-effect='{effect}']")
            page.keyboard.press(key)
            assert chip.get_attribute("aria-pressed") == "true", (effect, key)
            page.keyboard.press(key)
            assert chip.get_attribute("aria-pressed") == "false", (effect, key)
        # from nothing, . goes through every kind: the last one, past key 9, is reached
        for _ in range(len(q["kinds"])):
            page.keyboard.press(".")
        last = box.locator(".dl-chip[aria-pressed=true][data-answer=pushes]")
        assert last.get_attribute("data-kind") == q["kinds"][-1]
        # the right answer, by keys alone, is graded right and the step taken
        truth = q["truth"]
        if truth["pushes"] is None:
            page.keyboard.press("0")
        else:
            for _ in range(len(q["kinds"]) + 1):
                if box.locator(".dl-chip[aria-pressed=true][data-answer=pushes]").get_attribute("data-kind") == truth["pushes"]:
                    break
                page.keyboard.press(".")
        for effect in truth["does"]:
            page.keyboard.press(seen[-1][1][effect])
        page.keyboard.press("Enter")
        settle(page)
        assert box.locator(".dl-verdict.dl-right").count() == 1, box.text_content()
    assert len(seen) == 2 and seen[0][0] != seen[1][0], "two questions offering different numbers of kinds"
    assert seen[0][1] == seen[1][1] and len(seen[0][1]) == 5, "the same key for each effect in both"
    assert page.dl_errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_a_graph_break_the_viewer_fits_a_1000_by_800_window(opened, scheme):
    page, root = opened(scheme, (1000, 800))
    root.focus()
    page.keyboard.press("b")
    settle(page)
    card = root.locator(".dl-caption-bar.dl-carded .dl-card")
    assert card.count() == 1, "the break card shows"
    viewer = root.bounding_box()
    assert viewer["y"] + viewer["height"] <= 800 + 1, f"the viewer runs past the window: {viewer}"
    assert card.evaluate("c => c.scrollHeight <= c.clientHeight + 1"), "the card reads without scrolling"
    box = card.bounding_box()
    assert inside(box, viewer)
    # every pane still shows rows: the current instruction, the graph's nodes
    for name in ("dl-source", "dl-bytecode", "dl-stack", "dl-graph", "dl-guards"):
        body = root.locator(f".dl-{name[3:]} > .dl-pane-body").first
        assert body.bounding_box()["height"] >= 60, (name, body.bounding_box())
    current = root.locator(".dl-bytecode .dl-row.dl-current").bounding_box()
    assert inside(current, root.locator(".dl-bytecode > .dl-pane-body").bounding_box())
    assert page.dl_errors == []


# -- the graph at a model's size ----------------------------------------------------------------

DRAWN_JS = """r => {
  const body = r.querySelector('.dl-graph .dl-drawing').getBoundingClientRect();
  const boxes = [...r.querySelectorAll('.dl-graph .dl-nodes g.node[data-node]')]
    .filter(g => g.style.display !== 'none').map(g => g.getBoundingClientRect());
  const u = boxes.reduce((a, b) => ({ x0: Math.min(a.x0, b.left), y0: Math.min(a.y0, b.top),
    x1: Math.max(a.x1, b.right), y1: Math.max(a.y1, b.bottom) }), { x0: 1e9, y0: 1e9, x1: -1e9, y1: -1e9 });
  return { n: boxes.length, pane: [body.left, body.top, body.right, body.bottom], drawn: [u.x0, u.y0, u.x1, u.y1] };
}"""


def test_fit_graph_fits_what_is_drawn_so_far_and_names_keep_their_layer(opened):
    page, root = opened("light", (1400, 900))
    # a step with a tenth of the graph drawn
    page.evaluate(f"""() => {{
      const v = {VIEWER_JS}, c = v.current, want = Math.ceil(c.nodes.length / 10);
      const i = c.steps.findIndex((s, j) => v.panes && j > 0 && c.nodes.filter(n => n.step != null && n.step <= j).length >= want);
      v.go(v.compile, i);
    }}""")
    settle(page)
    root.locator(".dl-fit-graph").click()
    settle(page)
    got = root.evaluate(DRAWN_JS)
    total = root.evaluate(f"r => {VIEWER_JS}.current.nodes.length")
    assert 0 < got["n"] < total / 2, got
    (px0, py0, px1, py1), (x0, y0, x1, y1) = got["pane"], got["drawn"]
    assert px0 - 1 <= x0 and x1 <= px1 + 1 and py0 - 1 <= y0 and y1 <= py1 + 1, f"all drawn in view: {got}"
    # fitted: the drawn part spans most of the pane one way (not a speck in the final graph's box)
    assert (x1 - x0) >= 0.6 * (px1 - px0) or (y1 - y0) >= 0.6 * (py1 - py0), got
    # a parameter of a layer is labelled with its layer, not cut from the left
    labels = root.evaluate("""r => [...r.querySelectorAll('.dl-graph g.node.dl-op-placeholder text:first-of-type')]
        .map(t => t.textContent)""")
    if any("_modules_h_modules_" in n for n in root.evaluate(f"r => {VIEWER_JS}.current.nodes.map(n => n.name)")):
        assert any(re.match(r"^h\.\d+[.…]", label) for label in labels), labels
    assert page.dl_errors == []


HELD_JS = """() => {
  const v = """ + VIEWER_JS + """, c = v.current;
  const byName = new Map(c.nodes.map((n, k) => [n.name, k]));
  for (let j = Math.floor(c.steps.length / 2); j < c.steps.length; j++) {
    const id = c.steps[j].stack.find((x) => c.vars[x].node && byName.has(c.vars[x].node) &&
      c.nodes[byName.get(c.vars[x].node)].op !== 'placeholder');
    if (id != null) return { step: j, id, node: byName.get(c.vars[id].node) };
  }
  return null;
}"""


def test_a_node_lit_from_another_pane_is_brought_into_the_graphs_view(opened):
    page, root = opened("light", (1400, 900))
    held = page.evaluate(HELD_JS)
    assert held, "a step whose stack holds a graph node"
    page.evaluate(f"i => {VIEWER_JS}.go({VIEWER_JS}.compile, i)", held["step"])
    settle(page)
    # look far from it: zoomed in, panned away
    root.focus()
    for key in ["+"] * 4 + ["Shift+ArrowRight"] * 40 + ["Shift+ArrowDown"] * 40:
        page.keyboard.press(key)
    settle(page)
    node = root.locator(f".dl-graph .dl-nodes g.node[data-node='{held['node']}']")
    pane = root.locator(".dl-graph .dl-drawing").bounding_box()
    assert not node.is_visible() or not inside(node.bounding_box(), pane), "the node is out of view first"
    root.locator(f".dl-stack li[data-var='{held['id']}']").first.hover()
    settle(page)
    assert "dl-peer" in (node.get_attribute("class") or ""), "the entry lights its node"
    assert node.is_visible() and inside(node.bounding_box(), pane), "and brings it into view"
    assert page.dl_errors == []


def test_the_summary_and_the_graph_pane_count_the_same_nodes_or_say_why(opened):
    page, root = opened("light", (1400, 900))
    counts = page.evaluate(f"() => {VIEWER_JS}.rec.compiles.map(c => [c.nodes.length, c.nodes.filter(n => n.in_graph).length])")
    for k, (made, kept) in enumerate(counts):
        page.evaluate(f"k => {VIEWER_JS}.go(k, 1e9)", k)
        settle(page)
        summary = root.locator(".dl-summary .dl-head").text_content()
        title = root.locator(".dl-graph > .dl-title").text_content()
        assert f"{kept} graph nodes" in summary, summary
        assert f" of {made} node(s)" in title, title
        if made != kept:
            assert f"({made} made while tracing: {made - kept} not in the final graph)" in summary, summary
            assert f"({kept} in the final graph)" in title, title
        else:
            assert "final graph" not in summary + title
    if all(made == kept for made, kept in counts):
        pytest.skip("every compile kept every node it made: nothing to explain")
