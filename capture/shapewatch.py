"""Reads an attempt's shapes from Dynamo's shape environment as the trace goes (see
`capture/shapes.py` for the record). Every read goes through `capture/internals.py`;
nothing here changes torch's state."""

from __future__ import annotations

from typing import Any

from . import internals
from .text import LINE_LIMIT, shorten
from .shapes import (
    AUTOMATIC, DYNAMIC_TRUE, MARK_DYNAMIC, MARK_STATIC, MARK_UNBACKED, MAYBE_MARK_DYNAMIC, SPECIALIZED,
    STATIC, ZERO_ONE, Dim, Shapes, SymGuard, Symbol, is_number, user_line, why,
)


class ShapeWatch:
    """Watches one attempt's shape environment: call `changed()` after each step (three
    lengths), `note(step, node)` when it says so, `contexts(output)` while the attempt's
    tracing context still holds its inputs, and `finish()` when the compile ends."""

    __slots__ = ("env", "counts", "symbol_step", "guard_step", "replaced_step", "dims",
                 "assume_static")

    def __init__(self, env: Any) -> None:
        self.env = env
        self.counts = internals.shape_counts(env)
        # what was there before the first step belongs to no step
        self.symbol_step: dict[str, tuple[int | None, str | None]] = {
            str(s): (None, None) for s in internals.shape_symbols(env)}
        self.guard_step: list[tuple[int | None, str | None]] = [(None, None)] * self.counts[1]
        self.replaced_step: dict[str, int | None] = {
            str(s): None for s in internals.shape_replacements(env)}
        self.dims: list[tuple[str, list[Any]]] | None = None
        self.assume_static = True

    def changed(self) -> bool:
        return internals.shape_counts(self.env) != self.counts

    def note(self, step: int | None, node: str | None) -> None:
        """What the shape environment added since the last look was made by `step`."""
        env = self.env
        n_sym, n_guard, n_repl = self.counts
        for s in internals.shape_symbols(env, n_sym):
            self.symbol_step.setdefault(str(s), (step, node))
        for _ in internals.shape_guards(env, n_guard):
            self.guard_step.append((step, node))
        for s in internals.shape_replacements(env, n_repl):
            self.replaced_step.setdefault(str(s), step)
        self.counts = internals.shape_counts(env)

    def contexts(self, output: Any) -> None:
        """Read each input's dimensions (the tracing context drops them at clean-up)."""
        dims = internals.input_dims(output, self.env)
        if dims:
            self.dims = dims
            self.assume_static = internals.assumes_static()

    def finish(self, opname_at: Any = None) -> Shapes:
        """The record, from the shape environment as the compile left it; `opname_at(i)`
        is the instruction of step i (what asked each guard's question)."""
        self.note(None, None)
        env = self.env
        # a marked-unbacked size has no source in the shape environment: its dimension names it
        dim_sources: dict[str, list[str]] = {}
        for source, dims in self.dims or ():
            for i, d in enumerate(dims):
                if d.value is not None:
                    dim_sources.setdefault(d.value, []).append(_bounded(f"{source}.size()[{i}]"))
        symbols = []
        for s in internals.shape_symbols(env):
            facts = internals.symbol_facts(env, s)
            step, node = self.symbol_step.get(facts.name, (None, None))
            sources = tuple(_bounded(x) for x in facts.sources) or \
                tuple(dim_sources.get(facts.name, ()))
            symbols.append(Symbol(facts.name, sources, facts.hint, facts.range,
                                  facts.replacement,
                                  None if facts.replaced_at is None else _bounded(facts.replaced_at),
                                  step,
                                  self.replaced_step.get(facts.name),
                                  None if sources else node))
        guards = []
        for g, (step, node) in zip(internals.shape_guards(env), self.guard_step):
            f = internals.shape_guard_fields(g)
            lineno, function = user_line(f.user)
            guards.append(SymGuard(f.expr, None if f.user is None else _bounded(f.user),
                                   lineno, function, f.framework,
                                   why(f.framework, None if step is None or opname_at is None
                                       else opname_at(step)),
                                   f.size_oblivious, step, node))
        shapes = Shapes(symbols, guards, [], self.assume_static)
        by_name = {s.name: s for s in symbols}
        for source, dims in self.dims or ():
            for i, d in enumerate(dims):
                shapes.dims.append(Dim(_bounded(f"{source}.size()[{i}]"), d.size,
                                       d.value if d.value is not None else str(d.size),
                                       _how(d, by_name, self.assume_static), d.dynamic,
                                       d.marks))
        return shapes



def _bounded(text: str) -> str:
    """A source or line the program supplied part of (a dict key, a line of its code), as
    the text policy bounds it; Dynamo's own expressions are kept whole."""
    return shorten(text, LINE_LIMIT)


def _how(d: Any, symbols: dict[str, Symbol], assume_static: bool) -> str:
    """How one dimension became what it is (a `DimContext` from internals.input_dims)."""
    value = d.value if d.value is not None else str(d.size)
    sym = symbols.get(value)
    if sym is not None and sym.replacement is not None and is_number(sym.replacement):
        return SPECIALIZED
    if d.dynamic != "STATIC" and value.lstrip("-").isdigit() and d.size in (0, 1) \
            and "mark_unbacked" not in d.marks:
        return ZERO_ONE
    for mark in (MARK_UNBACKED, MARK_DYNAMIC, MAYBE_MARK_DYNAMIC, MARK_STATIC):
        if mark in d.marks:
            return mark
    if d.dynamic == "STATIC":
        return STATIC
    if not assume_static:
        return DYNAMIC_TRUE
    return AUTOMATIC
