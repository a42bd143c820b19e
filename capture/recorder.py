"""The recorder: turns what Dynamo does, step by step, into a `Recording`.

`record()` installs the hooks of `capture.hooks`, routes every callback to a
`Recorder`, and always undoes the hooks on the way out. The recorder snapshots
(never references) what it sees: each tracker becomes a `Var`, each FX node a
`Node`, each guard a `Guard`, at the step that made it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from . import hooks, internals
from .attempt import AttemptRecorder, first_line, outcome_of
from .bytecode import CodeReader
from .guards import guard_tree_leaves, match_guard_texts
from .outcomes import resumed_from
from .recompiles import Recompiles
from .recording import Compile, Event, EventKind, GraphBreak, Outcome, Recording
from .records import DdpBucket, DdpSplit
from .stages import StageCollector
from .text import MAX_NAME, MESSAGE_LIMIT, cut, exact, listing, shorten
from .variables import VarReader

# NOTE (the caps): a recording keeps every step (about 1 KB each in memory and in JSON),
# so it is bounded, and each bound ends what is stored with a marked event instead of
# an exception or a cut text. Steps: each compile attempt has its own budget (so a
# restarted attempt cannot spend the one after it), and the recording a total. A
# 12-layer GPT-2 (transformers, from a config) takes about 90 000 steps in all, its
# largest attempt about 45 000. Text: the characters of what Dynamo wrote that the
# recording keeps whole (graph code, guards, bytecode listings); a real model's
# compile keeps well under a megabyte.
DEFAULT_MAX_STEPS = 500_000          # steps stored in all
DEFAULT_MAX_COMPILE_STEPS = 200_000  # steps stored for one compile attempt
DEFAULT_MAX_CHARS = 64_000_000       # characters of kept text (graph code, guards, listings)

_lock = threading.Lock()
_active: Recorder | None = None


class Recorder:
    """Routes Dynamo's callbacks (see `capture.hooks`) to the attempt they belong to,
    and keeps the recording's timeline."""

    __dynamo_lab_listener__ = True

    def __init__(self, recording: Recording, max_steps: int,
                 max_compile_steps: int = DEFAULT_MAX_COMPILE_STEPS,
                 max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self.recording = recording
        self.max_steps = max_steps
        self.max_compile_steps = max_compile_steps
        self.max_chars = max_chars
        self.stored = 0
        self.limit = max_steps  # steps storable in all: `stored` once the size cap is hit
        self.chars = 0  # characters of kept text so far
        self.full = False  # the size cap was reached: nothing more is stored
        self._noted_workers = False  # said that DataLoader workers go unrecorded
        self.thread = threading.get_ident()
        self.reader = VarReader()
        self.codes = CodeReader()
        self._attempt: AttemptRecorder | None = None
        self._output: Any = None
        self._live: dict[int, AttemptRecorder] = {}  # id(output graph) -> attempt
        self._reasons: dict[Any, list[str]] = {}  # code -> failed guards of this recompile
        self.recompiles = Recompiles()  # installed guard trees, and what a recompile found
        self._counters_before = internals.counters()
        self.interrupt_pending = False  # set by record()'s SIGINT handler
        self.generation = 0  # resets of Dynamo seen while recording
        # record(only=...): the functions recorded step by step (None: every one)
        self.only: tuple[str, ...] | None = None
        self._said_only = False
        # DDP: id(attempt) -> (its DDPOptimizer, the graph handed to it), read at compile end
        self._ddp: dict[int, tuple[Any, Any]] = {}

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
                if restart is not None:  # the event says its first line; the compile, all
                    self._event(EventKind.RESTART, attempt.compile.compile_id,
                                first_line(restart))
            if not attempt.detailed:
                pass   # record(only=...): a compile-level summary of this one
            elif self.stored < self.limit and len(attempt.compile.steps) < self.max_compile_steps:
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
                self._safely(self._backend, attempt, gm)

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
                self._safely(self._bytecode, attempt, new_code)
        return None

    def on_warning(self, message: str) -> None:
        if threading.get_ident() == self.thread:
            attempt = self._attempt
            self._event(EventKind.WARNING, attempt.compile.compile_id if attempt else None,
                        first_line(message))

    def on_worker_processes(self, workers: int) -> None:
        """A multi-process DataLoader started its workers: said once per recording."""
        if threading.get_ident() == self.thread and not self._noted_workers:
            self._noted_workers = True
            attempt = self._attempt
            self._event(EventKind.NOTE, attempt.compile.compile_id if attempt else None,
                        f"a DataLoader started {workers} worker process(es): anything Dynamo "
                        "compiles in them (in a Dataset, a collate_fn) is not recorded; the "
                        "recording sees this process only (num_workers=0 records it all)")

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
        if c.truncated:
            return
        c.truncated = self.recording.truncated = True
        if self.stored >= self.max_steps:
            why = (f"max_steps={self.max_steps} reached (steps stored in all): later steps "
                   "of this and every later compile are not stored")
        elif self.full:
            why = "the size cap was reached: later steps are not stored"
        else:
            why = (f"max_compile_steps={self.max_compile_steps} reached (steps stored for one "
                   "compile attempt): its later steps are not stored; later compiles have "
                   "their own")
        self._event(EventKind.STEP_CAP, c.compile_id, f"{why} (Dynamo runs on unaffected)")

    def _storing(self, attempt: AttemptRecorder) -> bool:
        """Whether the step running now in this attempt will be stored."""
        return attempt.detailed and self.stored < self.limit \
            and len(attempt.compile.steps) < self.max_compile_steps

    def _detailed(self, code: Any, module: str | None) -> bool:
        """Whether record(only=...) asks for this frame's steps: its function named as
        `name`, `Class.name` or `module.Class.name` (a resume function goes with the
        function it continues, known by its plain name)."""
        if self.only is None:
            return True
        names = {code.co_name, getattr(code, "co_qualname", code.co_name)}
        continues = resumed_from(code.co_name)
        if continues:
            names.add(continues)
        if module:
            names |= {f"{module}.{n}" for n in list(names)}
        for pattern in self.only:
            if pattern in names:
                return True
            if continues and pattern.rsplit(".", 1)[-1] == continues:
                # a resume function is named after the function's plain name only: it goes
                # with `Class.forward` (and with any other `forward` in the same module)
                return not module or "." not in pattern or pattern.startswith(module + ".") \
                    or pattern.count(".") == 1
        return False

    def _keep(self, c: Compile, size: int, what: str) -> bool:
        """Whether `size` more characters of text fit under the size cap; the first text
        that does not ends the recording (nothing more is stored), with an event."""
        if not self.full and self.chars + size <= self.max_chars:
            self.chars += size
            return True
        if not self.full:  # the first text that does not fit
            self.full = True
            self.limit = self.stored
            c.truncated = self.recording.truncated = True
            self._event(EventKind.SIZE_CAP, c.compile_id,
                        f"max_chars={self.max_chars:,} reached: {what} and everything after "
                        "it is not stored: no more steps, graph code, guards or listings "
                        "(Dynamo runs on unaffected)")
        return False

    def _backend(self, attempt: AttemptRecorder, gm: Any) -> None:
        if attempt.shapes is not None:
            attempt.shapes.contexts(attempt.output)
        attempt.record_graph(gm, self._storing(attempt))
        optimizer = internals.ddp_optimizer(attempt.output)
        if optimizer is not None:  # it makes its buckets after this: read at compile end
            self._ddp[id(attempt)] = (optimizer, internals.fx_graph_of(gm))
        c = attempt.compile
        if c.graph_code is not None and not self._keep(c, len(c.graph_code), "the graph code"):
            c.graph_code = None

    def _bytecode(self, attempt: AttemptRecorder, new_code: Any) -> None:
        attempt.record_bytecode(new_code)
        c = attempt.compile
        size = len(c.modified_bytecode or "") + sum(len(r.bytecode) for r in c.resume_functions)
        if not self._keep(c, size, "the modified bytecode"):
            c.modified_bytecode, c.modified_instructions, c.resume_functions = None, [], []

    def _begin_attempt(self, tx: Any, output: Any) -> None:
        root = tx
        while internals.parent(root) is not None:
            root = internals.parent(root)
        code = internals.code_of(root)
        compile_id = internals.trace_id() or "?"
        info = self.codes.info(code)
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
        attempt = AttemptRecorder(c, output, code, self.reader, self.codes)
        attempt.detailed = self._detailed(code, internals.module_name(root))
        if not attempt.detailed:
            c.summary_only = True
            if not self._said_only:
                self._said_only = True
                self._event(EventKind.NOTE, compile_id, "recorded step by step: only "
                            + ", ".join(self.only or ()) + " (and what they inline); every "
                            "other compile is a summary without steps (record(only=...))")
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
            ddp = self._ddp.pop(id(a), None)
            if ddp is not None:
                a.compile.ddp_split = _ddp_split(*ddp)
            if a.shapes is not None:
                if a.shapes.dims is None and a.output is not None:
                    a.shapes.contexts(a.output)   # a compile that failed keeps them
                steps = a.compile.steps
                a.compile.shapes = a.shapes.finish(lambda i, steps=steps: steps[i].opname)
        # Guards can still be installed after the last instruction (while the
        # graph is compiled): they belong to no step.
        last.new_guards(None)
        c = last.compile
        for a in attempts:
            _break_stored(a.compile)
        tree = internals.guard_tree(result) if exc is None else None
        c.outcome = outcome_of(error=exc, falls_back=falls_back, guarded=tree is not None,
                               has_resume_functions=bool(c.resume_functions))
        if exc is not None:
            if c.graph_break is None and last.unsupported_at is not None:
                c.graph_break = last.unsupported_at  # where the break that failed it was
            c.error = shorten(f"{type(exc).__name__}: {first_line(exc)}", MESSAGE_LIMIT)
            c.error_message = cut(exact(f"{type(exc).__name__}: {exc}"), MESSAGE_LIMIT)
            if c.outcome == Outcome.SKIPPED:
                self._event(EventKind.SKIPPED, c.compile_id, f"Dynamo gave up on {c.code_name}; "
                            f"it runs without compiling ({c.error})")
            else:
                self._event(c.outcome, c.compile_id, c.error)
        elif tree is not None:
            if self._keep(c, 2 * len(tree), "the guard tree and guard texts"):
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
                c.error = exact(reason)  # Dynamo's words
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
                    + ("the call raised FailOnRecompileLimitHit (fullgraph=True) instead of "
                       "running eagerly" if internals.raises_at_recompile_limit(exc) else
                       "calls that fail every guard now run eagerly, without compiling"))
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
        self._ddp.clear()
        self._attempt = self._output = None
        self.reader.clear()
        self.codes.finish(self.recording.compiles)  # every listing, read once
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


