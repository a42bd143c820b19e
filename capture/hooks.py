"""The one place that patches torch._dynamo: the recorder's hooks (torch 2.13, 2.14).

Every install here returns its undo, and `install()` returns one undo that
reverses them all in the opposite order. Each hook names the Dynamo behaviour it
depends on, so a torch upgrade that moves one fails here, loudly, in one place.

Hooks (all checked on 2.13.0):

- `InstructionTranslatorBase.step` runs exactly one instruction, for the frame
  being compiled, for inlined callees (`InliningInstructionTranslator`) and for
  resume functions. Wrapped to call `listener.on_step(tx, inst, exc)` after it.
- `InstructionTranslatorBase.log_graph_break` is called once when an attempt
  meets an unsupported instruction (before the restart). Wrapped to report it.
- `OutputGraph.call_user_compiler(gm, example_inputs)` hands each graph to the
  backend, whichever backend the user chose. Wrapped to see `gm` first.
- `convert_frame._compile` compiles one frame (all its attempts); it is looked
  up as a module global by `ConvertFrameAssert.__call__`. Wrapped to see its
  compile id, its result (the guard manager) and any exception.
- `convert_frame.get_and_maybe_log_recompilation_reasons` returns the failed
  guards of a recompile; looked up as a module global in `_compile`. The same
  function in `guards`, imported from there when it is called, is what the
  `fail_on_recompile` stance asks before it refuses: wrapped too. The listener
  gets the cache entries and the frame too, to find every failing guard.
- `convert_frame.register_bytecode_hook(hook)` (official): `hook(code, new_code)`
  for every rewritten frame, including resume functions.
- A logging handler on the `torch._dynamo` logger, for WARNING and above (the
  `.item()` graph-break warning, the recompile-limit warning). It only listens:
  levels, other handlers and what reaches stderr stay as they were.
- With `record(after_dynamo=True)`, a handler on the structured trace logger
  (`torch.__trace`) for the stages after Dynamo (`capture.stages`); it only listens too.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Protocol

from . import internals

Undo = Callable[[], None]


class Listener(Protocol):
    def on_step(self, tx: Any, inst: Any, exc: BaseException | None) -> None: ...
    def on_graph_break(self, tx: Any, reason: str, exc: BaseException) -> None: ...
    def on_backend(self, output: Any, gm: Any) -> None: ...
    def on_compile_end(self, code: Any, compile_id: Any, result: Any,
                       exc: BaseException | None, falls_back: bool) -> None: ...
    def on_recompile_reasons(self, code: Any, reasons: list[str], entries: Any = (),
                             frame: Any = None, refused: bool = False) -> None: ...
    def on_bytecode(self, code: Any, new_code: Any) -> None: ...
    def on_warning(self, message: str) -> None: ...
    def on_worker_processes(self, workers: int) -> None: ...


def _patch(owner: Any, name: str, make: Callable[[Any], Any]) -> Undo:
    """Replace owner.name with make(original); the undo puts the original back."""
    original = vars(owner)[name]
    if getattr(original, "__dynamo_lab_wrapper__", False):
        raise RuntimeError(
            f"{owner.__name__}.{name} is already wrapped by a recording: "
            "a previous recording did not finish; restart the kernel")
    wrapper = make(original)
    wrapper.__dynamo_lab_wrapper__ = True
    setattr(owner, name, wrapper)

    def undo() -> None:
        setattr(owner, name, original)

    return undo


def _wrap_step(listener: Listener) -> Callable[[Any], Any]:
    next_instruction = internals.next_instruction

    def make(original: Any) -> Any:
        @functools.wraps(original)
        def step(self: Any) -> bool:
            inst = next_instruction(self)
            try:
                result = original(self)
            except BaseException as e:
                if inst is not None:
                    listener.on_step(self, inst, e)
                raise
            if inst is not None:
                listener.on_step(self, inst, None)
            return result

        return step

    return make


def _wrap_log_graph_break(listener: Listener) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def log_graph_break(self: Any, code_options: Any, reason: str, exc: Any) -> None:
            if not internals.break_logged(exc):
                listener.on_graph_break(self, reason, exc)
            return original(self, code_options, reason=reason, exc=exc)

        return log_graph_break

    return make


def _wrap_call_user_compiler(listener: Listener) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def call_user_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
            listener.on_backend(self, gm)
            return original(self, gm, example_inputs)

        return call_user_compiler

    return make


def _wrap_compile(listener: Listener) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def _compile(code: Any, *args: Any, **kwargs: Any) -> Any:
            compile_id = kwargs.get("compile_id")
            try:
                result = original(code, *args, **kwargs)
            except BaseException as e:
                listener.on_compile_end(code, compile_id, None, e,
                                         _falls_back(e, code, args, kwargs))
                raise
            listener.on_compile_end(code, compile_id, result, None, False)
            return result

        return _compile

    return make


def _falls_back(exc: BaseException, code: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> bool:
    """Whether Dynamo will swallow this failure and run the frame eagerly.

    `ConvertFrame.__call__` re-raises when its box says `error_on_graph_break`
    (fullgraph=True) and for uncaptured higher-order ops; other `Unsupported` and
    `UserError` failures are "soft": the frame runs without compiling. Under
    fullgraph=True (`one_graph`) or export nothing is swallowed.
    """
    one_graph, export, box = internals.compile_flags(code, args, kwargs)
    if one_graph or export or internals.errors_on_graph_break(box):
        return False
    return internals.is_soft_failure(exc)


def _wrap_recompile_reasons(listener: Listener, refused: bool = False) -> Callable[[Any], Any]:
    """`refused`: the stance's copy, called when a recompile is refused rather than made."""
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def get_and_maybe_log_recompilation_reasons(cache_entries: Any, frame: Any,
                                                    *args: Any, **kwargs: Any) -> Any:
            try:
                reasons = original(cache_entries, frame, *args, **kwargs)
            except BaseException:  # error_on_recompile raises here: the guards failed all the same
                listener.on_recompile_reasons(frame.f_code, [], cache_entries, frame, refused)
                raise
            listener.on_recompile_reasons(frame.f_code, list(reasons), cache_entries, frame,
                                          refused)
            return reasons

        return get_and_maybe_log_recompilation_reasons

    return make


