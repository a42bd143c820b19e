"""The exported page in a real browser: opened from file:// with every other request refused.

`widgets.viewer.page.write_html` writes a recording as one HTML file; Debian's Chromium,
driven by Playwright, opens it with a route that lets only file:, blob: and data:
URLs through and notes anything else. The page must step, follow provenance links
and run predict mode with nothing but itself, and the hostile-text recordings of
tests/hostile.py must stay text: no dialog opens, no element or handler from the
program appears, and the page's Content-Security-Policy never has to refuse anything
(a refusal would mean some text became markup). Last, the page `%%capture_trace --html`
writes and the widget the same cell shows in JupyterLab are stepped side by side, and
show the same text after every action.

    .venv/bin/python -m pytest tests/test_page.py        # -m "not browser" skips the browser
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import hostile
from bench import lab_server
from widgets.viewer import page as page_export

pytestmark = [pytest.mark.timeout(300)]

VIEWPORT = {"width": 1280, "height": 900}
READY = 20_000   # ms: the page decoded the recording and painted (a fraction of a second here)
STEP = re.compile(r"step (\d+) / (\d+)")

# Before any script of the page: count what the Content-Security-Policy refuses.
WATCH_JS = """
window.__dlRefused = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__dlRefused.push(e.violatedDirective + " " + e.blockedURI));
"""


# -- opening pages ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


class Opened:
    """A page opened from file://, with what it tried to fetch, said and refused."""

    def __init__(self, browser, path: Path) -> None:
        self.context = browser.new_context(viewport=VIEWPORT)
        self.blocked: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.add_init_script(WATCH_JS)
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                     if m.type == "error" else None)
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file:", "blob:", "data:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def close(self) -> None:
        self.context.close()

    # -- reading and acting, as a learner would --------------------------------------

    def root(self, k: int = 0):
        return self.page.locator(".dl-viewer").nth(k)

    def step(self, k: int = 0) -> tuple[int, int]:
        label = self.root(k).locator(".dl-caption .dl-stepno").first.text_content()
        m = STEP.search(label)
        assert m, label
        return int(m[1]), int(m[2])

    def button(self, name: str, k: int = 0):
        return self.root(k).locator("button").filter(has_text=re.compile(f"^{re.escape(name)}"))

    def click(self, name: str, k: int = 0) -> None:
        self.button(name, k).first.click()

    def refused(self) -> list[str]:
        return self.page.evaluate("window.__dlRefused")

    def model_set(self, name: str, value, k: int = 0) -> None:
        """Set a value on the page's model, as the kernel would set a trait."""
        self.page.evaluate("([k, name, value]) => document.querySelectorAll('[data-dl-viewer]')[k]"
                           ".dynamoLab.model.set(name, value)", [k, name, value])

    def model_get(self, name: str, k: int = 0):
        return self.page.evaluate("([k, name]) => document.querySelectorAll('[data-dl-viewer]')[k]"
                                  ".dynamoLab.model.get(name)", [k, name])

    def assert_quiet(self) -> None:
        """Nothing fetched, nothing refused, no dialog, no error."""
        assert self.blocked == [], f"the page asked the network for {self.blocked}"
        assert self.refused() == [], f"the Content-Security-Policy refused {self.refused()}"
        assert self.dialogs == [], f"dialogs opened: {self.dialogs}"
        assert self.errors == [], "\n".join(self.errors)


@pytest.fixture
def opened(browser):
    made: list[Opened] = []

    def open_(path: Path) -> Opened:
        o = Opened(browser, path)
        made.append(o)
        return o

    yield open_
    for o in made:
        o.close()