def _break_stored(c: Compile) -> None:
    """A break whose instruction came after the step cap keeps its place (line, function)
    but points at no step: the step it would have had was never stored."""
    gb = c.graph_break
    if gb is not None and gb.step is not None and gb.step >= len(c.steps):
        c.graph_break = replace(gb, step=None)


def _split_point(c: Compile, first: GraphBreak) -> GraphBreak:
    """Where a restarted attempt stopped: its last instruction in the frame itself.

    The earlier attempt met the unsupported instruction (maybe inside an
    inlined helper); the restarted one compiles up to the frame's own
    instruction that leads there and stops, so that is its last step at depth 0.
    A truncated attempt's last stored step is not that instruction: the break keeps
    the earlier attempt's place, with no step.
    """
    own = [s for s in c.steps if s.depth == 0]
    if not own or c.truncated:
        return replace(first, step=None)
    last = own[-1]
    source = c.codes[0].source_lines if c.codes else ()
    k = (last.lineno or 0) - c.firstlineno
    line = source[k].strip() if 0 <= k < len(source) else None
    return replace(first, lineno=last.lineno, line=line or None, code_name=c.code_name,
                   step=last.index)


def _ddp_split(optimizer: Any, graph: Any) -> DdpSplit | None:
    """DDPOptimizer's buckets of this graph as a record, None if it made none of it."""
    buckets = internals.ddp_buckets(optimizer, graph)
    if buckets is None:
        return None
    cap, first = internals.ddp_caps(optimizer)
    return DdpSplit(cap, first, tuple(
        DdpBucket(k, b.size, tuple(exact(p) for p in b.params),
                  tuple(exact(n) for n in b.nodes), b.extended)
        for k, b in enumerate(buckets)))


