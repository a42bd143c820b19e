"""Recording leaves the garbage collector alone: a program that makes reference cycles
inside `record()` has them collected as it would without recording."""

from __future__ import annotations

import gc

import torch

import capture

CYCLES = 30


class _Cycle:
    """A reference cycle that reaches the oldest generation before it becomes garbage, as a
    training script's per-epoch state does: only a full collection frees it."""

    alive = 0

    def __init__(self) -> None:
        self.me = self
        # tracked containers that live while young collections run, so the cycle and they
        # are promoted to generation 2 (and count towards its next full collection)
        self.payload = [[] for _ in range(25_000)]
        _Cycle.alive += 1

    def __del__(self) -> None:
        _Cycle.alive -= 1


def _epochs() -> tuple[int, int]:
    """Make CYCLES cycles, one at a time; (full collections run, most cycles alive at once)."""
    full = [0]

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full[0] += 1

    gc.callbacks.append(count)
    peak = 0
    try:
        for _ in range(CYCLES):
            _Cycle()  # garbage at once, but only once it is old
            peak = max(peak, _Cycle.alive)
    finally:
        gc.callbacks.remove(count)
    return full[0], peak


def test_full_collections_run_inside_a_recording_and_memory_stays_flat():
    gc.collect()
    _Cycle.alive = 0
    plain_full, plain_peak = _epochs()
    gc.collect()
    assert _Cycle.alive == 0

    torch._dynamo.reset()
    f = torch.compile(lambda x: x.sin() * 2, backend="eager")
    with capture.record() as rec:
        f(torch.ones(3))  # the compile, recorded
        recorded_full, recorded_peak = _epochs()
        inside = gc.get_threshold()
    gc.collect()
    assert rec.step_count > 0 and _Cycle.alive == 0
    assert plain_full > 0 and recorded_full > 0, (plain_full, recorded_full)
    # flat: cycles are freed as the loop goes, not kept until the block ends
    assert recorded_peak < CYCLES // 2 and recorded_peak <= plain_peak + 2, (
        recorded_peak, plain_peak)
    assert inside == gc.get_threshold()
