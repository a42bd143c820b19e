"""Reading a learner's answer: sloppy-but-right spellings normalised, odd ones told apart."""

from __future__ import annotations

import re
from typing import Any

from capture.text import shorten

_NUMBER_WORDS = {
    "zero": 0, "none": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}


def short(value: Any, limit: int = 60) -> str:
    """An answer as one short line of text (its repr, bounded by the engine's text policy)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return shorten(text, limit)


def squash(text: str) -> str:
    """Lower case, letters and digits only: 'Tensor Variable' -> 'tensorvariable'."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def kind_key(text: str) -> str:
    """A tracker class name without its suffix: TensorVariable, 'tensor' -> 'tensor'."""
    key = squash(text)
    for suffix in ("variabletracker", "variable", "vt"):
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)]
    return key


def kind_keys(item: Any) -> set[str] | None:
    """Every reading of one predicted stack entry, or None if it is not a name."""
    if isinstance(item, type):
        item = item.__name__
    elif hasattr(item, "kind") and isinstance(getattr(item, "kind"), str):
        item = item.kind  # a capture.Var
    if not isinstance(item, str):
        return None
    words = item.split()
    keys = {kind_key(item)}
    if words:
        keys.add(kind_key(words[0]))  # 'TensorVariable f32[4] node=sin' -> 'tensor'
    return keys


def as_list(answer: Any) -> list[Any] | None:
    """A list from a list, tuple or comma-separated string; None for anything else."""
    if isinstance(answer, str):
        text = answer.strip().strip("[]()")
        return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]
    if isinstance(answer, (list, tuple)):
        return list(answer)
    return None


def as_number(answer: Any) -> float | None:
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


def first_int(answer: Any) -> int | None:
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


def source_key(text: str) -> str:
    """Guard sources compared loosely: L["x"] == L['x'] == x (a local's bare name)."""
    text = re.sub(r"\s+", "", text).replace('"', "'")
    if text.isidentifier():
        return f"L['{text}']"
    return text
