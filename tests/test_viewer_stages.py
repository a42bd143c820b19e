"""The after-Dynamo view in a real browser: the exported page and JupyterLab, on the held-out programs.

The programs of tests/stages_programs.py are recorded with `after_dynamo=True` and the real
Inductor (caches off, so every stage is built): a two-layer MLP with `requires_grad` weights
under `inductor`, `gelu` under `aot_eager_decomp_partition`, a fused pointwise chain. Debian's
Chromium (Playwright) opens each as a page from file:// and, in JupyterLab, as the widget
`%%capture_trace --after-dynamo` shows. In both, every unit of every stage (each forward and
backward node, each kernel) is hovered: it must light the Dynamo nodes it came from in the FX
graph and name the steps that made them, unless the recording marks it invented; a click, and
Enter on a focused unit, go to the step that made it; a step marks what its new nodes became;
a Dynamo node hovered in the graph lights what it became. A stage served from a warm cache
says its links are unavailable; a recording without stages shows no view. The pure functions
are tested by node on the same recordings (tests/js/stages.test.mjs).

Inductor compiles C++ here (seconds a program): run this file under the heavy lock.

    .venv/bin/python -m pytest tests/test_viewer_stages.py -s     # -s prints the screenshots' paths
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import torch

import capture
from bench import lab_server
from capture import internals
from capture.stages import steps_of
from stages_programs import W1, W2, gelu_block, inputs, mlp, pointwise_chain
from widgets.viewer import page as page_export

pytestmark = [pytest.mark.timeout(900)]

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")
READY = 20_000      # ms: a page decoded its recording and painted
RUN_ALL = 300_000   # ms: the notebook's cells, three Inductor compiles among them
STEP = re.compile(r"step (\d+) / (\d+)")

# name -> (function, backend, whether a backward runs)
PROGRAMS = {
    "mlp": (mlp, "inductor", True),
    "gelu_block": (gelu_block, "aot_eager_decomp_partition", True),
    "pointwise_chain": (pointwise_chain, "inductor", False),
}


def _record(name: str) -> capture.Recording:
    fn, backend, backward = PROGRAMS[name]
    torch._dynamo.reset()
    W1.grad = W2.grad = None
    compiled = torch.compile(fn, backend=backend)
    with capture.record(after_dynamo=True) as rec:
        out = compiled(inputs(name))
        if backward:
            out.sum().backward()   # the backward graph is compiled at the first backward()
    return rec


@pytest.fixture(scope="module")
def recordings() -> dict[str, capture.Recording]:
    """The held-out programs, every stage built; a warm-cache run; a recording without stages."""
    out = {}
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        for name in PROGRAMS:
            out[name] = _record(name)
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="dl-stages-cache-")
    try:
        # the caches left on while recording (after_dynamo turns them off): the first run
        # fills them, the second, in the same cache dir, is served from them
        compile_caches = internals.compile_caches
        internals.compile_caches = lambda: []
        try:
            _record("pointwise_chain")
            out["warm"] = _record("pointwise_chain")
        finally:
            internals.compile_caches = compile_caches
    finally:
        if saved is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved
    torch._dynamo.reset()
    out["none"] = capture.trace(pointwise_chain, inputs("pointwise_chain"))
    torch._dynamo.reset()
    assert all(s.from_cache for s in out["warm"].compiles[0].stages), "the second run was not served from the cache"
    return out


def test_the_pure_functions_read_the_held_out_programs(recordings, tmp_path):
    if NODE is None:
        pytest.fail("node is not installed: ./lab test installs it (apt-get install nodejs)")
    for name in PROGRAMS:
        (tmp_path / f"stages_{name}.json").write_text(recordings[name].to_json(), encoding="utf-8")
    run = subprocess.run([NODE, "--test", str(HERE / "js" / "stages.test.mjs")], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "DL_FIXTURES": str(tmp_path)})
    summary = "\n".join(line for line in run.stdout.splitlines() if line.startswith("# "))
    assert run.returncode == 0, f"node --test failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert "# fail 0" in summary and "# skipped 0" in summary, summary


# -- reading and driving the view ----------------------------------------------------------

# Hover every unit of the stage shown (mouseover, as a pointer does) and note what lights up.
COLLECT_JS = """root => {
    const el = root.querySelector('.dl-stages');
    const out = [];
    for (const row of el.querySelectorAll('.dl-stage-units li[data-unit]')) {
        row.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
        out.push({
            name: row.querySelector('code').textContent,
            invented: row.classList.contains('dl-invented'),
            node: row.dataset.node == null ? null : Number(row.dataset.node),
            lit: [...root.querySelectorAll('.dl-graph g.node.dl-lit')].map(n => Number(n.dataset.node)).sort((a, b) => a - b),
            litLines: [...el.querySelectorAll('.dl-stage-code .dl-row.dl-lit .dl-lineno')].map(n => Number(n.textContent)),
            info: el.querySelector('.dl-stage-info').textContent,
        });
        row.dispatchEvent(new MouseEvent('mouseout', {bubbles: true, relatedTarget: root}));
    }
    return out;
}"""

# The code as shown, line by line (without the numbers), and whether any line is cut.
CODE_JS = """root => {
    const pre = root.querySelector('.dl-stages .dl-stage-code');
    const rows = [...pre.querySelectorAll('.dl-row')];
    return {
        text: rows.map(r => [...r.childNodes].slice(2).map(n => n.textContent).join('')).join('\\n'),
        cut: rows.filter(r => r.scrollWidth > r.clientWidth + 1).length
            + (pre.parentElement.scrollWidth > pre.parentElement.clientWidth + 1 ? 1 : 0),
    };
}"""


def node_index(c: capture.Compile) -> dict[str, int]:
    """A Dynamo node's name -> its index in `c.nodes`, the one in the final graph first."""
    out: dict[str, int] = {}
    for k, n in enumerate(c.nodes):
        if n.name not in out or (n.in_graph and not c.nodes[out[n.name]].in_graph):
            out[n.name] = k
    return out


