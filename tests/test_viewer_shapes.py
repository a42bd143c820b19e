"""The shapes pane in Chromium: what the shape environment knew at each step, from the recording.

Four of tests/test_shapes.py's programs are recorded (the real Dynamo, the eager backend) and
each opened as the exported page, in both themes: a `mark_dynamic` size specialized by a
broadcast, a Python `if` on a size, `nonzero`'s unbacked length, automatic dynamic on the
second size. At chosen steps (read from the recording's own `shapes`, never written here)
the pane shows: a dimension's symbol from the step that made it, with "made here" there; a
symbolic guard marked new at the step that added it, whose button leads back to that step;
"s77 became 4 here: line 3, a broadcast ..." at the step that specialized it; a compile with
every size static in one line. A symbol in the stack and in a guard row shows the pane with
the symbol lit; the words of dynamic shapes explain themselves on hover (capture/help.json
`terms`); a recording made before shapes existed says so in a line; program text stays text.
The pane takes the guards' place, so the panes keep their size at 1400×900 and 1000×800.

    .venv/bin/python -m pytest tests/test_viewer_shapes.py     # -m "not browser" skips it
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import torch

import capture
from capture import help as help_data
from test_shapes import PROGRAMS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

NAMES = ["marked_broadcast", "python_if", "nonzero", "automatic"]
TERMS = help_data.data()["terms"]
STEP = re.compile(r"step (\d+) / (\d+)")


def _record(name: str) -> capture.Recording:
    ns = {"torch": torch, "__name__": f"shapes_{name}"}
    exec(compile(textwrap.dedent(PROGRAMS[name]), f"<{name}>", "exec"), ns)
    torch._dynamo.reset()
    with capture.record() as rec:
        ns["run"]("eager")
    return rec


@pytest.fixture(scope="module")
def recordings() -> dict[str, capture.Recording]:
    try:
        return {name: _record(name) for name in NAMES}
    finally:
        torch._dynamo.reset()


@pytest.fixture(scope="module")
def pages(recordings, tmp_path_factory) -> dict[str, Path]:
    from widgets.viewer.page import write_html

    where = tmp_path_factory.mktemp("shapes")
    return {name: write_html(rec, where / f"{name}.html") for name, rec in recordings.items()}


@pytest.fixture(scope="module")
def browser():
    from bench import lab_server

    with lab_server.chromium() as chromium:
        yield chromium


class Page:
    """One page open at a size and scheme, its errors kept."""

    def __init__(self, browser, path: Path, scheme: str = "light", size=(1400, 900)):
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme,
                                           bypass_csp=True)   # for axe's script only
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=30_000)
        self.root = self.page.locator(".dl-viewer").first
        self.shapes = self.root.locator(".dl-shapes")

    def go(self, compile: int, step: int) -> None:
        self.root.evaluate("(r, [k, i]) => r.parentElement.dynamoLab.viewer.go(k, i)", [compile, step])
        self.page.wait_for_function("([r, i]) => r.parentElement.dynamoLab.viewer.step === i",
                                    arg=[self.root.element_handle(), step], timeout=5_000)

    def step(self) -> int:
        return self.root.evaluate("r => r.parentElement.dynamoLab.viewer.step")

    def show_shapes(self) -> None:
        if not self.shapes.is_visible():
            self.root.locator(".dl-guards .dl-pane-switch").click()
        self.shapes.wait_for(state="visible", timeout=5_000)

    def text(self) -> str:
        return self.shapes.locator(".dl-pane-body").text_content()

    def close(self) -> None:
        assert self.errors == [], self.errors
        self.context.close()


@pytest.fixture
def open_page(browser):
    opened: list[Page] = []

    def make(path, scheme="light", size=(1400, 900)) -> Page:
        opened.append(Page(browser, path, scheme, size))
        return opened[-1]

    yield make
    for p in opened:
        p.close()


def _dim_row(p: Page, symbol: str):
    return p.shapes.locator(f".dl-shape-dim[data-shape-symbol='{symbol}']")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_symbol_appears_at_its_step_and_a_guard_is_new_at_the_step_that_added_it(open_page, pages, recordings, scheme):
    shapes = recordings["python_if"].compiles[0].shapes
    [sym] = shapes.symbols
    [guard] = shapes.guards
    assert sym.step is not None and guard.step is not None and guard.step > sym.step
    p = open_page(pages["python_if"], scheme)
    p.show_shapes()
    assert not p.root.locator(".dl-guards").is_visible(), "the shapes pane takes the guards' place"
    p.go(0, sym.step - 1)
    row = _dim_row(p, sym.name)
    assert f"its symbol {sym.name} is made at step {sym.step}" in row.text_content()
    assert row.locator(".dl-state").text_content() == "dynamic"
    assert "None so far." in p.text()
    p.go(0, sym.step)
    assert row.locator(".dl-sym").text_content() == sym.name
    assert "made here" in row.text_content() and sym.range in row.text_content()
    p.go(0, guard.step)
    new = p.shapes.locator("li.dl-new")
    assert new.count() == 1 and new.locator(".dl-shape-guard").text_content() == guard.expr
    assert f"step {guard.step}" in new.text_content() and f"line {guard.lineno}" in new.text_content()
    assert "made here" not in row.text_content()
    # at the last step the guard is no longer new; its button leads back to its step
    last = len(recordings["python_if"].compiles[0].steps) - 1
    p.go(0, last)
    assert p.shapes.locator("li.dl-new").count() == 0
    p.shapes.locator(".dl-shape-guard").click()
    p.page.wait_for_function("r => r.parentElement.dynamoLab.viewer.step !== %d" % last,
                             arg=p.root.element_handle(), timeout=5_000)
    assert p.step() == guard.step
    assert p.shapes.locator("li.dl-flash .dl-shape-guard").text_content() == guard.expr
    assert f"added the symbolic guard {guard.expr}" in p.root.text_content()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_specialization_is_said_at_the_step_that_made_it(open_page, pages, recordings, scheme):
    shapes = recordings["marked_broadcast"].compiles[0].shapes
    [sym] = shapes.specializations()
    [guard] = shapes.guards
    at = sym.replaced_step
    assert at is not None and guard.step == at
    p = open_page(pages["marked_broadcast"], scheme, (1000, 800))
    p.show_shapes()
    p.go(0, at - 1)
    assert p.shapes.locator(".dl-shape-became").count() == 0
    p.go(0, at)
    said = p.shapes.locator(".dl-shape-became").text_content()
    assert said == f"{sym.name} became {sym.replacement} here: line {guard.lineno}, {guard.why}"
    assert guard.why == "a broadcast: the two sizes must match"
    row = _dim_row(p, sym.name)
    assert row.locator(".dl-state").text_content() == "specialized"
    assert "mark_dynamic" in row.text_content()
    # the guard that says it: Eq explains itself
    eq = p.shapes.locator("li.dl-new [data-help-term='Eq']")
    eq.hover()
    tip = p.root.locator(".dl-tooltip")
    tip.wait_for(state="visible", timeout=3_000)
    assert TERMS["Eq"] in tip.text_content()
    if at + 1 < len(recordings["marked_broadcast"].compiles[0].steps):
        p.go(0, at + 1)
        assert p.shapes.locator(".dl-shape-became").count() == 0
        assert f"{sym.name} became {sym.replacement} at step {at}" in row.text_content()


def test_an_unbacked_size_of_nonzero_is_listed_from_its_step(open_page, pages, recordings):
    shapes = recordings["nonzero"].compiles[0].shapes
    [u] = shapes.symbols
    assert u.name.startswith("u") and u.hint is None and u.node == "nonzero"
    p = open_page(pages["nonzero"])
    p.show_shapes()
    p.go(0, u.step - 1)
    assert _dim_row(p, u.name).count() == 0
    p.go(0, u.step)
    row = _dim_row(p, u.name)
    assert row.locator(".dl-state").text_content() == "unbacked"
    assert "made by nonzero" in row.text_content() and "made here" in row.text_content()
    # the range and "unbacked" explain themselves
    for sel, term in ((".dl-range", "range"), (".dl-state", "unbacked")):
        row.locator(sel).hover()
        tip = p.root.locator(".dl-tooltip")
        tip.wait_for(state="visible", timeout=3_000)
        assert TERMS[term] in tip.text_content(), term
    assert "guard_or_false" in TERMS["unbacked"] and "torch._check" in TERMS["unbacked"]


def test_every_size_static_in_one_line_then_two_sizes_tied(open_page, pages, recordings):
    rec = recordings["automatic"]
    first, second = rec.compiles
    assert not first.shapes.symbols and second.shapes.symbols
    p = open_page(pages["automatic"])
    p.show_shapes()
    p.go(0, 0)
    assert p.shapes.locator(".dl-pane-body > *").count() == 1
    assert p.text().startswith("Every size static: no symbol; this graph serves L['x'] [3], L['y'] [3] only")
    [tied] = [s for s in second.shapes.symbols if s.replacement]
    p.go(1, tied.replaced_step)
    assert p.shapes.locator(".dl-shape-became").text_content().startswith(
        f"{tied.name} became {tied.replacement} here: line ")
    assert all(row.locator(".dl-state").text_content() == "dynamic"
               for row in p.shapes.locator(".dl-shape-dim").all())


def test_symbols_in_the_stack_and_the_guards_lead_to_the_shapes_pane(open_page, pages, recordings):
    c = recordings["python_if"].compiles[0]
    [sym] = c.shapes.symbols
    p = open_page(pages["python_if"])
    switch = p.root.locator(".dl-guards .dl-pane-switch")
    p.go(0, sym.step - 1)
    assert switch.text_content() == "Shapes"
    p.go(0, sym.step)
    assert not p.shapes.is_visible()
    assert switch.text_content() == "Shapes •" and f"made {sym.name}" in switch.get_attribute("title")
    stack_sym = p.root.locator(f".dl-stack .dl-sym[data-help-symbol='{sym.name}']").first
    stack_sym.hover()
    tip = p.root.locator(".dl-tooltip")
    tip.wait_for(state="visible", timeout=3_000)
    assert f"{sym.name} stands for {sym.sources[0]} (made at step {sym.step}); hint {sym.hint}" in tip.text_content()
    stack_sym.click()
    p.shapes.wait_for(state="visible", timeout=3_000)
    assert sym.name in p.shapes.locator(".dl-lit").first.text_content()
    assert p.step() == sym.step, "the symbol's link shows the pane, it does not step"
    # hovering the symbol elsewhere lights it here while the pane shows
    p.root.locator(".dl-source .dl-title").hover()
    assert p.shapes.locator(".dl-lit").count() == 0
    stack_sym.hover()
    assert p.shapes.locator(".dl-lit").count() >= 1
    # a graph node of that size lights it too (a tensor of shape [s77])
    p.root.locator(".dl-source .dl-title").hover()
    tensor = next(k for k, n in enumerate(c.nodes) if n.shape and sym.name in n.shape)
    p.root.locator(f".dl-graph g.node[data-node='{tensor}']").hover()
    assert p.shapes.locator(".dl-lit").count() >= 1
    # back to the guards; a guard on the size names its symbol, which leads here too
    p.shapes.locator(".dl-pane-switch").click()
    p.root.locator(".dl-guards").wait_for(state="visible", timeout=3_000)
    p.go(0, len(c.steps) - 1)
    on_size = [g for g in c.guard_details if sym.sources[0] in g.text]
    assert on_size, "Dynamo guards the size it asked about"
    chip = p.root.locator(f".dl-guards .dl-guard-syms .dl-sym[data-help-symbol='{sym.name}']").first
    chip.click()
    p.shapes.wait_for(state="visible", timeout=3_000)
    assert p.shapes.locator(".dl-lit").count() >= 1
    assert p.step() == len(c.steps) - 1
    # a link that leads to a guard (here, as the guard tree's leaves do) shows the guards again
    k = next(j for j, g in enumerate(c.guard_details) if g.step is not None)
    p.root.evaluate("(r, [k, i]) => r.parentElement.dynamoLab.viewer.go(0, i, { jump: true, flash: { guard: k } })",
                    [k, c.guard_details[k].step])
    p.root.locator(".dl-guards li.dl-flash").wait_for(state="visible", timeout=3_000)
    assert not p.shapes.is_visible()


def test_an_older_recording_says_so_and_program_text_stays_text(open_page, pages):
    p = open_page(pages["python_if"])
    p.show_shapes()
    # program text from torch's note of the user's line: shown, never parsed as markup
    p.root.evaluate("""r => { const v = r.parentElement.dynamoLab.viewer;
        v.rec.compiles[0].shapes.guards[0].user = "<b id=dl-x>x</b>.shape[0] > 8  # f.py:3 in f"; v.go(0, 0); }""")
    last = p.root.evaluate("r => r.parentElement.dynamoLab.viewer.rec.compiles[0].steps.length - 1")
    p.go(0, last)
    assert "line 3: <b id=dl-x>x</b>.shape[0] > 8" in p.shapes.locator("li .dl-where").text_content()
    assert p.page.locator("#dl-x").count() == 0
    # a recording made before shapes were recorded: one line, no error
    p.root.evaluate("r => { const v = r.parentElement.dynamoLab.viewer; delete v.rec.compiles[0].shapes; v.go(0, 1); }")
    p.go(0, 1)
    assert p.text() == ("This recording was made before shapes were recorded: record it again to see its "
                        "symbols and symbolic guards.")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1400, 900), (1000, 800)])
def test_the_pane_fits_the_window_in_the_guards_place(open_page, pages, recordings, size, scheme, tmp_path):
    shapes = recordings["marked_broadcast"].compiles[0].shapes
    p = open_page(pages["marked_broadcast"], scheme, size)
    p.go(0, shapes.guards[0].step)
    box = "r => { const b = r.querySelector(sel).getBoundingClientRect(); return [b.top, b.bottom, b.height]; }"
    look = lambda sel: p.root.evaluate(box.replace("sel", repr(sel)))  # noqa: E731
    panes, guards = look(".dl-panes"), look(".dl-guards")
    p.show_shapes()
    assert look(".dl-panes") == panes, "showing the shapes moves no pane"
    assert look(".dl-shapes") == guards, "the shapes pane is where the guards were"
    assert look(".dl-shapes")[1] <= panes[1], "inside the panes' box, which the window holds as before"
    body = p.shapes.locator(".dl-pane-body").evaluate("b => [b.clientHeight, b.scrollHeight]")
    assert body[0] >= 4 * 13, body
    # the new guard is scrolled into view inside the pane
    new = p.shapes.locator("li.dl-new").bounding_box()
    pane = p.shapes.locator(".dl-pane-body").bounding_box()
    assert pane["y"] <= new["y"] and new["y"] + new["height"] <= pane["y"] + pane["height"] + 1
    p.page.screenshot(path=str(tmp_path / f"shapes-{size[0]}-{scheme}.png"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", ["marked_broadcast", "nonzero", "automatic"])
def test_axe_finds_nothing_in_the_shapes_pane(open_page, pages, recordings, name, scheme):
    from test_viewer_a11y import AXE

    if not AXE.exists():
        pytest.skip("axe-core is not installed: tests/test_viewer_a11y.py installs it (npm ci)")
    shapes = recordings[name].compiles[0].shapes
    # where the pane says most: a specialization and a new guard; an unbacked symbol made; every size static
    step = {"marked_broadcast": lambda: shapes.guards[0].step, "nonzero": lambda: shapes.symbols[0].step,
            "automatic": lambda: 0}[name]()
    p = open_page(pages[name], scheme)
    p.go(0, step)
    p.show_shapes()
    p.page.add_script_tag(path=str(AXE))
    found = p.page.evaluate("""async () => (await axe.run(document.querySelector('.dl-shapes'))).violations.map(v =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`)""")
    assert found == []


def test_the_help_sent_with_a_recording_has_the_words_of_dynamic_shapes(recordings):
    got = help_data.for_recording(recordings["python_if"])
    for word in ["Eq", "Ne", "range", "int_oo", "backed", "unbacked", "guard_or_false", "guard_or_true", "torch._check"]:
        assert got["terms"][word].rstrip().endswith("."), word
    json.dumps(got)


# -- JupyterLab --------------------------------------------------------------------------------

LAB_CELLS = [
    "import torch\n%load_ext widgets\n"
    "def f(x):\n    if x.shape[0] > 8:\n        return x * 2\n    return x + 1",
    "%%capture_trace -o rec_if\nx = torch.randn(10)\ntorch._dynamo.mark_dynamic(x, 0)\n"
    'torch.compile(f, backend="eager")(x)',
]


@pytest.fixture(scope="module")
def lab_root(browser, tmp_path_factory):
    """The widget %%capture_trace shows for a Python `if` on a marked size, in JupyterLab."""
    from bench import lab_server

    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
                    for s in LAB_CELLS],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (root / "shapes.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(lab.url("lab/tree/shapes.ipynb"))
            page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
            page.locator(".jp-Notebook .jp-Cell").first.click()
            lab_server.run_all(page)
            page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=180_000)
            root = page.locator(".dl-viewer").first
            root.scroll_into_view_if_needed()
            yield page, root, errors
        finally:
            page.close()


def test_in_jupyterlab_the_pane_shows_the_guard_the_if_added_and_leads_to_its_step(lab_root):
    page, root, errors = lab_root
    rec = capture.Recording.from_json(json.dumps(root.evaluate("r => r.parentElement.dynamoLab.viewer.rec")))
    [c] = rec.compiles
    [guard] = c.shapes.guards
    assert guard.expr.endswith("> 8") and guard.step is not None
    root.locator(".dl-guards .dl-pane-switch").click()
    shapes = root.locator(".dl-shapes")
    shapes.wait_for(state="visible", timeout=5_000)
    root.evaluate("(r, i) => r.parentElement.dynamoLab.viewer.go(0, i)", guard.step)
    new = shapes.locator("li.dl-new")
    new.wait_for(timeout=5_000)
    assert new.locator(".dl-shape-guard").text_content() == guard.expr
    # the notebook's own line, as text
    assert guard.lineno == 4, "the cell's fourth line"
    assert f"line {guard.lineno}: if x.shape[0] > 8:" in new.text_content()
    root.evaluate("(r, i) => r.parentElement.dynamoLab.viewer.go(0, i)", len(c.steps) - 1)
    shapes.locator(".dl-shape-guard").click()
    page.wait_for_function("r => r.parentElement.dynamoLab.viewer.step === %d" % guard.step,
                           arg=root.element_handle(), timeout=5_000)
    shapes.locator(".dl-range").first.hover()
    tip = root.locator(".dl-tooltip")
    tip.wait_for(state="visible", timeout=3_000)
    assert TERMS["range"] in tip.text_content()
    assert errors == []


_LAYERS = """
import torch

class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x

model = Stack()
f = torch.compile(model, backend="eager")
"""


def test_a_models_static_parameters_fold_below_the_input_that_has_a_symbol(open_page, tmp_path):
    """Six parameters with every size static under the one dynamic input: the pane lists the
    input with its symbol, folds the six into one row, and opens them on Enter."""
    from widgets.viewer.page import write_html

    ns = {"__name__": "shapes_layers"}
    exec(compile(_LAYERS, "<layers>", "exec"), ns)
    torch._dynamo.reset()
    try:
        with capture.record() as rec:
            ns["f"](torch.randn(2, 4))
            ns["f"](torch.randn(5, 4))
    finally:
        torch._dynamo.reset()
    second = rec.compiles[-1]
    static = [x for x in {sd.source.split(".size()")[0] for sd in second.shapes.dims}
              if "parameters" in x or "_modules" in x]
    assert len(static) == 6, static
    p = open_page(write_html(rec, tmp_path / "layers.html"))
    p.show_shapes()
    p.go(len(rec.compiles) - 1, 0)
    inputs = p.shapes.locator(".dl-shape-input").all_text_contents()
    assert inputs == ["L['x']"], inputs
    fold = p.shapes.locator(".dl-shape-fold button")
    assert fold.text_content() == "6 more inputs with every size static: show them"
    assert fold.get_attribute("aria-expanded") == "false"
    fold.focus()
    p.page.keyboard.press("Enter")
    inputs = p.shapes.locator(".dl-shape-input").all_text_contents()
    assert inputs[0] == "L['x']" and len(inputs) == 7
    assert all("parameters" in x for x in inputs[1:]), inputs
    again = p.shapes.locator(".dl-shape-fold button")
    assert again.get_attribute("aria-expanded") == "true"
    assert p.page.evaluate("() => document.activeElement.closest('.dl-shape-fold') !== null")
