"""Dynamo Lab's benchmarks in one run: recording overhead, memory, viewer latency, lesson cost.

    .venv/bin/python bench/run.py            # everything (about 7 minutes on an idle 2-core machine)
    .venv/bin/python bench/run.py --smoke    # tiny models, one round: proves it still runs
    .venv/bin/python bench/run.py --profile gpt2-4   # where recording spends its time

Prints one markdown report (see bench/README.md for what each number means).

1. Overhead: the first call of `torch.compile(model, backend="eager")`, plain,
   inside `capture.record()`, and with `TORCH_LOGS=trace_bytecode` (Dynamo's own
   per-instruction log, the peer). Each run is a fresh subprocess (TORCH_LOGS is
   read when torch is imported), the variants alternate A B C A B C, and inside
   each process the compile is timed after a small warm-up compile, so Dynamo's
   one-time imports fall on no variant. Medians, and their ratios to plain.
2. Memory: tracemalloc's peak during a plain and a recorded compile, what the
   recording keeps alive once it is done (the allocations freed by dropping it),
   and its JSON, per step.
3. Viewer: `bench/viewer_latency.measure` (moving `TraceViewer.step` to 20
   positions spread over the largest recording) when it is there.
4. Lessons: each notebook run top to bottom in a fresh kernel (nbclient).

Not a test: timings on a shared 2-core machine are noisy; only `--smoke` runs
in the test suite, and it checks that the report is whole, not the targets.
"""

from __future__ import annotations

import argparse
import json
import os
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

VARIANTS = ("plain", "recorded", "trace_bytecode")
RESULT = "BENCH-RESULT "  # the line a worker prints its results on
WORKER_LIMIT = 1200  # s: a worker compiles a few small models (a minute or two); past this it hangs

# The models of each section; names are family-layers (see bench/models.build).
FULL = {"overhead": ["gpt-12", "gpt2-4", "bert-4"],
        "memory": ["gpt-6", "gpt-12", "gpt2-4", "bert-4"],
        "lessons": "*.ipynb"}
SMOKE = {"overhead": ["gpt-2", "gpt2-1", "bert-1"],
         "memory": ["gpt-1", "gpt-2"],
         "lessons": "START.ipynb"}

TARGETS = {"overhead": 1.10, "bytes_per_step": 2048, "viewer_median_ms": 30,
           "viewer_worst_ms": 100}


# -- inside a worker process ---------------------------------------------------------------

def _warm_up(recorded: bool) -> None:
    """Compile something tiny first, so Dynamo's lazy imports are paid by no variant."""
    import torch

    import capture

    torch._dynamo.reset()
    fn = torch.compile(lambda x: x.sin() + 1, backend="eager")
    if recorded:
        with capture.record():
            fn(torch.ones(3))
    else:
        fn(torch.ones(3))
    torch._dynamo.reset()


def _stderr_bytes() -> int:
    sys.stderr.flush()
    try:
        return os.fstat(2).st_size
    except OSError:
        return 0


