"""The one text policy: how long a piece of the program's text may be, and which
characters are written as escapes. Applied once, when a record is made, so the
text view, the widget, the exported page and the JSON all show the same strings;
views add markup only.

NOTE (why escape at all): lone surrogates (from undecodable file names, or any
str) cannot be encoded as UTF-8, so a kernel could not send them; bidirectional
controls would reorder the text around them on screen ("Trojan Source"); other
C0 controls are invisible. They are written as `\\uXXXX` / `\\xXX` instead.
"""

from __future__ import annotations

import re

LINE_LIMIT = 500         # characters of one line of the program's text (source, graph code)
MESSAGE_LIMIT = 2000     # ... of one message (a reason, an error)
LISTING_LIMIT = 100_000  # characters of one listing (bytecode, graph code, the guard tree)
MAX_ARGREPR = 80         # an instruction's argument
MAX_DETAIL = 60          # a tracker's one-line reading
MAX_NAME = 200           # a source, a guard's line, a node's arguments

_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u061c\u200e\u200f"
                         "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """The text with surrogates, bidirectional and control characters written as escapes."""
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case, at C speed
        return text
    return _UNSHOWABLE.sub(_escape_char, text) if _UNSHOWABLE.search(text) else text


def cut(text: str, limit: int) -> str:
    """Text cut to `limit` characters, the cut marked with how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit:,} more characters"


def shorten(text: object, limit: int = MAX_DETAIL) -> str:
    """One line of the program's text as a record keeps it: newlines as spaces,
    unshowable characters escaped, at most `limit` characters (the cut marked)."""
    return cut(visible(str(text).replace("\n", " ")), limit)


def shown_line(text: object, limit: int = LINE_LIMIT) -> str:
    """One line of a listing or of source: escaped, cut at `limit` (the cut marked)."""
    return cut(visible(text), limit)


def listing(text: str | None, limit: int = LISTING_LIMIT) -> str | None:
    """A multi-line listing: each line `shown_line`, and at most `limit` characters in
    all, then how many lines were left out."""
    if text is None:
        return None
    lines = text.splitlines()
    out, size = [], 0
    for k, line in enumerate(lines):
        if size > limit:
            out.append(f"… {len(lines) - k:,} more lines")
            break
        out.append(shown_line(line))
        size += len(out[-1]) + 1
    return "\n".join(out)


def guard_where(lineno: int | None, line: str | None, *, ambient: bool = False,
                step: int | None = None) -> str:
    """Where a guard came from, in words: `line 3: y = x.sin()`, `ambient`, `after tracing`."""
    if ambient:
        return "ambient"
    if lineno:
        return f"line {lineno}" + (f": {line}" if line else "")
    return "after tracing" if step is None else f"step {step}"
