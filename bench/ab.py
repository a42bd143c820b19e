"""Recording's cost on one model, in one process: plain and recorded compiles alternate.

    .venv/bin/python bench/ab.py gpt2-4 --rounds 15
    .venv/bin/python bench/ab.py gpt2-4 --against /tmp/old/variables.py  # two versions

Each round compiles the model once plain and once under `capture.record()` (which goes
first alternates), both with the collector's default settings and a `gc.collect()`
before; a third variant times the recorder's own step callback (`AttemptRecorder.step`)
with a clock around it. With `--against`, an older copy of one module of capture/ is
loaded beside the current one, and each round records once with each: the classes the
two define are switched method by method, in the same process.
Prints medians and ranges of compile CPU seconds, the ratio per
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
    parser.add_argument("--against", metavar="OLD.py",
                        help="an older copy of a module of capture/ (same file name)")
    opts = parser.parse_args()
    if opts.against:
        return against(opts)

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


def _methods(cls: type) -> dict:
    return {k: v for k, v in vars(cls).items()
            if callable(v) or isinstance(v, (property, classmethod, staticmethod))}


def against(opts: argparse.Namespace) -> None:
    """Old and new versions of one module's classes, recorded alternately, and plain."""
    import importlib
    import importlib.util

    import torch

    import capture
    from bench.models import build

    path = Path(opts.against)
    new = importlib.import_module(f"capture.{path.stem}")
    spec = importlib.util.spec_from_file_location(f"capture._old_{path.stem}", path,
                                                  submodule_search_locations=None)
    old = importlib.util.module_from_spec(spec)
    old.__package__ = "capture"
    sys.modules[spec.name] = old
    spec.loader.exec_module(old)
    # classes whose instances are made outside the module (a slotted class is made by
    # each version's own code, from its own module, and is left alone)
    shared = [name for name, v in vars(new).items()
              if isinstance(v, type) and v.__module__ == new.__name__
              and "__slots__" not in vars(v) and isinstance(getattr(old, name, None), type)]
    versions = {"new": {n: _methods(getattr(new, n)) for n in shared},
                "old": {n: _methods(getattr(old, n)) for n in shared}}

    def use(version: str) -> None:
        for n in shared:
            cls = getattr(new, n)
            for k in list(versions["new"][n]) + list(versions["old"][n]):
                if k in ("__dict__", "__weakref__", "__slots__"):
                    continue
                methods = versions[version][n]
                if k in methods:
                    setattr(cls, k, methods[k])
                elif k in vars(cls):
                    delattr(cls, k)

    model, args = build(opts.model)

    def compile_once(version: str | None) -> float:
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="eager")
        gc.collect()
        start = time.process_time()
        with torch.no_grad():
            if version is None:
                compiled(*args)
            else:
                use(version)
                with capture.record():
                    compiled(*args)
        return time.process_time() - start

    for v in (None, "old", "new"):
        compile_once(v)
    times: dict = {"plain": [], "old": [], "new": []}
    ratio = []
    for k in range(opts.rounds):
        order = [None, "old", "new"] if k % 2 == 0 else ["new", "old", None]
        t = {v: compile_once(v) for v in order}
        for v in order:
            times[v or "plain"].append(t[v])
        ratio.append(t["new"] / t["old"])
    use("new")
    print(f"{opts.model}: {opts.rounds} rounds of plain, old ({path}) and new "
          f"capture/{path.name} alternating; compile CPU s")
    for name, xs in [*times.items(), ("new / old", ratio),
                     ("old / plain", [o / p for o, p in zip(times["old"], times["plain"])]),
                     ("new / plain", [n / p for n, p in zip(times["new"], times["plain"])])]:
        print(f"  {name:12} median {statistics.median(xs):.3f}  range {min(xs):.3f}-{max(xs):.3f}")


if __name__ == "__main__":
    main()
