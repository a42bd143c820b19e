"""The recorder: turns what Dynamo does, step by step, into a `Recording`.

`record()` installs the hooks of `capture.hooks`, routes every callback to a
`Recorder`, and always undoes the hooks on the way out. The recorder snapshots
(never references) what it sees: each tracker becomes a `Var`, each FX node a
`Node`, each guard a `Guard`, at the step that made it.
"""

from __future__ import annotations

import contextlib
import gc
import re
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from . import hooks, internals
from .attempt import Attempt, first_line, outcome_of
from .bytecode import code_info
from .guards import guard_tree_leaves, match_guard_texts
from .recompiles import Recompiles
from .recording import Compile, Event, EventKind, GraphBreak, Outcome, Recording
from .stages import StageCollector
from .text import MAX_NAME, MESSAGE_LIMIT, listing, shorten
from .variables import VarReader

DEFAULT_MAX_STEPS = 50_000
_NO_FULL_COLLECTIONS = 1 << 30  # a generation-2 threshold never reached while recording

_lock = threading.Lock()
_active: Recorder | None = None


class Recorder:
    """Routes Dynamo's callbacks (see `capture.hooks`) to the attempt they belong to,
    and keeps the recording's timeline."""

    __dynamo_lab_listener__ = True

    def __init__(self, recording: Recording, max_steps: int) -> None:
        self.recording = recording
        self.max_steps = max_steps
        self.stored = 0
        self.thread = threading.get_ident()
        self.reader = VarReader()
        self._attempt: Attempt | None = None
        self._output: Any = None
        self._live: dict[int, Attempt] = {}  # id(output graph) -> attempt
        self._reasons: dict[Any, list[str]] = {}  # code -> failed guards of this recompile
        self.recompiles = Recompiles()  # installed guard trees, and what a recompile found
        self._counters_before = internals.counters()
        self.interrupt_pending = False  # set by record()'s SIGINT handler
        self.generation = 0  # resets of Dynamo seen while recording

    def _event(self, kind: str, compile_id: str | None, message: str,
               failed_guards: tuple = ()) -> None:
        self.recording.events.append(Event(kind, compile_id, shorten(message, MESSAGE_LIMIT),
                                           failed_guards))

    # -- callbacks -----------------------------------------------------------

    def on_step(self, tx: Any, inst: Any, exc: BaseException | None) -> None:
        if threading.get_ident() != self.thread:
            return
        try:  # _safely, inlined: this runs once per instruction
            output = internals.output_of(tx)
            if output is not self._output:
                self._begin_attempt(tx, output)
            attempt = self._attempt
            if exc is not None:
                restart = attempt.note_exception(tx, exc)
                if restart is not None:
                    self._event(EventKind.RESTART, attempt.compile.compile_id, restart)
            if self.stored < self.max_steps:
                self.stored += 1
                attempt.step(tx, inst)
            else:
                self._step_cap(attempt.compile)
        except Exception as e:  # noqa: BLE001 - reported in the recording
            self._recorder_error(e)
        if self.interrupt_pending:
            self.interrupt_pending = False
            if not isinstance(exc, KeyboardInterrupt):
                raise KeyboardInterrupt  # the press was lost in a callback: stop here

    def on_graph_break(self, tx: Any, reason: str, exc: BaseException) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._graph_break, tx, reason, exc)

    def on_backend(self, output: Any, gm: Any) -> None:
        if threading.get_ident() == self.thread:
            attempt = self._live.get(id(output))
            if attempt is not None:
                self._safely(attempt.backend, gm, self.stored < self.max_steps)

    def on_compile_end(self, code: Any, compile_id: Any, result: Any,
                       exc: BaseException | None, falls_back: bool = False) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._compile_end, code, compile_id, result, exc, falls_back)

    def on_recompile_reasons(self, code: Any, reasons: list[str], entries: Any = (),
                             frame: Any = None, refused: bool = False) -> None:
        if threading.get_ident() == self.thread:
            if not refused:
                self._reasons[code] = [_reason_line(r) for r in reasons]
            if frame is not None:
                self._safely(self._failed_guards, code, reasons, entries, frame, refused)

    def _failed_guards(self, code: Any, reasons: list[str], entries: Any, frame: Any,
                       refused: bool) -> None:
        self.recompiles.failed(self.generation, code, entries, internals.frame_locals(frame))
        if refused:  # the fail_on_recompile stance raises next; no compile follows
            replaces, failed = self.recompiles.done(code)
            first = f": {_reason_line(reasons[0])}" if reasons else ""
            self._event(EventKind.FAIL_ON_RECOMPILE, replaces,
                        f"{code.co_name}: the fail_on_recompile stance refused to recompile "
                        f"({len(failed)} failing guard(s)){first}", failed)

    def on_bytecode(self, code: Any, new_code: Any) -> None:
        if threading.get_ident() == self.thread:
            attempt = self._attempt
            if attempt is None or attempt.code is not code:
                attempt = next((a for a in reversed(list(self._live.values())) if a.code is code),
                               None)
            if attempt is not None:
                self._safely(attempt.bytecode, new_code)
        return None

    def on_warning(self, message: str) -> None:
        if threading.get_ident() == self.thread:
            attempt = self._attempt
            self._event(EventKind.WARNING, attempt.compile.compile_id if attempt else None,
                        first_line(message))

    def _safely(self, fn: Callable[..., None], *args: Any) -> None:
        """A recorder bug must never disturb Dynamo: it becomes an event instead."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - reported in the recording
            self._recorder_error(e)

    def _recorder_error(self, e: Exception) -> None:
        attempt = self._attempt
        self._event(EventKind.RECORDER_ERROR, attempt.compile.compile_id if attempt else None,
                    f"{type(e).__name__}: {e}")

    # -- attempts ----------------------------------------------------------------

    def _step_cap(self, c: Compile) -> None:
        if not c.truncated:
            c.truncated = self.recording.truncated = True
            self._event(EventKind.STEP_CAP, c.compile_id,
                        f"max_steps={self.max_steps} reached: later steps are not stored "
                        "(Dynamo runs on unaffected)")

    def _begin_attempt(self, tx: Any, output: Any) -> None:
        root = tx
        while internals.parent(root) is not None:
            root = internals.parent(root)
        code = internals.code_of(root)
        compile_id = internals.trace_id() or "?"
        info = code_info(code)
        c = Compile(compile_id=compile_id, code_name=shorten(code.co_name, MAX_NAME),
                    filename=shorten(code.co_filename, MAX_NAME),
                    firstlineno=code.co_firstlineno, source_lines=list(info.source_lines),
                    codes=[info])
        c.recompile_reasons = list(self._reasons.get(code, []))
        c.replaces, c.failed_guards = self.recompiles.take(code)
        if any(o.compile_id == compile_id and o.generation == self.generation
               for o in self.recording.compiles):
            # the same id again: Dynamo was reset while recording
            self.generation += 1
            self._event(EventKind.RESET, None, "Dynamo was reset: compile ids start again "
                        f"(generation {self.generation})")
        c.generation = self.generation
        attempt = Attempt(c, output, code, self.reader)
        self.recording.compiles.append(c)
        self._attempt, self._output = attempt, output
        self._live[id(output)] = attempt
        kind = EventKind.RECOMPILE if c.recompile_reasons else EventKind.COMPILE
        message = f"{c.code_name} ({_short_path(c.filename)}:{c.firstlineno})"
        if c.recompile_reasons:
            message += " because " + c.recompile_reasons[0].splitlines()[0]
        self._event(kind, compile_id, message)

    def _graph_break(self, tx: Any, reason: str, exc: BaseException) -> None:
        attempt = self._live.get(id(internals.output_of(tx)))
        if attempt is None:
            return
        gb = attempt.graph_break(tx, reason, exc)
        self._event(EventKind.GRAPH_BREAK, attempt.compile.compile_id,
                    f"line {gb.lineno} in {gb.code_name}: {gb.reason}")

    def _compile_end(self, code: Any, compile_id: Any, result: Any,
                     exc: BaseException | None, falls_back: bool = False) -> None:
        self._reasons.pop(code, None)
        failed = self.recompiles.done(code)[1]
        attempts = [a for a in self._live.values() if a.code is code]
        if not attempts:
            if exc is not None:
                self._unrecorded_failure(code, compile_id, exc, failed)
            return
        last = attempts[-1]
        for a in attempts:
            a.final_names()
        # Guards can still be installed after the last instruction (while the
        # graph is compiled): they belong to no step.
        last.new_guards(None)
        c = last.compile
        tree = internals.guard_tree(result) if exc is None else None
        c.outcome = outcome_of(error=exc, falls_back=falls_back, guarded=tree is not None,
                               has_resume_functions=bool(c.resume_functions))
        if exc is not None:
            if c.graph_break is None and last.unsupported_at is not None:
                c.graph_break = last.unsupported_at  # where the break that failed it was
            c.error = shorten(f"{type(exc).__name__}: {first_line(exc)}", MESSAGE_LIMIT)
            if c.outcome == Outcome.SKIPPED:
                self._event(EventKind.SKIPPED, c.compile_id, f"Dynamo gave up on {c.code_name}; "
                            f"it runs without compiling ({c.error})")
            else:
                self._event(c.outcome, c.compile_id, c.error)
        elif tree is not None:
            leaves = guard_tree_leaves(tree)
            c.guard_tree = listing(tree)
            c.guards = [leaf.text for leaf in leaves]
            c.guard_details = match_guard_texts(c.guard_details, leaves)
            self.recompiles.installed(c.generation, compile_id, result, c)
            previous = _previous_attempt(self.recording, c)
            if (c.outcome == Outcome.GRAPH_BREAK and c.graph_break is None
                    and previous is not None and previous.graph_break):
                c.graph_break = _split_point(c, previous.graph_break)
        else:
            reason = internals.skip_reason(result)
            if reason:
                c.error = shorten(str(reason), MESSAGE_LIMIT)
            self._event(EventKind.SKIPPED, c.compile_id, f"Dynamo compiled nothing for "
                        f"{c.code_name}; it runs without compiling"
                        + (f" ({c.error})" if c.error else ""))
        for a in attempts:
            if a.compile.outcome == Outcome.UNFINISHED:
                a.compile.outcome = c.outcome if exc is not None else Outcome.ABANDONED
            self._live.pop(id(a.output), None)
            a.output = None
        if self._attempt in attempts:
            self._attempt, self._output = None, None
        self.reader.clear()

    def _unrecorded_failure(self, code: Any, compile_id: Any, exc: BaseException,
                            failed: tuple = ()) -> None:
        """A compile that failed before its first instruction: the cache limit, typically
        (`failed`: the guards that failed on the call it refused to compile)."""
        text = f"{type(exc).__name__}: {first_line(exc)}"
        if internals.recompile_limit_hit(exc):
            kind = EventKind.CACHE_LIMIT
            limit, accumulated = internals.recompile_limits()
            text = (f"hit a recompile limit (recompile_limit={limit}, "
                    f"accumulated_recompile_limit={accumulated}): "
                    "calls that fail every guard now run eagerly, without compiling")
        else:
            kind = EventKind.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EventKind.ERROR
        self._event(kind, str(compile_id) if compile_id is not None else None,
                    f"{code.co_name}: {text}", failed)

    def finish(self, ended_by: str | None) -> None:
        """Close the recording: mark what never finished, read Dynamo's counters."""
        for attempt in list(self._live.values()):
            c = attempt.compile
            if c.outcome == Outcome.UNFINISHED:
                c.outcome = (Outcome.INTERRUPTED if ended_by == "KeyboardInterrupt"
                             else Outcome.UNFINISHED)
        self._live.clear()
        self._attempt = self._output = None
        self.reader.clear()
        self.recording.ended_by = ended_by
        after = internals.counters()
        self.recording.counters_total = after
        self.recording.counters = {k: v - self._counters_before.get(k, 0) for k, v in after.items()}
        if ended_by:
            self._event(EventKind.ENDED, None, ended_by)


