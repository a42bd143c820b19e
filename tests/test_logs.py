"""capture.logs: Dynamo's TORCH_LOGS output caught as data, and torch's logging exactly as
it was afterwards."""

from __future__ import annotations

import contextlib
import io
import logging

import pytest

torch = pytest.importorskip("torch")
capture = pytest.importorskip("capture")

import torch._logging._internal as internal  # noqa: E402


def logging_state():
    """Everything about torch's loggers that set_logs changes, as comparable values."""
    names = (internal.log_registry.get_log_qnames()
             | internal.log_registry.get_artifact_log_qnames()
             | internal.log_registry.get_child_log_qnames())
    loggers = {n: logging.getLogger(n) for n in sorted(names)}
    loggers["<trace>"] = internal.trace_log
    out = {name: (lg.level, lg.propagate, tuple(lg.handlers), lg.disabled,
                  lg.__dict__.get("isEnabledFor"))
           for name, lg in loggers.items()}
    state = internal.log_state
    out["<log_state>"] = (dict(state.log_qname_to_level), frozenset(state.artifact_names))
    return out


def shout(x, word):
    return x * len(word)


def rescale(x):
    return x / x.sum().item()


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_recompile_reasons_are_caught_with_their_compile_id():
    compiled = torch.compile(shout, backend="eager")
    with capture.logs("recompiles") as log:
        compiled(torch.ones(2), "hi")
        compiled(torch.ones(2), "hi")
        compiled(torch.ones(2), "hey")
    recompiles = [line for line in log.lines if line.artifact == "recompiles"]
    assert len(recompiles) == 1  # the cache hit logs nothing
    line = recompiles[0]
    assert line.compile_id == "0/1"
    assert "Recompiling function shout" in line.message
    assert "0/0: word == 'hi'" in line.message
    assert "[0/1] [__recompiles] Recompiling function shout" in log.text


def test_guards_artifact_prints_the_guard_tree():
    with capture.logs("guards") as log:
        torch.compile(shout, backend="eager")(torch.ones(2), "hi")
    text = "\n".join(log.messages("guards"))
    assert "TREE_GUARD_MANAGER" in text and "EQUALS_MATCH: L['word'] == 'hi'" in text


def test_a_log_name_sets_a_level_and_plus_means_debug():
    def halves(a):
        if a.shape[0] * 2 < 16:
            return a + 1
        return a - 1

    with capture.logs("dynamic") as log:
        torch.compile(halves, backend="eager", dynamic=True)(torch.ones(8))
    assert any("[guard added]" in m and "2*s" in m for m in log.messages())
    assert {line.level for line in log.lines} <= {"INFO", "WARNING", "ERROR"}
    torch._dynamo.reset()
    with capture.logs("+dynamic") as verbose:
        torch.compile(halves, backend="eager", dynamic=True)(torch.ones(8))
    assert any(line.level == "DEBUG" for line in verbose.lines)


def test_with_no_names_warnings_are_caught_and_nothing_reaches_stderr(capfd):
    # Dynamo warns about .item() once per process (a functools.cache): forget that it did.
    from torch._dynamo.variables.tensor import TensorVariable

    TensorVariable._warn_capture_scalar_outputs.cache_clear()
    with capture.logs() as log:
        torch.compile(rescale, backend="eager")(torch.ones(3))
    assert any("Tensor.item()" in w and "capture_scalar_outputs" in w for w in log.warnings)
    assert all(line.level in ("WARNING", "ERROR", "CRITICAL") for line in log.lines)
    assert "capture_scalar_outputs" not in capfd.readouterr().err


def test_inside_the_block_warnings_are_caught_and_after_it_torch_prints_them_again():
    # Dynamo warns about .item() once per process, so this test logs through its logger.
    dynamo_log = logging.getLogger("torch._dynamo")
    printed = io.StringIO()
    torch_handlers = [h for h in dynamo_log.handlers if internal._is_torch_handler(h)]
    assert torch_handlers, "torch prints Dynamo's warnings through a handler of its own"
    # torch 2.13's handler is a StreamHandler bound to a stream; 2.14's writes to whatever
    # sys.stderr is at the time.
    bound = [h for h in torch_handlers if hasattr(h, "setStream")]
    streams = [h.setStream(printed) for h in bound]
    try:
        with contextlib.redirect_stderr(printed):
            with capture.logs("recompiles") as log:
                dynamo_log.warning("inside the block")
            dynamo_log.warning("after the block")
    finally:
        for h, stream in zip(bound, streams):
            h.setStream(stream)
    assert log.warnings == ["inside the block"]
    assert "inside the block" not in printed.getvalue()
    assert "after the block" in printed.getvalue()


def test_logging_state_is_restored_exactly():
    before = logging_state()
    with capture.logs("recompiles", "guards", "graph_breaks", "bytecode", "+dynamo") as log:
        compiled = torch.compile(shout, backend="eager")
        compiled(torch.ones(2), "a")
        compiled(torch.ones(2), "bb")
        assert logging_state() != before  # set_logs really changed something inside
    assert log.lines
    assert logging_state() == before


def test_logging_state_is_restored_after_an_exception():
    before = logging_state()
    with pytest.raises(ZeroDivisionError):
        with capture.logs("recompiles", "+dynamic"):
            1 / 0
    assert logging_state() == before


def test_logs_and_a_recording_nest_either_way_and_both_see_the_warning():
    dynamo_log = logging.getLogger("torch._dynamo")
    with capture.record() as rec, capture.logs() as log:
        dynamo_log.warning("logs inside record")
    with capture.logs() as log2, capture.record() as rec2:
        dynamo_log.warning("record inside logs")
    assert log.warnings == ["logs inside record"] and log2.warnings == ["record inside logs"]
    assert [e.message for e in rec.events if e.kind == "warning"] == ["logs inside record"]
    assert [e.message for e in rec2.events if e.kind == "warning"] == ["record inside logs"]


def test_unknown_names_are_refused_before_anything_changes():
    before = logging_state()
    with pytest.raises(ValueError, match="unknown log name 'recompile'"):
        with capture.logs("recompile"):
            pass
    assert logging_state() == before


def test_torch_logs_in_the_environment_is_refused_with_what_to_do(monkeypatch):
    monkeypatch.setenv("TORCH_LOGS", "recompiles")
    before = logging_state()
    with pytest.raises(RuntimeError, match="unset it"):
        with capture.logs("guards"):
            pass
    assert logging_state() == before


def test_text_has_no_time_or_pid_prefix():
    with capture.logs("recompiles") as log:
        compiled = torch.compile(shout, backend="eager")
        compiled(torch.ones(2), "a")
        compiled(torch.ones(2), "bb")
    first = log.text.splitlines()[0]
    assert first.startswith("[0/1] [__recompiles] ")
    assert str(log) == log.text and len(log) == len(log.lines)
