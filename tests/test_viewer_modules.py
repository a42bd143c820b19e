"""The FX graph by module, on a real model: each node names the module Dynamo made it in, and
the graph pane groups the nodes by it; at 1000×800 the bytecode keeps eight rows.

A transformers GPT-2 from a config (4 layers, width 64, random weights, nothing downloaded) is
compiled with a backend that keeps what Dynamo hands it, while recording. Each recorded node's
`module` must be the innermost entry of `nn_module_stack` on the node of that name in the
graph the backend got (the oracle: Dynamo itself), and survive the JSON round trip; a
recording written before the field loads without it.

Then the recording is written as the standalone page and opened in Debian's Chromium from
file://. With "by module" pressed, at the step that made the first node of the third block's
attention, the groups are named by module path, the groups around that module are open and
no other, a closed group says how many nodes it holds, a head opens and closes its group by
click and by keyboard (↓ in the pane, Enter), pointing at a local in the stack pane opens
the group of the node it holds and brings its row into view, and a search result's link to a
node opens its module at the step that made it. At 1000×800, light and dark,
the bytecode pane shows at least eight rows with its current row in view, the graph pane
keeps room for a node and its neighbours and the other panes four rows, and in predict mode
(whose box takes two of the bytecode's rows) the instruction asked about stays in view;
axe-core finds nothing in the grouped graph.

    .venv/bin/python -m pytest tests/test_viewer_modules.py     # -m "not browser" skips Chromium
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import capture
from test_viewer_a11y import axe_script, violations  # noqa: F401 (a fixture, used by name)

pytestmark = [pytest.mark.timeout(600)]

VIEWER_JS = "document.querySelector('.dl-viewer').parentElement.dynamoLab.viewer"
ROOT = "L['self']."
ATTN = "L['self'].transformer.h.2.attn"   # the module whose first node the browser tests stop at


def innermost(stack) -> str | None:
    """The qualified path of the last entry of an `nn_module_stack`, read here on its own."""
    return list(stack.values())[-1][0] if stack else None


def chain(path: str, modules: set) -> list[str]:
    """The groups a node made in module `path` sits in, outermost first: each module whose path
    its own extends at a dot, among the modules that made nodes (`transformer.h` makes none)."""
    parts = path.split(".")
    return [p for p in (".".join(parts[:n]) for n in range(2, len(parts) + 1)) if p in modules]


@pytest.fixture(scope="module")
def recorded():
    pytest.importorskip("transformers")
    from bench.models import build

    model, args = build("gpt2-4")
    handed = []

    def backend(gm, example_inputs):
        handed.append({n.name: innermost(n.meta.get("nn_module_stack")) for n in gm.graph.nodes})
        return gm.forward

    torch._dynamo.reset()
    try:
        with torch.no_grad(), capture.record() as rec:
            torch.compile(model, backend=backend)(*args)
    finally:
        torch._dynamo.reset()
    return rec, handed


def test_each_node_names_the_module_dynamo_made_it_in(recorded):
    rec, handed = recorded
    assert len(rec.compiles) == len(handed) == 1
    c = rec.compiles[0]
    kept = {n.name: n.module for n in c.nodes if n.in_graph}
    assert kept == handed[0]
    modules = {n.module for n in c.nodes}
    assert {f"{ROOT}transformer.h.{j}.attn" for j in range(4)} <= modules
    assert None in modules   # the output, made in no module
    # kept through JSON, and a recording written before the field was kept still loads
    again = capture.Recording.from_json(rec.to_json())
    assert [n.module for n in again.compiles[0].nodes] == [n.module for n in c.nodes]
    data = json.loads(rec.to_json())
    for n in data["compiles"][0]["nodes"]:
        del n["module"]
    older = capture.Recording.from_json(json.dumps(data))
    assert {n.module for n in older.compiles[0].nodes} == {None}


# -- in the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page_path(recorded, tmp_path_factory) -> Path:
    from widgets.viewer.page import write_html

    return write_html(recorded[0], tmp_path_factory.mktemp("modules") / "gpt2.html")


@pytest.fixture(scope="module")
def browser():
    from bench import lab_server

    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def first_attn(recorded):
    """The first node made in the third block's attention: (its index, the step that made it)."""
    c = recorded[0].compiles[0]
    k = min((k for k, n in enumerate(c.nodes) if n.module == ATTN and n.step is not None),
            key=lambda k: (c.nodes[k].step, k))
    return k, c.nodes[k].step


