"""The viewer in a real browser: a lesson run in JupyterLab, in Chromium, stepping in the page.

A JupyterLab of its own (bench/lab_server.py) opens a copy of notebooks/00_tour.ipynb,
stripped of its outputs, with a few cells of the tests' own at the end: a recompile, a
viewer the tests also read from Python (`probe`), and the hostile programs of
tests/hostile.py. Debian's Chromium is driven by Playwright (launched through
`executable_path`: browsers cannot be downloaded here, and `playwright install` is never
run). The Run menu runs every cell; then the viewers are clicked and typed at, and what the
page shows is checked: steps, panes, the graph drawing, jumps and their history,
provenance links, predict mode, keys, both themes. The kernel is then kept busy, shut
down, and the saved notebook reopened: the viewer steps on in the page through all of it.

Every click waits, in the page, until the viewer's DOM has changed and then stayed still;
that also measures click-to-pane latency (printed with -s: a figure, not an assertion).
With DYNAMO_LAB_UPDATE_SCREENSHOT=1 the light-theme screenshot replaces docs/viewer.png.

    .venv/bin/python -m pytest tests/test_browser.py -s       # -m "not browser" skips these
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import threading
import time
from pathlib import Path

import pytest

from bench import lab_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "notebooks" / "00_tour.ipynb"
NOTEBOOK = "tour.ipynb"
SCREENSHOT = ROOT / "docs" / "viewer.png"
CHROMIUM = lab_server.CHROMIUM
VIEWPORT = {"width": 1280, "height": 900}
KERNEL_START = 90_000    # ms: opening JupyterLab and starting a kernel (about 4 s warm)
RUN_ALL = 240_000        # ms: the lesson's cells and the tests' own (torch import, hostile programs)
CLICK = 10_000           # ms: a click until the viewer has settled (milliseconds in practice)
QUIET = 120              # ms without a DOM change in the viewer: the update is complete
LATENCY_CLICKS = 30

STEP = re.compile(r"step (\d+) / (\d+)")

# The tests' own cells, appended to the lesson's copy.
EXTRA_CELLS = [
    # A recompile: the second call's shape fails a guard that [0/0] installed.
    '%%capture_trace -o recompiled\n@torch.compile(backend="eager")\ndef scale(x):\n'
    '    return x * 2\n\nscale(torch.ones(3))\nscale(torch.ones(4))',
    # A viewer the tests read from Python, on the attempt that compiled up to the print.
    'from widgets import TraceViewer\nprobe = TraceViewer(broken, compile="0/0_1")\nprobe',
    # Bytecode Dynamo cleans (`y is None`), and a recording with nothing compiled.
    'def maybe(x, y=None):\n    if y is None:\n        return x + 1\n    return x + y\n\n'
    'TraceViewer(capture.trace(maybe, torch.ones(3)))',
    'TraceViewer(capture.Recording())',
    # A viewer made where graphviz's `dot` cannot be found.
    'import os\nsaved_path = os.environ["PATH"]\nos.environ["PATH"] = "/nonexistent"\n'
    'try:\n    no_dot = TraceViewer(broken, compile="0/0_1")\n'
    'finally:\n    os.environ["PATH"] = saved_path\nno_dot',
    # Every hostile program, one viewer each.
    f"import sys, tempfile, pathlib\nsys.path.insert(0, {str(ROOT / 'tests')!r})\nimport hostile\n"
    "hostile_recordings = hostile.recordings(pathlib.Path(tempfile.mkdtemp()))\n"
    "for name, rec in hostile_recordings.items():\n    display(TraceViewer(rec))",
]

# Installed on a viewer's root element: notes when a button inside it is clicked (a key
# pressed, a compile chosen, the slider moved) and, from then on, when and in which pane the DOM changes (performance.now()).
PROBE_JS = """root => {
    const probe = root.__dlProbe = {t0: null, changes: []};
    const paneOf = node => {
        const el = node.nodeType === 1 ? node : node.parentElement;
        const pane = el && el.closest('.dl-pane');
        const title = pane && pane.querySelector('.dl-title');
        return title ? title.textContent.trim().split(/\\s+/)[0] : 'controls';
    };
    const start = () => { probe.t0 = performance.now(); probe.changes = []; };
    for (const kind of ['click', 'keydown', 'change', 'input']) root.addEventListener(kind, start, true);
    new MutationObserver(records => {
        if (probe.t0 === null) return;
        const now = performance.now();
        for (const r of records) probe.changes.push([now - probe.t0, paneOf(r.target)]);
    }).observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
}"""

# True once the step label (or the compile) differs from `before` and nothing has changed
# for `quiet` ms.
SETTLED_JS = """([root, before, quiet]) => {
    const probe = root.__dlProbe;
    if (!probe.changes.length || where(root) === before) return false;
    return performance.now() - probe.t0 - probe.changes.at(-1)[0] >= quiet;
}"""
WHERE_JS = """const where = root => (root.querySelector('.dl-compile') || {}).value + ' '
    + (root.querySelector('.dl-caption .dl-stepno') || {}).textContent;"""

VISIBLE_NODES_JS = "nodes => nodes.filter(n => getComputedStyle(n).display !== 'none').length"


# -- the server, the browser, the lesson run -------------------------------------------------

def _lesson_copy(src: Path, dst: Path) -> None:
    """The lesson as a learner gets it fresh (no outputs), with the tests' cells at the end."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    for source in EXTRA_CELLS:
        nb["cells"].append({"cell_type": "code", "metadata": {}, "source": source,
                            "outputs": [], "execution_count": None})
    nb["metadata"].pop("widgets", None)
    dst.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: ./lab test installs it (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])")
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    _lesson_copy(LESSON, root / NOTEBOOK)
    with lab_server.running(root, home / "state") as server:
        server.root = root
        yield server