def install(listener: Listener) -> Undo:
    """Install every hook; return one undo. A failure half-way undoes what was done."""
    from torch._dynamo import convert_frame, guards, output_graph, symbolic_convert

    tx_cls = symbolic_convert.InstructionTranslatorBase
    undos: list[Undo] = []
    try:
        undos.append(_patch(tx_cls, "step", _wrap_step(listener)))
        undos.append(_patch(tx_cls, "log_graph_break", _wrap_log_graph_break(listener)))
        undos.append(_patch(output_graph.OutputGraph, "call_user_compiler",
                            _wrap_call_user_compiler(listener)))
        undos.append(_patch(convert_frame, "_compile", _wrap_compile(listener)))
        undos.append(_patch(convert_frame, "get_and_maybe_log_recompilation_reasons",
                            _wrap_recompile_reasons(listener)))
        undos.append(_patch(guards, "get_and_maybe_log_recompilation_reasons",
                            _wrap_recompile_reasons(listener, refused=True)))
        handle = convert_frame.register_bytecode_hook(listener.on_bytecode)
        undos.append(handle.remove)
        undos.append(_listen_to_warnings(listener))
        undos.append(_listen_to_trace(listener))
        undos.append(_watch_worker_processes(listener))
    except BaseException:
        while True:  # a KeyboardInterrupt must not stop the roll-back half-way
            try:
                _run_all(undos)
                break
            except KeyboardInterrupt:
                pass
        raise
    return lambda: _run_all(undos)


class _WarningHandler(logging.Handler):
    """Hands Dynamo's warnings to the active listener."""

    __dynamo_lab_wrapper__ = True
    listener: Listener | None = None

    def emit(self, record: logging.LogRecord) -> None:
        listener = self.listener
        if listener is None:
            return
        try:
            listener.on_warning(record.getMessage())
        except Exception:  # a log line must never break a compile
            pass


# NOTE: made once, at import: creating a Handler takes logging's module lock through
# Python calls, and logger.addHandler/removeHandler do too. An interrupt landing
# between acquiring and releasing it would leave every other thread that logs hung,
# so installing and undoing only touch the logger's handler list (no Python calls).
_warning_handler = _WarningHandler(level=logging.WARNING)
_dynamo_logger = logging.getLogger("torch._dynamo")  # getLogger takes that lock too


def _listen_to_warnings(listener: Listener) -> Undo:
    return _add_handler(_dynamo_logger, _warning_handler, "listener", listener)


def _add_handler(logger: logging.Logger, handler: logging.Handler, field: str,
                 value: Any) -> Undo:
    """Give a made-once handler its target and put it on the logger's handler list (no
    Python-level locking, see the NOTE above); the undo takes both away again."""
    setattr(handler, field, value)
    logger.handlers.append(handler)

    def undo() -> None:
        while handler in logger.handlers:
            logger.handlers.remove(handler)
        setattr(handler, field, None)

    return undo


