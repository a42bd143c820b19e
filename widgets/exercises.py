"""Exercises for the lessons: ask, check the learner's answer, hint, reveal.

The pattern of Kaggle's learntools: a lesson builds an `Exercise`, the learner
replaces ``...`` with an answer and runs ``q1.check(answer)``::

    q1 = Exercise("q1", "How many graphs did Dynamo compile?",
                  check=lambda a: (a == 2, "count the [n/m] headers"),
                  hint="One graph per compiled attempt.", solution="2")
    q1.check(...)     # -> asks for an answer, counts nothing
    q1.check(3)       # -> Not quite ... call q1.hint()
    q1.hint(); q1.solution()

Predict, then reveal: the lessons ask first and measure after. One cell states
the question and holds the learner's prediction; the next cell runs the trace
and checks the prediction against what it recorded::

    q1_answer = ...            # cell 1: the learner writes a prediction here

    with capture.record() as rec:                                  # cell 2
        f(torch.ones(3)); f(torch.ones(4))
    q1 = predict_number("q1", "How many compiles?", len(rec.compiles),
                        prediction="q1_answer", look="the ids in rec.compiles")
    q1.check(q1_answer)

`prediction` names the variable, so an empty prediction says where to write it;
`look` says what to look at when the prediction was wrong.

The `predict_*` helpers read their right answer from a recording (`capture.trace`,
`capture.record`, `%%capture_trace -o`): the VariableTracker stack after a step,
a guard, the line of a graph break. `predict_number`, `predict_set` and
`predict_choice` cover answers a lesson measured itself (e.g. the number of
compiles a recording holds).

The viewer has its own predict mode: before each step forward the learner says what
the instruction will push and do, and the browser keeps the answers in the viewer's
`predictions`. `review_predictions(viewer)` reads them back in Python: the score, and
for each wrong answer what the step really did and which pane shows it::

    viewer = TraceViewer(rec); viewer.predict = True; viewer      # cell 1: step through it
    print(review_predictions(viewer))                              # cell 2

Everything prints plain text (stable under nbval) and never raises on a strange
answer: it says what form it expected instead. Nothing here imports ipywidgets,
IPython or torch.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Exercise", "Result", "predict_stack", "predict_guard", "predict_break_line",
    "predict_number", "predict_set", "predict_choice", "review_predictions",
]

# What `check` returns: (ok, feedback), a bare bool, or a Result.
CheckFn = Callable[[Any], "tuple[bool, str] | bool | Result"]

_NUMBER_WORDS = {
    "zero": 0, "none": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}


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
            return Result(False, f"{self.name}: could not check {_short(answer)} "
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


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- normalising sloppy-but-right answers --------------------------------------

def _squash(text: str) -> str:
    """Lower case, letters and digits only: 'Tensor Variable' -> 'tensorvariable'."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _kind_key(text: str) -> str:
    """A tracker class name without its suffix: TensorVariable, 'tensor' -> 'tensor'."""
    key = _squash(text)
    for suffix in ("variabletracker", "variable", "vt"):
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)]
    return key


def _kind_keys(item: Any) -> set[str] | None:
    """Every reading of one predicted stack entry, or None if it is not a name."""
    if isinstance(item, type):
        item = item.__name__
    elif hasattr(item, "kind") and isinstance(getattr(item, "kind"), str):
        item = item.kind  # a capture.Var
    if not isinstance(item, str):
        return None
    words = item.split()
    keys = {_kind_key(item)}
    if words:
        keys.add(_kind_key(words[0]))  # 'TensorVariable f32[4] node=sin' -> 'tensor'
    return keys


def _as_list(answer: Any) -> list[Any] | None:
    """A list from a list, tuple or comma-separated string; None for anything else."""
    if isinstance(answer, str):
        text = answer.strip().strip("[]()")
        return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]
    if isinstance(answer, (list, tuple)):
        return list(answer)
    return None


