"""Guards as records: what Dynamo installed, where it came from, how it renders.

Dynamo keeps a `Guard` object per guard while tracing (kind, source, the user
stack that caused it) and renders the final checks as a tree
(`str(guard_manager)`, exactly what TORCH_LOGS=guards prints). A recording
keeps both: each installed guard with its step and user line, matched to its
rendered line in the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import internals
from .recording import Guard
from .text import MAX_NAME, exact, shorten

# Guards whose rendered leaf goes by another name in the tree.
_RENDERED_AS = {"AUTOGRAD_SAVED_TENSORS_HOOKS": "LAMBDA_GUARD",
                "TORCH_FUNCTION_STATE": "TORCH_FUNCTION_MODE_STACK"}


@dataclass(frozen=True)
class Leaf:
    """One leaf check of the rendered guard tree."""

    kind: str
    text: str


def describe_guard(g: Any, *, ambient: bool = False, step: int | None = None) -> Guard:
    """A guard as installed: its kind and source exactly as Dynamo names them; the user
    line and function that caused it (the program's text) bounded."""
    f = internals.guard_fields(g)
    source = exact(f.source) if f.source is not None else None
    text = f"{f.kind}: {source}" if source else f.kind
    return Guard(text=exact(text), kind=f.kind, source=source, ambient=ambient,
                 step=step, lineno=f.lineno, line=shorten(f.line, MAX_NAME) if f.line else None,
                 code_name=shorten(f.code_name, MAX_NAME) if f.code_name else None)


def guard_tree_leaves(tree: str) -> list[Leaf]:
    """The leaf checks of a guard tree, without the tree drawing or trailing comments,
    each exactly as the tree prints it."""
    return [Leaf(kind, exact(f"{kind}: {text}"))
            for kind, text in internals.guard_tree_leaves(tree)]


def match_guard_texts(details: list[Guard], leaves: list[Leaf]) -> list[Guard]:
    """Give each installed guard its rendered text; add the checks no step installed.

    A guard matches an unused leaf of the kind it renders as whose source is the
    guard's; failing that, a leaf of any kind about exactly its source
    (MODULE_MATCH renders as ID_MATCH, CONSTANT_MATCH as EQUALS_MATCH). A guard
    with no leaf keeps `KIND: source`. Leaves left over (dynamic-shape checks,
    aliasing checks) were built after the last instruction: they get no step.
    """
    by_kind_source: dict[tuple[str, str | None], list[int]] = {}
    by_source: dict[str | None, list[int]] = {}
    by_kind: dict[str, list[int]] = {}
    sources = [_leaf_source(leaf.text) for leaf in leaves]
    for i, (leaf, source) in enumerate(zip(leaves, sources)):
        by_kind_source.setdefault((leaf.kind, source), []).append(i)
        by_source.setdefault(source, []).append(i)
        by_kind.setdefault(leaf.kind, []).append(i)
    used = [False] * len(leaves)

    def take(candidates: list[int] | None) -> int | None:
        for i in candidates or ():
            if not used[i]:
                used[i] = True
                return i
        return None

    out = []
    for g in details:
        kind = _RENDERED_AS.get(g.kind, g.kind)
        i = take(by_kind_source.get((kind, g.source)))
        if i is None and (g.source is None or kind != g.kind):
            i = take(by_kind.get(kind))
        if i is None and g.source:
            # Rendered under another kind (MODULE_MATCH as ID_MATCH, CONSTANT_MATCH as
            # EQUALS_MATCH): a check of any kind about exactly this source.
            i = take(by_source.get(g.source))
        if i is not None:  # (dataclasses.replace costs several times more)
            g = Guard(text=leaves[i].text, kind=g.kind, source=g.source, ambient=g.ambient,
                      step=g.step, lineno=g.lineno, line=g.line, code_name=g.code_name,
                      tree_kind=leaves[i].kind, leaf=i)
        out.append(g)
    for i, leaf in enumerate(leaves):
        if not used[i]:
            out.append(Guard(text=leaf.text, kind=leaf.kind, source=sources[i],
                             tree_kind=leaf.kind, leaf=i))
    return out


_CALL = re.compile(r"^[A-Za-z_][\w.]*\(")
# A first argument that is a plain source: L['x'], G['torch'].nn, L['self']._modules['fc'][0]
_KEY = r"\[(?:'[^'\\]*'|\"[^\"\\]*\"|-?\d+)\]"
_SIMPLE_ARG = re.compile(rf"([LG]{_KEY}(?:\.\w+|{_KEY})*)\s*[,)]")


def _leaf_source(text: str) -> str | None:
    """The source a rendered check is about: the first argument of a check call
    (`___check_obj_id(G['torch'], 1234)`, `check_tensor(L['x'], ...)`) or the left
    side of a comparison (`L['n'] == 2`). `list(dict.keys(L['d']))[0] == 'a'` is about
    an expression, not a source, so it gives None."""
    body = text.split(": ", 1)[1] if ": " in text else text
    m = _CALL.match(body)
    if m:
        simple = _SIMPLE_ARG.match(body, m.end())
        if simple:  # the common case, at regex speed; anything odder is walked below
            return simple.group(1)
        depth, start = 0, m.end()
        for i in range(start, len(body)):
            ch = body[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return _as_source(body[start:i])
                depth -= 1
            elif ch == "," and depth == 0:
                return _as_source(body[start:i])
        return None
    for op in (" == ", " != ", " is not ", " is "):
        if op in body:
            return _as_source(body.split(op, 1)[0])
    return None


def _as_source(text: str) -> str | None:
    text = text.strip()
    return text if text[:2] in ("L[", "G[") else None
