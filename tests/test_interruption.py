"""Interrupted, capped, limited and very long traces: the partial recording is kept and
marked, memory stays bounded, and torch is left exactly as a fresh process would have it.

"Exactly as before" is checked against an interpreter that never imported the project:
after each ordeal, the scenarios of `scenarios.py` compile in this process to the same
graphs, guard trees and rewritten bytecode as there (`dynamo_oracle.fresh_process_artifacts`).
"""

from __future__ import annotations

import _thread
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import weakref

import pytest
import torch

import capture
from viewer_data import sent
import capture.recorder
from capture import hooks
from dynamo_oracle import (ROOT, artifacts_of, eager_results, force_restore,
                           fresh_process_artifacts, logging_lock_held, normalise,
                           recorded_artifacts, scenario_artifacts, seams)

ORACLE_SCENARIOS = ("branch", "module")


@pytest.fixture(autouse=True)
def restored():
    """Each test checks restoration itself; if a bug left hooks behind, undo them afterwards."""
    before = seams()
    yield before
    if (seams() != before or capture.active() or capture.recorder._lock.locked()
            or logging_lock_held()):
        force_restore(before)


def assert_torch_as_in_a_fresh_process():
    assert hooks.installed() == []
    assert not capture.active()
    assert scenario_artifacts(ORACLE_SCENARIOS) == fresh_process_artifacts(ORACLE_SCENARIOS)


def counting_loop(n):
    """A frame whose loop Dynamo unrolls n times: about 7 instructions per iteration."""
    def loop(x):
        k = 0
        for i in range(n):
            k = k + i
        return x + k
    return loop


# -- KeyboardInterrupt in the middle of a trace --------------------------------------------