@pytest.fixture(scope="module")
def browser(lab):
    with lab_server.chromium() as chromium:
        yield chromium


def _cell_errors(page) -> str:
    texts = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    return "\n---\n".join(texts.all_inner_texts()) or "(no error output)"


def open_notebook(page, lab) -> None:
    page.goto(lab.url(f"lab/tree/{NOTEBOOK}"))
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=KERNEL_START)


@pytest.fixture(scope="module")
def page(lab, browser, tmp_path_factory):
    """The lesson opened in JupyterLab with every cell run, the file browser folded away."""
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script("window.__dlAlerts = []; for (const f of ['alert', 'confirm', 'prompt']) "
                         "window[f] = (...a) => { window.__dlAlerts.push([f, ...a]); };")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.dl_errors = errors
    try:
        open_notebook(page, lab)
        # Fold the left sidebar: the notebook, and so the viewer, gets the whole width.
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
        page.locator(".jp-Notebook .jp-Cell").first.click()   # the notebook is the current widget
        lab_server.run_all(page)
        try:
            page.wait_for_function(
                """() => {
                    // a check cell's code is stored folded: its prompt is not drawn
                    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                        .filter(p => p.getClientRects().length > 0);
                    // Run All runs in order and stops at an error: the last cell numbered is all run
                    return prompts.length && /\\[\\d+\\]/.test(prompts[prompts.length - 1].textContent);
                }""", timeout=RUN_ALL)
        except Exception as e:
            shot = tmp_path_factory.mktemp("failed") / "lesson.png"
            page.screenshot(path=str(shot))
            raise AssertionError(f"the lesson did not run to the end ({e}); page: {shot}; errors shown:\n"
                                 f"{_cell_errors(page)}\nserver log:\n{lab.log_tail()}") from None
        page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=RUN_ALL)
        yield page
    finally:
        page.close()


# -- reading and driving a viewer -------------------------------------------------------------

def viewer_in(page, cell_text: str, k: int = 0, timeout: int = CLICK):
    """The k-th viewer in the first cell whose code contains `cell_text`, rendered, with
    the probe installed once."""
    cell = page.locator(".jp-CodeCell").filter(
        has=page.locator(".jp-InputArea", has_text=cell_text)).first
    root = cell.locator(".dl-viewer").nth(k)
    root.wait_for(timeout=timeout)
    page.wait_for_function("root => root.dataset.ready === '1'", arg=root.element_handle(),
                           timeout=timeout)
    root.evaluate(f"root => root.__dlProbe || ({PROBE_JS})(root)")
    return root


def viewer(page):
    """The lesson's first viewer: f(x) = x.sin() * 2 + 1."""
    return viewer_in(page, "def f(x)")


def lesson_break_viewer(page):
    """The lesson's graph break: g(x) prints."""
    return viewer_in(page, "def g(x)")


def probe_viewer(page, timeout: int = CLICK):
    """`probe`: a viewer of the graph break that the tests also read from Python."""
    return viewer_in(page, "probe = TraceViewer", timeout=timeout)


def hostile_viewers(page) -> list:
    cell = "hostile_recordings = "
    n = page.locator(".jp-CodeCell").filter(has=page.locator(".jp-InputArea", has_text=cell)) \
        .first.locator(".dl-viewer").count()
    return [viewer_in(page, cell, k) for k in range(n)]


def pane(root, title: str):
    """The pane whose title starts with `title` (Source, Bytecode, Stack, FX graph, Guards)."""
    return root.locator(".dl-pane").filter(has=root.page.locator(".dl-title", has_text=re.compile("^" + title)))


def step_of(root) -> tuple[int, int]:
    """(i, n) from the `step i / n` line above the panes."""
    m = STEP.search(root.locator(".dl-caption .dl-stepno").text_content())
    assert m, root.locator(".dl-caption").text_content()
    return int(m[1]), int(m[2])


def compile_shown(root) -> str:
    return root.locator(".dl-compile").evaluate("s => s.options[s.selectedIndex].text")


def button(root, name: str):
    """A viewer button by its word (the glyphs have no alternative text)."""
    return root.get_by_role("button", name=name, exact=True)


def _settle(root, before: str, what: str) -> dict[str, float]:
    try:
        root.page.wait_for_function(f"{WHERE_JS}\n({SETTLED_JS})",
                                    arg=[root.element_handle(), before, QUIET], timeout=CLICK)
    except Exception as e:
        raise AssertionError(f"{what} at {before!r} changed neither the step nor the compile "
                             f"within {CLICK} ms ({e})") from None
    changes = root.evaluate("root => root.__dlProbe.changes")
    times = {"first": changes[0][0], "settled": changes[-1][0]}
    for ms, where in changes:
        times.setdefault(where, ms)
    return times


