"""Exercises answered with code: the learner rewrites a function, the checker compiles it.

A debugging lesson ends with the learner fixing something. `predict_fix` takes the
learner's function, compiles it with ``fullgraph=True`` (so any graph break is an
error that names its reason), calls it on the lesson's inputs, and compares each result
with the original function's::

    q3_answer = my_step                     # cell 1: the learner's rewritten function
    q3 = predict_fix("q3", "Rewrite step so it compiles to one graph", step,
                     calls=[(model, ids) for ids in prompts], prediction="q3_answer")
    q3.check(q3_answer)                     # cell 2: the verdict only

Wrong answers are told what happened: which break Dynamo met (its first line, and the
line of the learner's code), which call returned something else, or how many graphs the
calls compiled. torch is imported only when an answer is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .answers import short
from .exercise import Exercise


def predict_fix(name: str, question: str, original: Callable, *, calls: Sequence[tuple],
                max_graphs: int = 1, backend: str = "eager", hint: str = "",
                solution: str = "", explanation: str = "", prediction: str | None = None,
                look: str = "") -> Exercise:
    """A rewrite of `original` that must compile to at most `max_graphs` graphs over `calls`
    under ``fullgraph=True`` and return what `original` returns for each call."""

    def check(answer: Any) -> tuple[bool, str]:
        if not callable(answer):
            return False, f"answer with a function (def my_step(...): ...); got {short(answer)}"
        if answer is original:
            return False, "that is the original function; write a new one beside it"
        import torch

        from capture import internals

        internals.reset()
        before = internals.counters()["unique_graphs"]   # Dynamo's count, process-wide
        compiled = torch.compile(answer, backend=backend, fullgraph=True)
        for number, args in enumerate(calls, 1):
            try:
                got = compiled(*args)
            except Exception as exc:
                if internals.breaks_one_graph(exc):
                    # a graph break, or a branch on a value only known at run time
                    return False, ("Dynamo still cannot capture it in one graph: "
                                   f"{_break_text(exc, answer)}")
                return False, f"call {number} raised {type(exc).__name__}: {_first_line(exc)}"
            want = original(*args)
            if not _same(got, want):
                return False, (f"call {number} returns {_describe(got)} where the original "
                               f"returns {_describe(want)}")
        graphs = internals.counters()["unique_graphs"] - before
        internals.reset()
        if graphs > max_graphs:
            return False, (f"it compiled {graphs} graphs for the {len(calls)} calls, not "
                           f"{max_graphs}: something it reads changes between calls (a recompile)")
        return True, explanation

    return Exercise(name, question, check, hint=hint, solution=solution,
                    expected_form="a function with the same arguments as the original",
                    prediction=prediction, look=look)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _break_text(exc: BaseException, answer: Callable) -> str:
    """The break's first line, and the line of the learner's function it happened at."""
    text = _first_line(exc)
    from capture import internals

    code = getattr(answer, "__code__", None)
    stack = internals.break_frames(exc)
    for frame in reversed(stack):
        if (code is not None and frame.filename == code.co_filename
                and frame.name == code.co_name and (frame.lineno or 0) >= code.co_firstlineno):
            line = (frame.line or "").strip()
            return f"{text} (line {frame.lineno - code.co_firstlineno + 1} of your function: {line})"
    if stack:  # the break is in something the answer calls
        frame = stack[-1]
        return f"{text} (in {frame.name}: {(frame.line or '').strip()})"
    return text


def _same(got: Any, want: Any) -> bool:
    import torch

    if isinstance(want, torch.Tensor):
        return (isinstance(got, torch.Tensor) and got.shape == want.shape
                and got.dtype == want.dtype and torch.equal(got, want))
    if isinstance(want, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(want)
                and all(_same(g, w) for g, w in zip(got, want)))
    return bool(got == want)


def _describe(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        if value.numel() <= 16:
            return short(value.tolist())
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {list(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return short(value)