class StopButton:
    """Jupyter's stop button: SIGINT to the main thread, `delay` s after Dynamo's first step.

    A KeyboardInterrupt that CPython happens to raise inside a weakref callback or a
    finalizer run by the garbage collector is printed as "Exception ignored" and lost
    (the GC runs often while Dynamo traces). A learner then presses stop again; so does
    this button, one second after a press that did not stop the trace: Dynamo finished a
    step after it. Once a press has stopped the trace, the button is not pressed again, so what
    the program does after the interrupt (the magic building its viewer) runs undisturbed
    however slow the machine. Only its own presses raise: a stray SIGINT after the test is
    ignored.
    """

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.presses = 0
        self._armed = False
        self._raised_at: float | None = None
        self._steps = 0  # steps Dynamo finished since the button was started
        self._steps_at_raise = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._old_handler = None

    def _handler(self, signum, frame):
        if self._armed:
            self._armed = False
            self._raised_at, self._steps_at_raise = time.monotonic(), self._steps
            raise KeyboardInterrupt

    def _press_until_done(self):
        if self._done.wait(self.delay):
            return
        while not self._done.is_set():
            lost = (self._raised_at is not None and self._steps > self._steps_at_raise
                    and time.monotonic() - self._raised_at > 1.0)
            if (self._raised_at is None and not self._armed) or lost:
                self._armed, self._raised_at = True, None
                self.presses += 1
                _thread.interrupt_main()
            self._done.wait(0.25)

    def start_at_first_step(self, monkeypatch) -> None:
        original = capture.recorder.Recorder.on_step

        def on_step(recorder, tx, inst, exc):
            if exc is None:  # the step a press interrupted, and its callers', do not count
                self._steps += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._press_until_done, daemon=True)
                self._thread.start()
            original(recorder, tx, inst, exc)

        monkeypatch.setattr(capture.recorder.Recorder, "on_step", on_step)

    def __enter__(self) -> StopButton:
        self._old_handler = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        time.sleep(0.05)  # a press still pending reaches our handler, which ignores it
        signal.signal(signal.SIGINT, self._old_handler)


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # lost presses
@pytest.mark.parametrize("delay", [0.05, 0.4, 1.2])
def test_keyboard_interrupt_mid_trace_keeps_the_partial_recording_marked(
        delay, restored, monkeypatch):
    """An interrupt landing wherever Dynamo happens to be, as the stop button sends it."""
    torch._dynamo.reset()
    rec = None
    with StopButton(delay) as button:
        button.start_at_first_step(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            with capture.record(max_steps=200_000) as rec:
                # 100 000 iterations: Dynamo needs seconds, the interrupt comes first
                torch.compile(counting_loop(100_000), backend="eager")(torch.zeros(2))
    monkeypatch.undo()
    assert button.presses >= 1
    assert seams() == restored
    assert rec.ended_by == "KeyboardInterrupt"
    (c,) = rec.compiles
    assert c.outcome == "interrupted" and 0 < len(c.steps) < 700_000
    assert [e.kind for e in rec.events][-1] == "ended"
    assert "interrupted" in c.title()
    # the partial recording reads like any other: text, JSON, viewer
    assert "ended by: KeyboardInterrupt" in str(rec)
    again = capture.Recording.from_json(rec.to_json())
    assert again.compiles[0].outcome == "interrupted" and again.ended_by == "KeyboardInterrupt"
    from widgets import TraceViewer
    viewer = TraceViewer(rec, step=len(c.steps) - 1)
    assert sent(viewer)["ended_by"] == "KeyboardInterrupt" and viewer.step == len(c.steps) - 1
    assert_torch_as_in_a_fresh_process()


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # lost presses
def test_the_magic_shows_the_partial_recording_of_an_interrupted_cell(
        ipython_shell, capsys, monkeypatch):
    import widgets.magic

    shown = []
    monkeypatch.setattr(widgets.magic, "display", shown.append)
    cell = textwrap.dedent('''\
        %%capture_trace
        def loop(x):
            k = 0
            for i in range(100_000):
                k = k + i
            return x + k
        torch.compile(loop, backend="eager")(torch.zeros(2))
        ''')
    capsys.readouterr()
    with StopButton(0.5) as button:
        button.start_at_first_step(monkeypatch)
        ipython_shell.run_cell(cell)
    out, err = capsys.readouterr()
    assert "KeyboardInterrupt" in out + err
    r = ipython_shell.user_ns["_trace"]
    assert r.ended_by == "KeyboardInterrupt"
    assert r.compiles and r.compiles[0].outcome == "interrupted" and r.compiles[0].steps
    (viewer,) = shown
    assert viewer.recording is r and sent(viewer)["ended_by"] == "KeyboardInterrupt"
    assert hooks.installed() == [] and not capture.active()
    assert ipython_shell.run_cell("_after_interrupt = 1 + 1").success


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_press_lost_in_a_garbage_collector_callback_still_stops_the_trace(monkeypatch):
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    original = capture.recorder.Recorder.on_step
    count = 0
    keep = []

    class Litter:
        pass

    def on_step(recorder, tx, inst, exc):
        nonlocal count
        original(recorder, tx, inst, exc)
        count += 1
        if count == 50:
            # the press arrives while a weakref callback runs, as when the GC collects
            litter = Litter()
            keep.append(weakref.ref(litter, lambda ref: signal.raise_signal(signal.SIGINT)))
            del litter

    monkeypatch.setattr(capture.recorder.Recorder, "on_step", on_step)
    torch._dynamo.reset()
    try:
        with pytest.raises(KeyboardInterrupt):
            with capture.record() as rec:
                torch.compile(counting_loop(3000), backend="eager")(torch.zeros(2))
    finally:
        signal.signal(signal.SIGINT, old)
    assert rec.ended_by == "KeyboardInterrupt"
    assert rec.compiles[0].outcome == "interrupted" and len(rec.compiles[0].steps) < 1000


def entered_functions_interrupted_at(k, body):
    """Run body with a KeyboardInterrupt raised at the k-th Python function entry.

    CPython delivers a pending SIGINT when a function starts (its RESUME instruction),
    so raising at the k-th "call" event is exactly "the interrupt arrived just as that
    function was called". Returns where it was raised, or None if body made fewer calls.
    """
    count, where = 0, None

    def tracer(frame, event, arg):
        nonlocal count, where
        if event == "call":
            count += 1
            if count == k:
                path = frame.f_code.co_filename
                shown = (os.path.relpath(path, ROOT) if path.startswith(str(ROOT) + os.sep)
                         else os.path.join(*path.split(os.sep)[-2:]))
                where = f"{shown}:{frame.f_code.co_firstlineno} {frame.f_code.co_name}"
                raise KeyboardInterrupt
        return None

    sys.settrace(tracer)
    try:
        body()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    return where


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # in GC callbacks
def test_an_interrupt_at_any_call_while_entering_or_leaving_record_leaves_nothing_behind(
        restored):
    def body():
        with capture.record():
            pass

    left_behind = []
    k = 1
    while (where := entered_functions_interrupted_at(k, body)) is not None:
        lock_held = capture.recorder._lock.locked()
        logging_held = logging_lock_held()
        if seams() != restored or capture.active() or lock_held or logging_held:
            left_behind.append(f"interrupt on entering {where}: left {hooks.installed()}"
                               + (", the recorder's lock held" if lock_held else "")
                               + (", logging's module lock held" if logging_held else ""))
            force_restore(restored)
        k += 1
    assert k > 20  # the walk did visit record()'s set-up and tear-down
    assert left_behind == [], "\n".join(left_behind)


# -- the step cap ----------------------------------------------------------------------------

def test_the_step_cap_truncates_the_recording_and_changes_nothing_dynamo_does():
    def make():
        return [(counting_loop(200), (torch.ones(2),))]

    plain = artifacts_of(make)
    with_recording, (rec,) = recorded_artifacts(make, max_steps=300)
    assert with_recording == plain and plain["results"] == eager_results(make)
    (c,) = rec.compiles
    assert len(c.steps) == 300 == rec.step_count
    assert c.truncated and rec.truncated and "truncated" in c.title()
    assert [e.kind for e in rec.events].count("step_cap") == 1
    assert c.outcome == "compiled" and c.graph_code and c.guard_tree  # Dynamo went on
    assert_torch_as_in_a_fresh_process()


def broken_twice(x):
    y = x.sin()
    print("first break")
    y = y.cos()
    print("second break")
    return y + 1


def test_compiles_after_the_cap_are_listed_with_no_steps_and_the_views_say_so(capsys):
    def make():
        return [(broken_twice, (torch.ones(3),))]

    plain = artifacts_of(make)
    with_recording, (rec,) = recorded_artifacts(make, max_steps=5)
    capsys.readouterr()
    assert with_recording == plain
    assert rec.step_count == 5 and rec.truncated
    assert [c.compile_id for c in rec.compiles] == ["0/0", "0/0_1", "1/0", "1/0_1", "2/0"]
    assert [len(c.steps) for c in rec.compiles] == [5, 0, 0, 0, 0]
    assert all(c.truncated for c in rec.compiles)
    # graphs are still read from the backend: the cap limits steps, not what Dynamo did
    assert [normalise(c.graph_code) for c in rec.compiles if c.graph_code] == [
        g.strip("\n") for g in plain["graphs"]]
    from widgets import TraceViewer
    viewer = TraceViewer(rec)
    # what the viewer is sent says so (the browser tests check how it reads)
    data = sent(viewer)
    assert [len(c["steps"]) for c in data["compiles"]] == [5, 0, 0, 0, 0]
    assert data["truncated"] and data["max_steps"] == 5
    assert any(e["kind"] == "step_cap" and "max_steps=5" in e["message"] for e in data["events"])
    for k in range(len(rec.compiles)):
        viewer.compile = k
        assert viewer.step == 0


def retained_and_peak(record_kwargs, program):
    """Bytes a recording keeps, and the peak while it was made (tracemalloc)."""
    torch._dynamo.reset()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        with capture.record(**record_kwargs) as rec:
            torch.compile(program, backend="eager")(torch.ones(2))
        torch._dynamo.reset()  # drop Dynamo's own caches: what is left is the recording's
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return rec, kept - base, peak - base


@pytest.mark.timeout(180)
def test_memory_of_a_capped_recording_is_bounded_by_the_cap_not_the_trace():
    unbounded, kept_all, peak_all = retained_and_peak({}, counting_loop(1500))
    capped, kept_cap, peak_cap = retained_and_peak({"max_steps": 500}, counting_loop(1500))
    assert unbounded.step_count > 10_000 and capped.step_count == 500 and capped.truncated
    per_step = kept_all / unbounded.step_count
    assert kept_cap < 3 * 500 * per_step  # proportional to what was stored
    assert kept_cap < kept_all / 8 and peak_cap < peak_all / 4


LONG_TRACE = r'''
import gc, json, resource, sys, time, tracemalloc
import torch, capture, scenarios

N, CAP = int(sys.argv[1]), int(sys.argv[2])

def counting_loop(n):
    def loop(x):
        k = 0
        for i in range(n):
            k = k + i
        return x + k
    return loop

# what one stored step costs: a small uncapped recording, measured
torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
torch._dynamo.reset(); gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
with capture.record() as small:
    torch.compile(counting_loop(500), backend="eager")(torch.ones(2))
torch._dynamo.reset(); gc.collect()
per_step = (tracemalloc.get_traced_memory()[0] - base) / small.step_count
steps_per_iteration = small.step_count / 500
tracemalloc.stop()
del small; gc.collect()

def peak_rss():
    """The process's peak resident memory (VmHWM), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

try:  # Linux: start the peak afresh, so it measures this trace alone
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
except OSError:
    pass
rss_before = peak_rss()
start = time.perf_counter()
with capture.record(max_steps=CAP) as rec:
    out = torch.compile(counting_loop(N), backend="eager")(torch.zeros(2))
seconds = time.perf_counter() - start
rss_growth = peak_rss() - rss_before
print(json.dumps({
    "seconds": seconds, "rss_growth": rss_growth, "per_step": per_step,
    "steps_per_iteration": steps_per_iteration, "steps": rec.step_count,
    "truncated": rec.truncated, "events": [e.kind for e in rec.events],
    "outcome": rec.compiles[0].outcome, "graph_code": rec.compiles[0].graph_code,
    "right": torch.equal(out, counting_loop(N)(torch.zeros(2))),
    "artifacts": {n: scenarios.artifacts(n) for n in %(names)r},
}))
'''


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_loop_unrolled_a_hundred_thousand_times_keeps_memory_bounded_by_the_cap():
    """Plain Dynamo takes 3.5 s (warm) to 12 s (cold, busy machine) for this frame here."""
    n, cap = 100_000, 2_000
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    script = LONG_TRACE % {"names": list(ORACLE_SCENARIOS)}
    out = subprocess.run([sys.executable, "-c", script, str(n), str(cap)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=580)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["right"] and got["outcome"] == "compiled" and "+ 4999950000" in got["graph_code"]
    assert got["steps"] == cap and got["truncated"]
    assert got["events"].count("step_cap") == 1
    unbounded = got["per_step"] * got["steps_per_iteration"] * n  # had every step been stored
    assert unbounded > 200e6
    assert got["rss_growth"] < unbounded / 3, (got["rss_growth"], unbounded)
    # and after it, Dynamo in that process compiles as in a fresh one
    assert got["artifacts"] == fresh_process_artifacts(ORACLE_SCENARIOS)


# -- the recompile limit ----------------------------------------------------------------------

def tagged(x, tag):
    return x * len(tag)


def test_reaching_the_recompile_limit_is_an_event_and_dynamo_behaves_as_without_recording():
    def make():
        return [(tagged, (torch.ones(2), tag)) for tag in ("a", "bb", "ccc", "dddd", "eeeee")]

    before = torch._dynamo.config.recompile_limit
    with torch._dynamo.config.patch(recompile_limit=2):
        plain = artifacts_of(make)
        with_recording, recordings = recorded_artifacts(make)
        assert torch._dynamo.config.recompile_limit == 2  # the user's setting, untouched
    assert torch._dynamo.config.recompile_limit == before
    assert with_recording == plain and plain["results"] == eager_results(make)
    compiles = [c for r in recordings for c in r.compiles]
    assert [c.compile_id for c in compiles] == ["0/0", "0/1"]
    limit_events = [e for r in recordings for e in r.events if e.kind == "cache_limit"]
    assert len(limit_events) == 1 and "recompile_limit=2" in limit_events[0].message
    assert compiles[1].recompile_reasons and "tag" in compiles[1].recompile_reasons[0]
    hit = next(r for r in recordings if any(e.kind == "cache_limit" for e in r.events))
    assert any("recompile limit" in e.message for e in hit.events if e.kind == "cache_limit")
    assert_torch_as_in_a_fresh_process()