@pytest.fixture(scope="module")
def exported(viewer_recording, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("page") / "trace.html"
    page_export.write_html(viewer_recording, path, title="conftest <viewer_recording>")
    return path


# -- the file itself -------------------------------------------------------------------------

def test_the_page_is_one_file_with_the_widgets_own_module_inline(exported):
    text = exported.read_text(encoding="utf-8")
    module = page_export.module_source()
    held = text.split('id="dl-viewer-module">', 1)[1].split("</script>", 1)[0]
    assert held.replace("&lt;", "<").replace("&amp;", "&") == module   # the same source
    assert "<title>conftest &lt;viewer_recording&gt;</title>" in text
    # No address of anything outside the file: no src=, no href= to a server.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "default-src 'none'" in text


def test_the_magic_writes_the_page_and_says_where(ipython_shell, tmp_path, capsys):
    target = tmp_path / "from magic.html"
    result = ipython_shell.run_cell(
        f'%%capture_trace --html "{target}" --step 2\n'
        'g = torch.compile(lambda x: x.cos() * 3, backend="eager")\ng(torch.ones(2))')
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert f"wrote {target}" in out and "TraceViewer(" in out   # the viewer is still shown
    text = target.read_text(encoding="utf-8")
    assert 'id="dl-viewer-module"' in text and '"step":2' in text


@pytest.mark.parametrize("option, expected", [
    ("--html trace.txt", "--html needs a file name ending in .html"),
    ("--html /no/such/folder/t.html", "does not exist"),
])
def test_the_magic_refuses_a_page_it_could_not_write_before_running(ipython_shell, capsys,
                                                                    option, expected):
    result = ipython_shell.run_cell(f"%%capture_trace {option}\nran = True")
    assert not result.success or "ran" not in ipython_shell.user_ns
    shown = capsys.readouterr()
    assert expected in shown.out + shown.err


# -- in the browser ----------------------------------------------------------------------------

@pytest.mark.browser
def test_the_page_opens_from_file_and_steps_forward_and_back(opened, exported):
    o = opened(exported)
    i, n = o.step()
    assert i == 0 and n > 0
    stack = o.root().locator(".dl-stack")
    seen = {0: stack.text_content()}
    for j in range(1, min(n, 8) + 1):
        o.click("forward")
        assert o.step() == (j, n)
        seen[j] = stack.text_content()
    assert len(set(seen.values())) > 1, "the stack pane never changed"
    for j in range(min(n, 8) - 1, -1, -1):
        o.click("back")
        assert o.step() == (j, n)
        assert stack.text_content() == seen[j]
    o.click("last")
    assert o.step() == (n, n)
    o.assert_quiet()


@pytest.mark.browser
def test_every_compile_of_the_recording_can_be_chosen(opened, exported, viewer_recording):
    o = opened(exported)
    select = o.root().locator("select").first
    ids = [c.compile_id for c in viewer_recording.compiles]
    options = select.locator("option").all_text_contents()
    assert len(options) == len(ids)
    for k, cid in enumerate(ids):
        select.select_option(index=k)
        assert f"[{cid}]" in o.root().text_content()
        assert o.step() == (0, len(viewer_recording.compiles[k].steps) - 1)
    o.assert_quiet()


@pytest.mark.browser
def test_a_page_opens_at_the_compile_and_step_it_was_written_for(opened, viewer_recording, tmp_path):
    path = page_export.write_html(viewer_recording, tmp_path / "at.html", compile="1/0", step=2)
    o = opened(path)
    assert o.step()[0] == 2
    assert o.model_get("compile") == 2           # [1/0] is the third compile
    o.assert_quiet()


@pytest.mark.browser
def test_provenance_links_lead_to_the_step_that_made_a_guard_or_node_and_back(opened, exported):
    o = opened(exported)
    o.click("last")
    last = o.step()
    guard = o.root().locator("[data-guard]").last   # newest first: the last listed is the oldest
    guard.wait_for()
    guard.click()
    at_guard = o.step()
    assert at_guard[0] < last[0], "following a guard did not move to the step that installed it"
    assert o.button("return").first.is_enabled()
    o.click("return")
    assert o.step() == last
    node = o.root().locator("[data-node]").first
    node.click()
    assert o.step()[0] < last[0]
    o.click("return")
    assert o.step() == last
    o.assert_quiet()


@pytest.mark.browser
def test_the_graph_break_link_goes_to_the_break(opened, exported):
    o = opened(exported)
    assert o.step()[0] == 0
    o.root().locator(".dl-break-link").first.click()
    assert o.step()[0] > 0
    assert "print" in o.root().locator(".dl-source").text_content()
    o.assert_quiet()


@pytest.mark.browser
def test_predict_mode_asks_before_stepping_and_keeps_the_answer(opened, exported):
    o = opened(exported)
    o.click("predict")
    box = o.root().locator(".dl-predict")
    assert box.is_visible()
    before = o.step()
    o.click("forward")                    # asks instead of stepping
    assert o.step() == before
    chips = box.locator(".dl-chip[data-answer=pushes]")   # what it pushes: the answer reveal needs
    assert chips.count() > 0, box.text_content()
    chips.first.click()
    o.click("forward")                    # reveals: the step is taken, the answer kept
    assert o.step()[0] == before[0] + 1
    predictions = o.model_get("predictions")
    assert len(predictions) == 1, predictions
    assert o.model_get("predict") is True
    o.assert_quiet()


@pytest.mark.browser
def test_predict_mode_marks_the_instruction_it_asks_about(opened, exported):
    o = opened(exported)
    o.click("predict")
    asked = o.root().locator(".dl-bytecode .dl-row.dl-asked")
    assert asked.count() == 0, "nothing is asked yet"
    o.click("forward")                    # asks about the next instruction
    assert asked.count() == 1
    question = o.page.evaluate("() => document.querySelector('[data-dl-viewer]')"
                               ".dynamoLab.viewer.predict.asking")
    assert asked.get_attribute("data-offset") == str(question["offset"])
    current = o.root().locator(".dl-bytecode .dl-row.dl-current")
    assert current.get_attribute("data-offset") != asked.get_attribute("data-offset")
    o.root().locator(".dl-predict .dl-chip[data-answer=pushes]").first.click()
    o.click("forward")                    # revealed and stepped: the asked row is now current
    assert asked.count() == 0
    assert current.get_attribute("data-offset") == str(question["offset"])
    o.click("forward")                    # asks again: one mark, at the new question's row
    assert asked.count() == 1
    o.click("predict")                    # predict mode off: no mark left behind
    assert asked.count() == 0
    o.assert_quiet()


STEPS_JS = """() => { const v = document.querySelector('[data-dl-viewer]').dynamoLab.viewer;
    return v.rec.compiles[v.compile].steps.map((s) => [s.code, s.lineno, s.offset]); }"""


@pytest.mark.browser
def test_a_source_line_and_a_bytecode_row_lead_to_the_steps_that_run_them(opened, exported):
    o = opened(exported)
    root = o.root()
    steps = o.page.evaluate(STEPS_JS)
    code, first_line = steps[0][0], steps[0][1]
    line = next(ln for c, ln, _ in steps[1:] if c == code and ln not in (None, first_line))
    expected = next(j for j, (c, ln, _) in enumerate(steps) if j > 0 and c == code and ln == line)
    source_line = root.locator(f'.dl-source [data-line="{line}"]').first
    source_line.hover()                    # its instructions are marked in the bytecode pane
    marked = root.locator(".dl-bytecode .dl-peer")
    assert marked.count() >= 1
    offsets = {int(x) for x in marked.evaluate_all("els => els.map((e) => e.dataset.offset)")}
    assert {off for c, ln, off in steps if c == code and ln == line} <= offsets, offsets
    source_line.click()
    assert o.step()[0] == expected
    here = o.step()[0]
    later = next(j for j, (c, _, _) in enumerate(steps) if j > here + 1 and c == code)
    offset = steps[later][2]
    want = next(j for j, (c, _, off) in enumerate(steps) if j > here and c == code and off == offset)
    root.locator(f'.dl-bytecode [data-offset="{offset}"]').first.click()
    assert o.step()[0] == want
    assert f"The next step that runs the instruction at offset {offset}" in root.text_content()
    o.click("return")                      # a jump like any other: Backspace's button returns
    assert o.step()[0] == here
    o.assert_quiet()


@pytest.mark.browser
def test_setting_the_model_as_a_kernel_would_moves_the_page(opened, exported):
    o = opened(exported)
    o.model_set("step", 3)
    assert o.step()[0] == 3
    o.model_set("compile", 1)
    chosen = o.root().locator("select").first.evaluate("s => s.options[s.selectedIndex].text")
    assert chosen.startswith("[0/0_1]"), chosen
    o.assert_quiet()


# -- hostile text --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_pages(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    pages = {}
    for name, recording in hostile.recordings(folder).items():
        pages[name] = page_export.write_html(recording, folder / f"{name.replace(' ', '_')}.html",
                                             title=f"{name} {hostile.TEXT}")
    return pages


INERT_JS = """() => ({
    evil: document.querySelectorAll('dl-evil').length,
    images: document.querySelectorAll('img').length,
    scripts: [...document.scripts].filter(s => !s.id && !s.nonce && !s.dataset.dlState
                                              && !s.dataset.dlBuffer).length,
    handlers: [...document.querySelectorAll('*')].filter(
        el => [...el.attributes].some(a => a.name.startsWith('on'))).length,
})"""


@pytest.mark.browser
@pytest.mark.parametrize("name", ["file program", "exception message", "code names",
                                  "unsafe characters", "long lines"])
def test_hostile_text_stays_text_at_every_step_of_every_compile(opened, hostile_pages, name):
    o = opened(hostile_pages[name])
    for details in o.root().locator("details").all():
        details.evaluate("d => d.open = true")      # the bytecode and guard tree too
    n_compiles = o.page.locator(".dl-viewer select option").count()
    for k in range(max(n_compiles, 1)):
        o.model_set("compile", k)
        last = o.step()[1]
        for i in range(last + 1):
            o.model_set("step", i)
        assert o.step() == (last, last)
        if last:
            o.click("first")
            assert o.step() == (0, last)
    assert o.page.evaluate(INERT_JS) == {"evil": 0, "images": 0, "scripts": 0, "handlers": 0}
    if name in ("file program", "code names"):
        # Shown, as text: the markup is on the page as characters.
        assert "<script>alert('dl')</script>" in o.page.locator("body").inner_text()
    assert o.page.title().endswith(hostile.TEXT)
    o.assert_quiet()


# -- the page and the widget show the same thing --------------------------------------------------

WIDGET_PROGRAM = '''\
def helper(a):
    return a * 2


@torch.compile(backend="eager")
def f(x):
    y = torch.sin(x)
    print("a graph break")
    return helper(y) + 1


f(torch.ones(4))
f(torch.ones(8))'''
KERNEL_START = 90_000
RUN_ALL = 120_000
SAME = 10_000   # ms for both to show the same text after an action (a few ms in practice)

# What a viewer shows as text, less the badges that count rows below a pane's fold
# (`.dl-below`): how many fit depends on the pane's height, which differs between
# JupyterLab's output area and the page.
TEXT_JS = """el => {
    let text = el.innerText;
    for (const b of el.querySelectorAll('.dl-below')) if (b.innerText) text = text.replace(b.innerText, '');
    return text.replace(/\\s+/g, ' ').trim();
}"""


@pytest.fixture(scope="module")
def widget_and_page(browser, tmp_path_factory):
    """The same recording twice: as the widget in JupyterLab, and as the page the magic wrote."""
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    exported = home / "from_the_magic.html"
    cells = ["%load_ext widgets\nimport torch",
             f"%%capture_trace --html {exported}\n{WIDGET_PROGRAM}"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": c} for c in cells],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (root / "same.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab:
        context = browser.new_context(viewport=VIEWPORT)
        lab_page = context.new_page()
        try:
            lab_page.goto(lab.url("lab/tree/same.ipynb"))
            lab_page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=KERNEL_START)
            lab_page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
            lab_page.locator(".jp-Notebook .jp-Cell").first.click()
            lab_server.run_all(lab_page)
            lab_page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=RUN_ALL)
            said = lab_page.locator(".jp-OutputArea-output").filter(has_text="wrote").first
            said.wait_for(timeout=RUN_ALL)
            assert str(exported) in said.text_content()
            standalone = Opened(browser, exported)
            try:
                yield lab_page, standalone
            finally:
                standalone.close()
        finally:
            context.close()