def _reason_line(reason: str) -> str:
    """A recompile reason exactly as Dynamo wrote it (`0/0: n == 0  # f.py:4 in f`, and
    any further lines), surrounding blank lines aside."""
    return exact(reason.strip("\n"))


def _short_path(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _cap(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive whole number (got {value!r}); "
                         f"for example record({name}=10_000)")


@contextlib.contextmanager
def record(*, max_steps: int = DEFAULT_MAX_STEPS,
           max_compile_steps: int = DEFAULT_MAX_COMPILE_STEPS,
           max_chars: int = DEFAULT_MAX_CHARS, after_dynamo: bool = False,
           only: str | Iterable[str] | None = None) -> Iterator[Recording]:
    """Record everything Dynamo compiles inside the block, whatever the backend.

    `after_dynamo=True` also records what AOTAutograd and Inductor made of each graph
    (`Compile.stages`, see `capture.stages`). So that every stage links back to Dynamo's
    nodes, it compiles past Inductor's FX graph cache and AOTAutograd's cache while the
    block runs (the recording's notes say so) and puts them back after; the code they
    produce is the same as a plain compile's.

    `only` (a function's name, `Class.name` or `module.Class.name`, or several): only
    those functions' compiles are recorded step by step, with what they inline and their
    resume functions; every other compile is a summary (its outcome, graph, guards, breaks,
    recompiles, shapes and bytecode, no steps), so a long script records at nearly plain
    speed.

    At most `max_steps` steps are stored in all and `max_compile_steps` for one compile
    attempt, and at most `max_chars` characters of Dynamo's text (graph code, guards,
    listings), which is kept whole; each cap ends what is stored with an event.

    NOTE (the collector): the recorder leaves the garbage collector alone. Holding full
    collections off while recording (as earlier versions did) grew a training script's
    memory without bound (a cycle per epoch, never collected until the block ended)
    and made recorded compiles look cheaper than plain ones. A recording does keep
    objects alive (a step each), so a recorded compile may run a full collection a
    plain one would not: that is part of what recording costs.
    """
    global _active
    _cap("max_steps", max_steps)
    _cap("max_compile_steps", max_compile_steps)
    _cap("max_chars", max_chars)
    if not isinstance(after_dynamo, bool):
        raise TypeError(f"after_dynamo must be True or False (got {after_dynamo!r})")
    if isinstance(only, str):
        only = (only,)
    if only is not None:
        only = tuple(only) if isinstance(only, (list, tuple, set, frozenset)) else ()
        if not only or not all(isinstance(x, str) and x.strip() for x in only):
            raise TypeError("only must name functions: a name like 'forward', "
                            "'Model.forward' or 'mymodule.Model.forward', or a list of them "
                            f"(got {only!r})")
    import torch

    with _lock:
        if _active is not None:
            raise RuntimeError(_busy_message())
        recording = Recording(torch_version=torch.__version__, max_steps=max_steps,
                              max_compile_steps=max_compile_steps, max_chars=max_chars)
        recorder = Recorder(recording, max_steps, max_compile_steps, max_chars)
        recorder.stages = StageCollector(recording) if after_dynamo else None
        recorder.only = only
        _active = recorder  # claimed before anything is installed
    undo = None
    previous_sigint = None
    ended_by = None
    try:
        undo = hooks.install(recorder)
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
          max_steps: int = DEFAULT_MAX_STEPS,
          max_compile_steps: int = DEFAULT_MAX_COMPILE_STEPS, max_chars: int = DEFAULT_MAX_CHARS,
          compile_options: dict[str, Any] | None = None, after_dynamo: bool = False,
          **kwargs: Any) -> Recording:
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
    with record(max_steps=max_steps, max_compile_steps=max_compile_steps,
                max_chars=max_chars, after_dynamo=after_dynamo) as recording:
        recording.result = compiled(*args, **kwargs)
    return recording


def prepare(*, reset: bool = True) -> None:
    """Ready Dynamo for a recording: refuse while one is in progress (before anything
    changes), then clear Dynamo's caches unless `reset=False`, so what the recording
    shows is compiled afresh rather than served from an earlier compile's cache."""
    if _active is not None:
        raise RuntimeError(_busy_message())
    if reset:
        internals.reset()


def active() -> bool:
    """Whether a recording is in progress (in any thread)."""
    return _active is not None


__all__ = ["record", "trace", "prepare", "active", "DEFAULT_MAX_STEPS",
           "DEFAULT_MAX_COMPILE_STEPS", "DEFAULT_MAX_CHARS"]
