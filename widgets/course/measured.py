"""Questions whose answer a lesson measured itself: a number, a set of names, a choice."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .answers import as_list, as_number, short, squash
from .exercise import Exercise

# Wrong answers so far, per question, kept for the whole kernel: a lesson builds its exercise
# again each time its check cell runs, and a direction ("too high") is earned by a first
# honest try, not handed out so that two or three guesses find the number by elimination.
_wrong_tries: dict[tuple[str, str, str], int] = {}


def _count_wrong(key: tuple[str, str, str]) -> int:
    """Count one more wrong answer to the question `key`; how many there are now."""
    _wrong_tries[key] = _wrong_tries.get(key, 0) + 1
    return _wrong_tries[key]


def forget_tries() -> None:
    """Forget every wrong answer counted so far (a fresh start for each exercise)."""
    _wrong_tries.clear()


def predict_number(name: str, question: str, expected: float, *, hint: str = "",
                   explanation: str = "", tolerance: float = 0, prediction: str | None = None,
                   look: str = "") -> Exercise:
    """A numeric answer (e.g. a counter a lesson measured): ``3``, ``"3"``, ``3.0``, ``"three"``.

    The first wrong number is only told it is wrong; from the second on, whether it is too
    high or too low.
    """
    key = (name, question, repr(expected))

    def check(ans: Any) -> tuple[bool, str]:
        value = as_number(ans)
        if value is None:
            return False, f"answer with a number, in digits or in words; got {short(ans)}"
        if abs(value - expected) <= tolerance:
            return True, explanation
        if _count_wrong(key) == 1:
            return False, (f"{_fmt(value)} is not what was measured. Work through the "
                           f"mechanism once more before you try another number; a second "
                           f"wrong answer is told which way it is off.")
        return False, f"{_fmt(value)} is too {'high' if value > expected else 'low'}."

    return Exercise(name, question, check, hint=hint,
                    solution=f"{_fmt(expected)}" + (f". {explanation}" if explanation else ""),
                    expected_form="a number", prediction=prediction, look=look)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def predict_set(name: str, question: str, expected: Iterable[str], *, hint: str = "",
                explanation: str = "", normalize: Callable[[str], str] = squash,
                prediction: str | None = None, look: str = "") -> Exercise:
    """A set of names, order free: a list, tuple, set or comma-separated string.

    When the names are option letters (``["a", "c"]``), a string of letters is read letter by
    letter too: ``"ac"``, ``"a c"``, ``"a and c"``.

    A wrong set is never told which names are wrong (that would let a learner find the set
    by elimination): the first wrong one only that it is wrong, later ones how many of its
    names do not belong and how many are missing.
    """
    want = {normalize(str(e)): str(e) for e in expected}
    key = (name, question, repr(sorted(want)))

    letters = bool(want) and all(re.fullmatch(r"[a-z]", k) for k in want)

    def check(ans: Any) -> tuple[bool, str]:
        if letters and isinstance(ans, str):
            items = _letters(ans)
        else:
            items = as_list(ans) if not isinstance(ans, (set, frozenset)) else list(ans)
        if items is None or not all(isinstance(i, str) for i in items):
            form = ("the letters of your choices, as a list or a string of letters" if letters
                    else "a list of names")
            return False, f"answer with {form}; got {short(ans)}"
        got = {normalize(i): i for i in items}
        extra = [got[k] for k in got if k not in want]
        missing = [k for k in want if k not in got]
        if not extra and not missing:
            return True, explanation
        if _count_wrong(key) == 1:
            return False, ("that is not the set. Decide for each item on its own why it "
                           "belongs; a second wrong answer is told how many items are off.")
        parts = []
        if extra:
            parts.append(f"{len(extra)} of your items {'does' if len(extra) == 1 else 'do'} "
                         f"not belong")
        if missing:
            parts.append(f"{len(missing)} {'is' if len(missing) == 1 else 'are'} missing")
        return False, "; ".join(parts) + "."

    return Exercise(name, question, check, hint=hint,
                    solution=", ".join(sorted(want.values())) +
                    (f". {explanation}" if explanation else ""),
                    expected_form=("a list of letters, in any order" if letters else
                                   "a list of names, in any order"), prediction=prediction,
                    look=look)


def _letters(text: str) -> list[str]:
    """Option letters from one string: 'ac', 'a c', "['a', 'c']" and 'a and c' -> ['a', 'c']."""
    return re.findall(r"[a-z]", re.sub(r"\band\b", " ", text.lower()))


def predict_choice(name: str, question: str, options: dict[str, str], correct: str, *,
                   hint: str = "", explanation: str = "",
                   feedback: dict[str, str] | None = None, prediction: str | None = None,
                   look: str = "") -> Exercise:
    """Multiple choice: answer with the letter (``"b"``) or the option's text.

    `feedback` maps each wrong letter to why that choice is wrong, told to the learner who
    picked it; every wrong option needs one (a bare "Not quite." teaches nothing).
    """
    lacking = [k for k in options if k != correct and not (feedback or {}).get(k)]
    if correct not in options:
        raise ValueError(f"predict_choice {name!r}: the correct option {correct!r} is not "
                         f"one of {', '.join(repr(k) for k in options)}")
    if lacking:
        raise ValueError(f"predict_choice {name!r}: say why each wrong option is wrong: "
                         f"feedback={{...}} has nothing for {', '.join(map(repr, lacking))}")
    keys = {squash(k): k for k in options}
    texts = {squash(v): k for k, v in options.items()}
    listing = "\n".join(f"  {k}) {v}" for k, v in options.items())

    def check(ans: Any) -> tuple[bool, str]:
        if not isinstance(ans, str):
            return False, f"answer with one letter as a string, e.g. 'a'; got {short(ans)}"
        key = keys.get(squash(ans)) or texts.get(squash(ans))
        if key is None:
            return False, f"answer with one of {', '.join(repr(k) for k in options)}."
        if key == correct:
            return True, explanation
        return False, (feedback or {})[key]

    return Exercise(name, f"{question}\n{listing}", check, hint=hint,
                    solution=f"{correct}) {options[correct]}" +
                    (f". {explanation}" if explanation else ""),
                    expected_form=f"one of {', '.join(repr(k) for k in options)}",
                    prediction=prediction, look=look)