def open_page(browser, path, size, scheme, step):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme,
                                  bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=60_000)
    page.evaluate(f"() => {VIEWER_JS}.go(0, {step})")
    settle(page)
    return context, page, page.locator(".dl-viewer").first, errors


def settle(page) -> None:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")


def by_module(page, root) -> None:
    switch = root.locator(".dl-graph .dl-pane-switch")
    assert switch.text_content() == "by module" and switch.get_attribute("aria-pressed") == "false"
    switch.click()
    assert switch.get_attribute("aria-pressed") == "true"
    settle(page)


HEADS_JS = """root => [...root.querySelectorAll('.dl-graph .dl-mod-head')].map(b => ({
  path: b.dataset.module, open: b.getAttribute('aria-expanded'), name: b.querySelector('.dl-mod-name').textContent,
  text: b.textContent }))"""

# Whether node k's row is inside the graph pane's visible area, and its classes.
ROW_JS = """(root, k) => { const b = root.querySelector(`.dl-graph .dl-mod-node[data-node="${k}"]`);
  if (!b) return null;
  const r = b.getBoundingClientRect(), box = root.querySelector('.dl-graph .dl-pane-body').getBoundingClientRect();
  return { inView: r.top >= box.top - 1 && r.bottom <= box.bottom + 1, cls: b.className }; }"""


def heads(root) -> dict[str, dict]:
    return {x["path"]: x for x in root.evaluate(HEADS_JS)}


@pytest.mark.browser
def test_the_graph_by_module_opens_the_step_s_module_and_counts_the_others(
        browser, page_path, recorded, first_attn, tmp_path):
    c = recorded[0].compiles[0]
    k, step = first_attn
    context, page, root, errors = open_page(browser, page_path, (1400, 900), "light", step)
    try:
        by_module(page, root)
        shown = heads(root)
        opened = {p for p, x in shown.items() if x["open"] == "true"}
        modules = {n.module for n in c.nodes if n.module}
        assert chain(ATTN, modules) == [f"{ROOT}transformer", f"{ROOT}transformer.h.2", ATTN]
        assert opened == set(chain(ATTN, modules)), opened
        for path, x in shown.items():
            assert x["name"] == path[len(ROOT):], x   # named by the module's path
        # a closed group: one line that counts its nodes (all made by now, in the first block)
        block = f"{ROOT}transformer.h.0"
        inside = [n for n in c.nodes if n.module and (n.module == block or n.module.startswith(block + "."))]
        assert all(n.step is not None and n.step <= step for n in inside)
        assert shown[block]["open"] == "false" and shown[block]["text"].endswith(f" · {len(inside)} nodes")
        assert f"{block}.attn" not in shown   # inside a closed group: not in the page
        row = root.evaluate(ROW_JS, k)
        assert row["inView"] and "dl-new" in row["cls"].split(), row
        # a head opens its group and closes it again
        head = root.locator(f'.dl-graph .dl-mod-head[data-module="{block}"]')
        head.click()
        assert head.get_attribute("aria-expanded") == "true"
        assert heads(root)[f"{block}.attn"]["open"] == "false"
        head.click()
        assert head.get_attribute("aria-expanded") == "false" and f"{block}.attn" not in heads(root)
        # by keyboard: the pane's body, ↓ to the second block's head, Enter
        second = f"{ROOT}transformer.h.1"
        root.locator(".dl-graph .dl-pane-body").evaluate("b => { b.scrollTop = 0; b.focus(); }")
        for _ in range(40):
            page.keyboard.press("ArrowDown")
            if page.evaluate("() => document.activeElement.dataset.module") == second:
                break
        assert page.evaluate("() => document.activeElement.dataset.module") == second
        page.keyboard.press("Enter")
        settle(page)
        assert heads(root)[second]["open"] == "true"
        assert page.evaluate("() => document.activeElement.dataset.module") == second, "the focus stays on the head"
        # pointing at a local whose node was made in a closed group opens it, its row in view
        linked = page.evaluate(f"""() => {{
          const v = {VIEWER_JS}, c = v.rec.compiles[0], s = c.steps[{step}], names = new Map();
          c.nodes.forEach((n, k) => {{ names.set(n.name, k); if (n.created_name) names.set(n.created_name, k); }});
          const open = new Set([...document.querySelectorAll('.dl-graph .dl-mod-head[aria-expanded="true"]')].map(b => b.dataset.module));
          return [...Object.values(s.locals), ...s.stack].map(id => [id, names.get(c.vars[id].node)])
            .filter(([id, k]) => k != null && c.nodes[k].module && !open.has(c.nodes[k].module)
              && document.querySelector(`.dl-stack [data-var="${{id}}"]`));
        }}""")
        assert linked, "no local holds a node of a closed group here"
        var, node = linked[0]
        root.locator(f'.dl-stack [data-var="{var}"]').first.hover()
        settle(page)
        assert heads(root)[c.nodes[node].module]["open"] == "true"
        row = root.evaluate(ROW_JS, node)
        assert row and row["inView"] and "dl-peer" in row["cls"].split(), row
        # a link: a search result for a node of the first block's MLP goes to the step that made
        # it, whose module is then open, the node's row followed (`dl-flash`) and in view
        mlp = f"{block}.mlp.c_fc"
        j = next(j for j, n in enumerate(c.nodes) if n.module == mlp and n.op == "call_function")
        root.focus()
        page.keyboard.press("/")
        page.keyboard.type(c.nodes[j].name)
        root.locator(f'.dl-search-results [data-node="{j}"]').first.click()
        page.wait_for_function("([r, s]) => r.querySelector('.dl-caption .dl-stepno').textContent.startsWith(`step ${s} `)",
                               arg=[root.element_handle(), c.nodes[j].step], timeout=5_000)
        settle(page)
        now = heads(root)
        assert set(chain(mlp, modules)) == {p for p, x in now.items() if x["open"] == "true"} - {second}, now
        row = root.evaluate(ROW_JS, j)
        assert row and row["inView"] and "dl-flash" in row["cls"].split(), row
        page.screenshot(path=str(tmp_path / "modules-1400.png"))
        assert errors == [], errors
    finally:
        context.close()