def step_of(root) -> int:
    m = STEP.search(root.locator(".dl-caption .dl-stepno").first.text_content())
    assert m, "no step label"
    return int(m.group(1))


def go(root, step: int) -> None:
    """The step through the handle index.js gives tests (`el.dynamoLab.viewer`)."""
    root.evaluate("(r, i) => r.parentElement.dynamoLab.viewer.go(0, i)", step)
    root.page.wait_for_function("([r, i]) => r.querySelector('.dl-caption .dl-stepno').textContent.startsWith(`step ${i} `)",
                                arg=[root.element_handle(), step], timeout=5_000)


def open_stages(root) -> None:
    toggle = root.locator(".dl-stages-toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"


def check_every_unit(root, rec: capture.Recording) -> int:
    """Every unit of every stage of the view lights its Dynamo nodes and names their steps (or
    says it is invented); a click and Enter go to the step that made it. The units checked."""
    c = rec.compiles[0]
    index = node_index(c)
    open_stages(root)
    go(root, len(c.steps) - 1)   # every node of the graph drawn
    tabs = root.locator(".dl-stage-tab")
    assert tabs.count() == len(c.stages)
    checked = 0
    for j, stage in enumerate(c.stages):
        tabs.nth(j).click()
        assert tabs.nth(j).get_attribute("aria-selected") == "true"
        shown = root.evaluate(CODE_JS)
        assert shown["text"] == stage.code, f"{stage.name}: the code is not shown exactly"
        assert shown["cut"] == 0, f"{stage.name}: {shown['cut']} line(s) cut"
        rows = root.evaluate(COLLECT_JS)
        assert [r["name"] for r in rows] == [u.name for u in stage.units]
        for unit, row in zip(stage.units, rows):
            what = f"{stage.name} ({stage.graph}) {unit.name}"
            if unit.invented:
                assert row["invented"] and row["node"] is None and not row["lit"], what
                assert "invented" in row["info"], what
                continue
            steps = steps_of(c, unit)
            ks = sorted({index[n] for n in unit.dynamo_nodes})
            assert steps and row["lit"] == ks, (what, row["lit"], ks)
            first = min(ks, key=lambda k: (c.nodes[k].step, k))
            assert row["node"] == first, what
            for s in steps:
                assert f"step {s}" in row["info"], (what, row["info"])
            assert set(unit.lines) <= set(row["litLines"]), what
            checked += 1
        linked = [v for v, u in enumerate(stage.units) if not u.invented]
        if not linked:
            continue
        # a click goes to the step that made the unit's first Dynamo node, and the graph marks it
        unit = stage.units[linked[0]]
        to = min(steps_of(c, unit))
        go(root, 0)
        root.locator(f".dl-stage-units li[data-unit='{linked[0]}']").click(position={"x": 4, "y": 4})
        root.page.wait_for_function("([r, i]) => r.querySelector('.dl-caption .dl-stepno').textContent.startsWith(`step ${i} `)",
                                    arg=[root.element_handle(), to], timeout=5_000)
        assert root.locator(".dl-graph .dl-marks .dl-flash").count() == 1
        # ... and so does Enter on a focused unit (the last linked one)
        unit = stage.units[linked[-1]]
        to = min(steps_of(c, unit))
        go(root, len(c.steps) - 1 if to != len(c.steps) - 1 else 0)
        row = root.locator(f".dl-stage-units li[data-unit='{linked[-1]}']")
        row.focus()
        root.page.keyboard.press("Enter")
        assert step_of(root) == to, f"Enter on {unit.name} went to step {step_of(root)}, not {to}"
        go(root, len(c.steps) - 1)
    return checked


def check_step_marks(root, rec: capture.Recording) -> None:
    """At the step that made a node, what the node became is marked in every stage; hovering
    the node in the FX graph lights the same units."""
    c = rec.compiles[0]
    open_stages(root)
    made = [n for n in c.nodes if n.op == "call_function" and n.in_graph][0]
    k = node_index(c)[made.name]
    go(root, made.step)
    tabs = root.locator(".dl-stage-tab")
    for j, stage in enumerate(c.stages):
        tabs.nth(j).click()
        made_here = {n.name for n in c.nodes if n.step == made.step}
        expected = [u.name for u in stage.units if made_here & set(u.dynamo_nodes)]
        marked = root.evaluate("r => [...r.querySelectorAll('.dl-stage-units li.dl-new code:first-child')].map(x => x.textContent)")
        assert marked == expected, (stage.name, marked, expected)
        assert ("dl-now" in (tabs.nth(j).get_attribute("class") or "")) == bool(expected)
        node = root.locator(f".dl-graph g.node[data-node='{k}']")
        node.dispatch_event("mouseover")
        lit = root.evaluate("r => [...r.querySelectorAll('.dl-stage-units li.dl-lit code:first-child')].map(x => x.textContent)")
        assert lit == [u.name for u in stage.units if made.name in u.dynamo_nodes], stage.name
        assert "became" in root.locator(".dl-stage-info").text_content()
        node.dispatch_event("mouseout")
    assert "this step made" in root.locator(".dl-stages-summary").text_content()


# -- the page ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


def open_page(browser, rec: capture.Recording, path: Path, viewport=(1400, 900), dark=False):
    page_export.write_html(rec, path)
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                  color_scheme="dark" if dark else "light")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)
    page.dl_errors = errors
    return context, page, page.locator(".dl-viewer").first