def _previous_attempt(recording: Recording, c: Compile) -> Compile | None:
    base = c.compile_id.split("_")[0]
    previous = None
    for other in recording.compiles:
        if other is c:
            return previous
        if other.compile_id.split("_")[0] == base:
            previous = other
    return previous


def _split_point(c: Compile, first: GraphBreak) -> GraphBreak:
    """Where a restarted attempt stopped: its last instruction in the frame itself.

    The earlier attempt met the unsupported instruction (maybe inside an
    inlined helper); the restarted one compiles up to the frame's own
    instruction that leads there and stops, so that is its last step at depth 0.
    """
    own = [s for s in c.steps if s.depth == 0]
    if not own:
        return replace(first, step=None)
    last = own[-1]
    source = c.codes[0].source_lines if c.codes else ()
    k = (last.lineno or 0) - c.firstlineno
    line = source[k].strip() if 0 <= k < len(source) else None
    return replace(first, lineno=last.lineno, line=line or None, code_name=c.code_name,
                   step=last.index)


def _reason_line(reason: str) -> str:
    """`0/0: n == 0  # f.py:4 in f` from Dynamo's multi-line failure text."""
    line = first_line(reason)
    return shorten(re.sub(r"\s{2,}#", "  #", line), MESSAGE_LIMIT)


