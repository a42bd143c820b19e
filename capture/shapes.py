"""Shapes as data: the symbols, symbolic guards and specializations of one compile attempt.

Dynamo's shape environment (`ShapeEnv`) makes a symbol for a size it treats as dynamic
(`s77` for `L['x'].size()[0]`; `u0` for an unbacked value such as `nonzero`'s length), adds a
symbolic guard whenever the trace asks something of a symbol (`Eq(s77, s17)` for a
broadcast, `s77 > 8` for an `if`), and replaces a symbol when it learns its value (`s97`
becomes `4`: the dimension is specialized) or that it equals another (`s77` becomes `s17`).
It keeps all of this, in order, without any setting; the recorder reads its lengths after
every step, so each symbol, guard and replacement gets the step that made it, and reads the
rest when the compile ends: the sources, hints and ranges, and each input's dimensions with
the policy that made them static, dynamic or unbacked and the user's marks on them.

`Shapes` is the record (`Compile.shapes`, None where Dynamo made no shape environment);
`capture/shapewatch.py` reads it from Dynamo, and the functions at the end answer questions
of it: where a size guard came from, and why a dimension specialized.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

# how a dimension came to be what it is (`Dim.how`)
STATIC = "static"                    # static by default (sizes start static)
AUTOMATIC = "automatic dynamic"      # an earlier compile of this frame saw another size
MARK_DYNAMIC = "mark_dynamic"
MAYBE_MARK_DYNAMIC = "maybe_mark_dynamic"
MARK_UNBACKED = "mark_unbacked"
MARK_STATIC = "mark_static"
DYNAMIC_TRUE = "dynamic=True"        # torch.compile(dynamic=True): every size starts dynamic
ZERO_ONE = "0/1 specialization"      # dynamic, but a size of 0 or 1 is always specialized
SPECIALIZED = "specialized"          # made a symbol, then set equal to a constant

# where torch's framework asked a question of a size, in words (`SymGuard.why`)
_FRAMEWORK_WORDS = (
    ("infer_size", "a broadcast: the two sizes must match"),
    ("broadcast_shapes", "a broadcast: the two sizes must match"),
    ("_broadcast_shapes", "a broadcast: the two sizes must match"),
    ("evaluate_expr", "a Python condition on the size"),
    ("guard_bool", "a Python condition on the size"),
    ("guard_int", "the size used as a plain int"),
    ("_check", "torch._check"),
    ("meta_", "the operation's shape rule"),
)


@dataclass(frozen=True, slots=True)
class Symbol:
    """One symbol the shape environment made."""

    name: str                       # s77 (backed size), u0 (unbacked), zf0 (float)
    sources: tuple[str, ...] = ()   # what it stands for; two or more: duck shaping tied them
    hint: str | None = None         # the value it was made from; None for an unbacked one
    range: str = ""                 # its value range when the compile ended: [2, int_oo]
    replacement: str | None = None  # what it was set equal to (a constant: specialized)
    replaced_at: str | None = None  # torch's note of where: `a + b  # f.py:3 in h (framework line)`
    step: int | None = None         # the step that made it (None: made outside any step)
    replaced_step: int | None = None
    node: str | None = None         # an unbacked one: the FX node that made it (`nonzero` for u0)

    @property
    def unbacked(self) -> bool:
        return self.name.startswith("u")


@dataclass(frozen=True, slots=True)
class SymGuard:
    """One symbolic guard, in the order the shape environment added them."""

    expr: str                      # Eq(s77, s17), s77 > 8, Eq(s97, 4)
    user: str | None = None        # torch's note of the user's line: `if x.shape[0] > 8:  # f.py:6 in g`
    lineno: int | None = None      # that line's number, and the function
    function: str | None = None
    framework: str = ""            # the framework line that asked: fake_impls.py:1960 in infer_size
    why: str = ""                  # that, in words (a broadcast, a Python condition, ...)
    size_oblivious: bool = False
    step: int | None = None        # the step that added it (None: added when the graph was compiled)
    node: str | None = None        # the FX node its step made, if it made one


@dataclass(frozen=True, slots=True)
class Dim:
    """One dimension of one input tensor, as this compile saw it."""

    source: str                    # L['x'].size()[0]
    size: int                      # the real size on this call
    value: str                     # what the compile used: a symbol (s77) or a constant (4)
    how: str                       # STATIC, AUTOMATIC, MARK_DYNAMIC, ... (above)
    policy: str = ""               # Dynamo's DimDynamic for it: STATIC, DUCK, DYNAMIC, UNBACKED
    marks: tuple[str, ...] = ()    # the user's marks on it

    @property
    def dynamic(self) -> bool:
        return not self.value.lstrip("-").isdigit()


@dataclass(slots=True)
class Shapes:
    """A compile attempt's shapes (`Compile.shapes`)."""

    symbols: list[Symbol] = field(default_factory=list)
    guards: list[SymGuard] = field(default_factory=list)
    dims: list[Dim] = field(default_factory=list)
    assume_static: bool = True     # sizes started static (False under dynamic=True)

    def symbol(self, name: str) -> Symbol | None:
        return next((s for s in self.symbols if s.name == name), None)

    def specializations(self) -> list[Symbol]:
        """The symbols set equal to a constant (each a dimension specialized)."""
        return [s for s in self.symbols if s.replacement is not None
                and is_number(s.replacement)]

    def guards_on(self, name: str) -> list[SymGuard]:
        """The symbolic guards that mention symbol `name`."""
        pat = re.compile(rf"\b{re.escape(name)}\b")
        return [g for g in self.guards if pat.search(g.expr)]

    def dim(self, source: str) -> Dim | None:
        return next((d for d in self.dims if d.source == source), None)

    def to_dict(self) -> dict[str, Any]:
        return {"symbols": [_plain(asdict(s)) for s in self.symbols],
                "guards": [asdict(g) for g in self.guards],
                "dims": [_plain(asdict(d)) for d in self.dims],
                "assume_static": self.assume_static}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Shapes:
        return cls([Symbol(**{**s, "sources": tuple(s["sources"])}) for s in d.get("symbols", ())],
                   [SymGuard(**g) for g in d.get("guards", ())],
                   [Dim(**{**x, "marks": tuple(x["marks"])}) for x in d.get("dims", ())],
                   d.get("assume_static", True))


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