@pytest.mark.browser
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_page_links_every_unit_of_every_stage_back_to_a_step(browser, recordings, name, tmp_path):
    context, page, root = open_page(browser, recordings[name], tmp_path / f"{name}.html")
    try:
        # folded at first; its summary says what is there
        assert root.locator(".dl-stages").is_visible()
        assert root.locator(".dl-stage-box").is_hidden()
        assert f"{len(recordings[name].compiles[0].stages)} stages" in root.locator(".dl-stages-head").text_content()
        checked = check_every_unit(root, recordings[name])
        assert checked >= len(recordings[name].compiles[0].stages)
        check_step_marks(root, recordings[name])
        # a real pointer over a unit, then off it
        row = root.locator(".dl-stage-units li.dl-linked").first
        row.hover()
        assert root.locator(".dl-graph g.node.dl-lit").count() >= 1
        root.locator(".dl-stages-head").hover()
        assert root.locator(".dl-graph g.node.dl-lit").count() == 0
        assert page.dl_errors == []
    finally:
        context.close()


@pytest.mark.browser
def test_the_mlp_shows_what_the_partitioner_saved_and_its_kernels_with_their_code(browser, recordings, tmp_path):
    rec = recordings["mlp"]
    c = rec.compiles[0]
    context, page, root = open_page(browser, rec, tmp_path / "mlp.html")
    try:
        open_stages(root)
        tabs = root.locator(".dl-stage-tab")
        forward = next(j for j, s in enumerate(c.stages) if s.name == "aot_forward")
        tabs.nth(forward).click()
        saved = root.locator(".dl-stage-facts .dl-saved .dl-stage-chip").all_text_contents()
        assert saved == list(c.stages[forward].saved) and "relu" in saved
        assert "saved" in root.locator(".dl-stage-units li[data-unit]").filter(has_text="relu").first.text_content()
        code = next(j for j, s in enumerate(c.stages) if s.name == "inductor_output_code")
        tabs.nth(code).click()
        relu = next(v for v, u in enumerate(c.stages[code].units) if u.name == "cpp_fused_relu_0")
        root.locator(f".dl-stage-units li[data-unit='{relu}']").hover()
        lit = root.locator(".dl-stage-code .dl-row.dl-lit").all_text_contents()
        assert any("cpp_fused_relu_0 = async_compile" in line for line in lit)
        assert any("clamp_min" in line for line in lit)   # the kernel's C++ is lit with it
        assert any(re.search(r"cpp_fused_relu_0\(", line) for line in lit)
        assert root.locator(".dl-stage-code .dl-row.dl-lit").first.is_visible()   # scrolled to it
    finally:
        context.close()