def _same_text(widget_root, page_root) -> str:
    """Wait until the widget and the page show the same text; that text."""
    deadline = SAME
    wanted = page_root.evaluate(TEXT_JS)
    try:
        widget_root.page.wait_for_function(
            f"([el, want]) => ({TEXT_JS})(el) === want",
            arg=[widget_root.element_handle(), wanted], timeout=deadline)
    except Exception:
        shown = widget_root.evaluate(TEXT_JS)
        at = next((k for k, (a, b) in enumerate(zip(shown, wanted)) if a != b),
                  min(len(shown), len(wanted)))
        raise AssertionError(f"the widget and the page differ at character {at}:\n"
                             f"widget: …{shown[max(at - 80, 0):at + 80]}…\n"
                             f"page:   …{wanted[max(at - 80, 0):at + 80]}…") from None
    return wanted


@pytest.mark.browser
def test_the_page_and_the_widget_show_the_same_text_at_the_same_step(widget_and_page):
    lab_page, standalone = widget_and_page
    widget = lab_page.locator(".dl-viewer").first
    page = standalone.root()
    seen = {_same_text(widget, page)}
    actions = ["forward", "forward", "forward", "next node", "next guard", "graph break", "last"]
    for k in (0, 2, 3):    # [0/0], its resume function [1/0], the recompile [0/1]
        for root in (widget, page):
            root.locator("select").first.select_option(index=k)
        seen.add(_same_text(widget, page))
        for action in actions:
            for root in (widget, page):
                button = root.locator("button").filter(has_text=re.compile(f"^{action}")).first
                if button.is_enabled():
                    button.click()
            seen.add(_same_text(widget, page))
    assert len(seen) > 10, "the actions did not change what was shown"
    standalone.assert_quiet()


