"""Dynamo's own logs, caught in a block instead of printed to stderr.

`TORCH_LOGS=recompiles` is how a PyTorch engineer watches Dynamo; it prints to
the stderr of the process, with a time, pid and file prefix on every line. In a
lesson we want the same messages as data, in the running kernel::

    with capture.logs("recompiles", "guards") as log:
        f(torch.ones(3)); f(torch.ones(4))
    print(log.text)                     # what TORCH_LOGS would print, minus the prefix
    log.messages("recompiles")          # one string per logged message

Names are TORCH_LOGS names: an artifact (``guards``, ``recompiles``,
``graph_breaks``, ``bytecode`` ...) is switched on; a log (``dynamo``,
``dynamic``, ``aot`` ...) is set to INFO, ``+name`` to DEBUG, ``-name`` to ERROR.
With no names the block catches only what torch logs by default: warnings and
errors (the recompile-limit warning, the ``.item()`` graph-break warning).

Inside the block, torch's log settings are what `torch._logging.set_logs` makes
of the names, and every message reaches the capture instead of stderr. After the
block every torch logger has exactly the level, propagation, handlers and
disabled flag it had before, and torch's log state (what a later `set_logs` or
a newly created artifact logger reads) is put back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import internals

__all__ = ["logs", "LogCapture", "LogLine"]

_LEVELS = {"+": logging.DEBUG, "-": logging.ERROR, "": logging.INFO}


@dataclass(frozen=True, slots=True)
class LogLine:
    """One message torch logged: where it came from, how loud, during which compile."""

    logger: str
    artifact: str | None
    level: str
    compile_id: str | None
    message: str

    def __str__(self) -> str:
        label = f"[{self.compile_id}] " if self.compile_id else ""
        artifact = f"[__{self.artifact}] " if self.artifact else ""
        return f"{label}{artifact}{self.message}"


@dataclass(slots=True)
class LogCapture:
    """Everything torch logged inside one `logs()` block, in order."""

    lines: list[LogLine] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The messages as TORCH_LOGS prints them, without the time/pid/file prefix."""
        return "\n".join(str(line) for line in self.lines)

    def messages(self, artifact: str | None = None, *, level: str | None = None) -> list[str]:
        """The logged messages, optionally of one artifact (``"recompiles"``) or level."""
        return [line.message for line in self.lines
                if (artifact is None or line.artifact == artifact)
                and (level is None or line.level == level)]

    @property
    def warnings(self) -> list[str]:
        """The messages logged at WARNING level."""
        return self.messages(level="WARNING")

    def __str__(self) -> str:
        return self.text

    def __len__(self) -> int:
        return len(self.lines)


class _Collect(logging.Handler):
    """Appends each record to a capture, formatted while the compile that logged it runs."""

    def __init__(self, capture: LogCapture) -> None:
        super().__init__(logging.DEBUG)
        self.capture = capture

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[0] is not None:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            trace_id = internals.trace_id()
            artifact = internals.artifact_name(logging.getLogger(record.name))
            self.capture.lines.append(LogLine(
                logger=record.name, artifact=artifact, level=record.levelname,
                compile_id=str(trace_id) if trace_id is not None else None,
                message=message.rstrip("\n")))
        except Exception:  # a log line must never break the compile that logged it
            self.handleError(record)


def _settings(names: tuple[str, ...]) -> dict[str, object]:
    """set_logs keyword arguments for TORCH_LOGS-style names."""
    known = internals.log_names()
    out: dict[str, object] = {}
    for name in names:
        sign = name[:1] if name[:1] in "+-" else ""
        bare = name[len(sign):].strip()
        if bare not in known:
            raise ValueError(f"unknown log name {name!r}: use a TORCH_LOGS name such as "
                             "'recompiles', 'guards', 'graph_breaks', 'bytecode' or 'dynamic'")
        out[bare] = True if internals.is_log_artifact(bare) else _LEVELS[sign]
    return out


_UNSET = object()


def _snapshot(logger: logging.Logger) -> tuple:
    return (logger.level, logger.propagate, list(logger.handlers), logger.disabled,
            logger.__dict__.get("isEnabledFor", _UNSET))


def _restore(logger: logging.Logger, saved: tuple) -> None:
    level, propagate, handlers, disabled, is_enabled_for = saved
    logger.handlers[:] = handlers
    logger.propagate = propagate
    logger.disabled = disabled
    if is_enabled_for is _UNSET:
        logger.__dict__.pop("isEnabledFor", None)
    else:
        logger.isEnabledFor = is_enabled_for  # type: ignore[method-assign]
    logger.setLevel(level)  # also clears logging's cached levels


@contextmanager
def logs(*names: str) -> Iterator[LogCapture]:
    """Catch what Dynamo logs in the block, as TORCH_LOGS with these names would print it."""
    if "TORCH_LOGS" in os.environ:
        raise RuntimeError("TORCH_LOGS is set in this process, so torch ignores other log "
                           "settings: unset it (del os.environ['TORCH_LOGS']) to use capture.logs")
    settings = _settings(names)
    captured = LogCapture()
    collect = _Collect(captured)

    levels, artifacts = internals.log_state()
    saved_state = (dict(levels), set(artifacts))
    saved = {id(lg): (lg, _snapshot(lg)) for lg in internals.torch_loggers()}
    try:
        internals.set_logs(**settings)
        # set_logs gave every registered log a stderr handler of torch's: send to ours instead.
        for qname in internals.log_qnames():
            logger = logging.getLogger(qname)
            logger.handlers[:] = [h for h in logger.handlers
                                  if not internals.is_torch_log_handler(h)]
            logger.handlers.append(collect)
        yield captured
    finally:
        levels.clear()
        levels.update(saved_state[0])
        artifacts.clear()
        artifacts.update(saved_state[1])
        for logger, snapshot in saved.values():
            _restore(logger, snapshot)
        # Artifact loggers first created inside the block: configured as torch would now.
        for logger in internals.torch_loggers():
            if id(logger) not in saved and internals.artifact_name(logger) is not None:
                logger.handlers[:] = [h for h in logger.handlers if h is not collect]
                logger.setLevel(logging.NOTSET)
                logger.propagate = True
                internals.configure_artifact_log(logger)
