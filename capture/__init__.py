"""Dynamo Lab's engine: run the real torch._dynamo and record every step it takes.

    >>> import torch, capture
    >>> r = capture.trace(lambda x: x.sin() + 1, torch.randn(4))
    >>> print(r)            # steps, stack, graph, guards, rewritten bytecode

Nothing here imports IPython or ipywidgets; views live in `widgets`.
"""

from . import textview  # noqa: F401  (str() of a recording or a compile is its text view)
from .logs import LogCapture, LogLine, logs
from .recorder import (
    DEFAULT_MAX_CHARS, DEFAULT_MAX_COMPILE_STEPS, DEFAULT_MAX_STEPS, active, prepare, record, trace,
)
from .run import Note, NotStarted, Run, run
from .recording import (
    CodeInfo, Compile, Event, EventKind, Guard, GraphBreak, Instr, Node, Outcome, Recording,
    ResumeFunction, Step, Var,
)

__all__ = [
    "record", "trace", "prepare", "active", "DEFAULT_MAX_STEPS", "DEFAULT_MAX_COMPILE_STEPS",
    "DEFAULT_MAX_CHARS", "logs", "LogCapture", "LogLine",
    "Recording", "Compile", "Step", "Var", "Guard", "Node", "Event", "GraphBreak",
    "ResumeFunction", "CodeInfo", "Instr", "Outcome", "EventKind", "run", "Run", "Note", "NotStarted",
]

from .recording import FailedGuard  # noqa: E402  (recompiles as data)

__all__ += ["FailedGuard"]

from .recording import Stage, StageUnit  # noqa: E402  (stages after Dynamo)

__all__ += ["Stage", "StageUnit"]

from .compare import Comparison, compare  # noqa: E402  (two compiles side by side)

__all__ += ["compare", "Comparison"]