def _short_path(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@contextlib.contextmanager
def record(*, max_steps: int = DEFAULT_MAX_STEPS, after_dynamo: bool = False
           ) -> Iterator[Recording]:
    """Record everything Dynamo compiles inside the block, whatever the backend.

    `after_dynamo=True` also records what AOTAutograd and Inductor made of each graph
    (`Compile.stages`, see `capture.stages`); it changes nothing they produce.
    """
    global _active
    if not isinstance(after_dynamo, bool):
        raise TypeError(f"after_dynamo must be True or False (got {after_dynamo!r})")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps must be a positive whole number (got {max_steps!r}); "
                         "for example record(max_steps=10_000)")
    import torch

    with _lock:
        if _active is not None:
            raise RuntimeError(_busy_message())
        recording = Recording(torch_version=torch.__version__, max_steps=max_steps)
        recorder = Recorder(recording, max_steps)
        recorder.stages = StageCollector(recording) if after_dynamo else None
        _active = recorder  # claimed before anything is installed
    undo = None
    thresholds = None
    previous_sigint = None
    ended_by = None
    try:
        undo = hooks.install(recorder)
        # NOTE: a recording keeps objects alive (one per step, and the trackers it has
        # read). Counted as long-lived, they can tip the collector into a full
        # (generation 2) collection that the same compile without recording would
        # not run: tens of milliseconds, and Dynamo's garbage finalized at another
        # moment. Full collections wait until the block ends; young ones run as
        # usual. Put back on the way out, unless the program changed them meanwhile.
        thresholds = gc.get_threshold()
        gc.set_threshold(thresholds[0], thresholds[1], _NO_FULL_COLLECTIONS)
        previous_sigint = _note_interrupts(recorder)
        yield recording
    except KeyboardInterrupt:
        ended_by = "KeyboardInterrupt"
        raise
    except BaseException as e:
        ended_by = shorten(f"{type(e).__name__}: {first_line(e)}", MESSAGE_LIMIT)
        raise
    finally:
        # Restoration must survive a second interrupt: retry until everything is undone.
        while True:
            try:
                if previous_sigint is not None:
                    signal.signal(signal.SIGINT, previous_sigint)
                    previous_sigint = None
                if thresholds is not None:
                    if gc.get_threshold() == (*thresholds[:2], _NO_FULL_COLLECTIONS):
                        gc.set_threshold(*thresholds)
                    thresholds = None
                if undo is not None:
                    undo()
                    undo = None
                break
            except KeyboardInterrupt:
                pass
        with _lock:
            _active = None
        recorder.finish(ended_by)