# Each pane's body and what it holds: its height, a row's height, the current row in view.
PANES_JS = """root => {
  const inside = (el, box) => { const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    return r.top >= b.top - 1 && r.bottom <= b.bottom + 1; };
  const panes = [...root.querySelectorAll('.dl-panes .dl-pane')].filter(p => p.offsetParent).map(p => {
    const body = p.querySelector('.dl-pane-body'), cs = getComputedStyle(body);
    return { title: p.querySelector('.dl-title').textContent.split(' ')[0],
      room: body.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom),
      em: parseFloat(getComputedStyle(p).fontSize) }; });
  const code = root.querySelector('.dl-bytecode .dl-pane-body');
  const row = code.querySelector('.dl-row.dl-current');
  const asked = code.querySelector('.dl-row.dl-asked');
  return { panes, row: row.getBoundingClientRect().height, current: inside(row, code),
    asked: asked ? inside(asked, code) : null, viewer: root.getBoundingClientRect().height };
}"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_1000_by_800_the_bytecode_shows_eight_rows_and_no_pane_goes_below_its_minimum(
        browser, page_path, first_attn, axe_script, scheme, tmp_path):  # noqa: F811
    k, step = first_attn
    context, page, root, errors = open_page(browser, page_path, (1000, 800), scheme, step)
    try:
        for grouped in (False, True):
            if grouped:
                by_module(page, root)
            at = root.evaluate(PANES_JS)
            where = f"1000×800 {scheme}{' by module' if grouped else ''}"
            assert at["viewer"] <= 800, f"the viewer is {at['viewer']} px tall: {where}"
            rooms = {p["title"]: p for p in at["panes"]}
            assert rooms["Bytecode"]["room"] >= 8 * at["row"], f"{rooms['Bytecode']} rows of {at['row']} px: {where}"
            assert at["current"], f"the current instruction is out of view: {where}"
            # the graph: a node and its neighbours (9em); every other pane four rows
            assert rooms["FX"]["room"] >= 9 * rooms["FX"]["em"] - 4, (where, rooms["FX"])
            for p in at["panes"]:
                assert p["room"] >= 4 * 1.35 * p["em"] - 1, (where, p)
        page.screenshot(path=str(tmp_path / f"modules-1000-{scheme}.png"))
        assert violations(page, axe_script) == [], scheme
        # predict mode: the box takes room above the panes; the asked instruction stays in view
        page.keyboard.press("p")
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(".dl-bytecode .dl-row.dl-asked", timeout=5_000)
        settle(page)
        at = root.evaluate(PANES_JS)
        assert at["asked"], f"the instruction asked about is out of view ({scheme})"
        # the bytecode gave two rows to the box, no more
        assert {p["title"]: p for p in at["panes"]}["Bytecode"]["room"] >= 6 * at["row"]
        assert errors == [], errors
    finally:
        context.close()
