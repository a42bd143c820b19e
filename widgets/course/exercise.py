"""One exercise: a question, a checker, a hint and a solution; and the verdict on an answer."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .answers import short

# What `check` returns: (ok, feedback), a bare bool, or a Result.
CheckFn = Callable[[Any], "tuple[bool, str] | bool | Result"]


@dataclass(frozen=True)
class Result:
    """The verdict on one answer: right or not, and what to tell the learner."""

    ok: bool | None  # None: no answer was given yet (the ``...`` placeholder)
    message: str

    def __bool__(self) -> bool:
        return bool(self.ok)

    def __str__(self) -> str:
        return self.message

    def html(self) -> str:
        """The message as escaped HTML, coloured by JupyterLab's theme variables."""
        colour = {True: "--jp-success-color1", False: "--jp-error-color1"}.get(
            self.ok, "--jp-ui-font-color1")
        body = html.escape(self.message).replace("\n", "<br>")
        return f'<div style="color: var({colour})">{body}</div>'


class Exercise:
    """One question with a checker, a hint and a solution.

    `check(answer)` must return ``(ok, feedback)`` (or a bool, or a `Result`); it may
    raise on an odd answer: the exercise catches that and tells the learner which
    form of answer it expects (`expected_form`).
    """

    def __init__(self, name: str, question: str, check: CheckFn, hint: str = "",
                 solution: str = "", expected_form: str = "", *,
                 prediction: str | None = None, look: str = "") -> None:
        self.name = name
        self.question = question
        self._check = check
        self._hint = hint
        self._solution = solution
        self.expected_form = expected_form
        # the variable the learner's prediction was written to, in the cell above
        self.prediction = prediction
        # what to look at when the answer is wrong
        self.look = look

    # -- what the learner calls ------------------------------------------------

    def check(self, answer: Any = ...) -> None:
        """Print whether `answer` is right; a wrong one gets feedback and a pointer to the hint."""
        print(self.grade(answer))

    def hint(self) -> None:
        """Print the hint."""
        print(f"Hint ({self.name}): {self._hint or 'no hint for this one: try the solution.'}")

    def solution(self) -> None:
        """Print the solution."""
        print(f"Solution ({self.name}): {self._solution or '(none written)'}")

    # -- the same, as values ---------------------------------------------------

    def grade(self, answer: Any = ...) -> Result:
        """The verdict on `answer` without printing it (for tests and other views)."""
        if answer is ...:
            form = f" Expected: {self.expected_form}." if self.expected_form else ""
            if self.prediction:
                return Result(None, f"{self.name}: no prediction yet. Replace ... in "
                                    f"`{self.prediction} = ...` in the cell above with your "
                                    f"prediction, run it, then run this cell again.{form}")
            return Result(None, f"{self.name}: replace ... with your answer, then run the "
                                f"cell again.{form}")
        try:
            verdict = self._check(answer)
        except Exception as exc:  # a checker must never crash on a learner's answer
            form = self.expected_form or "see the question"
            return Result(False, f"{self.name}: could not check {short(answer)} "
                                 f"({type(exc).__name__}). Expected: {form}.")
        ok, feedback = _unpack(verdict)
        if ok:
            text = f"{self.name}: Correct!"
            return Result(True, text + (f" {feedback}" if feedback else ""))
        text = f"{self.name}: Not quite" + (f": {feedback}" if feedback else ".")
        pad = " " * len(self.name)
        if self.look:
            end = "" if self.look.rstrip().endswith((".", "?", "!", ")")) else "."
            text += f"\n{pad}  Look at {self.look}{end}"
        text += f"\n{pad}  Call {self._call('hint')} for a hint"
        if self._solution:
            text += f", or {self._call('solution')} to see the answer"
        return Result(False, text + ".")

    def _call(self, method: str) -> str:
        return f"{self.name}.{method}()" if self.name.isidentifier() else f".{method}()"

    def __repr__(self) -> str:
        text = f"{self.name}: {self.question}"
        if self.expected_form:
            text += f"\n  (answer: {self.expected_form})"
        return text

    def _repr_html_(self) -> str:
        form = (f"<br><small>answer: {html.escape(self.expected_form)}</small>"
                if self.expected_form else "")
        return (f"<div><b>{html.escape(self.name)}</b>: "
                f"{html.escape(self.question).replace(chr(10), '<br>')}{form}</div>")


def _unpack(verdict: Any) -> tuple[bool, str]:
    if isinstance(verdict, Result):
        return bool(verdict.ok), verdict.message
    if isinstance(verdict, tuple) and len(verdict) == 2:
        return bool(verdict[0]), str(verdict[1] or "")
    return bool(verdict), ""
