"""The garbage collector inside a timed compile: how many collections of each generation
ran while `torch.compile(model, backend="eager")` made its first call, plain and recorded,
and how long they took. Each run is a fresh process with Python's default collector
settings and a `gc.collect()` just before the compile, as in `bench/run.py`.

    .venv/bin/python bench/collector.py bert-4 [--rounds 2]

A full (generation 2) collection that lands inside one variant's window and not the
other's moves the overhead ratio by far more than the recorder's own work does; this
says whether that happened.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER_LIMIT = 600  # s: a worker compiles one small model (seconds); past this it hangs


def worker(model_name: str, variant: str) -> dict:
    import gc

    sys.path.insert(0, str(ROOT))
    import torch

    import capture
    from bench.models import build
    from bench.run import _warm_up

    counts, seconds, started = [0, 0, 0], [0.0, 0.0, 0.0], [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            counts[info["generation"]] += 1
            seconds[info["generation"]] += time.perf_counter() - started[0]

    model, args = build(model_name)
    _warm_up(variant == "recorded")
    gc.collect()
    gc.callbacks.append(on_gc)
    try:
        compiled = torch.compile(model, backend="eager")
        with torch.no_grad():
            wall = time.perf_counter()
            if variant == "recorded":
                with capture.record():
                    compiled(*args)
            else:
                compiled(*args)
            wall = time.perf_counter() - wall
    finally:
        gc.callbacks.remove(on_gc)
    return {"variant": variant, "wall": wall, "collections": counts, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a bench/models.py name, e.g. bert-4")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.worker:
        print("RESULT " + json.dumps(worker(a.model, a.worker)))
        return
    print("| round | variant | compile s | collections gen 0 / 1 / 2 | their seconds |")
    print("|---:|---|---:|---|---|")
    for r in range(a.rounds):
        for variant in ("plain", "recorded"):
            try:
                out = subprocess.run([sys.executable, __file__, a.model, "--worker", variant],
                                     capture_output=True, text=True, cwd=ROOT,
                                     env={**os.environ, "HF_HUB_OFFLINE": "1"},
                                     timeout=WORKER_LIMIT)
            except subprocess.TimeoutExpired:
                sys.exit(f"worker took more than {WORKER_LIMIT} s ({a.model}, {variant}): stopped")
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
            if out.returncode or not line:
                sys.exit(f"worker failed:\n{out.stderr[-2000:]}")
            d = json.loads(line[-1][7:])
            print(f"| {r + 1} | {variant} | {d['wall']:.2f} | "
                  f"{' / '.join(map(str, d['collections']))} | "
                  f"{' / '.join(f'{s:.3f}' for s in d['seconds'])} |")


if __name__ == "__main__":
    main()
