"""Hostile text for the views: programs whose every learner-controlled string is markup.

Function names cannot hold HTML, but nearly everything else a recording shows can:
string constants, docstrings, dict keys, attribute names set with `setattr`, file
names, exception messages, and, through `CodeType.replace`, the code's name, file
name and local names too. `recordings()` builds one recording of each; `markup_of()`
reads HTML the way a browser would, to check that none of it became markup.
"""

from __future__ import annotations

import importlib.util
import types
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import torch

import capture

# Markup a browser would act on, quotes that end attributes, and an entity that must
# stay literal text (shown as "&amp;", not "&").
TEXT = "<script>alert('dl')</script><dl-evil onerror=alert(1)><img src=x onerror=\"alert(2)\">&amp;"
# For a file name: everything but "/".
FILE_TEXT = "<dl-evil onerror=alert(3)>\"'&amp;"
# Characters that are not safe everywhere: lone surrogates (not encodable as UTF-8;
# "\udcff" is what an undecodable byte in a file name becomes), NUL, and the
# right-to-left override that reverses the text after it. A code's file name takes
# only the first and the last: with "\ud800" or NUL there Dynamo itself fails, in
# linecache (os.stat), with or without recording.
UNSAFE = "\udcff\ud800\x00\u202e"
UNSAFE_IN_FILE_NAME = "\udcff\u202e"
LONG = 100_000

# The project's own markup (widgets/panes.py, widgets/graphview.py) and graphviz's SVG.
ALLOWED_TAGS = {
    "div", "span", "pre", "code", "b", "i", "ul", "ol", "li", "details", "summary", "style",
    "br", "small", "svg", "g", "title", "text", "path", "polygon", "polyline", "ellipse",
}

PROGRAM = '''\
"""Module doc {text}"""
import torch

TEXT = {text!r}
ATTRIBUTE = {attribute!r}


class Hostile(torch.nn.Module):
    """Class doc {text}"""

    def __init__(self):
        super().__init__()
        setattr(self, ATTRIBUTE, torch.nn.Parameter(torch.ones(3)))

    def forward(self, x, d):
        """Method doc {text}"""
        s = {text!r}
        w = getattr(self, ATTRIBUTE)
        y = x.sin() * w + d[{text!r}]
        print({text!r})
        if len(s) > 3:
            y = y + 1
        return y


def fails(x):
    y = x.cos()
    raise ValueError({text!r})
'''

LONG_PROGRAM = '''\
import torch


def long_lines(x, d, tag):
    s = {a!r}
    y = x.sin() + d[{b!r}]
    if tag == {c!r}:
        y = y + len(s)
    return y
'''


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def markup_of(html: str) -> tuple[set[str], set[str], str]:
    """(tags, attribute names, visible text) as a browser's parser sees them."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.tags, reader.attributes, "".join(reader.text)


def problems(html: str) -> list[str]:
    """What in this HTML a browser would treat as markup the project did not write."""
    tags, attributes, _ = markup_of(html)
    out = [f"tag <{t}>" for t in sorted(tags - ALLOWED_TAGS)]
    out += [f"attribute {a}" for a in sorted(attributes) if a.startswith("on")]
    if "javascript:" in html.lower():
        out.append("javascript: URL")
    return out


def _load(directory: Path, filename: str, source: str) -> types.ModuleType:
    path = directory / filename
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"hostile_{abs(hash(filename))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(fn: Any, *args: Any) -> capture.Recording:
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    recording = None
    try:
        with capture.record() as recording:
            compiled(*args)
    except Exception:  # the raising program: its recording is what matters
        pass
    torch._dynamo.reset()
    return recording


def _renamed(fn: Any, **names: Any) -> Any:
    """The same function with its code's names replaced (any string is allowed there)."""
    code = fn.__code__.replace(**names)
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


def _plain(x, k):
    y = x.sin()
    z = y * k
    return z


def _unsafe_constants(x, d):
    s = "\udcff\ud800\x00\u202e constant"
    y = x.sin() + d["key \udcff\ud800\x00\u202e"]
    return y + len(s)


def recordings(directory: Path) -> dict[str, capture.Recording]:
    """One recording per way hostile text gets in, made from real files in `directory`."""
    module = _load(directory, f"{FILE_TEXT}.py",
                   PROGRAM.format(text=TEXT, attribute=TEXT.replace(".", "")))
    out = {}
    out["file program"] = _record(module.Hostile(), torch.ones(3), {TEXT: torch.ones(3)})
    out["exception message"] = _record(module.fails, torch.ones(3))
    out["code names"] = _record(
        _renamed(_plain, co_name=TEXT, co_qualname=TEXT, co_filename=f"/tmp/{FILE_TEXT}.py",
                 co_varnames=(f"<x>{TEXT}", "k", "<y>", "z")),
        torch.ones(3), 2)
    out["unsafe characters"] = _record(
        _renamed(_unsafe_constants, co_name=f"f{UNSAFE}", co_qualname=f"f{UNSAFE}",
                 co_filename=f"/tmp/{UNSAFE_IN_FILE_NAME}.py",
                 co_varnames=(f"x{UNSAFE}", "d", f"s{UNSAFE}", "y")),
        torch.ones(3), {f"key {UNSAFE}": torch.ones(3)})
    long_module = _load(directory, "long_lines.py", LONG_PROGRAM.format(
        a="<b>a" + "a" * LONG, b="<b>b" + "b" * LONG, c="<b>c" + "c" * LONG))
    out["long lines"] = _record(long_module.long_lines, torch.ones(3),
                                {"<b>b" + "b" * LONG: torch.ones(3)}, "<b>c" + "c" * LONG)
    return out