_USER_LOC = re.compile(r":(\d+) in (\S+)$")


def user_line(user: str | None) -> tuple[int | None, str | None]:
    m = _USER_LOC.search(user or "")
    return (int(m.group(1)), m.group(2)) if m else (None, None)


# Dynamo asks a size for its value (`SymNodeVariable.evaluate_expr`) at a jump, to take a
# branch, and wherever it needs a plain number: `range(n)`, an index, `int(n)`, a dict key.
# The instruction that asked tells the two apart.
AS_INT = "the size used as a plain int (a loop count, an index, int())"
_CONDITION_OPS = ("JUMP", "TO_BOOL", "COMPARE_OP", "CONTAINS_OP", "IS_OP", "UNARY_NOT")


def why(framework: str, opname: str | None = None) -> str:
    """What asked a question of a size, in words: from the framework line that asked and,
    for Dynamo's own `evaluate_expr`, the instruction of the step that asked it."""
    fn = framework.rsplit(" in ", 1)[-1]
    if fn == "evaluate_expr" and "_dynamo/" in framework and opname \
            and not any(op in opname for op in _CONDITION_OPS):
        return AS_INT
    for word, words in _FRAMEWORK_WORDS:
        if fn == word or fn.startswith(word):
            return words
    return ""




# -- answers ---------------------------------------------------------------------------


def _line_text(user: str | None) -> str | None:
    """The user's line from torch's note (`if x.shape[0] > 8:  # f.py:6 in g`)."""
    if not user:
        return None
    text, sep, _ = user.rpartition("# ")
    return (text.strip() or None) if sep else None