def time_compile(model_name: str, variant: str) -> dict:
    """Time the first call of the compiled model, in this process, wall and CPU."""
    import gc
    import resource

    import torch

    import capture
    from bench.models import build

    model, args = build(model_name)
    _warm_up(variant == "recorded")
    gc.collect()
    compiled = torch.compile(model, backend="eager")
    log_before = _stderr_bytes()
    steps = None
    with torch.no_grad():
        wall, cpu = time.perf_counter(), time.process_time()
        if variant == "recorded":
            with capture.record() as recording:
                compiled(*args)
            steps = recording.step_count
        else:
            compiled(*args)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = {"task": "time", "model": model_name, "variant": variant, "wall": wall, "cpu": cpu,
           "steps": steps, "log_bytes": _stderr_bytes() - log_before,
           "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if variant == "recorded":
        out["outcomes"] = [c.outcome for c in recording.compiles]
    torch._dynamo.reset()
    return out


def measure_memory(model_names: list[str], positions: int) -> dict:
    """Peak allocations of a plain and a recorded compile, and the recording's own size."""
    import gc
    import tracemalloc

    import torch

    import capture
    from bench.models import build

    _warm_up(True)
    rows, largest = [], None
    for name in model_names:
        model, args = build(name)
        with torch.no_grad():  # once unmeasured: first-time costs of this model's code
            torch.compile(model, backend="eager")(*args)
        peaks = {}
        tracemalloc.start()
        for variant in ("plain", "recorded"):
            torch._dynamo.reset()
            gc.collect()
            compiled = torch.compile(model, backend="eager")
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            with torch.no_grad():
                if variant == "recorded":
                    with capture.record() as recording:
                        compiled(*args)
                else:
                    compiled(*args)
            peaks[variant] = tracemalloc.get_traced_memory()[1] - base
        text = recording.to_json()
        kept = capture.Recording.from_json(text)  # a copy, for the counts and the viewer
        # What the recording keeps alive: the allocations that go when it goes.
        gc.collect()
        with_it = tracemalloc.get_traced_memory()[0]
        del recording
        gc.collect()
        retained = with_it - tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        steps = kept.step_count
        rows.append({
            "model": name, "steps": steps, "nodes": sum(len(c.nodes) for c in kept.compiles),
            "guards": sum(len(c.guard_details) for c in kept.compiles),
            "peak_plain": peaks["plain"], "peak_recorded": peaks["recorded"],
            "retained": retained, "json": len(text.encode())})
        if largest is None or steps > largest[1].step_count:
            largest = (name, kept)
        torch._dynamo.reset()
    name, recording = largest
    viewer = {"model": name, "steps": recording.step_count, **viewer_latency(recording, positions)}
    return {"task": "memory", "rows": rows, "viewer": viewer}


def viewer_latency(recording, positions: int) -> dict:  # noqa: ANN001 - a capture.Recording
    """Median and worst time of `viewer.step = i`, through the viewer's own benchmark."""
    from bench.viewer_latency import measure

    out = measure(recording, positions)
    return {"median_ms": out["jump_median_ms"], "worst_ms": out["jump_worst_ms"],
            "positions": out["positions"], "build_s": out["viewer_build_s"],
            "walk_median_ms": out["walk_median_ms"]}


def profile_recorder(model_name: str, rounds: int) -> str:
    """Where a recorded compile spends its extra time: CPU, full collections, hot spots.

    The garbage collector's full (generation 2) collections are counted apart:
    a sampling profiler charges such a pause to whatever line happened to allocate.
    """
    import gc

    import torch

    import capture
    from bench.models import build

    model, args = build(model_name)
    _warm_up(True)
    with torch.no_grad():  # first-time costs of this model's code fall on no variant
        torch.compile(model, backend="eager")(*args)
    full = {"n": 0, "s": 0.0, "start": 0.0}

    def on_gc(phase: str, info: dict) -> None:
        if info["generation"] == 2 and phase == "start":
            full["start"] = time.process_time()
        elif info["generation"] == 2:
            full["n"] += 1
            full["s"] += time.process_time() - full["start"]

    def compile_once(recorded: bool) -> None:
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="eager")
        with torch.no_grad():
            if recorded:
                with capture.record():
                    compiled(*args)
            else:
                compiled(*args)

    runs: dict[str, list[tuple[float, int, float]]] = {"plain": [], "recorded": []}
    gc.callbacks.append(on_gc)
    try:
        for _ in range(rounds):
            for variant, cpu in runs.items():
                gc.collect()
                full.update(n=0, s=0.0)
                start = time.process_time()
                compile_once(variant == "recorded")
                cpu.append((time.process_time() - start, full["n"], full["s"]))
    finally:
        gc.callbacks.remove(on_gc)
    plain = statistics.median(c for c, _, _ in runs["plain"])
    lines = [f"{model_name}: compile CPU s, median of {rounds} alternating runs in one process"]
    for variant, cpu in runs.items():
        m = statistics.median(c for c, _, _ in cpu)
        lines.append(f"  {variant:9} {m:.3f} s  {m / plain:.3f}x plain   full GC collections "
                     f"{[n for _, n, _ in cpu]}, {statistics.median(t for _, _, t in cpu):.3f} s")
    try:
        from pyinstrument import Profiler
    except ImportError:
        return "\n".join(lines + ["(pip install pyinstrument for the hot spots)"])
    selfs: dict[str, float] = {}
    calls: dict[str, float] = {}
    total = 0.0

    def walk(frame, caller: str | None) -> None:  # noqa: ANN001 - a pyinstrument frame
        nonlocal total
        path = frame.file_path or ""
        ours = "/capture/" in path and not path.endswith("hooks.py")
        children = [c for c in frame.children if not c.function.startswith("[")]
        name = f"{frame.function} ({frame.file_path_short}:{frame.line_no})"
        if ours:
            selfs[name] = selfs.get(name, 0.0) + frame.time - sum(c.time for c in children)
        elif caller is not None:  # capture/ calling into torch or the standard library
            key = f"{caller} -> {name}"
            calls[key] = calls.get(key, 0.0) + frame.time
            return
        for child in children:
            walk(child, frame.function if ours else caller)

    gc.disable()  # full collections are reported above, not smeared over the hot spots
    try:
        for _ in range(rounds):
            profiler = Profiler(interval=0.001)
            profiler.start()
            compile_once(True)
            profiler.stop()
            root = profiler.last_session.root_frame()
            total += root.time
            walk(root, None)
    finally:
        gc.enable()
    inside = sum(selfs.values()) + sum(calls.values())
    lines.append(f"\nsampled (GC off): capture/ takes {100 * inside / total:.1f}% of the recorded "
                 "compile; its own lines, then what it calls:")
    for table in (selfs, calls):
        for name, t in sorted(table.items(), key=lambda kv: -kv[1])[:12]:
            lines.append(f"  {100 * t / total:5.1f}%  {name}")
        lines.append("")
    return "\n".join(lines)