def _as_number(answer: Any) -> float | None:
    if isinstance(answer, bool):
        return None
    if isinstance(answer, (int, float)):
        return float(answer)
    if isinstance(answer, str):
        text = answer.strip().lower()
        if text in _NUMBER_WORDS:
            return float(_NUMBER_WORDS[text])
        try:
            return float(text)
        except ValueError:
            return None
    try:  # numpy or torch scalars, without importing either
        return float(answer.item()) if hasattr(answer, "item") else None
    except Exception:
        return None


def _first_int(answer: Any) -> int | None:
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer
    if isinstance(answer, float) and answer.is_integer():
        return int(answer)
    if isinstance(answer, str):
        found = re.fullmatch(r"\s*(?:line\s*)?(\d+)\s*", answer, flags=re.IGNORECASE)
        return int(found.group(1)) if found else None
    return None


def _source_key(text: str) -> str:
    """Guard sources compared loosely: L["x"] == L['x'] == x (a local's bare name)."""
    text = re.sub(r"\s+", "", text).replace('"', "'")
    if text.isidentifier():
        return f"L['{text}']"
    return text


# -- reading a recording ---------------------------------------------------------

def _compile_of(source: Any, compile_id: str | None) -> Any:
    """The `Compile` asked for, from a Recording, a Compile or anything holding one."""
    if hasattr(source, "recording") and not hasattr(source, "compiles"):
        source = source.recording  # a viewer
    if hasattr(source, "compiles"):
        if compile_id is not None:
            return source.compile(compile_id)
        if not source.compiles:
            raise ValueError("this recording has no compiles: did the cell call the "
                             "compiled function?")
        return source.compiles[0]
    if hasattr(source, "steps") and hasattr(source, "compile_id"):
        if compile_id is not None and source.compile_id != compile_id:
            raise ValueError(f"this is compile {source.compile_id}, not {compile_id}")
        return source
    raise TypeError(f"expected a capture Recording or Compile, got {type(source).__name__}")


def _select_step(compile_: Any, step: Any) -> Any:
    """A step by index, by a predicate, or by attributes: {'opname': 'CALL', 'nth': 0}."""
    steps = compile_.steps
    if isinstance(step, int) and not isinstance(step, bool):
        if not -len(steps) <= step < len(steps):
            raise IndexError(f"compile {compile_.compile_id} has {len(steps)} steps; "
                             f"there is no step {step}")
        return steps[step]
    if isinstance(step, dict):
        wanted = dict(step)
        nth = wanted.pop("nth", 0)
        unknown = [k for k in wanted if steps and not hasattr(steps[0], k)]
        if unknown:
            raise TypeError(f"a step has no attribute {unknown[0]!r}; select with Step fields "
                            "such as opname, argrepr, lineno, offset, code_name, depth")
        matches = [s for s in steps
                   if all(getattr(s, k, None) == v for k, v in wanted.items())]
    elif callable(step):
        matches = [s for s in steps if step(s)]
        nth = 0
    else:
        raise TypeError("select a step by index, by a function of the step, or by a dict "
                        "such as {'opname': 'CALL', 'lineno': 3}")
    if len(matches) <= nth:
        raise LookupError(f"no step of compile {compile_.compile_id} matches {step!r}")
    return matches[nth]


def _where(step: Any) -> str:
    arg = f" {step.argrepr}" if step.argrepr else ""
    return f"step #{step.index} ({step.opname}{arg}, line {step.lineno})"


def _var_text(var: Any) -> str:
    return str(var).strip()


# -- predict-then-reveal helpers ---------------------------------------------------

