"""A real model, whole: what recording a 12-layer GPT-2 costs and what its page does.

The program is bench/gpt2_script.py (`GPT2Config(n_layer=12)`, random weights, a compiled
wrapper with a print, called with sequence lengths 16 then 24: six compiles). Every figure
comes from the commands a user runs, each in a process of its own with a time limit:

- `python bench/gpt2_script.py` and `dynamo-lab record bench/gpt2_script.py -o trace.json`:
  wall time and peak RSS of each process (the largest child's `ru_maxrss`), alternating,
  median of `--rounds`;
- the recording's JSON size, `dynamo-lab explain trace.json` and `dynamo-lab html
  trace.json` wall time, the page's size;
- in this process: reading the JSON back (`Recording.from_json`) and aligning every pair
  of compiles the page offers to compare (`widgets.viewer.state.comparisons`);
- in Debian's Chromium from file://: navigation to the viewer's first paint, a forward
  click, and D (to the first divergence of the recompile beside the compile it replaces).

    .venv/bin/python bench/whole_model.py                 # about 5 minutes on an idle 2-core machine
    .venv/bin/python bench/whole_model.py --layers 4 --rounds 1    # a smaller check

Timings on a shared machine are not tests; `uptime` is printed with the report so a
loaded run can be read as one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIMIT = 1200   # seconds for any one command


def _program(layers: int, folder: Path) -> Path:
    """bench/gpt2_script.py with its layer count set (12 is the script as it is)."""
    text = (HERE / "gpt2_script.py").read_text()
    if layers != 12:
        text = text.replace("GPT2Config(n_layer=12)", f"GPT2Config(n_layer={layers})")
        assert f"n_layer={layers}" in text
    path = folder / "gpt2_program.py"
    path.write_text(text)
    return path


def _run(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS in MB (a fresh process; `ru_maxrss` of the
    children is the largest so far, so each command runs from a process of its own)."""
    probe = ("import resource, subprocess, sys, time, json; t = time.perf_counter(); "
             f"subprocess.run(sys.argv[1:], check=True, timeout={LIMIT}, "
             "stdout=subprocess.DEVNULL); "
             "print(json.dumps([time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=cwd, capture_output=True,
                         text=True, check=True, timeout=LIMIT + 60,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall, rss = json.loads(out.stdout.splitlines()[-1])
    return wall, rss


def _median(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def processes(program: Path, folder: Path, rounds: int) -> dict:
    cli = str(Path(sys.executable).with_name("dynamo-lab"))
    trace = folder / "trace.json"
    page = folder / "trace.html"
    runs: dict[str, list[tuple[float, float]]] = {"plain": [], "record": []}
    for _ in range(rounds):   # alternating: plain, recorded, plain, recorded, ...
        runs["plain"].append(_run([sys.executable, str(program)], folder))
        runs["record"].append(_run([cli, "record", str(program), "-o", str(trace), "-q"], folder))
    explain = [_run([cli, "explain", str(trace)], folder)[0] for _ in range(rounds)]
    html = [_run([cli, "html", str(trace), "-o", str(page), "-q"], folder)[0] for _ in range(rounds)]
    return {
        "plain_s": [w for w, _ in runs["plain"]], "plain_rss_mb": [r for _, r in runs["plain"]],
        "record_s": [w for w, _ in runs["record"]], "record_rss_mb": [r for _, r in runs["record"]],
        "json_mb": trace.stat().st_size / 1e6, "explain_s": explain, "html_s": html,
        "page_mb": page.stat().st_size / 1e6, "trace": trace, "page": page,
    }


def in_process(trace: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    import capture
    from widgets.viewer.state import comparisons

    start = time.perf_counter()
    rec = capture.Recording.from_json(trace.read_text())
    read = time.perf_counter() - start
    start = time.perf_counter()
    pairs = comparisons(rec)
    align = time.perf_counter() - start
    # the pair compare opens on: the biggest recompile beside the compile it replaces
    shaped = [d for d in pairs if (d.get("divergence") or {}).get("why") == "shape"]
    kb = max((d["kb"] for d in shaped), key=lambda k: len(rec.compiles[k].steps), default=None)
    pair = None if kb is None else (kb, {d["ka"]: d["divergence"]["b"] for d in pairs
                                         if d["kb"] == kb and d.get("divergence")})
    steps = sum(len(c.steps) for c in rec.compiles)
    biggest = max(range(len(rec.compiles)), key=lambda k: len(rec.compiles[k].steps))
    return {"read_s": read, "align_s": align, "pairs": len(pairs), "steps": steps,
            "compiles": len(rec.compiles), "biggest": biggest,
            "biggest_steps": len(rec.compiles[biggest].steps),
            "pair": pair}


def in_browser(page: Path, rounds: int, pair) -> dict:
    sys.path.insert(0, str(ROOT))
    from bench import lab_server

    first, forward, divergence = [], [], []
    with lab_server.chromium() as browser:
        for _ in range(rounds):
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            tab = ctx.new_page()
            tab.goto(page.resolve().as_uri(), timeout=LIMIT * 1000)
            tab.wait_for_selector(".dl-viewer[data-ready='1']", timeout=LIMIT * 1000)
            root = tab.locator(".dl-viewer").first
            first.append(root.evaluate(
                "r => r.parentElement.dynamoLab.viewer.firstPaint - performance.timeOrigin"))
            viewer = "r.parentElement.dynamoLab.viewer"
            for _ in range(20):
                forward.append(root.evaluate(f"""r => {{
                    const v = {viewer}, t = performance.now(), i = v.step;
                    r.querySelector('[data-action="forward"]').click();
                    void r.offsetHeight;   // the layout the step forces
                    return v.step === i + 1 ? performance.now() - t : null; }}"""))
            if pair is not None:
                # C: the recompile beside the compile it replaces; D: its first divergence
                kb, divergences = pair
                root.evaluate(f"r => {viewer}.go({kb}, 0)")
                root.focus()
                tab.keyboard.press("c")
                root.locator(".dl-cmp").wait_for(state="visible", timeout=60_000)
                at = divergences[int(root.locator(".dl-partner").input_value())]
                start = time.perf_counter()
                tab.keyboard.press("d")
                tab.wait_for_function(f"r => {viewer}.step === {at}", arg=root.element_handle(),
                                      timeout=60_000)
                divergence.append((time.perf_counter() - start) * 1000)
            ctx.close()
    return {"first_paint_ms": first, "forward_ms": [f for f in forward if f is not None],
            "d_ms": divergence}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-browser", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="write the recording and page here")
    args = ap.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="whole-"))
    folder.mkdir(parents=True, exist_ok=True)
    program = _program(args.layers, folder)
    started = time.perf_counter()
    p = processes(program, folder, args.rounds)
    q = in_process(p["trace"])
    b = None if args.skip_browser else in_browser(p["page"], args.rounds, q["pair"])
    load = os.getloadavg()
    print(f"Command: python bench/whole_model.py --layers {args.layers} --rounds {args.rounds}  ")
    print(f"GPT-2, {args.layers} layers: {q['compiles']} compiles, {q['steps']:,} steps "
          f"(the biggest {q['biggest_steps']:,}); load average {load[0]:.1f} at the end; "
          f"whole run {time.perf_counter() - started:.0f} s\n")
    print("| figure | value (median, range) |\n|---|---:|")
    rows = [
        ("plain script, wall s", _median(p["plain_s"])),
        ("`dynamo-lab record`, wall s", _median(p["record_s"])),
        ("plain script, peak RSS MB", _median(p["plain_rss_mb"])),
        ("`dynamo-lab record`, peak RSS MB", _median(p["record_rss_mb"])),
        ("recording JSON, MB", f"{p['json_mb']:.1f}"),
        ("JSON bytes per step", f"{p['json_mb'] * 1e6 / q['steps']:.0f}"),
        ("`dynamo-lab explain trace.json`, wall s", _median(p["explain_s"])),
        ("`dynamo-lab html trace.json`, wall s", _median(p["html_s"])),
        ("page, MB", f"{p['page_mb']:.1f}"),
        ("`Recording.from_json`, s", f"{q['read_s']:.2f}"),
        (f"aligning the {q['pairs']} compared pairs, s", f"{q['align_s']:.2f}"),
    ]
    if b:
        rows += [("first paint in Chromium, ms", _median(b["first_paint_ms"])),
                 ("a forward click, ms", _median(b["forward_ms"])),
                 ("D to the first divergence, ms",
                  _median(b["d_ms"]) if b["d_ms"] else "no recompile to compare")]
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