@pytest.mark.browser
def test_a_stage_from_a_warm_cache_says_its_links_are_unavailable(browser, recordings, tmp_path):
    context, page, root = open_page(browser, recordings["warm"], tmp_path / "warm.html")
    try:
        open_stages(root)
        for j in range(root.locator(".dl-stage-tab").count()):
            tab = root.locator(".dl-stage-tab").nth(j)
            assert "(cache)" in tab.text_content()
            tab.click()
            banner = root.locator(".dl-stage-facts .dl-banner").text_content()
            assert "Links unavailable" in banner and "cache" in banner and "= False" in banner
            assert root.locator(".dl-stage-units [data-node]").count() == 0
            assert root.locator(".dl-stage-code .dl-row").count() > 1   # the code is still shown
    finally:
        context.close()


@pytest.mark.browser
def test_a_recording_without_stages_shows_no_after_dynamo_view(browser, recordings, tmp_path):
    context, page, root = open_page(browser, recordings["none"], tmp_path / "none.html")
    try:
        assert root.locator(".dl-stages").count() == 1 and root.locator(".dl-stages").is_hidden()
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [(1400, 900), (1000, 800)])
@pytest.mark.parametrize("dark", [False, True])
def test_opening_the_view_leaves_the_panes_their_room_and_cuts_nothing(browser, recordings, tmp_path, viewport, dark):
    rec = recordings["mlp"]
    context, page, root = open_page(browser, rec, tmp_path / "mlp.html", viewport, dark)
    try:
        go(root, next(n.step for n in rec.compiles[0].nodes if n.name == "h"))
        panes = root.locator(".dl-panes")
        before = panes.bounding_box()["height"]
        open_stages(root)
        assert panes.bounding_box()["height"] >= before - 1, "opening the view squeezed the panes"
        box = root.locator(".dl-stage-box").bounding_box()
        assert box["height"] > 200 and box["width"] <= viewport[0]
        code = next(j for j, s in enumerate(rec.compiles[0].stages) if s.name == "inductor_output_code")
        root.locator(".dl-stage-tab").nth(code).click()
        root.locator(".dl-stage-units li.dl-new").first.hover()
        assert root.evaluate(CODE_JS)["cut"] == 0
        overflow = root.evaluate("r => [...r.querySelectorAll('.dl-stages *')].filter(e => e.getBoundingClientRect().right > r.getBoundingClientRect().right + 1).length")
        assert overflow == 0
        shot = tmp_path / f"stages-{viewport[0]}x{viewport[1]}-{'dark' if dark else 'light'}.png"
        page.screenshot(path=str(shot))
        print(f"\nscreenshot: {shot}")
    finally:
        context.close()


