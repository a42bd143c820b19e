"""The one text policy (capture.text), applied when records are made: every string of a
recording of hostile programs is showable; what the program supplies is bounded, and what
Dynamo wrote is kept whole, whatever view shows it."""

from __future__ import annotations

import re
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


# Where a recording keeps Dynamo's own text, whole (JSON paths): the graph code, guards
# and the guard tree, reasons, source names, FX node names (`l_d_b_bbb...` is Dynamo's name
# for the program's dict value). Bytecode listings are not here: their rows are Dynamo's,
# but a LOAD_CONST argument is the repr of the program's constant, bounded (see
# test_fidelity for the listings against `dis`).
DYNAMOS = re.compile(r"\.(graph_code|guard_tree|guards\[\d+\]|guard_details\[\d+\]\.(text|source)"
                     r"|graph_break\.(message|hints\[\d+\]|explanation|reason)|restart_reason"
                     r"|recompile_reasons\[\d+\]|failed_guards.*|vars\[\d+\]\.(source|node)"
                     r"|nodes\[\d+\]\.(name|created_name|target|inputs.*)"
                     r"|steps\[\d+\]\.(nodes_added|nodes_renamed).*"
                     r"|events\[\d+\]\.failed_guards.*)$")


def test_what_the_program_supplies_is_bounded(hostile):
    limit = text.MESSAGE_LIMIT + MARKER
    bounded = [(where, line) for rec in hostile.values() for where, s in strings(rec.to_dict())
               if not DYNAMOS.search(where) for line in s.splitlines()]
    longest = max(bounded, key=lambda w: len(w[1]))
    assert len(longest[1]) <= limit, longest[0]
    # the long program's 100 000-character constants were cut where the program shows
    # them, and the cut says so: the constant is "<b>a" + "a" * LONG; a tracker's detail
    # holds its repr cut at MAX_DETAIL; its source line and LOAD_CONST argument are cut too
    cut = [(where, line) for where, line in bounded if "more characters" in line]
    more = LONG + len(repr("<b>a")) - text.MAX_DETAIL
    assert any(line.endswith(f"… {more:,} more characters") for _, line in cut), cut[:3]
    assert any(".source_lines" in w for w, _ in cut) and any(".argrepr" in w for w, _ in cut)


def test_what_dynamo_wrote_is_kept_whole_even_when_it_quotes_the_program(hostile):
    """The long program's constants reach Dynamo's guards (the dict key, the compared
    string): those guard texts keep them whole, and no text of Dynamo's is cut."""
    c = hostile["long lines"].compiles[0]
    whole = [g for g in c.guards if "b" * LONG in g or "c" * LONG in g]
    assert whole and all(g in c.guard_tree for g in whole)
    for rec in hostile.values():
        for where, s in strings(rec.to_dict()):
            if DYNAMOS.search(where):
                assert not re.search(r"… [\d,]+ more (characters|lines)", s), where


def test_the_policy_functions():
    assert text.visible("a\u202eb\x00\udcff") == "a\\u202eb\\x00\\udcff"
    assert text.cut("abcdef", 3) == "abc… 3 more characters" and text.cut("abc", 3) == "abc"
    assert text.shorten("a\nb", 10) == "a b"
    many = "\n".join("x" * 1000 for _ in range(500))
    assert text.listing(many) == many and text.exact(many + "\u202e") == many + "\\u202e"
    assert text.listing(None) is None
    long = repr("a" * 1000)
    assert text.argument("LOAD_CONST", long).endswith("more characters")
    assert text.argument("LOAD_GLOBAL", "x" * 1000) == "x" * 1000
    assert text.guard_where(3, "y = x.sin()") == "line 3: y = x.sin()"
    assert text.guard_where(None, None, ambient=True) == "ambient"
    assert text.guard_where(None, None) == "after tracing"
    assert text.guard_where(None, None, step=4) == "step 4"
    assert UNSAFE  # the fixture's characters are the ones the policy escapes
    assert all(text._UNSHOWABLE.search(ch) for ch in UNSAFE)
