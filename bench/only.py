"""What `record(only=...)` costs on a training script, beside a plain run and a full recording.

The script: a 4-layer Hugging Face GPT-2 (width 64, vocabulary 1000, random weights, nothing
downloaded) compiled with `torch.compile(backend="eager")`, a compiled loss function, and a
training step (forward, loss, backward, SGD step) run three times with two sequence lengths
(a recompile). The time measured is the first three steps, compiles included, inside the
process. Three variants, each in a fresh interpreter, alternating plain / only / full for
every round:

- plain: no recording;
- only: `capture.record(only="loss_of")`: the loss function step by step, the model's
  compiles as summaries;
- full: `capture.record()`: every compile step by step.

    .venv/bin/python bench/only.py --rounds 7

prints a markdown table: each variant's median time (with its range), and the medians of
the per-round ratios to plain (with their range).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("plain", "only", "full")


def child(variant: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(HERE.parent))
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import capture

    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=64, n_head=4, vocab_size=1000, n_positions=64)
    model = torch.compile(GPT2LMHeadModel(config), backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="eager")
    def loss_of(logits, ids):
        return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())

    def train(steps):
        for length in steps:
            ids = torch.randint(0, 1000, (2, length))
            loss = loss_of(model(ids).logits, ids)
            loss.backward()
            opt.step()
            opt.zero_grad()

    # Dynamo's one-time imports fall on no variant
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
    torch._dynamo.reset()
    start = time.perf_counter()
    if variant == "plain":
        train((16, 24, 24))
        steps = 0
    else:
        with capture.record(only="loss_of" if variant == "only" else None) as rec:
            train((16, 24, 24))
        steps = rec.step_count
    print(json.dumps({"variant": variant, "seconds": time.perf_counter() - start, "steps": steps}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        child(opts.child)
        return
    runs: dict[str, list[float]] = {v: [] for v in VARIANTS}
    steps: dict[str, int] = {}
    for r in range(opts.rounds):
        for variant in VARIANTS:
            done = subprocess.run([sys.executable, __file__, "--child", variant], capture_output=True,
                                  text=True, timeout=600, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                sys.exit(f"{variant} failed:\n{done.stderr[-2000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[variant].append(result["seconds"])
            steps[variant] = result["steps"]
        print(f"round {r + 1}: " + ", ".join(f"{v} {runs[v][-1]:.2f} s" for v in VARIANTS),
              file=sys.stderr)
    print("| variant | steps stored | median s (min–max) | ratio to plain, median (min–max) |")
    print("| --- | --- | --- | --- |")
    for v in VARIANTS:
        ratios = [x / p for x, p in zip(runs[v], runs["plain"])]
        print(f"| {v} | {steps[v]:,} | {statistics.median(runs[v]):.2f} ({min(runs[v]):.2f}–"
              f"{max(runs[v]):.2f}) | {statistics.median(ratios):.3f}x ({min(ratios):.3f}–"
              f"{max(ratios):.3f}) |")


if __name__ == "__main__":
    main()