def where(root) -> str:
    return root.evaluate(f"root => {{ {WHERE_JS} return where(root); }}")


def click(root, target, what: str | None = None) -> dict[str, float]:
    """Click a button (by its word) or a locator; wait until the viewer has moved and settled.

    Returns milliseconds from the click to the first DOM change, to the last one, and to
    the first change of each pane that changed (keyed by the pane's title word).
    """
    before = where(root)
    locator = button(root, target) if isinstance(target, str) else target
    locator.click()
    return _settle(root, before, what or f"clicking {target!r}")


def press(root, key: str) -> dict[str, float]:
    """Press a key with the viewer focused; wait until it has moved and settled."""
    before = where(root)
    root.page.keyboard.press(key)
    return _settle(root, before, f"pressing {key}")


def to_first_step(root) -> None:
    if button(root, "first").is_enabled():
        click(root, "first")
    assert step_of(root)[0] == 0


def to_last_step(root) -> None:
    if button(root, "last").is_enabled():
        click(root, "last")
    assert step_of(root)[0] == step_of(root)[1]


def go_to_step(root, target: int) -> None:
    to_first_step(root)
    while step_of(root)[0] < target:
        click(root, "forward")


def visible_nodes(root) -> int:
    return root.locator(".dl-graph svg g.node").evaluate_all(VISIBLE_NODES_JS)


def graph_count(root) -> int:
    """`k` of the graph pane's title `FX graph · k of n node(s)`."""
    m = re.search(r"(\d+) of (\d+) node", pane(root, "FX graph").locator(".dl-title").text_content())
    assert m, pane(root, "FX graph").text_content()
    return int(m[1])


def python(lab, code: str) -> str:
    """Run code in the notebook's kernel; what it printed."""
    return lab.execute(NOTEBOOK, code).strip()


# -- stepping and jumping -----------------------------------------------------------------------

def test_the_lesson_shows_a_viewer_at_its_first_step_with_a_drawn_graph(page):
    root = viewer(page)
    i, n = step_of(root)
    assert i == 0 and n > 0
    assert root.locator(".dl-graph svg g.node").count() > 0, "the graph was not drawn as SVG"
    for title in ("Source", "Bytecode", "Stack", "FX graph", "Guards"):
        assert pane(root, title).count() == 1, title
    assert page.dl_errors == []


def test_forward_and_back_move_the_step_and_the_stack_pane_shows_each_step_the_same_way(page):
    root = viewer(page)
    to_first_step(root)
    _, n = step_of(root)
    stack = pane(root, "Stack")
    going = {0: stack.text_content()}
    for i in range(1, n + 1):
        click(root, "forward")
        assert step_of(root) == (i, n)
        going[i] = stack.text_content()
    assert button(root, "forward").is_disabled() and button(root, "last").is_disabled()
    assert len(set(going.values())) > 1, "the stack pane never changed"
    for i in range(n - 1, -1, -1):
        click(root, "back")
        assert step_of(root) == (i, n)
        assert stack.text_content() == going[i], f"step {i} shows another stack coming back"
    assert button(root, "back").is_disabled()


def test_the_bytecode_pane_marks_the_instruction_of_the_step(page):
    root = viewer(page)
    to_first_step(root)
    for _ in range(4):
        click(root, "forward")
        opname = root.locator(".dl-caption code").nth(1).text_content().split()[0]
        current = pane(root, "Bytecode").locator(".dl-current")
        assert current.count() == 1
        assert re.search(rf"\d+ {opname}\b", current.text_content())


def test_next_node_reveals_one_more_node_of_the_drawing_each_time(page):
    root = viewer(page)
    to_first_step(root)
    shown = visible_nodes(root)
    assert shown == graph_count(root)
    jumps = 0
    while button(root, "next node").is_enabled():
        before = step_of(root)[0]
        click(root, "next node")
        assert step_of(root)[0] > before
        now = visible_nodes(root)
        assert now > shown, f"step {step_of(root)[0]}: the drawing still shows {now} node(s)"
        assert now == graph_count(root), "the drawing and the pane's title disagree"
        assert "new:" in pane(root, "FX graph").locator(".dl-title").text_content()
        assert root.locator(".dl-graph svg .dl-marks .dl-new").count() == now - shown
        shown, jumps = now, jumps + 1
    assert jumps > 0


def test_a_node_is_drawn_under_the_name_it_has_at_each_step(page, lab):
    # The call of x.sin() makes a node named after its op; STORE_FAST y renames it y.
    facts = json.loads(python(lab, "import json\n"
                                   "print(json.dumps([[n.name, getattr(n, 'created_name', n.name), "
                                   "getattr(n, 'renamed_at', None), n.step] "
                                   "for n in broken.compile('0/0_1').nodes]))"))
    renamed = [f for f in facts if f[2] is not None and f[0] != f[1]]
    if not renamed:
        pytest.fail("the recording names no node before its rename (schema 2's created_name, "
                    "renamed_at): the engine does not record renames yet")
    name, created, renamed_at, made = renamed[0]
    root = probe_viewer(page)
    go_to_step(root, made)
    label = root.locator(".dl-graph svg g.node:not([style*='none']) text").all_text_contents()
    assert created in label and name not in label
    go_to_step(root, renamed_at)
    label = root.locator(".dl-graph svg g.node:not([style*='none']) text").all_text_contents()
    assert name in label and created not in label