# -- JupyterLab --------------------------------------------------------------------------------

NOTEBOOK = "after_dynamo.ipynb"
CELLS = [
    "import sys, torch\n"
    f"sys.path.insert(0, {str(HERE)!r})\n"
    "from stages_programs import W1, W2, gelu_block, inputs, mlp, pointwise_chain\n"
    "# every stage built, none served from a cache of an earlier run\n"
    "torch._inductor.config.fx_graph_cache = False\n"
    "torch._functorch.config.enable_autograd_cache = False\n"
    "%load_ext widgets",
    '%%capture_trace --after-dynamo -o rec_mlp\nW1.grad = W2.grad = None\n'
    'out = torch.compile(mlp, backend="inductor")(inputs("mlp"))\nout.sum().backward()',
    '%%capture_trace --after-dynamo -o rec_gelu\n'
    'out = torch.compile(gelu_block, backend="aot_eager_decomp_partition")(inputs("gelu_block"))\nout.sum().backward()',
    '%%capture_trace --after-dynamo -o rec_chain\n'
    'out = torch.compile(pointwise_chain, backend="inductor")(inputs("pointwise_chain"))',
    '%%capture_trace -o rec_plain\nout = torch.compile(pointwise_chain, backend="eager")(inputs("pointwise_chain"))',
]


@pytest.fixture(scope="module")
def lab_page(browser, tmp_path_factory):
    """A notebook of the held-out programs under %%capture_trace --after-dynamo, run in JupyterLab."""
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    root.mkdir()
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
                    for s in CELLS],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (root / NOTEBOOK).write_text(json.dumps(nb), encoding="utf-8")
    with lab_server.running(root, home / "state") as lab:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(lab.url(f"lab/tree/{NOTEBOOK}"))
            page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
            page.locator(".jp-Notebook .jp-Cell").first.click()
            lab_server.run_all(page)
            page.wait_for_function(
                """() => {
                    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
                    return prompts.length && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
                }""", timeout=RUN_ALL)
            try:
                page.wait_for_function("() => document.querySelectorAll('.dl-viewer[data-ready=\"1\"]').length >= 4", timeout=READY)
            except Exception:
                stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
                raise AssertionError("four viewers did not render:\n" + "\n".join(stderr.all_inner_texts())) from None
            page.dl_errors = errors
            yield page
        finally:
            page.close()


def lab_viewer(page, cell: str):
    root = page.locator(".jp-CodeCell").filter(has=page.locator(".jp-InputArea", has_text=cell)).first.locator(".dl-viewer")
    page.wait_for_function("r => r.dataset.ready === '1'", arg=root.element_handle(), timeout=READY)
    root.scroll_into_view_if_needed()
    return root


def _recording_of(root) -> capture.Recording:
    """The recording the widget decoded, exactly as the engine wrote it."""
    return capture.Recording.from_json(json.dumps(root.evaluate("r => r.parentElement.dynamoLab.viewer.rec")))


@pytest.mark.browser
@pytest.mark.parametrize("cell", ["-o rec_mlp", "-o rec_gelu", "-o rec_chain"])
def test_in_jupyterlab_every_unit_of_every_stage_links_back_to_a_step(lab_page, cell):
    root = lab_viewer(lab_page, cell)
    rec = _recording_of(root)
    (c,) = rec.compiles
    assert c.stages and not any(s.from_cache for s in c.stages)
    assert check_every_unit(root, rec) >= len(c.stages)
    check_step_marks(root, rec)
    # the arrows the learner steps with do not leave the viewer while a unit has the focus
    root.locator(".dl-stage-units li.dl-linked").first.focus()
    before = step_of(root)
    lab_page.keyboard.press("ArrowLeft" if before else "ArrowRight")
    assert step_of(root) != before
    assert lab_page.dl_errors == []


@pytest.mark.browser
def test_in_jupyterlab_a_recording_without_stages_shows_no_view(lab_page):
    root = lab_viewer(lab_page, "-o rec_plain")
    assert root.locator(".dl-stages").is_hidden()