def _both_not_none(x, a=None, b=None):
    if a is not None and b is not None:
        x = x + 1
    print("a graph break")
    return x * 2


@pytest.mark.browser
def test_cleaned_bytecode_and_its_original_line_up_row_for_row(opened, tmp_path):
    """Where Dynamo's cleaning changed a code, the bytecode pane shows two columns; every
    row's original instruction starts where the others' do, and nothing is cut short."""
    import torch

    import capture

    with contextlib.redirect_stdout(io.StringIO()):
        rec = capture.trace(_both_not_none, torch.ones(3), torch.ones(3), torch.ones(3))
    k = next(i for i, c in enumerate(rec.compiles) if c.codes and c.codes[0].cleaned)
    o = opened(page_export.write_html(rec, tmp_path / "cleaned.html", compile=k, step=0))
    cells = o.page.evaluate("""() => [...document.querySelectorAll('.dl-code .dl-pair')]
        .map(row => [...row.children].map(c => ({left: Math.round(c.getBoundingClientRect().left),
                                                 cut: c.scrollWidth > c.clientWidth + 1,
                                                 text: c.textContent})))""")
    assert len(cells) > 10
    assert len({row[1]["left"] for row in cells}) == 1, cells
    assert not any(cell["cut"] for row in cells for cell in row), cells
    assert any("POP_JUMP_FORWARD_IF_NONE" in row[1]["text"] for row in cells)
    o.assert_quiet()