def _run_all(undos: list[Undo]) -> None:
    """Run every undo, newest first, even if one fails; re-raise the first failure.

    An undo is dropped only once it ran, so after a KeyboardInterrupt the caller can
    call again and the interrupted undo is retried (each undo is idempotent).
    """
    first: BaseException | None = None
    while undos:
        try:
            undos[-1]()
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # keep undoing the rest
            first = first or e
        undos.pop()
    if first is not None:
        raise first


def installed() -> list[str]:
    """Names of hooks of ours that are in place right now (empty when none is)."""
    from torch._dynamo import convert_frame, guards, output_graph, symbolic_convert

    found = []
    tx_cls = symbolic_convert.InstructionTranslatorBase
    for owner, name in [(tx_cls, "step"), (tx_cls, "log_graph_break"),
                        (output_graph.OutputGraph, "call_user_compiler"),
                        (convert_frame, "_compile"),
                        (convert_frame, "get_and_maybe_log_recompilation_reasons"),
                        (guards, "get_and_maybe_log_recompilation_reasons")]:
        if getattr(getattr(owner, name), "__dynamo_lab_wrapper__", False):
            found.append(f"{getattr(owner, '__name__', owner)}.{name}")
    for hook in internals.bytecode_hooks():
        if getattr(getattr(hook, "__self__", None), "__dynamo_lab_listener__", False):
            found.append("convert_frame.register_bytecode_hook")
    if _warning_handler in _dynamo_logger.handlers:
        found.append("logging handler on torch._dynamo")
    if _trace_handler in internals.trace_logger().handlers:
        found.append("logging handler on torch.__trace")
    found += _worker_processes_hook()
    return found


# -- stages after Dynamo -------------------------------------------------------------
# A handler on the structured trace logger (`torch.__trace`) hands each record to the
# listener's `stages` collector (`capture.stages.StageCollector`), if it has one. Like
# the warning handler it only listens, and it is made once, at import; installing and
# undoing only touch the logger's handler list. torch builds a record's payload only
# while that list is not empty.


class _TraceHandler(logging.Handler):
    """Hands structured trace records to the active stage collector."""

    __dynamo_lab_wrapper__ = True
    collector: Any = None

    def emit(self, record: logging.LogRecord) -> None:
        collector = self.collector
        if collector is not None:
            try:
                collector.on_trace(record)
            except Exception:  # a log record must never break a compile
                pass


_trace_handler = _TraceHandler(level=logging.DEBUG)


def _listen_to_trace(listener: Listener) -> Undo:
    collector = getattr(listener, "stages", None)
    if collector is None:
        return lambda: None
    undos = [_add_handler(internals.trace_logger(), _trace_handler, "collector", collector),
             _bypass_caches(collector)]
    return lambda: _run_all(undos)


def _bypass_caches(collector: Any) -> Undo:
    """Turn off, while recording, the caches that would serve a stage as text with no graph
    behind it (nothing could link back); the collector notes which (`bypassed`). The
    undo turns them on again."""
    changed = []
    for config, name, what in internals.compile_caches():
        value = getattr(config, name)
        if value:
            setattr(config, name, False)
            changed.append((config, name, value))
            collector.bypassed.append(what)

    def undo() -> None:
        while changed:
            config, name, value = changed[-1]
            setattr(config, name, value)
            changed.pop()

    return undo


# -- DataLoader worker processes ----------------------------------------------------
#
# A recording sees the process it runs in. A DataLoader with num_workers > 0 runs the
# Dataset and collate_fn in worker processes: whatever Dynamo compiles there is never
# recorded. `torch.utils.data.dataloader._MultiProcessingDataLoaderIter.__init__`
# starts those workers (every `iter(loader)` of a multi-process loader, 2.13, 2.14):
# wrapped to tell the listener, after the workers started, so the recording can say so.


def _multiprocessing_iterator() -> Any:
    from torch.utils.data import dataloader

    return dataloader._MultiProcessingDataLoaderIter


def _watch_worker_processes(listener: Listener) -> Undo:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def __init__(self: Any, loader: Any, *args: Any, **kwargs: Any) -> None:
            original(self, loader, *args, **kwargs)
            try:
                listener.on_worker_processes(int(getattr(loader, "num_workers", 0)))
            except Exception:  # noting it must never break the program's loader
                pass

        return __init__

    return _patch(_multiprocessing_iterator(), "__init__", make)


def _worker_processes_hook() -> list[str]:
    init = vars(_multiprocessing_iterator())["__init__"]
    return (["_MultiProcessingDataLoaderIter.__init__"]
            if getattr(init, "__dynamo_lab_wrapper__", False) else [])
