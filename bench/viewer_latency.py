"""How fast the viewer answers: in Chromium, from display to first paint and from a click to
the next painted frame; in the kernel, what it sends and what moving the step costs.

Three recordings: the tour's first cell (notebooks/00_tour.ipynb, `f(x) = x.sin() * 2 + 1`),
`gpt2-4` (transformers' GPT-2, 4 layers, bench/models.py: about 19 000 steps; needs
`pip install -e .[bench]`), a loop of 20 000 iterations over Python ints (about 140 000
steps, `max_steps` raised) and `chain-20k`, `x = x + 1` 20 000 times (a 20 002-node graph,
140 000 steps; its layout is layout.py's layered one, not dot's). Each is saved as JSON; a JupyterLab of its own
(bench/lab_server.py) opens one notebook per recording in Debian's Chromium (Playwright),
whose cells read the JSON back and display a `TraceViewer`. In the page:

- display to first paint: from the kernel's `display(viewer)` to the first frame painted
  with the viewer in it (both wall clocks of this machine); building the viewer's state
  in the kernel (the engine's JSON, gzip, graph layouts) is reported beside it;
- click to paint: Playwright clicks forward and back at 20 positions spread over the
  compile (reached through the slider, not timed), and next node / guard / line from the
  same positions; each time runs from the click event to the frame after the viewer's
  update (requestAnimationFrame, then a task);
- bytes sent: the recording and the layouts as the widget sends them, per step.

    .venv/bin/python bench/viewer_latency.py [--only tour,gpt2-4,loop-140k] [--json]

Targets: click to paint median <= 16 ms and p95 <= 50 ms; gpt2-4 display to first paint
<= 1 s; <= 200 bytes sent per step. Medians from one run: a benchmark, not a test.

`measure(recording, positions)` is the kernel's side alone, for bench/run.py: building the
state, and `viewer.step = i` (a trait and a message of a few bytes; the browser renders).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import capture  # noqa: E402
from bench.lab_server import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from widgets import TraceViewer  # noqa: E402
from widgets.viewer import viewer_state  # noqa: E402

POSITIONS = 20

# On the viewer's root: for every click on one of its buttons, the time from the click event
# to the first task after the next frame (the frame that shows the update).
PROBE_JS = """root => {
    const probe = root.__dlBench = {clicks: []};
    root.addEventListener('click', e => {
        const target = e.target.closest('button, .dl-caption .dl-stepno');
        if (!target) return;
        const t0 = e.timeStamp;   // when the browser took the click in
        const reached = performance.now() - t0;   // after JupyterLab's capturing handlers
        let handled = reached;
        // right after the viewer's own handler (on the button), before the click bubbles on
        root.addEventListener('click', () => { handled = performance.now() - t0; }, {once: true});
        requestAnimationFrame(() => setTimeout(() => probe.clicks.push({
            label: target.textContent, reached, handled, painted: performance.now() - t0}), 0));
    }, true);
    root.addEventListener('keydown', e => {
        const t0 = e.timeStamp;
        requestAnimationFrame(() => setTimeout(() => probe.clicks.push({
            label: 'key ' + e.key, reached: 0, handled: 0, painted: performance.now() - t0}), 0));
    }, true);
}"""

SLIDE_JS = """(root, i) => {
    const s = root.querySelector('.dl-slider');
    s.value = String(i);
    s.dispatchEvent(new Event('input'));
}"""


# -- the recordings ---------------------------------------------------------------------------

def _tour(x):
    y = x.sin()
    return y * 2 + 1


def _loop(x):
    total = 0
    for i in range(20_000):
        total += i
    return x + total


def _chain(x):
    for _ in range(20_000):
        x = x + 1
    return x


def record(name: str) -> capture.Recording:
    import torch

    if name == "tour":
        return capture.trace(_tour, torch.ones(3))
    if name == "gpt2-4":
        from bench.models import build

        model, args = build("gpt2-4")
        with torch.no_grad():
            return capture.trace(model, *args)
    if name == "loop-140k":
        return capture.trace(_loop, torch.ones(3), max_steps=200_000)
    if name == "chain-20k":   # a 20,000-node graph: laid out in layers, not by dot
        return capture.trace(_chain, torch.ones(3), max_steps=400_000)
    raise ValueError(f"unknown recording {name!r}: tour, gpt2-4, loop-140k or chain-20k")


# -- the kernel's side (bench/run.py) -----------------------------------------------------------

def measure(recording: capture.Recording, positions: int = POSITIONS) -> dict[str, object]:
    """Build a viewer on the largest compile and move `viewer.step` over it, in Python."""
    k = max(range(len(recording.compiles)), key=lambda j: len(recording.compiles[j].steps))
    n = len(recording.compiles[k].steps)
    t0 = time.perf_counter()
    viewer = TraceViewer(recording, compile=k)
    build = time.perf_counter() - t0
    targets = sorted({round(j * (n - 1) / (positions - 1)) for j in range(positions)})
    times = []
    for j, i in enumerate(targets):
        viewer.step = targets[-1 - j] if targets[-1 - j] != i else 0   # arrive from afar
        start = time.perf_counter()
        viewer.step = i
        times.append((time.perf_counter() - start) * 1000)
    sent = len(viewer.data) + len(viewer.graphs)
    return {"compile": recording.compiles[k].compile_id, "steps": n, "positions": len(targets),
            "viewer_build_s": round(build, 3), "jump_median_ms": round(statistics.median(times), 3),
            "jump_worst_ms": round(max(times), 3), "walk_median_ms": None,
            "sent_bytes": sent, "bytes_per_step": round(sent / max(recording.step_count, 1), 1)}


# -- the browser's side ---------------------------------------------------------------------------

def _notebook(json_name: str) -> dict:
    cells = [
        "import json, time\nimport capture\nfrom widgets import TraceViewer\n"
        f"rec = capture.Recording.from_json(open({json_name!r}, encoding='utf-8').read())",
        "start = time.time()\nviewer = TraceViewer(rec)\nbuilt = time.time()\ndisplay(viewer)\n"
        "print('DL-TIMES', json.dumps({'start': start * 1000, 'built': built * 1000}))",
    ]
    return {"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                       "execution_count": None} for c in cells],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def in_browser(name: str, recording: capture.Recording, lab, browser, folder: Path) -> dict:
    """Open the recording's notebook, run it, measure first paint and clicks."""
    (folder / f"{name}.json").write_text(recording.to_json(), encoding="utf-8")
    (folder / f"{name}.ipynb").write_text(json.dumps(_notebook(f"{name}.json")), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(lab.url(f"lab/tree/{name}.ipynb?reset"))   # none of the tabs opened before
        page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("[data-command='runmenu:run-all']").click()
        root = page.locator(".dl-viewer").first
        root.wait_for(timeout=180_000)
        page.wait_for_function("root => root.parentElement.dynamoLab.viewer.firstPaint", arg=root.element_handle(), timeout=180_000)
        printed = page.locator(".jp-OutputArea-output pre", has_text="DL-TIMES").first
        printed.wait_for(timeout=60_000)
        kernel = json.loads(printed.text_content().split("DL-TIMES", 1)[1])
        painted = root.evaluate("root => root.parentElement.dynamoLab.viewer.firstPaint")
        root.evaluate(PROBE_JS)
        n = int(root.locator(".dl-slider").get_attribute("max")) + 1
        positions = sorted({round(j * (n - 2) / (POSITIONS - 1)) for j in range(POSITIONS)}) if n > 2 else [0]
        clicks: list[tuple[str, dict]] = []

        def timed(target, kind: str) -> None:
            if isinstance(target, str):
                target = root.get_by_role("button", name=target, exact=True)
                if target.is_disabled():
                    return
            before = root.evaluate("root => root.__dlBench.clicks.length")
            target.click()
            page.wait_for_function("([root, n]) => root.__dlBench.clicks.length > n",
                                   arg=[root.element_handle(), before], timeout=30_000)
            clicks.append((kind, root.evaluate("root => root.__dlBench.clicks.at(-1)")))

        for i in positions:
            root.evaluate(SLIDE_JS, i)   # not timed: the slider
            timed("forward", "step")
            timed("back", "step")
            for jump in ("next node", "next guard", "next line"):
                root.evaluate(SLIDE_JS, i)
                timed(jump, "jump")
            # The step label does nothing when clicked: JupyterLab's and the browser's share
            # of any click, the frame included.
            timed(root.locator(".dl-caption .dl-stepno"), "baseline")
            # The same steps and jumps from the keyboard: no pointer moves, no hover styles.
            for key in ("ArrowRight", "ArrowLeft", "n", "g", "l"):
                root.evaluate(SLIDE_JS, i)
                root.evaluate("root => root.focus()")
                before = root.evaluate("root => root.__dlBench.clicks.length")
                page.keyboard.press(key)
                page.wait_for_function("([root, n]) => root.__dlBench.clicks.length > n",
                                       arg=[root.element_handle(), before], timeout=30_000)
                clicks.append(("key", root.evaluate("root => root.__dlBench.clicks.at(-1)")))
        lab.delete(f"api/sessions/{lab.session(f'{name}.ipynb')['id']}")
    finally:
        page.close()
    state = viewer_state(recording)
    sent = len(state["data"]) + len(state["graphs"]) + len(json.dumps(state["titles"]))
    out = {"recording": name, "steps": recording.step_count, "compiles": len(recording.compiles),
           "build_s": round((kernel["built"] - kernel["start"]) / 1000, 3),
           "display_to_paint_s": round((painted - kernel["built"]) / 1000, 3),
           "sent_kb": round(sent / 1024), "bytes_per_step": round(sent / recording.step_count, 1)}
    for kind in ("step", "jump", "baseline", "key"):
        painted = [c["painted"] for k, c in clicks if k == kind]
        if painted:
            out[f"{kind}_clicks"] = len(painted)
            out[f"{kind}_median_ms"] = round(statistics.median(painted), 1)
            out[f"{kind}_p95_ms"] = round(_percentile(painted, 0.95), 1)
            own = [c["handled"] - c["reached"] for k, c in clicks if k == kind]
            out[f"{kind}_handler_median_ms"] = round(statistics.median(own), 2)
    for label in sorted({c["label"] for k, c in clicks if k != "baseline"}):
        painted = [c["painted"] for _, c in clicks if c["label"] == label]
        out[f"{label}: median, p95 ms"] = [round(statistics.median(painted), 1),
                                           round(_percentile(painted, 0.95), 1)]
    return out


def main() -> None:
    from bench import lab_server
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="tour,gpt2-4,loop-140k",
                        help="comma-separated: tour, gpt2-4, loop-140k, chain-20k")
    parser.add_argument("--json", action="store_true", help="print one JSON object per recording")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notebooks"
        folder.mkdir()
        with lab_server.running(folder, Path(tmp) / "state") as lab, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                for name in args.only.split(","):
                    t0 = time.perf_counter()
                    recording = record(name)
                    print(f"{name}: recorded {recording.step_count} steps in "
                          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
                    results.append(in_browser(name, recording, lab, browser, folder))
                    if args.json:
                        print(json.dumps(results[-1]))
            finally:
                browser.close()
    if args.json:
        return
    keys = ["recording", "steps", "build_s", "display_to_paint_s", "sent_kb", "bytes_per_step",
            "step_median_ms", "step_p95_ms", "jump_median_ms", "jump_p95_ms",
            "baseline_median_ms", "baseline_p95_ms", "key_median_ms", "key_p95_ms", "step_handler_median_ms",
            "jump_handler_median_ms"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in results:
        print("| " + " | ".join(str(r.get(k, "–")) for k in keys) + " |")
    for r in results:
        print(r["recording"] + ": " + "; ".join(f"{k} {v}" for k, v in r.items() if ": " in k))


if __name__ == "__main__":
    main()