def test_next_guard_lists_a_new_guard_in_the_guards_pane(page):
    root = viewer(page)
    to_first_step(root)
    guards = pane(root, "Guards")
    before = guards.text_content()
    assert guards.locator("li.dl-new").count() == 0
    click(root, "next guard")
    assert step_of(root)[0] > 0
    assert guards.text_content() != before
    new = guards.locator("li.dl-new")
    assert new.count() > 0 and "L['" in new.first.text_content()  # a guard on an argument


def test_next_line_moves_to_another_source_line(page):
    root = viewer(page)
    to_first_step(root)
    source = pane(root, "Source")
    line = source.locator(".dl-current").text_content()
    click(root, "next line")
    assert step_of(root)[0] > 0
    assert source.locator(".dl-current").text_content() != line


def test_graph_break_jumps_to_the_break_and_says_so(page):
    root = probe_viewer(page)
    to_first_step(root)
    assert "Graph break here" not in root.locator(".dl-caption-bar").text_content()
    click(root, "graph break")
    assert step_of(root)[0] > 0
    assert "Graph break here" in root.locator(".dl-caption-bar").text_content()
    assert "print" in pane(root, "Source").locator(".dl-break").text_content()
    click(root, "return")
    assert step_of(root)[0] == 0


def test_choosing_another_compile_opens_it_at_its_first_step(page):
    root = lesson_break_viewer(page)   # [0/0], [0/0_1], [1/0]
    options = root.locator(".dl-compile option").all_text_contents()
    assert len(options) == 3 and options[2].startswith("[1/0]")
    before = where(root)
    root.locator(".dl-compile").select_option(index=2)
    _settle(root, before, "choosing [1/0]")
    assert step_of(root)[0] == 0 and compile_shown(root).startswith("[1/0]")
    assert "torch_dynamo_resume_in_g" in pane(root, "Source").text_content()
    root.locator(".dl-compile").select_option(index=0)


def test_play_steps_on_by_itself_until_paused(page):
    root = probe_viewer(page)
    to_first_step(root)
    button(root, "play").click()
    page.wait_for_function("root => /step [2-9]/.test(root.querySelector('.dl-caption .dl-stepno').textContent)",
                           arg=root.element_handle(), timeout=CLICK)
    button(root, "pause").click()
    paused = step_of(root)[0]
    page.wait_for_timeout(1000)   # more than two steps' worth of playing
    assert step_of(root)[0] == paused and button(root, "play").is_visible()


def test_a_pane_is_rewritten_only_when_what_it_shows_changes(page):
    root = viewer(page)
    go_to_step(root, 1)   # LOAD_FAST x, LOAD_METHOD sin, PRECALL: all on line 4
    root.evaluate("root => { root.querySelector('.dl-graph svg').__dlSame = true; }")
    for _ in range(2):
        times = click(root, "forward")
        assert "Source" not in times and "Stack" in times, times
    times = click(root, "last")
    assert "Source" in times
    assert root.evaluate("root => root.querySelector('.dl-graph svg').__dlSame === true"), \
        "the drawing was made again while stepping"


def test_fit_graph_scales_the_drawing_to_its_pane_and_back(page):
    root = viewer(page)
    view = root.locator(".dl-graph svg .dl-view")
    inside = """v => { const r = v.getBoundingClientRect(), b = v.closest('.dl-drawing').getBoundingClientRect();
        return r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1; }"""
    natural = view.get_attribute("transform")
    button(root, "fit graph").click()
    assert button(root, "fit graph").get_attribute("aria-pressed") == "true"
    assert view.evaluate(inside), "the fitted graph is not all inside its pane"
    button(root, "fit graph").click()
    assert button(root, "fit graph").get_attribute("aria-pressed") == "false"
    root.locator(".dl-caption-bar").click()
    page.keyboard.press("0")   # back to the first scale
    assert view.get_attribute("transform").endswith(natural.split(" ")[-1])


def test_the_original_and_modified_bytecode_and_the_guard_tree_unfold_below(page):
    root = probe_viewer(page)
    root.locator(".dl-compare > summary").click()
    root.locator(".dl-details:not(.dl-compare) > summary").click()
    assert "LOAD_GLOBAL" in pane(root, "Original bytecode").text_content()
    rewritten = pane(root, "Modified bytecode").text_content()
    assert "__compiled_fn_" in rewritten and "torch_dynamo_resume_in_g" in rewritten
    assert "RootGuardManager" in pane(root, "Guard tree").text_content()
    before = where(root)
    root.locator(".dl-compile").select_option(index=0)   # the attempt that was restarted
    _settle(root, before, "choosing [0/0]")
    assert "abandoned and restarted" in pane(root, "Modified bytecode").text_content()
    before = where(root)
    root.locator(".dl-compile").select_option(index=1)
    _settle(root, before, "choosing [0/0_1]")
    root.locator(".dl-compare > summary").click()
    root.locator(".dl-details:not(.dl-compare) > summary").click()