def worker(tasks: list[dict]) -> None:
    """Run the tasks the parent sent; print their results on one line for it to read."""
    results = []
    for task in tasks:
        if task["task"] == "time":
            results.append(time_compile(task["model"], task["variant"]))
        elif task["task"] == "memory":
            results.append(measure_memory(task["models"], task["positions"]))
        elif task["task"] == "profile":
            results.append({"task": "profile",
                            "text": profile_recorder(task["model"], task["rounds"])})
    print(RESULT + json.dumps(results), flush=True)


# -- in the parent: run the workers, alternating -----------------------------------------

def run_worker(tasks: list[dict], logs: bool, log_dir: Path) -> tuple[list[dict], float]:
    """Run tasks in a fresh interpreter; returns their results and the process's wall time."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if logs:
        env["TORCH_LOGS"] = "trace_bytecode"
    # Dynamo's log goes to a file, as a learner would keep it (2> log), not to a pipe.
    with tempfile.NamedTemporaryFile("w+b", dir=log_dir, suffix=".log", delete=False) as err:
        start = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(tasks)],
                                  env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=WORKER_LIMIT)
        except subprocess.TimeoutExpired:
            tail = Path(err.name).read_text(errors="replace")[-3000:]
            raise RuntimeError(f"worker took more than {WORKER_LIMIT} s on {tasks}: stopped; "
                               f"its log ends with:\n{tail}") from None
        wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT)]
    if proc.returncode != 0 or not lines:
        tail = Path(err.name).read_text(errors="replace")[-3000:]
        raise RuntimeError(f"worker failed (exit {proc.returncode}) on {tasks}:\n{tail}")
    os.unlink(err.name)
    return json.loads(lines[-1][len(RESULT):]), wall


def overhead(models: list[str], rounds: int, log_dir: Path, say) -> list[dict]:  # noqa: ANN001
    """Alternate the variants A B C A B C, each run in a fresh process of its own."""
    runs = []
    for r in range(rounds):
        for model in models:
            for variant in VARIANTS:
                say(f"round {r + 1}/{rounds}: {model} {variant}")
                (result,), wall = run_worker(
                    [{"task": "time", "model": model, "variant": variant}],
                    variant == "trace_bytecode", log_dir)
                runs.append({**result, "process_wall": wall})
    return runs


def smoke_run(models: list[str], memory_task: dict | None, log_dir: Path,
              say) -> tuple[list[dict], dict | None]:  # noqa: ANN001
    """The same measurements in two processes (one per TORCH_LOGS setting): quick, not fair."""
    tasks = [{"task": "time", "model": m, "variant": v} for m in models
             for v in ("plain", "recorded")]
    say("smoke: plain, recorded, memory and viewer in one process")
    results, _ = run_worker(tasks + ([memory_task] if memory_task else []), False, log_dir)
    say("smoke: trace_bytecode in one process")
    logged, _ = run_worker([{"task": "time", "model": m, "variant": "trace_bytecode"}
                            for m in models], True, log_dir)
    # Several runs shared a process: its wall time and peak RSS belong to no one run.
    runs = [{**res, "process_wall": None, "maxrss_mb": None}
            for res in results + logged if res["task"] == "time"]
    memory = next((res for res in results if res["task"] == "memory"), None)
    return runs, memory


def lessons(pattern: str, say) -> list[dict]:  # noqa: ANN001
    """Run each notebook top to bottom in a fresh kernel, on a copy; time it."""
    import nbclient
    import nbformat

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-lessons-") as tmp:
        folder = Path(tmp) / "notebooks"
        shutil.copytree(ROOT / "notebooks", folder)
        os.environ.pop("TORCH_LOGS", None)
        os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        for path in sorted(folder.glob(pattern)):
            say(f"lesson {path.name}")
            nb = nbformat.read(path, as_version=4)
            cells = sum(c.cell_type == "code" for c in nb.cells)
            client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                             resources={"metadata": {"path": str(folder)}})
            start = time.perf_counter()
            try:
                client.execute()
                status = "ok"
            except Exception as e:  # noqa: BLE001 - reported in the table
                status = f"failed: {type(e).__name__}"
            rows.append({"notebook": path.name, "cells": cells,
                         "seconds": time.perf_counter() - start, "status": status})
    return rows


# -- the report ------------------------------------------------------------------------------

def available(models: list[str]) -> tuple[list[str], list[str]]:
    """The models this environment can build, and those it cannot (no transformers)."""
    import importlib.util

    has_transformers = importlib.util.find_spec("transformers") is not None
    ok = [m for m in models if has_transformers or m.startswith("gpt-")]
    return ok, [m for m in models if m not in ok]


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or not b else f"{a / b:.3f}"


def summarise_overhead(runs: list[dict], models: list[str]) -> dict[str, dict]:
    out = {}
    for model in models:
        mine = [r for r in runs if r["model"] == model]
        by = {v: [r for r in mine if r["variant"] == v] for v in VARIANTS}
        steps = next((r["steps"] for r in by["recorded"] if r["steps"]), None)
        out[model] = {
            "steps": steps, "rounds": len(by["plain"]),
            "outcomes": next((r.get("outcomes") for r in by["recorded"]), None),
            **{f"{key}_{v}": _median([r[key] for r in by[v]])
               for key in ("wall", "cpu", "process_wall", "maxrss_mb", "log_bytes")
               for v in VARIANTS}}
    return out


def report(summary: dict, memory: dict | None, lesson_rows: list[dict] | None,
           total_s: float) -> str:
    """The markdown report: one table per section, then the targets."""
    lines = [f"Command: `{' '.join(['python', 'bench/run.py', *sys.argv[1:]])}`  ",
             f"Machine: {os.cpu_count()} cores; torch {_torch_version()}; "
             f"Python {sys.version.split()[0]}; whole run {total_s:.0f} s", ""]
    met = []
    if summary:
        rounds = min(s["rounds"] for s in summary.values())
        lines += [f"### 1. Recording overhead (first compile, backend=\"eager\"; median of "
                  f"{rounds} alternating round(s), one fresh process per run)", "",
                  "| model | steps | measure | plain | recorded | trace_bytecode "
                  "| recorded / plain | trace_bytecode / plain |",
                  "|---|---:|---|---:|---:|---:|---:|---:|"]
        measures = [("wall", "compile wall s"), ("cpu", "compile CPU s"),
                    ("process_wall", "process wall s"), ("maxrss_mb", "peak RSS MB")]
        for model, s in summary.items():
            for key, label in measures:
                p, r, t = (s[f"{key}_{v}"] for v in VARIANTS)
                if p is None:
                    continue  # smoke runs several models in one process: no per-run process
                digits = 0 if key == "maxrss_mb" else 3
                lines.append(f"| {model} | {s['steps'] or '–'} | {label} | {_num(p, digits)} "
                             f"| {_num(r, digits)} | {_num(t, digits)} | {_ratio(r, p)} "
                             f"| {_ratio(t, p)} |")
            ratio = s["wall_recorded"] / s["wall_plain"]
            met.append((f"overhead {model} (compile wall)", f"{ratio:.3f}",
                        f"≤ {TARGETS['overhead']}", ratio <= TARGETS["overhead"]))
        lines.append("")
    if memory is not None:
        lines += ["### 2. Memory (tracemalloc; recording = allocations freed by dropping it)", "",
                  "| model | steps | graph nodes | guards | peak plain MB | peak recorded MB "
                  "| recording KB | bytes / step | JSON KB | JSON bytes / step "
                  "| trace_bytecode log bytes / step |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in memory["rows"]:
            per_step = row["retained"] / max(row["steps"], 1)
            log = summary.get(row["model"], {}).get("log_bytes_trace_bytecode")
            steps_timed = summary.get(row["model"], {}).get("steps")
            lines.append(
                f"| {row['model']} | {row['steps']} | {row['nodes']} | {row['guards']} "
                f"| {row['peak_plain'] / 2**20:.1f} | {row['peak_recorded'] / 2**20:.1f} "
                f"| {row['retained'] / 1024:.0f} | {per_step:.0f} | {row['json'] / 1024:.0f} "
                f"| {row['json'] / max(row['steps'], 1):.0f} "
                f"| {_num(log / steps_timed if log and steps_timed else None, 0)} |")
            met.append((f"recording bytes/step {row['model']}", f"{per_step:.0f}",
                        f"< {TARGETS['bytes_per_step']}",
                        per_step < TARGETS["bytes_per_step"]))
        v = memory["viewer"]
        lines += ["", f"### 3. Viewer latency (`viewer.step = i` at {v['positions']} positions "
                  f"over the largest recording; the kernel's share only: the browser renders the panes, see bench/viewer_latency.py)", "",
                  "| recording | steps | positions | median ms | worst ms | viewer build s |",
                  "|---|---:|---:|---:|---:|---:|",
                  f"| {v['model']} | {v['steps']} | {v['positions']} | {v['median_ms']:.2f} "
                  f"| {v['worst_ms']:.2f} | {_num(v['build_s'], 2)} |", ""]
        met.append(("viewer median ms", f"{v['median_ms']:.2f}",
                    f"< {TARGETS['viewer_median_ms']}",
                    v["median_ms"] < TARGETS["viewer_median_ms"]))
        met.append(("viewer worst ms", f"{v['worst_ms']:.2f}",
                    f"< {TARGETS['viewer_worst_ms']}", v["worst_ms"] < TARGETS["viewer_worst_ms"]))
    if lesson_rows is not None:
        lines += ["### 4. Lesson cost (top to bottom, fresh kernel, kernel start included)", "",
                  "| notebook | code cells | seconds | status |", "|---|---:|---:|---|"]
        lines += [f"| {r['notebook']} | {r['cells']} | {r['seconds']:.1f} | {r['status']} |"
                  for r in lesson_rows]
        lines.append("")
    if met:
        lines += ["### Targets", "", "| target | value | goal | met |", "|---|---:|---|---|"]
        lines += [f"| {name} | {value} | {goal} | {'yes' if ok else 'NO'} |"
                  for name, value, goal, ok in met]
    return "\n".join(lines)


def _torch_version() -> str:
    from importlib.metadata import version

    try:
        return version("torch")
    except Exception:  # noqa: BLE001
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="tiny models, one round, one lesson: a check that this still runs")
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 5; smoke 1)")
    parser.add_argument("--positions", type=int, default=20, help="viewer positions (20)")
    parser.add_argument("--skip", action="append", default=[],
                        choices=["overhead", "memory", "lessons"], help="leave a section out")
    parser.add_argument("--json", type=Path, help="also write the raw results to this file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--profile", metavar="MODEL",
                        help="instead: where recording MODEL (e.g. gpt2-4) spends its time")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
            (result,), _ = run_worker([{"task": "profile", "model": args.profile,
                                        "rounds": args.rounds or 3}], False, Path(tmp))
        print(result["text"])
        return
    sizes = dict(SMOKE if args.smoke else FULL)
    skipped = []
    for section in ("overhead", "memory"):
        sizes[section], missing = available(sizes[section])
        skipped += [m for m in missing if m not in skipped]
    rounds = args.rounds or (1 if args.smoke else 5)

    start = time.perf_counter()

    def say(text: str) -> None:
        if not args.quiet:
            print(f"bench: {time.perf_counter() - start:5.0f} s  {text}", file=sys.stderr,
                  flush=True)

    raw: dict = {}
    memory_task = None if "memory" in args.skip else {
        "task": "memory", "models": sizes["memory"], "positions": args.positions}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        if args.smoke and "overhead" not in args.skip:
            raw["overhead"], memory = smoke_run(sizes["overhead"], memory_task, Path(tmp), say)
            if memory is not None:
                raw["memory"] = memory
        else:
            if "overhead" not in args.skip:
                raw["overhead"] = overhead(sizes["overhead"], rounds, Path(tmp), say)
            if memory_task is not None:
                say("memory and viewer")
                (raw["memory"],), _ = run_worker([memory_task], False, Path(tmp))
    if "lessons" not in args.skip:
        raw["lessons"] = lessons(sizes["lessons"], say)
    summary = summarise_overhead(raw["overhead"], sizes["overhead"]) if "overhead" in raw else {}
    text = report(summary, raw.get("memory"), raw.get("lessons"), time.perf_counter() - start)
    if skipped:
        text += (f"\n\nNot measured: {', '.join(skipped)} (transformers is not installed; "
                 "pip install -e .[bench])")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, **raw}, indent=1))
    print(text)


if __name__ == "__main__":
    main()
