"""notebooks/GLOSSARY.md: one definition per word, in alphabetical order.

The entries above the generated section are written by hand and grow with each lesson; a new
one goes where a reader looks for it, and a word defined twice would say two things.
"""

from __future__ import annotations

import re
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parents[1] / "notebooks" / "GLOSSARY.md"
GENERATED = "<!-- help.json: generated"


def headwords(text: str) -> list[str]:
    """The bold word opening each hand-written entry, in the order of the file."""
    written = text.split(GENERATED, 1)[0]
    return [m.group(1) for block in re.split(r"\n\s*\n", written)
            if (m := re.match(r"\*\*(.+?)\*\*", block.strip()))]


def sort_key(word: str) -> str:
    """Case, backticks, brackets and the closing full stop aside."""
    return re.sub(r"[`().]", "", word).lower()


def test_the_glossary_defines_each_word_once():
    words = headwords(GLOSSARY.read_text(encoding="utf-8"))
    assert len(words) > 40
    assert sorted(w for w in set(words) if words.count(w) > 1) == []


def test_the_glossary_entries_are_in_alphabetical_order():
    words = headwords(GLOSSARY.read_text(encoding="utf-8"))
    out_of_place = [(a, b) for a, b in zip(words, words[1:]) if sort_key(a) > sort_key(b)]
    assert out_of_place == []


def test_the_checks_catch_a_repeated_and_an_appended_entry():
    text = ("**Backend.** one.\n\n**Decomposition.** two.\n\n**Guard.** three.\n\n"
            "**Decomposition.** again.\n\n" + GENERATED + " -->\n**Zebra.** not read.\n")
    words = headwords(text)
    assert words == ["Backend.", "Decomposition.", "Guard.", "Decomposition."]
    assert [(a, b) for a, b in zip(words, words[1:]) if sort_key(a) > sort_key(b)] == [
        ("Guard.", "Decomposition.")]