def test_bytecode_dynamo_cleaned_is_shown_beside_the_original_row_by_row(page):
    root = viewer_in(page, "def maybe")
    bytecode = pane(root, "Bytecode")
    assert "cleaned" in bytecode.locator(".dl-pair-head").text_content()
    while "IS_OP" not in bytecode.locator(".dl-current").text_content():
        click(root, "forward")
    current = bytecode.locator(".dl-current .dl-cell")
    assert current.count() == 2 and "IS_OP" in current.first.text_content()
    replaced = bytecode.locator(".dl-changed", has_text="NOT_NONE")
    assert replaced.count() == 1 and "None" in replaced.locator(".dl-cell").first.text_content()
    assert bytecode.locator(".dl-inserted").count() >= 1


def test_without_dot_the_graph_pane_lists_the_nodes_made_so_far_as_text(page):
    root = viewer_in(page, "no_dot = TraceViewer")
    graph = pane(root, "FX graph")
    assert root.locator(".dl-graph svg").count() == 0
    assert "apt-get install graphviz" in graph.text_content()
    to_first_step(root)
    assert graph.locator(".dl-graph-text li").count() == 0
    click(root, "next node")
    listed = graph.locator(".dl-graph-text li")
    assert listed.count() == graph_count(root) > 0
    assert listed.last.get_attribute("class") == "dl-new"
    assert listed.last.text_content().startswith("sin = call_function[torch.sin]")   # as at this step
    to_last_step(root)
    assert graph.locator(".dl-graph-text li").count() == graph_count(root)
    assert any(t.startswith("y = call_function[torch.sin]")                          # renamed by then
               for t in graph.locator(".dl-graph-text li").all_text_contents())


def test_a_recording_with_nothing_compiled_says_so(page):
    cell = page.locator(".jp-CodeCell").filter(
        has=page.locator(".jp-InputArea", has_text="TraceViewer(capture.Recording())")).first
    root = cell.locator(".dl-viewer")
    root.wait_for(timeout=CLICK)
    assert "Nothing was compiled" in root.text_content()
    assert button(root, "forward").is_disabled() and root.locator(".dl-compile").is_disabled()


# -- provenance: what made this, and back again -------------------------------------------------

def test_clicking_a_guard_goes_to_the_step_that_installed_it_and_return_comes_back(page):
    root = viewer(page)
    to_last_step(root)
    at = step_of(root)[0]
    guard = pane(root, "Guards").locator("li.dl-linked").first
    installed = int(re.search(r"step (\d+)", guard.get_attribute("title"))[1])
    text = guard.text_content()
    click(root, guard, "clicking a guard")
    assert step_of(root)[0] == installed != at
    assert "installed the guard" in root.locator(".dl-note").text_content()
    flashed = pane(root, "Guards").locator("li.dl-flash")
    assert flashed.count() == 1 and flashed.text_content() == text
    assert "dl-new" in flashed.get_attribute("class")   # installed by this very step
    click(root, "return")
    assert step_of(root)[0] == at


def test_clicking_a_node_in_the_drawing_or_the_graph_code_goes_to_the_step_that_made_it(page):
    root = viewer(page)
    to_last_step(root)
    last = step_of(root)[0]
    button(root, "fit graph").click()   # the whole graph in view: the drawing pans and zooms
    node = root.locator(".dl-graph svg g.node").nth(1)
    made = int(re.search(r"made at step (\d+)", node.locator("title").text_content())[1])
    click(root, node, "clicking a node of the drawing")
    assert step_of(root)[0] == made
    assert "made the graph node" in root.locator(".dl-note").text_content()
    assert root.locator(".dl-graph svg .dl-marks .dl-flash").get_attribute("data-node") == \
        node.get_attribute("data-node")
    to_last_step(root)
    root.locator(".dl-graph-code > summary").click()
    link = root.locator(".dl-graph-code .dl-node-link").last
    name = link.text_content()
    click(root, link, f"clicking {name} in the graph code")
    assert name in root.locator(".dl-note").text_content()
    assert step_of(root)[0] < last
    click(root, "return")
    assert step_of(root)[0] == last
    button(root, "fit graph").click()   # back to following the new node


def test_clicking_a_source_goes_to_where_it_was_first_read(page):
    root = viewer(page)
    go_to_step(root, 3)
    source = root.locator(".dl-stack ul .dl-src").first   # a local's source: L['x']
    name = source.get_attribute("data-source")
    click(root, source, f"clicking the source {name}")
    i = step_of(root)[0]
    assert 0 < i < 3
    note = root.locator(".dl-note").text_content()
    assert "first read here" in note and name in note
    flashed = pane(root, "Stack").locator("ol li.dl-flash")
    assert flashed.count() >= 1 and name in flashed.first.text_content()
    assert pane(root, "Source").locator(".dl-current").count() == 1
    # no earlier step had a reading of that source on its stack
    for _ in range(i):
        click(root, "back")
        on_stack = [el.get_attribute("data-source")
                    for el in pane(root, "Stack").locator("ol .dl-src").all()]
        assert name not in on_stack, step_of(root)


