"""A notebook cell as code, compiled the way IPython compiles it, so that a SyntaxError
points at the learner's line (the cell's first line is the `%%capture_trace` line)."""

from __future__ import annotations

import ast
import codeop
import types
from typing import Any

# Parse a cell as a whole module: with this flag (IPython's compiler sets it), Python 3.13
# says `_IncompleteInputError` (no line to point at) where it means "'(' was never closed".
_INCOMPLETE_OK = getattr(codeop, "PyCF_ALLOW_INCOMPLETE_INPUT", 0x4000) | codeop.PyCF_DONT_IMPLY_DEDENT


def compile_cell(shell: Any, cell: str) -> tuple[types.CodeType, types.CodeType | None] | None:
    """The cell as code, and its last expression apart (to display its value); None when
    it does not parse, after the shell has shown the SyntaxError at the learner's line."""
    # One blank line in front: the cell's first line is %%capture_trace, so line
    # numbers in errors, titles and the source pane match what the learner sees.
    try:
        text = "\n" + shell.transform_cell(cell)
    except SyntaxError as e:
        # IPython's tokenizer finds some errors (an inconsistent dedent) before the
        # parser does; its line numbers count from the cell's code, one line short.
        filename = shell.compile.cache("\n" + cell, shell.execution_count, raw_code=cell)
        if e.lineno is not None:
            e.lineno += 1
        shell.showsyntaxerror(filename=filename)
        return None
    filename = shell.compile.cache(text, shell.execution_count, raw_code=cell)
    try:  # the shell's __future__ flags, parsed as one whole module
        flags = (shell.compile.flags & ~_INCOMPLETE_OK) | ast.PyCF_ONLY_AST
        tree = compile(text, filename, "exec", flags, dont_inherit=True)
    except (SyntaxError, OverflowError, ValueError):
        shell.showsyntaxerror(filename=filename)
        return None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        body = shell.compile(tree, filename, "exec")
        expr = shell.compile(last, filename, "eval") if last is not None else None
    except SyntaxError:  # e.g. `return` outside a function: found when compiling
        shell.showsyntaxerror(filename=filename)
        return None
    return body, expr


def cell_source(shell: Any, cell: str) -> str:
    """The cell as Python source (IPython's own syntax, e.g. `%time`, transformed away)."""
    try:
        return shell.transform_cell(cell)
    except (SyntaxError, ValueError):
        return ""
