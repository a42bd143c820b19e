"""The one text policy (capture.text), applied when records are made: every string of a
recording of hostile programs is showable and bounded, whatever view shows it."""

from __future__ import annotations

from typing import Any

import pytest

from capture import text
from hostile import LONG, UNSAFE, recordings

# A cut line keeps `limit` characters and says how many more there were.
MARKER = len("… 1,000,000 more characters")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return recordings(tmp_path_factory.mktemp("hostile"))


def strings(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string in a recording's JSON data, with where it is."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):  # keys too: local names come from the program
        return [s for k, v in value.items() for s in [(f"{path} key", k), *strings(v, f"{path}.{k}")]]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in strings(v, f"{path}[{i}]")]
    return []


def test_no_unshowable_character_reaches_a_record(hostile):
    for name, rec in hostile.items():
        found = [(where, s) for where, s in strings(rec.to_dict())
                 if text._UNSHOWABLE.search(s)]
        assert not found, (name, found[:3])


def test_the_unsafe_characters_are_shown_as_escapes(hostile):
    everything = "\n".join(s for rec in hostile.values() for _, s in strings(rec.to_dict()))
    assert "\\u202e" in everything and "\\x00" in everything and "\\udcff" in everything


def test_every_line_is_bounded(hostile):
    limit = text.MESSAGE_LIMIT + MARKER
    longest = max(len(line) for rec in hostile.values() for _, s in strings(rec.to_dict())
                  for line in s.splitlines())
    assert longest <= limit
    # the long program's 100 000-character constant was cut, and the cut says so
    cut = [s for rec in hostile.values() for _, s in strings(rec.to_dict())
           if "more characters" in s]
    # the constant is "<b>a" + "a" * LONG; a tracker's detail holds its repr cut at MAX_DETAIL
    more = LONG + len(repr("<b>a")) - text.MAX_DETAIL
    assert any(s.endswith(f"… {more:,} more characters") for s in cut), cut[:3]


def test_the_policy_functions():
    assert text.visible("a\u202eb\x00\udcff") == "a\\u202eb\\x00\\udcff"
    assert text.cut("abcdef", 3) == "abc… 3 more characters" and text.cut("abc", 3) == "abc"
    assert text.shorten("a\nb", 10) == "a b"
    many = "\n".join("x" * 10 for _ in range(50))
    assert text.listing(many, limit=100).endswith("more lines")
    assert text.listing(None) is None
    assert text.guard_where(3, "y = x.sin()") == "line 3: y = x.sin()"
    assert text.guard_where(None, None, ambient=True) == "ambient"
    assert text.guard_where(None, None) == "after tracing"
    assert text.guard_where(None, None, step=4) == "step 4"
    assert UNSAFE  # the fixture's characters are the ones the policy escapes
    assert all(text._UNSHOWABLE.search(ch) for ch in UNSAFE)
