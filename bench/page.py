"""The exported page: how big it is, how soon it paints, how fast it steps, and tlparse beside it.

    .venv/bin/python bench/page.py                 # everything: about 3 minutes, idle 2 cores
    .venv/bin/python bench/page.py --skip tour --skip tlparse --models gpt-12
    .venv/bin/python bench/page.py --json out.json

1. Size. Each model (bench/models.py) is compiled once with the eager backend under
   `capture.record()` and written by `widgets.viewer.page.write_html`. Reported: the page,
   the recording it carries inline (gzip-compressed, base64: the `data` and `graphs`
   values and the JSON of the rest) and both per step. The tour's page is the one
   `./lab site` makes of notebooks/00_tour.ipynb, run first (nbclient).
2. Opening and stepping, in Debian's Chromium from file:// (every other request
   refused, as in tests/test_page.py): navigation start to the viewer's first render
   (the module stamps it, in the page's clock), median of --rounds fresh tabs; then the
   time of a "forward" click and of a jump to a far step (`model.set("step", i)`, as
   the kernel sets it), each with the layout it forces, at 40 places spread over the
   biggest compile. The widget in JupyterLab runs this same module on anywidget's model,
   so the per-step work is the same code; tests/test_browser.py measures clicks there.
3. tlparse beside it. The same two programs (the graph break and recompile of
   tests/test_cli.py, and gpt2-4) as scripts: `python script.py` plain, then
   `TORCH_TRACE=dir python script.py` + `tlparse`, then `dynamo-lab record script.py
   -o page.html`; wall time of each whole process (medians) and what each wrote.

Needs `pip install -e .[bench]` (transformers for gpt2-4, tlparse). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BIN = Path(sys.executable).parent
TARGETS = {"bytes_per_step": 200, "tour_page_mb": 1.0, "gpt2_4_page_mb": 5.0, "first_paint_ms": 1000}
POSITIONS = 40

SMALL_PROGRAM = '''\
import torch


def helper(x):
    return x * 2


@torch.compile(backend="eager")
def f(x):
    y = torch.sin(x)
    print("graph break here")
    return helper(y) + 1


f(torch.ones(4))
f(torch.ones(8))
'''

MODEL_PROGRAM = '''\
import sys
sys.path.insert(0, {root!r})
import torch
from bench.models import build

model, inputs = build({name!r})
with torch.no_grad():
    torch.compile(model, backend="eager")(*inputs)
'''


def say(text: str) -> None:
    print(f"page bench: {text}", file=sys.stderr, flush=True)


# -- 1. size -----------------------------------------------------------------------------------

def record_model(name: str):
    import torch

    import capture
    from bench.models import build

    model, inputs = build(name)
    torch._dynamo.reset()
    with torch.no_grad():
        compiled = torch.compile(model, backend="eager")
        with capture.record() as recording:
            compiled(*inputs)
    torch._dynamo.reset()
    return recording


def inline_bytes(text: str) -> int:
    """What the page spends on the recording: its state JSON and base64 values."""
    # Attributes in any order: nbconvert's template output rewrites the site's markup.
    data = re.findall(r'<script\b[^>]*\bdata-dl-(?:state|buffer)="[^"]*"[^>]*>(.*?)</script>',
                      text, re.S)
    return sum(len(d) for d in data)


def page_size(name: str, recording, folder: Path) -> dict:
    from widgets.viewer.page import write_html

    steps = sum(len(c.steps) for c in recording.compiles)
    t0 = time.perf_counter()
    path = write_html(recording, folder / f"{name}.html", title=name)
    export_s = time.perf_counter() - t0
    text = path.read_text(encoding="utf-8")
    data = inline_bytes(text)
    return {"model": name, "steps": steps, "compiles": len(recording.compiles),
            "page_bytes": len(text.encode("utf-8")), "data_bytes": data,
            "json_bytes": len(recording.to_json().encode("utf-8")),
            "data_per_step": data / max(steps, 1),
            "page_per_step": len(text.encode("utf-8")) / max(steps, 1),
            "export_s": export_s, "path": str(path)}


def tour_page(folder: Path) -> dict:
    """notebooks/00_tour.ipynb run, then built as the site builds it."""
    from widgets.course import site

    lessons = folder / "tour"
    lessons.mkdir()
    shutil.copy(ROOT / "notebooks" / "00_tour.ipynb", lessons)
    out = folder / "tour-site"
    t0 = time.perf_counter()
    report = site.build(lessons, out, execute_first=True)
    text = (out / "00_tour.html").read_text(encoding="utf-8")
    return {"page_bytes": len(text.encode("utf-8")), "viewers": report.viewers,
            "data_bytes": inline_bytes(text), "build_s": time.perf_counter() - t0,
            "path": str(out / "00_tour.html")}


# -- 2. opening and stepping ---------------------------------------------------------------------

OPENED_JS = """() => {
    const root = document.querySelector('.dl-viewer');
    return root.parentElement.dynamoLab.viewer.firstPaint - performance.timeOrigin;
}"""

# In the page: time `act` followed by the layout it forces, at `n` places; milliseconds.
STEPPING_JS = """async ([n, mode]) => {
    const el = document.querySelector('[data-dl-viewer]');
    const root = el.querySelector('.dl-viewer');
    const { model, viewer } = el.dynamoLab;
    const select = root.querySelector('select');
    let biggest = 0, most = -1;
    viewer.rec.compiles.forEach((c, k) => { if (c.steps.length > most) { most = c.steps.length; biggest = k; } });
    model.set('compile', biggest);
    const last = most - 1;
    const forward = [...root.querySelectorAll('button')].find(b => b.textContent.startsWith('forward'));
    const times = [];
    for (let j = 0; j < n; j++) {
        const at = Math.floor((j * 7919) % Math.max(last, 1));      // spread, far from the last
        if (mode === 'forward') {
            model.set('step', Math.min(at, last - 1));
            root.getBoundingClientRect();
            const t0 = performance.now();
            forward.click();
            document.body.offsetHeight;
            times.push(performance.now() - t0);
        } else {
            const t0 = performance.now();
            model.set('step', at);
            document.body.offsetHeight;
            times.push(performance.now() - t0);
        }
        await new Promise(r => requestAnimationFrame(() => r()));
    }
    return times;
}"""


def in_browser(paths: dict[str, str], rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    from bench.lab_server import CHROMIUM, CHROMIUM_ARGS

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for name, path in paths.items():
                opened, blocked = [], []
                for _ in range(rounds):
                    context = browser.new_context(viewport={"width": 1280, "height": 900})
                    context.route("**/*", lambda route: route.continue_()
                                  if route.request.url.startswith(("file:", "blob:", "data:"))
                                  else (blocked.append(route.request.url), route.abort()))
                    page = context.new_page()
                    page.goto(Path(path).resolve().as_uri())
                    page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=60_000)
                    opened.append(page.evaluate(OPENED_JS))
                    context.close()
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.goto(Path(path).resolve().as_uri())
                page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=60_000)
                forward = page.evaluate(STEPPING_JS, [POSITIONS, "forward"])
                jump = page.evaluate(STEPPING_JS, [POSITIONS, "jump"])
                context.close()
                out[name] = {"first_render_ms": statistics.median(opened),
                             "first_render_all_ms": opened,
                             "forward_median_ms": statistics.median(forward),
                             "forward_max_ms": max(forward),
                             "jump_median_ms": statistics.median(jump), "jump_max_ms": max(jump),
                             "blocked": blocked}
                say(f"{name}: first render {out[name]['first_render_ms']:.0f} ms")
        finally:
            browser.close()
    return out


# -- 3. tlparse beside it --------------------------------------------------------------------------

def _timed(cmd: list[str], cwd: Path, env: dict | None = None, limit: float = 600) -> float:
    """Seconds `cmd` took; an error saying so when it fails or runs past `limit` seconds
    (a small program takes a few: a hang must not stall the benchmark)."""
    t0 = time.perf_counter()
    try:
        result = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})},
                                capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(cmd)} took more than {limit:.0f} s: stopped") from None
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return time.perf_counter() - t0


def _size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    return sum(p.stat().st_size for p in files), len(files)


def side_by_side(name: str, source: str, folder: Path, rounds: int) -> dict:
    work = folder / f"tl-{name}"
    work.mkdir()
    script = work / f"{name}.py"
    script.write_text(source, encoding="utf-8")
    py = str(BIN / "python")
    plain, traced, parsed, recorded = [], [], [], []
    for r in range(rounds):
        plain.append(_timed([py, str(script)], work))
        trace_dir = work / f"trace{r}"
        traced.append(_timed([py, str(script)], work, {"TORCH_TRACE": str(trace_dir)}))
        log = next(trace_dir.glob("*.log"))
        out = work / f"tl_out{r}"
        parsed.append(_timed([str(BIN / "tlparse"), str(log), "-o", str(out), "--overwrite",
                              "--no-browser"], work, limit=120))
        recorded.append(_timed([str(BIN / "dynamo-lab"), "record", "-q", str(script),
                                "-o", str(work / f"page{r}.html")], work))
    log_bytes, _ = _size(next((work / "trace0").glob("*.log")))
    report_bytes, report_files = _size(work / "tl_out0")
    page_bytes, _ = _size(work / "page0.html")
    return {"program": name, "plain_s": statistics.median(plain),
            "torch_trace_s": statistics.median(traced), "tlparse_s": statistics.median(parsed),
            "dynamo_lab_s": statistics.median(recorded), "log_bytes": log_bytes,
            "tlparse_bytes": report_bytes, "tlparse_files": report_files,
            "page_bytes": page_bytes}


# -- the report ----------------------------------------------------------------------------------

def _mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def report(results: dict, started: float) -> str:
    import torch

    lines = ["### The exported page", "",
             f"Command: `python bench/page.py {' '.join(sys.argv[1:])}`".rstrip() + "  ",
             f"Machine: {os.cpu_count()} cores; torch {torch.__version__}; Python "
             f"{sys.version.split()[0]}; whole run {time.time() - started:.0f} s", ""]
    sizes = results.get("sizes", [])
    if sizes:
        lines += ["#### Size (target: at most "
                  f"{TARGETS['bytes_per_step']} bytes of inline recording per step; gpt2-4's page "
                  f"at most {TARGETS['gpt2_4_page_mb']:.0f} MB)", "",
                  "| recording | compiles | steps | JSON MB | page MB | inline data MB | "
                  "inline bytes / step | page bytes / step | export s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in sizes:
            lines.append(f"| {s['model']} | {s['compiles']} | {s['steps']} | {_mb(s['json_bytes'])} "
                         f"| {_mb(s['page_bytes'])} | {_mb(s['data_bytes'])} "
                         f"| {s['data_per_step']:.0f} | {s['page_per_step']:.0f} "
                         f"| {s['export_s']:.2f} |")
        lines.append("")
    tour = results.get("tour")
    if tour:
        lines += [f"The tour's page (`./lab site`, notebooks/00_tour.ipynb run first): "
                  f"{_mb(tour['page_bytes'])} MB with {tour['viewers']} viewer(s), of which "
                  f"{_mb(tour['data_bytes'])} MB is their recordings (target: at most "
                  f"{TARGETS['tour_page_mb']:.0f} MB).", ""]
    browser = results.get("browser", {})
    if browser:
        lines += [f"#### In Chromium from file:// (target: first render within "
                  f"{TARGETS['first_paint_ms']} ms)", "",
                  "| page | navigation to first render ms (median) | forward click ms median / max "
                  "| jump ms median / max | requests refused |",
                  "|---|---:|---:|---:|---:|"]
        for name, b in browser.items():
            lines.append(f"| {name} | {b['first_render_ms']:.0f} | {b['forward_median_ms']:.1f} / "
                         f"{b['forward_max_ms']:.1f} | {b['jump_median_ms']:.1f} / "
                         f"{b['jump_max_ms']:.1f} | {len(b['blocked'])} |")
        lines.append("")
    side = results.get("tlparse", [])
    if side:
        lines += ["#### Beside tlparse (whole processes, medians)", "",
                  "| program | python s | TORCH_TRACE s | tlparse s | TORCH_TRACE log KB "
                  "| tlparse report KB (files) | dynamo-lab record s | page KB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for t in side:
            lines.append(f"| {t['program']} | {t['plain_s']:.2f} | {t['torch_trace_s']:.2f} "
                         f"| {t['tlparse_s']:.2f} | {t['log_bytes'] / 1e3:.0f} "
                         f"| {t['tlparse_bytes'] / 1e3:.0f} ({t['tlparse_files']}) "
                         f"| {t['dynamo_lab_s']:.2f} | {t['page_bytes'] / 1e3:.0f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt-12,gpt2-4",
                        help="comma-separated models of bench/models.py (default gpt-12,gpt2-4)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh tabs / processes per figure")
    parser.add_argument("--skip", action="append", default=[],
                        choices=["sizes", "tour", "browser", "tlparse"])
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures as JSON")
    parser.add_argument("--keep", metavar="DIR", help="write the pages here (default: a temp dir)")
    opts = parser.parse_args(argv)
    started = time.time()
    folder = Path(opts.keep) if opts.keep else Path(tempfile.mkdtemp(prefix="dl-page-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    results: dict = {}
    models = [m for m in opts.models.split(",") if m]
    paths: dict[str, str] = {}
    try:
        if "sizes" not in opts.skip or "browser" not in opts.skip:
            import capture
            results["sizes"] = []
            small = folder / "small.py"
            small.write_text(SMALL_PROGRAM, encoding="utf-8")
            import torch
            torch._dynamo.reset()
            namespace: dict = {}
            with capture.record() as rec:
                exec(compile(SMALL_PROGRAM, str(small), "exec"), namespace)
            torch._dynamo.reset()
            for name, recording in [("break+recompile", rec)] + [(m, None) for m in models]:
                if recording is None:
                    try:
                        recording = record_model(name)
                    except ImportError as e:
                        say(f"{name} left out: {e} (pip install -e .[bench])")
                        continue
                figures = page_size(name, recording, folder)
                results["sizes"].append(figures)
                paths[name] = figures["path"]
                say(f"{name}: {figures['steps']} steps, page {_mb(figures['page_bytes'])} MB")
        if "tour" not in opts.skip:
            results["tour"] = tour_page(folder)
        if "browser" not in opts.skip and paths:
            results["browser"] = in_browser(paths, opts.rounds)
        if "tlparse" not in opts.skip:
            if not (BIN / "tlparse").exists():
                say("tlparse left out: not installed (pip install -e .[bench])")
            else:
                programs = [("break+recompile", SMALL_PROGRAM)]
                if "gpt2-4" in models:
                    programs.append(("gpt2-4", MODEL_PROGRAM.format(root=str(ROOT), name="gpt2-4")))
                results["tlparse"] = [side_by_side(n.replace("+", "_"), src, folder,
                                                   max(1, min(opts.rounds, 3)))
                                      for n, src in programs]
    finally:
        if not opts.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if opts.json:
        Path(opts.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(report(results, started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