def _busy_message() -> str:
    where = ("in another thread" if _active is not None and _active.thread != threading.get_ident()
             else "already, in this thread")
    return (f"a recording is active {where}: Dynamo Lab records one thing at a time. "
            "Finish the other `with capture.record():` block first.")


def _note_interrupts(recorder: Recorder) -> Any:
    """Remember a Ctrl-C / stop press, so a press CPython loses still stops the trace.

    CPython raises KeyboardInterrupt in whatever Python code runs next; while
    Dynamo traces, that is often a garbage-collector weakref callback, where the
    exception is printed as "Exception ignored" and dropped. The handler below
    notes the press before raising as usual; the recorder raises again at the
    next instruction if the first one was lost. Main thread only (a signal rule).
    Returns the handler to put back, or None.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        return None  # SIG_IGN or SIG_DFL: the program chose; leave it

    def on_sigint(signum: int, frame: Any) -> None:
        recorder.interrupt_pending = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)
    return previous


def trace(fn: Callable[..., Any], *args: Any, backend: Any = "eager", reset: bool = True,
          max_steps: int = DEFAULT_MAX_STEPS, compile_options: dict[str, Any] | None = None,
          after_dynamo: bool = False, **kwargs: Any) -> Recording:
    """Compile `fn` with `torch.compile`, call it once while recording, return the recording.

    `compile_options` go to `torch.compile` (e.g. ``{"fullgraph": True}``); any
    other keyword goes to `fn`. The call's return value is in `recording.result`.
    """
    import torch

    if not callable(fn):
        raise TypeError(f"trace() needs a function or module to compile, got "
                        f"{type(fn).__name__}; for example capture.trace(f, torch.randn(4))")
    prepare(reset=reset)
    compiled = torch.compile(fn, backend=backend, **(compile_options or {}))
    with record(max_steps=max_steps, after_dynamo=after_dynamo) as recording:
        recording.result = compiled(*args, **kwargs)
    return recording


def prepare(*, reset: bool = True) -> None:
    """Ready Dynamo for a recording: refuse while one is in progress (before anything
    changes), then clear Dynamo's caches unless `reset=False`, so what the recording
    shows is compiled afresh rather than served from an earlier compile's cache."""
    if _active is not None:
        raise RuntimeError(_busy_message())
    if reset:
        import torch

        torch._dynamo.reset()


def active() -> bool:
    """Whether a recording is in progress (in any thread)."""
    return _active is not None


__all__ = ["record", "trace", "prepare", "active", "DEFAULT_MAX_STEPS"]
