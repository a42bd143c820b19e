"""The user's own code in an inlining chain: which frame of a step is theirs, and its line.

Dynamo installs a guard or meets a break at a step that may be deep in library code
(`torch/nn/modules/dropout.py`, `torch/optim/sgd.py`); the line the user wrote that led
there is the innermost frame of the step's inlining chain that is their code. "Their
code" is every file that is not installed (site-packages, dist-packages), not the
standard library and not torch itself, plus whatever `user_code` folders or files name
(a library developer's own package).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass
from typing import Iterable

from .recording import Compile


@dataclass(frozen=True)
class Place:
    """One frame of an inlining chain: the function, its file, the line and its text."""

    function: str
    file: str | None
    lineno: int | None
    line: str | None

    def as_dict(self) -> dict:
        return {"function": self.function, "file": self.file, "lineno": self.lineno,
                "line": self.line}


def _library_roots() -> tuple[str, ...]:
    roots = []
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(os.path.join(os.path.abspath(path), ""))
    torch = sys.modules.get("torch")
    if getattr(torch, "__file__", None):
        roots.append(os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), ""))
    return tuple(roots)


def is_user_file(filename: str | None, user_code: Iterable[str] = ()) -> bool:
    """Whether `filename` is the user's own code (see the module's docstring)."""
    if not filename or filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename)
    for extra in user_code:
        extra = os.path.abspath(extra)
        if path == extra or path.startswith(os.path.join(extra, "")):
            return True
    if any(part in path.split(os.sep) for part in ("site-packages", "dist-packages")):
        return False
    return not path.startswith(_library_roots())


def _line(c: Compile, code: int | None, lineno: int | None) -> str | None:
    if code is None or lineno is None or code >= len(c.codes):
        return None
    info = c.codes[code]
    k = lineno - info.firstlineno
    return info.source_lines[k].strip() if 0 <= k < len(info.source_lines) else None


def chain(c: Compile, step: int | None) -> list[Place]:
    """The inlining chain at a step of `c`, outermost first: each caller's call line, then
    the step's own line."""
    if step is None or not 0 <= step < len(c.steps):
        return []
    s = c.steps[step]
    out = []
    for k, (name, lineno) in enumerate(s.inline_stack):
        # the outermost caller is the frame itself; the others are found by name
        code = 0 if k == 0 else next((i for i, info in enumerate(c.codes) if info.name == name), None)
        file = c.codes[code].filename if code is not None and code < len(c.codes) else None
        out.append(Place(name, file, lineno, _line(c, code, lineno)))
    file = c.codes[s.code].filename if s.code < len(c.codes) else c.filename
    out.append(Place(s.code_name or c.code_name, file, s.lineno, _line(c, s.code, s.lineno)))
    return out


def user_place(c: Compile, step: int | None, user_code: Iterable[str] = ()) -> Place | None:
    """The innermost frame of the chain at `step` that is the user's own code."""
    user_code = tuple(user_code)
    return next((p for p in reversed(chain(c, step)) if is_user_file(p.file, user_code)), None)


__all__ = ["Place", "chain", "is_user_file", "user_place"]