def size_origin(shapes: Shapes | None, source: str) -> dict[str, Any] | None:
    """What a compile's shapes say of the size `source` (`L['x'].size()[0]`): the symbol it
    was, its range, how the dimension became dynamic, what it was specialized or tied to,
    and each symbolic guard on it with the step, line and operation that added it. None
    when the compile holds nothing on it."""
    if shapes is None:
        return None
    dim = shapes.dim(source)
    sym = shapes.symbol(dim.value) if dim is not None and dim.dynamic else None
    if sym is None:
        sym = next((s for s in shapes.symbols if source in s.sources), None)
    if sym is None and dim is None:
        return None
    out: dict[str, Any] = {"source": source, "how": dim.how if dim else None,
                           "marks": list(dim.marks) if dim else [],
                           "value": dim.value if dim else None, "symbol": None}
    if sym is None:
        return out
    names = [sym.name] + ([sym.replacement] if sym.replacement and not is_number(sym.replacement)
                          else [])
    guards = []
    for g in shapes.guards:
        if any(re.search(rf"\b{re.escape(n)}\b", g.expr) for n in names):
            guards.append({"expr": g.expr, "step": g.step, "lineno": g.lineno,
                           "function": g.function, "line": _line_text(g.user), "why": g.why,
                           "node": g.node})
    number = sym.replacement is not None and is_number(sym.replacement)
    out.update({"symbol": sym.name, "range": sym.range, "sources": list(sym.sources),
                "specialized_to": sym.replacement if number else None,
                "tied_to": sym.replacement if sym.replacement and not number else None,
                "guards": guards})
    return out


def origin_statement(origin: dict[str, Any] | None, compile_id: str) -> str | None:
    """One sentence: where the guards on a size came from in compile `compile_id`."""
    if not origin or not origin.get("symbol"):
        return None
    said = (f"in [{compile_id}] {origin['source']} was the symbol {origin['symbol']}"
            + (f" ({origin['how']})" if origin.get("how") else "")
            + f", range {origin['range']}")
    others = [x for x in origin.get("sources", ()) if x != origin["source"]]
    if others:
        said += f", one symbol shared with {', '.join(others)} (duck shaping: equal sizes)"
    asked = [g for g in origin["guards"] if g["lineno"] is not None]
    if asked:
        parts = []
        for g in asked[:3]:
            part = f"{g['expr']} by line {g['lineno']}"
            if g["line"]:
                part += f" `{g['line']}`"
            if g["why"]:
                part += f" ({g['why']})"
            if g["step"] is not None:
                part += f", step {g['step']}"
            parts.append(part)
        said += "; guarded " + "; ".join(parts)
    if origin.get("specialized_to") is not None:
        said += f"; specialized to {origin['specialized_to']}"
    elif origin.get("tied_to"):
        said += f"; tied to {origin['tied_to']} (one symbol for both)"
    return said


def shapes_lines(shapes: Shapes | None) -> list[str]:
    """The text view's lines for a compile's shapes (none where every size was static and
    no symbol was made)."""
    if shapes is None or not (shapes.symbols or shapes.guards
                              or any(d.how != STATIC for d in shapes.dims)):
        return []
    out = ["", "shapes (symbols, symbolic guards, each input dimension):"]
    for d in shapes.dims:
        if d.how != STATIC or d.dynamic:
            marks = f", marked {', '.join(d.marks)}" if d.marks else ""
            out.append(f"  {d.source} = {d.value}  ({d.how}{marks}; size {d.size} on this call)")
    for s in shapes.symbols:
        made = f"step {s.step}" if s.step is not None else "no step"
        what = ", ".join(s.sources) or (f"node {s.node}" if s.node else "no source")
        hint = f", hint {s.hint}" if s.hint is not None else ", unbacked"
        line = f"  {s.name}: {what}{hint}, range {s.range}  [{made}]"
        if s.replacement is not None:
            at = f" at step {s.replaced_step}" if s.replaced_step is not None else ""
            line += f"; set to {s.replacement}{at}"
        out.append(line)
    for g in shapes.guards:
        made = f"step {g.step}" if g.step is not None else "compile end"
        text = _line_text(g.user)
        where = f"    # line {g.lineno}" + (f": {text}" if text else "") if g.lineno else ""
        why_ = f" ({g.why})" if g.why else ""
        out.append(f"  [{made}] {g.expr}{why_}{where}")
    return out