@pytest.mark.browser
def test_the_installed_code_and_the_guard_tree_lead_back_to_their_steps_and_guards(opened, exported,
                                                                                   viewer_recording):
    k = next(j for j, c in enumerate(viewer_recording.compiles) if c.resume_functions)
    c = viewer_recording.compiles[k]
    brk = min(c.graph_break.step, len(c.steps) - 1)
    o = opened(exported)
    root = o.root()
    o.model_set("compile", k)
    root.locator("details.dl-compare > summary").click()
    root.locator(".dl-rewritten [data-graph-call]").first.click()
    assert o.step()[0] == brk, "the graph call leads to the step where tracing stopped"
    assert "compiled the graph" in root.text_content()
    o.model_set("step", 0)
    resume = root.locator(".dl-rewritten [data-resume]").first
    resume.focus()
    o.page.keyboard.press("Enter")        # from the keyboard as from the pointer
    assert o.step()[0] == brk, "a resume call leads to the break that made it"
    assert c.resume_functions[0].code_name in root.text_content()
    # A guard-tree leaf: to the step that installed its guard, the guard marked in its pane.
    g = next(j for j, d in enumerate(c.guard_details) if d.leaf is not None and d.step is not None
             and d.step != brk)
    root.locator("details.dl-details:not(.dl-compare) > summary").filter(has_text="Guard tree").click()
    row = root.locator(f'.dl-guard-tree [data-guard="{g}"]')
    assert c.guards[c.guard_details[g].leaf] in row.text_content()
    row.hover()
    assert root.locator(f'.dl-guards [data-guard-row="{g}"].dl-peer').count() == 1
    row.click()
    assert o.step()[0] == c.guard_details[g].step
    assert root.locator(f'.dl-guards li.dl-flash[data-guard-row="{g}"]').count() == 1
    # An ambient guard's leaf: the guard shown in its pane, the step kept.
    a = next(j for j, d in enumerate(c.guard_details) if d.leaf is not None and d.ambient)
    here = o.step()[0]
    root.locator(f'.dl-guard-tree [data-guard="{a}"]').click()
    assert o.step()[0] == here
    assert root.locator(f'.dl-guards li.dl-flash[data-guard-row="{a}"]').count() == 1
    o.assert_quiet()


