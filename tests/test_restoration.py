"""After record() exits, however it exits, no patch or hook of ours remains."""

from __future__ import annotations

import gc
import threading

import pytest
import torch

import capture
from capture import hooks
from dynamo_oracle import seams
from scenarios import artifacts


@pytest.fixture
def untouched():
    before = seams()
    yield
    assert seams() == before
    assert hooks.installed() == []
    assert not capture.active()


def f(x):
    y = torch.sin(x)
    return y + 1


def test_hooks_are_in_place_only_inside_record(untouched):
    with capture.record():
        assert set(hooks.installed()) >= {"InstructionTranslatorBase.step",
                                          "convert_frame.register_bytecode_hook"}
        assert capture.active()
    assert hooks.installed() == []


def test_the_collector_is_left_as_the_program_set_it(untouched):
    before = gc.get_threshold(), gc.isenabled()
    torch._dynamo.reset()
    with capture.record():
        during = gc.get_threshold(), gc.isenabled()
        torch.compile(f, backend="eager")(torch.ones(2))
        compiled = gc.get_threshold(), gc.isenabled()
    # full collections run inside the block as outside (see tests/test_collector.py)
    assert during == compiled == before
    assert (gc.get_threshold(), gc.isenabled()) == before


def test_thresholds_the_program_sets_inside_the_block_stay():
    before = gc.get_threshold()
    try:
        with capture.record():
            gc.set_threshold(500, 5, 5)
        assert gc.get_threshold() == (500, 5, 5)
    finally:
        gc.set_threshold(*before)


def test_restored_after_user_exception(untouched):
    def boom(x):
        y = x + 1
        raise ValueError("user code failed")

    torch._dynamo.reset()
    with pytest.raises(ValueError, match="user code failed"):
        with capture.record() as rec:
            torch.compile(boom, backend="eager")(torch.ones(2))
    assert rec.ended_by.startswith("ValueError")


def test_restored_after_dynamo_error_under_fullgraph(untouched):
    def breaks(x):
        print("not allowed under fullgraph")
        return x + 1

    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        with capture.record() as rec:
            torch.compile(breaks, backend="eager", fullgraph=True)(torch.ones(2))
    assert rec.compiles and rec.compiles[-1].outcome == "error"
    assert "Unsupported" in rec.compiles[-1].error


def test_restored_after_keyboard_interrupt_mid_trace(untouched):
    """A KeyboardInterrupt raised from inside Dynamo's tracing of the frame."""
    def interrupt():
        raise KeyboardInterrupt

    def slow(x):
        for _ in range(5):
            x = x + 1
        torch._dynamo.graph_break()
        return x

    torch._dynamo.reset()
    calls = {"n": 0}
    original = capture.attempt.AttemptRecorder.step

    def step(self, tx, inst):
        original(self, tx, inst)
        calls["n"] += 1
        if calls["n"] == 6:
            interrupt()

    capture.attempt.AttemptRecorder.step = step
    try:
        with pytest.raises(KeyboardInterrupt):
            with capture.record() as rec:
                torch.compile(slow, backend="eager")(torch.ones(2))
    finally:
        capture.attempt.AttemptRecorder.step = original
    assert rec.ended_by == "KeyboardInterrupt"
    assert rec.compiles[0].outcome == "interrupted"
    assert 1 <= len(rec.compiles[0].steps) <= 6


def test_restored_when_step_cap_is_hit(untouched):
    torch._dynamo.reset()
    with capture.record(max_steps=3) as rec:
        out = torch.compile(f, backend="eager")(torch.ones(2))
    assert torch.equal(out, torch.sin(torch.ones(2)) + 1)
    assert rec.truncated and rec.compiles[0].truncated
    assert len(rec.compiles[0].steps) == 3
    assert rec.compiles[0].graph_code is not None  # Dynamo ran on unaffected
    assert any(e.kind == "step_cap" for e in rec.events)


def test_plain_compile_after_recording_is_as_if_never_recorded(untouched):
    reference = artifacts("branch")
    for _ in range(2):
        with capture.record():
            torch._dynamo.reset()
            torch.compile(f, backend="eager")(torch.ones(3))
    assert artifacts("branch") == reference


def test_nested_record_is_refused_and_outer_recording_survives(untouched):
    torch._dynamo.reset()
    with capture.record() as outer:
        with pytest.raises(RuntimeError, match="one thing at a time"):
            with capture.record():
                pass
        torch.compile(f, backend="eager")(torch.ones(2))
    assert [c.compile_id for c in outer.compiles] == ["0/0"]
    assert outer.compiles[0].graph_code


def test_record_from_a_second_thread_is_refused_clearly(untouched):
    errors = []

    def other():
        try:
            with capture.record():
                pass
        except RuntimeError as e:
            errors.append(str(e))

    with capture.record():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert errors and "another thread" in errors[0]


def test_bad_max_steps_gets_a_message_that_says_what_to_do(untouched):
    for bad in (0, -1, 2.5, "10", True):
        with pytest.raises(ValueError, match="positive whole number"):
            with capture.record(max_steps=bad):
                pass


def test_importing_capture_changes_no_torch_setting():
    import subprocess
    import sys

    script = (
        "import torch, json;"
        "before = {k: repr(v) for k, v in torch._dynamo.config.get_config_copy().items()};"
        "import capture, widgets;"
        "after = {k: repr(v) for k, v in torch._dynamo.config.get_config_copy().items()};"
        "print(json.dumps(sorted(k for k in before if before[k] != after[k])))"
    )
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=root, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"