def test_a_recompile_reason_leads_to_the_guard_that_failed_in_the_earlier_compile(page):
    root = viewer_in(page, "def scale")
    options = root.locator(".dl-compile option").all_text_contents()
    later = next(k for k, t in enumerate(options) if t.startswith("[0/1]"))
    before = where(root)
    root.locator(".dl-compile").select_option(index=later)
    _settle(root, before, "choosing [0/1]")
    banner = root.locator(".dl-summary .dl-banner", has_text="Recompiled because a guard of [0/0] failed")
    # the compile menu's words for the failed guard, then Dynamo's own
    said = options[later].split(": ", 1)[1]
    assert banner.count() == 1 and said in banner.text_content(), (said, banner.text_content())
    assert "Dynamo's words:" in banner.text_content() and "size mismatch" in banner.text_content()
    click(root, banner.locator(".dl-recompile"), "the recompile reason")
    assert compile_shown(root).startswith("[0/0]")
    failed = pane(root, "Guards").locator("li.dl-flash")
    assert failed.count() == 1 and "L['x']" in failed.text_content()
    assert "failed and caused the recompile" in root.locator(".dl-note").text_content()
    click(root, "return")
    assert compile_shown(root).startswith("[0/1]")


# -- keys -----------------------------------------------------------------------------------------

def _notebook_state(page) -> tuple[int, int]:
    return page.evaluate("""() => {
        const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
        return [cells.length, cells.findIndex(c => c.classList.contains('jp-mod-active'))];
    }""")


def test_keys_step_and_jump_when_the_viewer_has_focus_and_the_notebook_stays_put(page):
    root = viewer(page)
    to_first_step(root)
    root.locator(".dl-caption-bar").click()   # focus the viewer (not a button)
    assert root.evaluate("root => root.contains(document.activeElement)")
    notebook = _notebook_state(page)
    press(root, "ArrowRight")
    assert step_of(root)[0] == 1
    press(root, "ArrowLeft")
    assert step_of(root)[0] == 0
    press(root, "End")
    assert step_of(root)[0] == step_of(root)[1]
    press(root, "Home")
    assert step_of(root)[0] == 0
    press(root, "g")   # next guard
    guard_step = step_of(root)[0]
    assert guard_step > 0 and pane(root, "Guards").locator("li.dl-new").count() > 0
    press(root, "n")   # next node
    node_step = step_of(root)[0]
    assert node_step > guard_step and "new:" in pane(root, "FX graph").locator(".dl-title").text_content()
    press(root, "l")   # next line
    assert step_of(root)[0] > node_step
    press(root, "Backspace")   # return, through the history of jumps
    assert step_of(root)[0] == node_step
    press(root, "Backspace")
    assert step_of(root)[0] == guard_step
    # JupyterLab saw none of these keys: no cell was added (b, l, n), none became active
    assert _notebook_state(page) == notebook
    titles = [button(root, w).get_attribute("title") for w in
              ("forward", "back", "first", "last", "next line", "next node", "next guard",
               "graph break", "return")]
    assert all(re.search(r"\((→|←|Home|End|L|N|G|B|Backspace)\)$", t) for t in titles), titles


# -- predict mode ---------------------------------------------------------------------------------

def test_predict_mode_asks_before_each_step_scores_and_python_reads_the_answers(page, lab):
    root = probe_viewer(page)
    to_first_step(root)
    python(lab, "probe.predictions = []")
    truth = json.loads(python(lab, "import json\nc = broken.compile('0/0_1')\n"
                                   "print(json.dumps([c.steps[1].stack[-1].kind, c.steps[2].guards_added != []]))"))
    toggle = button(root, "predict")
    toggle.click()
    box = root.locator(".dl-predict")
    assert box.is_visible() and toggle.get_attribute("aria-pressed") == "true"
    button(root, "forward").click()
    assert box.locator(".dl-question").is_visible()
    assert step_of(root)[0] == 0, "predict mode stepped before asking"
    # Step 1 pushes what LOAD_GLOBAL torch reads: answer it right.
    box.locator(".dl-chip", has_text=truth[0]).click()
    click(root, box.get_by_role("button", name="reveal"), "reveal")
    assert step_of(root)[0] == 1
    assert "Right" in box.locator(".dl-verdict").text_content()
    # Step 2 installs a guard (LOAD_ATTR sin on the global torch): answer "pushes nothing".
    assert truth[1]
    button(root, "forward").click()
    box.locator(".dl-chip", has_text="nothing").click()
    root.locator(".dl-predict .dl-question").click()    # focus stays in the viewer
    press(root, "Enter")
    assert step_of(root)[0] == 2
    verdict = box.locator(".dl-verdict").text_content()
    assert "Not quite" in verdict and "installed a guard" in verdict
    assert "1 of 2 right" in box.locator(".dl-score").text_content()
    deadline = time.monotonic() + 10
    while True:
        answers = json.loads(python(lab, "import json; print(json.dumps(probe.predictions))"))
        if len(answers) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [a["correct"] for a in answers] == [True, False]
    assert [a["step"] for a in answers] == [1, 2] and answers[0]["compile"] == "0/0_1"
    assert answers[0]["answer"]["pushes"] == truth[0] and "guard" in answers[1]["truth"]["does"]
    assert python(lab, "print(probe.predict)") == "True"
    button(root, "predict").click()
    assert not box.is_visible()
    click(root, "forward")   # no question when predict mode is off
    assert step_of(root)[0] == 3


