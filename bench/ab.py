"""Recording's cost on one model, in one process: plain and recorded compiles alternate.

    .venv/bin/python bench/ab.py gpt2-4 --rounds 15

Each round compiles the model once plain and once under `capture.record()` (which goes
first alternates), both with the collector's default settings and a `gc.collect()`
before; a third variant times the recorder's own step callback (`AttemptRecorder.step`)
with a clock around it. Prints medians and ranges of compile CPU seconds, the ratio per
round (recorded / the plain run of the same round) and the recorder's microseconds a step.
On a busy machine read the range, not the median alone.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", default="gpt2-4")
    parser.add_argument("--rounds", type=int, default=15)
    opts = parser.parse_args()

    import torch

    import capture
    from bench.models import build
    from capture import attempt

    model, args = build(opts.model)

    def compile_once(recorded: bool) -> float:
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="eager")
        gc.collect()
        start = time.process_time()
        with torch.no_grad():
            if recorded:
                with capture.record() as rec:
                    compiled(*args)
                steps[0] = rec.step_count
            else:
                compiled(*args)
        return time.process_time() - start

    steps = [0]
    compile_once(True)
    compile_once(False)
    plain, recorded, ratios = [], [], []
    for k in range(opts.rounds):
        order = (False, True) if k % 2 == 0 else (True, False)
        t = {r: compile_once(r) for r in order}
        plain.append(t[False])
        recorded.append(t[True])
        ratios.append(t[True] / t[False])

    # the recorder's own work: a clock around every step callback (one extra run)
    original = attempt.AttemptRecorder.step
    spent = [0.0]

    def timed(self, tx, inst):  # noqa: ANN001
        start = time.perf_counter()
        original(self, tx, inst)
        spent[0] += time.perf_counter() - start

    per_step = []
    attempt.AttemptRecorder.step = timed
    try:
        for _ in range(max(3, opts.rounds // 3)):
            spent[0] = 0.0
            compile_once(True)
            per_step.append(1e6 * spent[0] / steps[0])
    finally:
        attempt.AttemptRecorder.step = original

    def show(name: str, xs: list[float], unit: str = "s") -> None:
        print(f"  {name:22} median {statistics.median(xs):.3f}{unit}  "
              f"range {min(xs):.3f}-{max(xs):.3f}{unit}")

    print(f"{opts.model}: {steps[0]} steps, {opts.rounds} alternating rounds, compile CPU")
    show("plain", plain)
    show("recorded", recorded)
    show("recorded / plain", ratios, "x")
    show("AttemptRecorder.step", per_step, " us/step")


if __name__ == "__main__":
    main()
