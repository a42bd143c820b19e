"""The one text policy: which text a record keeps whole, which it bounds, and which
characters are written as escapes. Applied once, when a record is made, so the
text view, the widget, the exported page and the JSON all show the same strings;
views add markup only, and wrap or scroll long text.

Two kinds of text, two rules:

- What Dynamo itself wrote is kept exactly (`exact`, `listing`): the graph code
  handed to the backend, guard texts and the guard tree, the original and
  modified bytecode, recompile and graph-break reasons with their explanation,
  hints and link, source names such as `L['self']._modules['fc']`, FX node names.
  A learner who copies them gets what Dynamo wrote, character for character.
- What the program itself supplies is bounded (`shorten`, `shown_line`): reprs of
  its values and constants (a tracker's detail, a node's arguments, a LOAD_CONST
  argument), its source lines, its names, its exception messages. A cut says
  how many characters were left out.

The recording as a whole is bounded by the recorder's caps instead (steps per
compile, steps in all, and `DEFAULT_MAX_CHARS` of kept text), each of which ends
what is stored with a marked event rather than cutting a text.

NOTE (why escape at all): lone surrogates (from undecodable file names, or any
str) cannot be encoded as UTF-8, so a kernel could not send them; bidirectional
controls would reorder the text around them on screen ("Trojan Source"); other
C0 controls are invisible. They are written as `\\uXXXX` / `\\xXX` instead, in
Dynamo's text too (it copies the program's strings into guards and graph code):
escaping is a display concern, not a cut.
"""

from __future__ import annotations

import re

# Bounds on what the program supplies (never applied to Dynamo's own text).
LINE_LIMIT = 500         # characters of one line of the program's source
MESSAGE_LIMIT = 2000     # ... of one message the program raised (an exception's text)
MAX_ARGREPR = 200        # the repr of a constant an instruction loads (LOAD_CONST ...)
MAX_ARGS = 500           # the reprs of an FX node's arguments
MAX_DETAIL = 60          # a tracker's one-line reading
MAX_NAME = 200           # a name or file name from the program, a guard's user line

# Instructions whose argument is the repr of one of the program's constants.
_CONSTANT_ARGUMENT = frozenset(("LOAD_CONST", "RETURN_CONST", "KW_NAMES"))

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


def exact(text: object) -> str:
    """Text Dynamo wrote, as a record keeps it: whole, newlines and all, only the
    unshowable characters escaped."""
    return visible(text)


def listing(text: str | None) -> str | None:
    """A multi-line listing Dynamo wrote (graph code, a guard tree, a disassembly): whole,
    escaped (see `exact`)."""
    return None if text is None else visible(text)


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
    """One line of the program's source: escaped, cut at `limit` (the cut marked)."""
    return cut(visible(text), limit)


def argument(opname: str, text: str) -> str:
    """An instruction's argument as `dis` writes it: exact, except the repr of a constant
    the program supplied (LOAD_CONST, RETURN_CONST, KW_NAMES), bounded at MAX_ARGREPR."""
    if opname in _CONSTANT_ARGUMENT:
        return shorten(text, MAX_ARGREPR)
    return visible(text)


def guard_where(lineno: int | None, line: str | None, *, ambient: bool = False,
                step: int | None = None) -> str:
    """Where a guard came from, in words: `line 3: y = x.sin()`, `ambient`, `after tracing`."""
    if ambient:
        return "ambient"
    if lineno:
        return f"line {lineno}" + (f": {line}" if line else "")
    return "after tracing" if step is None else f"step {step}"
