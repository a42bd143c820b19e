"""What recording the stages after Dynamo costs, beside torch's own ways of seeing them.

    flock /tmp/dynamo-lab-heavy.lock .venv/bin/python bench/stages.py            # 3 rounds
    .venv/bin/python bench/stages.py --rounds 1 --models chain                 # quick look

The first call (and backward, where there is one) of `torch.compile(model,
backend="inductor")`, timed from the call to the end of the backward, five ways:

- plain: nothing recorded;
- record: inside `capture.record()` (the steps, no stages);
- record+stages: inside `capture.record(after_dynamo=True)`;
- TORCH_LOGS: plain, with `TORCH_LOGS=aot_graphs,output_code` (written to a file);
- TORCH_TRACE: plain, with `TORCH_TRACE=<dir>` (the structured trace tlparse reads).

Each run is a fresh process with its own empty `TORCHINDUCTOR_CACHE_DIR`, so every
run compiles its C++ afresh (a warm cache would time the cache, not the compile);
the five alternate within each round, a small warm-up compile of another function
comes first in every process. Prints a markdown table: median and range (min-max)
in seconds, the median's ratio to plain, and for the recorded runs the JSON size.

Not a test: timings on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODES = ("plain", "record", "record+stages", "TORCH_LOGS", "TORCH_TRACE")
MODELS = ("mlp", "chain")

# One run, in a fresh interpreter: argv = mode, model. Prints {"seconds", "json_bytes"}.
_CHILD = r'''
import json, sys, time
import torch
mode, model = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
if model == "mlp":
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    def fn(x):
        return net(x).sum()
    backward = True
else:
    def fn(x):
        a = x.sin()
        b = a * 2 + 1
        return (b.relu() - x.cos()).exp()
    x = torch.randn(64, 64)
    backward = False

def warm(y):
    return y.cos() + 1
torch.compile(warm, backend="inductor")(torch.ones(3))  # one-time imports on no variant
torch._dynamo.reset()

import contextlib
size = None
if mode in ("record", "record+stages"):
    import capture
    ctx = capture.record(after_dynamo=mode == "record+stages")
else:
    ctx = contextlib.nullcontext()
compiled = torch.compile(fn, backend="inductor")
start = time.perf_counter()
with ctx as rec:
    out = compiled(x)
    if backward:
        out.backward()
seconds = time.perf_counter() - start
if rec is not None:
    size = len(rec.to_json())
    stages = sum(len(c.stages) for c in rec.compiles)
else:
    stages = None
print(json.dumps({"seconds": seconds, "json_bytes": size, "stages": stages}))
'''


def run_once(mode: str, model: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="dynamo-lab-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "TORCH_TRACE")}
        env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tmp) / "inductor")
        env["PYTHONPATH"] = str(ROOT)
        if mode == "TORCH_LOGS":
            env["TORCH_LOGS"] = "aot_graphs,output_code"
        if mode == "TORCH_TRACE":
            env["TORCH_TRACE"] = str(Path(tmp) / "trace")
        with open(Path(tmp) / "stderr.txt", "w") as err:  # TORCH_LOGS writes to stderr
            out = subprocess.run([sys.executable, "-c", _CHILD, mode, model], env=env,
                                 stdout=subprocess.PIPE, stderr=err, text=True, timeout=900)
        if out.returncode != 0:
            raise RuntimeError(f"{mode} {model} failed:\n"
                               + (Path(tmp) / "stderr.txt").read_text()[-2000:])
        return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    args = parser.parse_args(argv)
    results: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for model in args.models:
            for mode in MODES:
                results.setdefault((model, mode), []).append(run_once(mode, model))
                print(f"round {r + 1}/{args.rounds} {model:<6} {mode:<14} "
                      f"{results[(model, mode)][-1]['seconds']:.2f} s", file=sys.stderr)
    print(f"\nFirst call (+ backward) under inductor, cold cache, {args.rounds} rounds, "
          "fresh process each, seconds:\n")
    print("| model | way | median | range | vs plain | JSON |")
    print("|---|---|---:|---:|---:|---:|")
    for model in args.models:
        base = statistics.median(r["seconds"] for r in results[(model, "plain")])
        for mode in MODES:
            runs = results[(model, mode)]
            times = [r["seconds"] for r in runs]
            med = statistics.median(times)
            size = runs[-1]["json_bytes"]
            shown = f"{size / 1024:.0f} KB" if size is not None else ""
            print(f"| {model} | {mode} | {med:.2f} | {min(times):.2f}-{max(times):.2f} | "
                  f"{med / base:.2f}x | {shown} |")


if __name__ == "__main__":
    main()