def _chain_of_adds(x):
    for _ in range(60):
        x = x + 1
    return x


# In the page: the graph pane's drawing, and which of the nodes made so far (by `data-node`)
# lie at least partly inside it.
NODES_IN_VIEW_JS = """() => {
    const root = document.querySelector('.dl-viewer');
    const { viewer } = root.parentElement.dynamoLab;
    const pane = root.querySelector('.dl-graph .dl-drawing').getBoundingClientRect();
    const made = new Set(viewer.rec.compiles[viewer.compile].nodes.map((n, k) => k)
        .filter((k) => (viewer.rec.compiles[viewer.compile].nodes[k].step ?? 0) <= viewer.step));
    return [...root.querySelectorAll('.dl-graph svg g.node[data-node]')].filter((g) => {
        if (!made.has(Number(g.dataset.node)) || g.getAttribute('visibility') === 'hidden') return false;
        const r = g.getBoundingClientRect();
        return r.width > 0 && r.right > pane.left && r.left < pane.right && r.bottom > pane.top && r.top < pane.bottom;
    }).length;
}"""


@pytest.mark.browser
def test_a_jump_to_a_step_that_adds_no_node_shows_a_node_made_so_far(opened, tmp_path):
    import capture
    import torch

    recording = capture.trace(_chain_of_adds, torch.ones(3))
    c = recording.compiles[0]
    made_by = lambda j: sum(1 for n in c.nodes if n.step is not None and n.step <= j)  # noqa: E731
    last_node = max(n.step for n in c.nodes if n.step is not None)
    early = next(j for j in range(1, len(c.steps)) if not c.steps[j].nodes_added and made_by(j) >= 3)
    path = tmp_path / "chain.html"
    page_export.write_html(recording, path)
    o = opened(path)
    o.model_set("step", last_node)        # the view follows the last add, far down the drawing
    assert o.page.evaluate(NODES_IN_VIEW_JS) >= 1
    o.model_set("step", early)            # back where only the top few nodes exist; it adds none
    assert o.step()[0] == early
    assert o.page.evaluate(NODES_IN_VIEW_JS) >= 1, "the graph pane shows none of the nodes made so far"
    o.assert_quiet()


# In the page: whether the node `k` lies at least partly inside the graph pane's drawing.
NODE_IN_VIEW_JS = """(k) => {
    const root = document.querySelector('.dl-viewer');
    const pane = root.querySelector('.dl-graph .dl-drawing').getBoundingClientRect();
    const g = root.querySelector(`.dl-graph svg g.node[data-node="${k}"]`);
    if (!g || g.getAttribute('visibility') === 'hidden') return false;
    const r = g.getBoundingClientRect();
    return r.width > 0 && r.right > pane.left && r.left < pane.right && r.bottom > pane.top && r.top < pane.bottom;
}"""


@pytest.mark.browser
def test_a_jump_far_ahead_to_a_step_that_adds_no_node_shows_the_latest_node(opened, tmp_path):
    import capture
    import torch

    recording = capture.trace(_chain_of_adds, torch.ones(3))
    c = recording.compiles[0]
    made = sorted((n.step, k) for k, n in enumerate(c.nodes) if n.step is not None)
    # Far down the chain, a step that adds nothing: the latest node made is deep in the
    # drawing, while the first nodes (in view at step 0) are still there too.
    j = next(j for j in range(made[-10][0] + 1, len(c.steps)) if not c.steps[j].nodes_added)
    latest = max(k for step, k in made if step <= j)
    path = tmp_path / "chain.html"
    page_export.write_html(recording, path)
    o = opened(path)
    first = made[0][1]
    o.model_set("step", made[0][0])
    assert o.page.evaluate(NODE_IN_VIEW_JS, first), "the first node is not in view where it is made"
    o.model_set("step", j)
    assert o.step()[0] == j
    assert o.page.evaluate(NODE_IN_VIEW_JS, latest), "the latest node made so far is out of view"
    # One step on, adding nothing, the view stays where it is: the latest stays in view.
    if not c.steps[j + 1].nodes_added:
        o.model_set("step", j + 1)
        assert o.page.evaluate(NODE_IN_VIEW_JS, latest)
    o.assert_quiet()