# -- text from the program ------------------------------------------------------------------------

UNSAFE_IN_VIEWERS_JS = """roots => {
    const allowed = new Set(['DIV', 'SPAN', 'PRE', 'CODE', 'B', 'UL', 'OL', 'LI', 'DETAILS',
        'SUMMARY', 'BUTTON', 'SELECT', 'OPTION', 'INPUT', 'svg', 'g', 'title', 'text', 'path',
        'polygon', 'ellipse', 'CANVAS', 'LABEL']);   // the viewer's own: CANVAS the graph's overview, LABEL a switch
    const found = [];
    for (const root of roots) for (const el of root.querySelectorAll('*')) {
        if (!allowed.has(el.tagName)) found.push('tag ' + el.tagName);
        for (const a of el.attributes) if (/^on/i.test(a.name)) found.push('attribute ' + a.name);
    }
    return found;
}"""


# The most characters Dynamo wrote for one compile of the recording a viewer shows: its
# guards, guard tree, graph code and listings, and the source lines shown beside them.
DYNAMO_TEXT_JS = """v => {
  let e = v; while (e && !e.dynamoLab) e = e.parentElement;
  const len = (t) => (t ? String(t).length : 0);
  return Math.max(0, ...e.dynamoLab.viewer.rec.compiles.map((c) =>
    len(c.guard_tree) + len(c.graph_code) + len(c.modified_bytecode)
    + (c.guards || []).reduce((n, g) => n + len(g), 0)
    + (c.guard_details || []).reduce((n, g) => n + len(g.text) + len(g.line), 0)
    + (c.source_lines || []).reduce((n, l) => n + len(l), 0)
    + (c.resume_functions || []).reduce((n, r) => n + len(r.bytecode), 0)));
}"""


def test_every_hostile_program_shows_as_inert_text_at_every_step(page):
    from hostile import TEXT

    roots = hostile_viewers(page)
    assert len(roots) == 5, "one viewer per hostile program"
    seen = ""
    for root in roots:
        root.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
        for k in range(root.locator(".dl-compile option").count()):
            root.locator(".dl-compile").select_option(index=k)
            n = step_of(root)[1]
            root.locator(".dl-caption-bar").click()
            for _ in range(n + 1):
                seen += root.text_content()
                page.keyboard.press("ArrowRight")
            assert step_of(root)[0] == n
    found = page.locator(".dl-viewer").evaluate_all(UNSAFE_IN_VIEWERS_JS)
    assert found == [], found[:20]
    assert page.evaluate("window.__dlAlerts") == []
    assert page.locator(".dl-viewer dl-evil, .dl-viewer img, .dl-viewer script").count() == 0
    assert TEXT in seen, "the hostile text itself is shown, as text"
    ended = [r for r in roots if "Ended by the exception" in r.locator(".dl-header").text_content()]
    assert len(ended) == 1 and TEXT[:40] in ended[0].locator(".dl-header").text_content()
    # What Dynamo wrote is kept whole (a guard on a 100 000-character str holds that str),
    # so a pane may be as long as Dynamo's texts of a compile, but never repeat them.
    for root in roots:
        sizes = root.locator(".dl-pane").evaluate_all("ps => ps.map(p => p.textContent.length)")
        written = root.evaluate(DYNAMO_TEXT_JS)
        assert max(sizes) < written + 200_000, (sizes, written)


# -- speed, themes, the picture ---------------------------------------------------------------------

def test_click_to_pane_latency_in_the_page_is_reported(page):
    root = viewer(page)
    to_first_step(root)
    settled, stack = [], []
    way = "forward"
    while len(settled) < LATENCY_CLICKS:   # to the last step and back, as often as needed
        if button(root, way).is_disabled():
            way = "back" if way == "forward" else "forward"
        times = click(root, way)
        settled.append(times["settled"])
        if "Stack" in times:
            stack.append(times["Stack"])
    assert stack, "no click changed the stack pane"
    print(f"\nviewer latency in Chromium, {len(settled)} clicks of forward/back: "
          f"click to stack pane updated, median {statistics.median(stack):.1f} ms; "
          f"click to every pane settled, median {statistics.median(settled):.1f} ms, "
          f"max {max(settled):.1f} ms")


CONTRAST_JS = """root => {
    const rgb = s => (s.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
    const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                       return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const pairs = [];
    for (const el of root.querySelectorAll('.dl-pane-body, .dl-title, .dl-caption')) {
        let bg = el, colour;
        while (bg && (colour = getComputedStyle(bg).backgroundColor) && /rgba\\(.*, 0\\)|transparent/.test(colour)) bg = bg.parentElement;
        const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(colour || 'rgb(255,255,255)'))];
        pairs.push((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
    }
    return pairs;
}"""