def predict_stack(recording: Any, step: Any, answer: Any = ..., *, compile_id: str | None = None,
                  name: str = "stack", question: str | None = None, hint: str | None = None,
                  prediction: str | None = None, look: str = "") -> Exercise | None:
    """Predict the VariableTracker kinds on the stack after a step, bottom first.

    `step` is a step index, a function of a `Step`, or a dict of `Step` attributes
    (``{"opname": "CALL", "lineno": 3, "nth": 0}``). Returns the `Exercise`; given an
    `answer` too, checks it at once and returns None.
    """
    compile_ = _compile_of(recording, compile_id)
    target = _select_step(compile_, step)
    expected = list(target.stack)
    kinds = [v.kind for v in expected]

    def check(ans: Any) -> tuple[bool, str]:
        items = _as_list(ans)
        if items is None:
            return False, (f"answer with a list of class names, bottom of the stack first, "
                           f"e.g. ['NullVariable', 'TensorVariable'] ([] for an empty stack); "
                           f"got {type(ans).__name__}")
        keys = [_kind_keys(i) for i in items]
        bad = [i for i, k in zip(items, keys) if k is None]
        if bad:
            return False, (f"each entry should be a class name such as 'TensorVariable', "
                           f"not {_short(bad[0])}")
        right = [_kind_key(k) in got for k, got in zip(kinds, keys)]
        if len(items) == len(kinds) and all(right):
            return True, _reveal_stack(target, expected)
        if len(items) != len(kinds):
            return False, (f"the stack after {_where(target)} holds {len(kinds)} "
                           f"item{'s' * (len(kinds) != 1)}, not {len(items)}.")
        reversed_right = [_kind_key(k) in got for k, got in zip(reversed(kinds), keys)]
        if all(reversed_right):
            return False, "right items, but in reverse order: list the bottom of the stack first."
        pos = right.index(False)
        return False, f"entry {pos} (counting from the bottom, from 0) is not that. " + \
            _kind_feedback(expected[pos], items[pos])

    q = question or (f"After {_where(target)} in [{compile_.compile_id}] {compile_.code_name}, "
                     f"which VariableTrackers are on the stack?")
    solution = f"{kinds!r} (bottom first)\n" + "\n".join(
        f"  {i}: {_var_text(v)}" for i, v in enumerate(expected))
    ex = Exercise(name, q, check,
                  hint=hint or ("Follow the stack from the previous step: each instruction pops "
                                "its inputs and pushes its result. In the text view the stack is "
                                "printed top first; answer bottom first."),
                  solution=solution,
                  expected_form="a list of VariableTracker class names, bottom of the stack "
                                "first, e.g. ['NullVariable', 'TensorVariable']",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _kind_feedback(var: Any, said: Any) -> str:
    said_keys = _kind_keys(said) or set()
    lazy_kind = _kind_key(var.kind)
    # 'ConstantVariable' said for a 'LazyConstantVariable': the realized form of a lazy one
    said_realized_form = any(lazy_kind != k and lazy_kind.endswith(k) for k in said_keys)
    if var.lazy and not var.realized and (said_realized_form or (
            var.python_type and _kind_key(var.python_type) in said_keys)):
        return ("Dynamo has not built that tracker yet: an input it has not looked at stays "
                "a lazy stand-in until something needs it.")
    if var.python_type and _squash(var.python_type) in {_squash(str(said))}:
        return "that is the Python type it models; name the VariableTracker class that models it."
    return "Which tracker models that value at this point?"


def _reveal_stack(step: Any, stack: list[Any]) -> str:
    if not stack:
        return f"After {_where(step)} the stack is empty."
    lines = "\n".join(f"  {i}: {_var_text(v)}" for i, v in enumerate(stack))
    return f"After {_where(step)} the stack holds (bottom first):\n{lines}"


def predict_guard(recording: Any, answer: Any = ..., *, compile_id: str | None = None,
                  about: str | None = None, name: str = "guard", question: str | None = None,
                  hint: str | None = None, prediction: str | None = None,
                  look: str = "") -> Exercise | None:
    """Predict a guard Dynamo installs: its kind (``TENSOR_MATCH``), optionally with a source.

    Right if the compile has such a guard. `about` restricts the question to guards
    on one source (``"L['y']"`` or just ``"y"``). Answers: ``"EQUALS_MATCH"``,
    ``("EQUALS_MATCH", "L['y']")``, ``"EQUALS_MATCH: L['y']"``.
    """
    compile_ = _compile_of(recording, compile_id)
    guards = [g for g in compile_.guard_details
              if about is None or (g.source and _source_key(g.source) == _source_key(about))]

    def check(ans: Any) -> tuple[bool, str]:
        parsed = _parse_guard_answer(ans)
        if parsed is None:
            return False, ("answer with a guard kind such as 'TENSOR_MATCH', or a kind and a "
                           "source such as ('EQUALS_MATCH', \"L['n']\"); got "
                           f"{type(ans).__name__}")
        kind, src = parsed
        same_kind = [g for g in guards if _squash(kind) in _guard_kinds(g)]
        if src is not None:
            exact = [g for g in same_kind if g.source and _source_key(g.source) == src]
            if exact:
                return True, _reveal_guard(exact[0])
            if same_kind:
                return False, f"there is a guard of kind {kind.upper()}, but not on {src}."
            on_src = [g for g in guards if g.source and _source_key(g.source) == src]
            if on_src:
                return False, f"{src} is guarded, but not by {kind.upper()}."
            return False, f"no guard of compile {compile_.compile_id} has that kind or source."
        if same_kind:
            return True, _reveal_guard(same_kind[0])
        scope = f" on {about}" if about else ""
        return False, f"compile {compile_.compile_id} has no {kind.upper()} guard{scope}."

    on = f" on {about}" if about else ""
    q = question or f"Name a guard{on} that Dynamo installs for [{compile_.compile_id}] " \
                    f"{compile_.code_name} (its kind, e.g. TENSOR_MATCH)."
    shown = [g for g in guards if not g.ambient] or guards
    solution = "\n".join(f"  {_guard_kind_text(g)}: {g.source or ''}" + (f"   # line {g.lineno}: {g.line}"
                                                             if g.lineno else "")
                         for g in shown) or "  (no guards)"
    ex = Exercise(name, q, check,
                  hint=hint or ("Ask what Dynamo assumed about each input while tracing: its "
                                "type, its shape and dtype, or its exact value."),
                  solution=f"guards{on}:\n{solution}",
                  expected_form="a guard kind like 'TENSOR_MATCH', or (kind, source) like "
                                "('EQUALS_MATCH', \"L['n']\")",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _parse_guard_answer(ans: Any) -> tuple[str, str | None] | None:
    if hasattr(ans, "kind") and hasattr(ans, "source"):  # a capture.Guard
        return str(ans.kind), _source_key(ans.source) if ans.source else None
    if isinstance(ans, dict):
        kind = ans.get("kind")
        src = ans.get("source")
        if not isinstance(kind, str):
            return None
        return kind.strip(), _source_key(src) if isinstance(src, str) else None
    if isinstance(ans, (list, tuple)) and len(ans) == 2 and all(isinstance(a, str) for a in ans):
        return ans[0].strip(), _source_key(ans[1])
    if isinstance(ans, (list, tuple)) and len(ans) == 1 and isinstance(ans[0], str):
        ans = ans[0]
    if isinstance(ans, str) and ans.strip():
        kind, sep, src = ans.partition(":")
        return kind.strip(), _source_key(src) if sep and src.strip() else None
    return None


def _rendered_kind(guard: Any) -> str:
    """The kind as the guard tree prints it (`EQUALS_MATCH`), which may differ from
    the kind Dynamo installed it as (`CONSTANT_MATCH`)."""
    return guard.tree_kind or guard.kind


def _guard_kinds(guard: Any) -> set[str]:
    return {_squash(guard.kind), _squash(_rendered_kind(guard))}


def _guard_kind_text(guard: Any) -> str:
    shown = _rendered_kind(guard)
    return shown if shown == guard.kind else f"{shown} (installed as {guard.kind})"


def _reveal_guard(guard: Any) -> str:
    where = f" (installed at line {guard.lineno}: {guard.line})" if guard.lineno else ""
    return f"{_guard_kind_text(guard)} on {guard.source or 'global state'}{where}"


def predict_break_line(recording: Any, answer: Any = ..., *, compile_id: str | None = None,
                       name: str = "break_line", question: str | None = None,
                       hint: str | None = None, prediction: str | None = None,
                       look: str = "") -> Exercise | None:
    """Predict the line where Dynamo's capture breaks (None if it does not break).

    Reads the first compile with a graph break unless `compile_id` is given. Answers:
    a line number (``6``, ``"6"``, ``"line 6"``) or the text of the line.
    """
    if compile_id is None and hasattr(recording, "compiles"):
        broken = [c for c in recording.compiles if c.graph_break is not None]
        compile_ = broken[0] if broken else _compile_of(recording, None)
    else:
        compile_ = _compile_of(recording, compile_id)
    gb = compile_.graph_break
    lines = {compile_.firstlineno + i: text.strip()
             for i, text in enumerate(compile_.source_lines)}

    def check(ans: Any) -> tuple[bool, str]:
        if ans is None or (isinstance(ans, str) and _squash(ans) in {"none", "nobreak", "no"}):
            if gb is None:
                return True, f"[{compile_.compile_id}] {compile_.code_name} compiles whole."
            return False, "Dynamo does break here. Which line can it not put in a graph?"
        line = _first_int(ans)
        if line is None and isinstance(ans, str):
            said = re.sub(r"\s+", " ", ans.strip())
            found = [n for n, text in lines.items() if re.sub(r"\s+", " ", text) == said]
            line = found[0] if found else None
            if line is None:
                return False, "that is not a line of the function: give its number or its text."
        if line is None:
            return False, (f"answer with a line number such as 6, or None if nothing breaks; "
                           f"got {type(ans).__name__}")
        if gb is None:
            return False, "nothing breaks here: Dynamo captured the whole function."
        if line == gb.lineno:
            return True, _reveal_break(gb)
        text = lines.get(line)
        if text is None:
            return False, f"line {line} is not part of {compile_.code_name}."
        return False, (f"line {line} (`{text}`) is captured fine; the break is "
                       f"{'later' if gb.lineno is not None and line < gb.lineno else 'earlier'}.")

    q = question or f"On which line does Dynamo stop capturing {compile_.code_name}?"
    solution = _reveal_break(gb) if gb else "no graph break: answer None"
    ex = Exercise(name, q, check,
                  hint=hint or ("Look for the first thing that is not tensor math Dynamo "
                                "understands: a call it cannot trace, or a branch on a "
                                "tensor's value."),
                  solution=solution,
                  expected_form="a line number such as 6 (or None if nothing breaks)",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _reveal_break(gb: Any) -> str:
    line = f": {gb.line}" if gb.line else ""
    return f"line {gb.lineno}{line}  ({gb.reason})"


def predict_number(name: str, question: str, expected: float, *, hint: str = "",
                   explanation: str = "", tolerance: float = 0, prediction: str | None = None,
                   look: str = "") -> Exercise:
    """A numeric answer (e.g. a counter a lesson measured): ``3``, ``"3"``, ``3.0``, ``"three"``."""

    def check(ans: Any) -> tuple[bool, str]:
        value = _as_number(ans)
        if value is None:
            return False, f"answer with a number, e.g. 2; got {_short(ans)}"
        if abs(value - expected) <= tolerance:
            return True, explanation
        return False, f"{_fmt(value)} is too {'high' if value > expected else 'low'}."

    return Exercise(name, question, check, hint=hint,
                    solution=f"{_fmt(expected)}" + (f". {explanation}" if explanation else ""),
                    expected_form="a number", prediction=prediction, look=look)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def predict_set(name: str, question: str, expected: Iterable[str], *, hint: str = "",
                explanation: str = "", normalize: Callable[[str], str] = _squash,
                prediction: str | None = None, look: str = "") -> Exercise:
    """A set of names, order free: a list, tuple, set or comma-separated string."""
    want = {normalize(str(e)): str(e) for e in expected}

    def check(ans: Any) -> tuple[bool, str]:
        items = _as_list(ans) if not isinstance(ans, (set, frozenset)) else list(ans)
        if items is None or not all(isinstance(i, str) for i in items):
            return False, f"answer with a list of names, e.g. ['a', 'b']; got {_short(ans)}"
        got = {normalize(i): i for i in items}
        extra = [got[k] for k in got if k not in want]
        missing = [k for k in want if k not in got]
        if not extra and not missing:
            return True, explanation
        parts = []
        if extra:
            parts.append(f"{', '.join(repr(e) for e in sorted(extra))} "
                         f"{'does' if len(extra) == 1 else 'do'} not belong")
        if missing:
            parts.append(f"{len(missing)} missing")
        return False, "; ".join(parts) + "."

    return Exercise(name, question, check, hint=hint,
                    solution=", ".join(sorted(want.values())) +
                    (f". {explanation}" if explanation else ""),
                    expected_form="a list of names, in any order", prediction=prediction,
                    look=look)


def predict_choice(name: str, question: str, options: dict[str, str], correct: str, *,
                   hint: str = "", explanation: str = "",
                   feedback: dict[str, str] | None = None, prediction: str | None = None,
                   look: str = "") -> Exercise:
    """Multiple choice: answer with the letter (``"b"``) or the option's text.

    `feedback` maps a wrong letter to what to tell the learner who picked it.
    """
    keys = {_squash(k): k for k in options}
    texts = {_squash(v): k for k, v in options.items()}
    listing = "\n".join(f"  {k}) {v}" for k, v in options.items())

    def check(ans: Any) -> tuple[bool, str]:
        if not isinstance(ans, str):
            return False, f"answer with one letter as a string, e.g. 'a'; got {_short(ans)}"
        key = keys.get(_squash(ans)) or texts.get(_squash(ans))
        if key is None:
            return False, f"answer with one of {', '.join(repr(k) for k in options)}."
        if key == correct:
            return True, explanation
        return False, (feedback or {}).get(key, "")

    return Exercise(name, f"{question}\n{listing}", check, hint=hint,
                    solution=f"{correct}) {options[correct]}" +
                    (f". {explanation}" if explanation else ""),
                    expected_form=f"one of {', '.join(repr(k) for k in options)}",
                    prediction=prediction, look=look)


# -- the viewer's predict mode -------------------------------------------------------

# What predict mode asks an instruction may do besides pushing (viewer.js, EFFECTS): as a
# prediction says it, as the step did it, the pane that shows it, and what that pane shows
# when the step did not do it.
_EFFECTS = {
    "node": ("adds a node to the FX graph", "added a node to the FX graph",
             "the FX graph pane", "no node is added at this step"),
    "guard": ("installs a guard", "installed a guard",
              "the guards pane", "no guard is installed at this step"),
    "break": ("breaks the graph", "broke the graph",
              "the graph break button", "it jumps to the step that breaks, not this one"),
    "inline": ("inlines a call", "inlined a call",
               "the depth and code name above the stack", "no callee starts here"),
    "return": ("returns from its frame", "returned from its frame",
               "the bytecode pane", "the frame does not end here"),
}


def review_predictions(source: Any, recording: Any = None, *, limit: int = 8) -> Result:
    """The learner's answers in the viewer's predict mode: the score, and for each wrong one
    what the step did and where to look.

    `source` is a `TraceViewer` (its `predictions` and its recording) or the list of
    prediction dicts the viewer keeps (``{"compile": "0/0", "step": 4, "instruction":
    "CALL 0", "lineno": 3, "answer": {"pushes": ..., "does": [...]}, "truth": {...},
    "correct": bool}``); `recording`, when given, names the nodes, guards and trackers.
    No predictions gives ok=None and says how to make some; never raises on odd entries.
    """
    if recording is None:
        recording = getattr(source, "recording", None)
    raw = getattr(source, "predictions", source)
    entries = list(raw) if isinstance(raw, (list, tuple)) else []
    readable = [p for p in entries if _readable_prediction(p)]
    if not readable:
        if getattr(source, "predict", True):
            how = ("step through the viewer above in predict mode: press forward (→), say "
                   "what the instruction pushes and does, then reveal")
        else:
            how = ("turn on predict mode in the viewer above (the predict button, or P), "
                   "then step forward and answer before each reveal")
        return Result(None, f"Predict mode: no predictions yet — {how}. Then run this cell "
                            "again.")
    right = sum(1 for p in readable if p["correct"])
    text = f"Predict mode: {right} of {len(readable)} right."
    if len(readable) < len(entries):
        text += f" ({len(entries) - len(readable)} unreadable entries left out.)"
    wrong = [p for p in readable if not p["correct"]]
    if not wrong:
        return Result(True, text + " Every prediction matched what Dynamo did.")
    lines = [text, "Wrong answers, and what to look at:"]
    lines += [_prediction_feedback(p, recording) for p in wrong[:limit]]
    if len(wrong) > limit:
        lines.append(f"  … and {len(wrong) - limit} more.")
    return Result(False, "\n".join(lines))


def _clip(value: Any, limit: int = 60) -> str:
    """A value from the browser as one short line of text."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _readable_prediction(p: Any) -> bool:
    if not isinstance(p, dict) or not isinstance(p.get("correct"), bool):
        return False
    said, truth, step = p.get("answer"), p.get("truth"), p.get("step")
    return (isinstance(said, dict) and isinstance(truth, dict)
            and isinstance(said.get("does", []), list) and isinstance(truth.get("does", []), list)
            and isinstance(step, int) and not isinstance(step, bool))


def _effects_text(pushes: Any, does: list[str], form: int) -> str:
    verb = ("pushes", "pushed")[form]
    parts = [f"{verb} {_clip(pushes)}" if pushes else f"{verb} nothing"]
    return ", ".join(parts + [_EFFECTS[d][form] for d in _EFFECTS if d in does])


def _recorded_step(recording: Any, p: dict[str, Any]) -> tuple[Any, Any]:
    """The compile and step a prediction is about, or (None, None) when not at hand."""
    try:
        c = recording.compile(str(p.get("compile")))
    except (KeyError, AttributeError, TypeError):  # another recording, or not one
        return None, None
    return (c, c.steps[p["step"]]) if 0 <= p["step"] < len(c.steps) else (None, None)


def _effect_detail(effect: str, c: Any, step: Any) -> str:
    """What the recording says the step did, for the pane that shows `effect`."""
    if effect == "node" and step.nodes_added:
        return f" (new: {', '.join(step.nodes_added)})"
    if effect == "guard" and step.guards_added:
        guards = [c.guard_details[i] for i in step.guards_added]
        return " (" + "; ".join(f"{_rendered_kind(g)} on {g.source or 'global state'}"
                                for g in guards[:3]) + ")"
    if effect == "break" and c.graph_break is not None:
        return f" ({c.graph_break.reason})"
    if effect == "inline":
        return f" (into {step.code_name})"
    return ""


def _prediction_feedback(p: dict[str, Any], recording: Any) -> str:
    said, truth = p["answer"], p["truth"]
    said_does = [d for d in said.get("does", []) if d in _EFFECTS]
    true_does = [d for d in truth.get("does", []) if d in _EFFECTS]
    where = f"step {p['step']}"
    if p.get("compile"):
        where += f" of [{p['compile']}]"
    if p.get("instruction"):
        where += f", {_clip(p['instruction'])}"
    if isinstance(p.get("lineno"), int):
        where += f" on line {p['lineno']}"
    c, step = _recorded_step(recording, p) if recording is not None else (None, None)
    look = []
    if said.get("pushes") != truth.get("pushes"):
        top = f" (its top: {_var_text(step.stack[-1])})" if step is not None and step.stack else ""
        look.append(f"the stack pane at step {p['step']}{top}")
    for d, (_, _, pane, absent) in _EFFECTS.items():
        if (d in said_does) == (d in true_does):
            continue
        if d in true_does:
            look.append(pane + (_effect_detail(d, c, step) if step is not None else ""))
        else:
            look.append(f"{pane}: {absent}")
    return (f"  {where}\n"
            f"      you said: {_effects_text(said.get('pushes'), said_does, 0)}\n"
            f"      it:       {_effects_text(truth.get('pushes'), true_does, 1)}\n"
            f"      look at:  {'; '.join(look) or 'the step itself'}")
