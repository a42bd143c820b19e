"""What a piece of code hands to `torch.compile`, and which of those Dynamo refuses.

Used before running a cell or script under `record()`: a compiled coroutine that
finishes leaves torch 2.13's Dynamo in a state where the next compile crashes the
process, and Dynamo refuses generator functions without compiling anything, so
both deserve one clear line instead of a crash or an empty recording. Only the
source is parsed and only names and dotted names are looked up in a namespace:
nothing is evaluated again.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from . import internals

_COROUTINE_FLAG = 0x80  # inspect.CO_COROUTINE
_GENERATOR_FLAGS = 0x20 | 0x200  # inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR


def compile_targets(source: str) -> list[str]:
    """Names the source hands to torch.compile: `torch.compile(name)` and `@torch.compile`,
    in order, each once ([] when the source does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and _is_compile(node.func) and node.args:
            name = _dotted(node.args[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_is_compile(d.func if isinstance(d, ast.Call) else d)
                   for d in node.decorator_list):
                name = node.name
        if name and name not in names:
            names.append(name)
    return names


def compiled_coroutines(source: str, namespace: dict[str, Any]) -> list[str]:
    """The compile targets that are async functions (defined in the source, or found in
    the namespace by name)."""
    try:
        async_defs = {n.name for n in ast.walk(ast.parse(source))
                      if isinstance(n, ast.AsyncFunctionDef)}
    except (SyntaxError, ValueError):
        return []
    return [name for name in compile_targets(source)
            if name in async_defs or _flags(lookup(namespace, name)) & _COROUTINE_FLAG]


def compiled_generators(source: str, namespace: dict[str, Any]) -> list[str]:
    """The compile targets that hold generator functions in the namespace now."""
    return [name for name in compile_targets(source)
            if _flags(lookup(namespace, name)) & _GENERATOR_FLAGS]


def generators_refused() -> int:
    """How many times Dynamo has refused to trace a generator's frame in this process
    (its refusals happen before a compile starts, so the recorder never sees them)."""
    return internals.refusals("Attempt to trace generator")


def coroutine_refusal(names: list[str]) -> str:
    which = ", ".join(f"`{n}`" for n in names)
    return (f"not run: {which} is an async function (a coroutine), and on torch 2.13 Dynamo "
            "crashes the whole process when anything is compiled after a compiled coroutine "
            "has finished. Compile the synchronous tensor code it awaits instead.")


def generator_refusal(names: list[str]) -> str:
    if not names:
        which = "a compiled function is a generator function"
    elif len(names) == 1:
        which = f"`{names[0]}` is a generator function"
    else:
        which = ", ".join(f"`{n}`" for n in names) + " are generator functions"
    return (f"nothing was compiled: {which}, and Dynamo does not compile generator functions "
            "(it refuses them with 'Attempt to trace generator' and runs them as plain "
            "Python). Compile a function that calls the generator, or put the loop body in a "
            "function and compile that.")


def lookup(namespace: dict[str, Any], dotted: str) -> Any:
    """What `a.b.c` names in a namespace now (None when any part is missing)."""
    first, *rest = dotted.split(".")
    value = namespace.get(first)
    for attr in rest:
        try:
            value = getattr(value, attr, None)
        except Exception:  # a property that raises: not a function we can name
            return None
    return value


def _flags(fn: Any) -> int:
    fn = internals.compiled_function(fn)  # what torch.compile wrapped
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return code.co_flags if isinstance(code, types.CodeType) else 0


def _is_compile(node: ast.expr) -> bool:
    """`torch.compile`, `compile` imported from torch, or `something.compile`."""
    return ((isinstance(node, ast.Attribute) and node.attr == "compile")
            or (isinstance(node, ast.Name) and node.id == "compile"))


def _dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of names and attributes; None for any other expression."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