def _theme(page, name: str) -> None:
    page.get_by_role("menuitem", name="Settings", exact=True).click()
    page.locator(".lm-Menu-item", has=page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$"))).hover()
    page.locator(".lm-Menu-item", has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{name}$"))).click()
    page.wait_for_function(f"() => document.body.dataset.jpThemeName === {name!r}", timeout=CLICK)


def _screenshot(page, root, path: Path) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)      # no hover or focus highlight in the picture
    # The whole viewer in the picture: a window tall enough for it (the notebook scrolls
    # inside the page, so an element screenshot would stop at the window's edge).
    height = root.bounding_box()["height"]
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 300, 2400)})
    try:
        root.scroll_into_view_if_needed()
        root.screenshot(path=str(path), animations="disabled", scale="css")
    finally:
        page.set_viewport_size(VIEWPORT)


def test_the_viewer_reads_in_the_light_and_the_dark_theme_and_its_screenshot_is_saved(page, tmp_path):
    root = viewer(page)
    to_first_step(root)
    click(root, "next node")   # the input appears
    click(root, "next node")   # the call of x.sin(): a node, a tensor on top of the stack
    light = root.evaluate(CONTRAST_JS)
    shot = tmp_path / "viewer.png"
    _screenshot(page, root, shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _theme(page, "JupyterLab Dark")
    try:
        dark = root.evaluate(CONTRAST_JS)
        _screenshot(page, root, tmp_path / "viewer-dark.png")
        background = root.evaluate("r => getComputedStyle(r.querySelector('.dl-pane')).backgroundColor")
    finally:
        _theme(page, "JupyterLab Light")
    print(f"\nscreenshots: {shot} and {tmp_path / 'viewer-dark.png'}")
    assert min(light) >= 4.5 and min(dark) >= 4.5, (light, dark)
    assert background != root.evaluate("r => getComputedStyle(r.querySelector('.dl-pane')).backgroundColor")
    if os.environ.get("DYNAMO_LAB_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
        print(f"updated {SCREENSHOT}")


# -- the kernel busy, gone, and the notebook reopened ------------------------------------------------

def _kernel_state(lab) -> str:
    kernel = lab.session(NOTEBOOK)["kernel"]["id"]
    return lab.api(f"api/kernels/{kernel}")["execution_state"]


def test_stepping_goes_on_while_the_kernel_sleeps_and_python_catches_up_after(page, lab):
    root = probe_viewer(page)
    to_first_step(root)
    sleeper = threading.Thread(target=python, args=(lab, "import time; time.sleep(10)"))
    sleeper.start()
    try:
        deadline = time.monotonic() + 10
        while _kernel_state(lab) != "busy":
            assert time.monotonic() < deadline, "the kernel never became busy"
            time.sleep(0.05)
        started = time.monotonic()
        for i in range(1, 5):
            times = click(root, "forward")
            assert step_of(root)[0] == i and times["settled"] < 1000
        assert time.monotonic() - started < 5, "stepping waited for the kernel"
        # (not the server's execution_state: JupyterLab's widget messages go to a kernel
        # subshell, whose own idle status the server reports while the cell still sleeps)
        assert sleeper.is_alive(), "the clicks should have happened while the cell slept"
    finally:
        sleeper.join()
    deadline = time.monotonic() + 10
    while python(lab, "print(probe.compile, probe.step)") != "1 4":
        assert time.monotonic() < deadline, "Python never learned where the viewer is"
        time.sleep(0.2)


def test_a_saved_notebook_reopens_with_the_viewer_where_it_was_left_and_steps_without_a_kernel(
        page, lab):
    root = probe_viewer(page)
    go_to_step(root, 6)
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 20
    while True:
        try:
            saved = json.loads((lab.root / NOTEBOOK).read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            # Read while the server was writing it (it rewrites the file in place): read again.
            assert time.monotonic() < deadline, "the saved notebook never became whole JSON"
            time.sleep(0.3)
            continue
        states = saved["metadata"].get("widgets", {}).get(
            "application/vnd.jupyter.widget-state+json", {}).get("state", {})
        steps = [m["state"].get("step") for m in states.values()
                 if m["state"].get("compile") == 1
                 and m["state"].get("titles", ["", ""])[1].startswith("[0/0_1] g")]
        if 6 in steps or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert 6 in steps, "the saved notebook does not hold the viewer's step"
    # The kernel goes away: the open page steps on.
    lab.delete(f"api/sessions/{lab.session(NOTEBOOK)['id']}")
    page.locator("#jp-main-statusbar").get_by_text(re.compile("No Kernel|Unknown|Dead|Disconnected")) \
        .first.wait_for(timeout=30_000)
    click(root, "forward")
    assert step_of(root)[0] == 7
    click(root, "back")
    # Reopened: a new kernel, no models in it; the viewers come from the saved state.
    open_notebook(page, lab)
    # A reopened notebook renders every viewer from the saved state before this one: as
    # long as opening it, not a click, on a loaded machine.
    root = probe_viewer(page, timeout=KERNEL_START)
    assert step_of(root)[0] == 6 and compile_shown(root).startswith("[0/0_1]")
    click(root, "forward")
    assert step_of(root)[0] == 7
