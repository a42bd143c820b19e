"""Why a frame recompiled, as data: every guard of the earlier compiles that fails on the new call.

Dynamo's own answer (`get_and_maybe_log_recompilation_reasons`) asks each cache
entry's guard manager `check_verbose(f_locals)`, which stops at the first check that
fails; with TORCH_LOGS=recompiles_verbose it reports every entry, and for a lambda
guard every failing code part, but still one leaf per entry. Here each entry's guard
tree is walked instead: every leaf is called on the value it guards (read in the
scope Dynamo's own helper builds, `{"L": f_locals, "G": globals}` plus the guard
manager's closure), and each failing one becomes a `FailedGuard`.

NOTE (identity, not text): a failing leaf is named by its place in the tree: the
accessors that lead to its manager (`FrameLocalsGuardAccessor(key='x', ...)`,
`GetAttrGuardAccessor(k)`), its index among that manager's leaves, and the code part.
The guard manager reorders accessors by how often they failed whenever a check
fails, so the order at the recompile is not the order the tree was printed in when
it was installed; the places are the same. When a compile is installed the
recorder walks its tree in the order `str(guard_manager)` prints it, which gives each
place its leaf's index in `Compile.guards`, and `Guard.leaf` gives the recorded guard.

Reading never changes what Dynamo does: leaves are called, managers are never asked
(`check` would count the failure and reorder the tree), relational guards (aliasing,
which keep state between calls) are not called but worked out from their sources,
and nothing is written. Values are read the way the guards read them; a user
property on the way runs, as it does when the guards run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import internals
from .recording import Compile, FailedGuard
from .text import MAX_DETAIL, MAX_NAME, shorten

LeafKey = tuple  # (accessor reprs from the root, leaf index in its manager, code part)

_MISSING = object()


@dataclass
class Installed:
    """A finished compile as later recompiles need it: which recorded guard each leaf is."""

    compile: Compile
    details: dict[LeafKey, int] = field(default_factory=dict)  # leaf place -> guard_details index


class Recompiles:
    """The recorder's book of installed guard trees and of the failures a recompile found."""

    def __init__(self) -> None:
        self._installed: dict[tuple[int, str], Installed] = {}
        self._pending: dict[Any, tuple[str | None, tuple[FailedGuard, ...]]] = {}

    def installed(self, generation: int, compile_id: Any, result: Any, c: Compile) -> None:
        """A compile installed guards: remember where each of its leaves was printed."""
        manager = internals.guard_manager_of(result)
        if manager is None:
            return
        keys = rendered_leaf_keys(manager)
        if len(keys) != len(c.guards):
            return  # the walk does not line up with the printed tree: no identity
        by_leaf = {g.leaf: j for j, g in enumerate(c.guard_details) if g.leaf is not None}
        details = {}
        for i, k in enumerate(keys):
            for key in k:
                if i in by_leaf:
                    details[key] = by_leaf[i]
        self._installed[(generation, str(compile_id))] = Installed(c, details)

    def failed(self, generation: int, code: Any, entries: Any, f_locals: Any) -> None:
        """Dynamo found it must recompile `code`: record every failing guard of each entry."""
        found: list[FailedGuard] = []
        replaces = None
        for entry in entries:
            entry_id, manager = internals.cache_entry_fields(entry)
            known = self._installed.get((generation, str(entry_id)))
            compile_id = known.compile.compile_id if known else str(entry_id)
            if replaces is None:
                replaces = compile_id
            if manager is None:
                continue
            try:
                found += failing_guards(manager, f_locals, compile_id, known)
            except Exception:  # noqa: BLE001 - an entry whose tree cannot be walked (one
                continue       # Dynamo invalidated): the others still count
        self._pending[code] = (replaces, tuple(found))

    def take(self, code: Any) -> tuple[str | None, tuple[FailedGuard, ...]]:
        """What the last recompile check of `code` found (kept until its compile ends)."""
        return self._pending.get(code, (None, ()))

    def done(self, code: Any) -> tuple[str | None, tuple[FailedGuard, ...]]:
        return self._pending.pop(code, (None, ()))


# -- the tree as printed -----------------------------------------------------------


def _walk(manager: Any, visit: Any) -> None:
    """Visit every leaf in the order `GuardManagerWrapper.__str__` prints them
    (`construct_manager_string`): a manager's leaves, then a dict manager's key and
    value managers by index, then each accessor's child; the root's epilogue lambda
    guards last. `visit(path, index, leaf, manager)`."""
    def go(mgr: Any, path: tuple) -> None:
        for k, leaf in enumerate(internals.leaf_guards(mgr)):
            visit(path, k, leaf, mgr)
        for label, child in internals.dict_entry_managers(mgr):
            go(child, path + (label,))
        for accessor, child in internals.child_managers(mgr):
            go(child, path + (accessor,))

    root = internals.guard_root(manager)
    go(root, ())
    for k, leaf in enumerate(internals.epilogue_guards(root)):
        visit(("epilogue",), k, leaf, root)


def rendered_leaf_keys(manager: Any) -> list[list[LeafKey]]:
    """For each leaf line of `str(manager)`, in order, the places that line stands for.

    A leaf prints one line per code part. A relational guard (NO_TENSOR_ALIASING) hangs
    under every tensor it relates and prints in full only the first time: all its
    places stand for that one line."""
    lines: list[list[LeafKey]] = []
    relational: dict[int, list[int]] = {}  # id(leaf) -> its lines
    alive: list[Any] = []  # keeps each wrapper alive, so ids stay its own during the walk

    def visit(path: tuple, k: int, leaf: Any, mgr: Any) -> None:
        parts = internals.leaf_parts(leaf)
        if internals.is_relational(leaf):
            alive.append(leaf)
            known = relational.get(id(leaf))
            if known is not None:
                for j, i in enumerate(known):
                    lines[i].append((path, k, j))
                return
            relational[id(leaf)] = list(range(len(lines), len(lines) + len(parts)))
        for j in range(len(parts)):
            lines.append([(path, k, j)])

    _walk(manager, visit)
    return lines


# -- what fails now ----------------------------------------------------------------


class _Scope:
    """Values read by source, as Dynamo's own helper evaluates guard code."""

    def __init__(self, manager: Any, f_locals: Any) -> None:
        self.globals, self.locals = internals.guard_scope(manager, f_locals)
        self.f_locals = f_locals
        self.cache: dict[str, Any] = {}

    def value(self, source: str | None) -> Any:
        if not source:
            return self.f_locals
        if source not in self.cache:
            try:
                self.cache[source] = eval(source, self.globals, self.locals)  # noqa: S307
            except Exception:  # noqa: BLE001 - a source that cannot be read now
                self.cache[source] = _MISSING
        return self.cache[source]

    def holds(self, code: str) -> bool | None:
        """Whether a code part holds now (None when it cannot be evaluated)."""
        try:
            result = eval(code, dict(self.globals), self.locals)  # noqa: S307
        except Exception:  # noqa: BLE001
            return None
        return result if isinstance(result, bool) else bool(result)


def failing_guards(manager: Any, f_locals: Any, compile_id: str,
                   known: Installed | None) -> list[FailedGuard]:
    """Every leaf of one cache entry's guard tree that fails on these locals."""
    scope = _Scope(manager, f_locals)
    out: list[FailedGuard] = []
    seen_relational: set[int] = set()
    alive: list[Any] = []

    def visit(path: tuple, k: int, leaf: Any, mgr: Any) -> None:
        kind = internals.leaf_kind(leaf)
        parts = [_code(p) for p in internals.leaf_parts(leaf)]
        source = internals.manager_source(mgr) if path and path != ("epilogue",) else None
        if internals.is_relational(leaf):
            alive.append(leaf)
            if id(leaf) in seen_relational:
                return
            seen_relational.add(id(leaf))
            for j, part in enumerate(parts):
                failure = _relational(kind, part, scope)
                if failure is not None:
                    out.append(_record(known, compile_id, (path, k, j), kind, _first_source(part),
                                       *failure))
            return
        value = scope.value(source)
        if value is _MISSING:
            return
        try:
            ok = internals.leaf_check(leaf, value)
        except Exception:  # noqa: BLE001 - a leaf that cannot run on this value
            return
        if ok:
            return
        failing = [j for j, part in enumerate(parts) if scope.holds(part) is False]
        if not failing:
            failing = [0]
        for j in failing:
            part = parts[j] if j < len(parts) else kind
            what, expected, seen = describe(kind, part, value, mgr, scope, leaf,
                                            root_level=source is None)
            out.append(_record(known, compile_id, (path, k, j), kind,
                               source or _first_source(part), what, expected, seen))

    _walk(manager, visit)
    return out


def _record(known: Installed | None, compile_id: str, key: LeafKey, kind: str,
            source: str | None, what: str, expected: str, seen: str) -> FailedGuard:
    guard = detail = step = lineno = None
    if known is not None:
        detail = known.details.get(key)
        if detail is not None:
            guard = known.compile.guard_details[detail].leaf
            step = installing_step(known.compile, detail)
            lineno = step_line(known.compile, step)
    return FailedGuard(compile_id=compile_id, guard=guard, detail=detail,
                       source=shorten(source, MAX_NAME) if source else None,
                       expected=shorten(expected, MAX_NAME), seen=shorten(seen, MAX_NAME),
                       kind=kind, what=what, step=step, lineno=lineno)


def step_line(c: Compile, index: int | None) -> int | None:
    """The line a step ran: its own, or, for a step before the first line of an inlined
    function (COPY_FREE_VARS, MAKE_CELL, where 3.12 inlines `__setattr__` for a
    `STORE_ATTR`), the line of the innermost call that has one."""
    return step_place(c, index)[1]


def step_place(c: Compile, index: int | None) -> tuple[int | None, int | None]:
    """(index in `c.codes`, line) of `step_line`: the code whose line it is."""
    if index is None or not 0 <= index < len(c.steps):
        return None, None
    s = c.steps[index]
    if s.lineno is not None:
        return s.code, s.lineno
    for name, line in reversed(s.inline_stack):
        if line is not None:
            code = next((k for k, info in enumerate(c.codes) if info.name == name), None)
            return code, line
    return None, None


_SHAPE_OF = re.compile(r"(?:\.size\(\)|\.stride\(\)|\.storage_offset\(\))(?:\[\d+\])?$")


def installing_step(c: Compile, index: int) -> int | None:
    """The step that installed guard `index` of `c`; for a check Dynamo built after the
    last instruction (a shape relation, a dynamic-dimension marking) the step that
    installed the first guard on the value it reads (the tensor whose size it is)."""
    g = c.guard_details[index]
    if g.step is not None:
        return g.step
    source = g.source or _first_source(g.text.split(": ", 1)[-1])
    if not source:
        return None
    base = _SHAPE_OF.sub("", source)
    for other in c.guard_details:
        if other.step is not None and other.source in (source, base):
            return other.step
    return None


# -- expected and seen -------------------------------------------------------------


_TENSOR = re.compile(
    r"check_tensor\((?P<src>.*), (?P<cls>\w+), (?P<keys>DispatchKeySet\([^)]*\)), "
    r"(?P<dtype>[\w.]+), device=(?P<device>[^,]+), requires_grad=(?P<rg>True|False), "
    r"size=(?P<size>\[[^\]]*\]), stride=(?P<stride>\[[^\]]*\])\)")
_SOURCE = re.compile(r"[LG]\[(?:'[^'\\]*'|\"[^\"\\]*\"|-?\d+)\]"
                     r"(?:\.\w+|\[(?:'[^'\\]*'|\"[^\"\\]*\"|-?\d+)\]|\(\))*")
_TYPE_IN = re.compile(r"type=<class '([^']+)'>")


_COMMENT = re.compile(r"\s{2,}# ")


def _code(part: str) -> str:
    """A code part without the user-line comments the tree prints after it; a `#` inside
    the check itself (`L['s'] == '#tag'`) stays: the comment is found as Python's
    tokenizer finds it."""
    if "#" not in part:
        return part.rstrip()
    import io
    import tokenize

    try:
        for tok in tokenize.generate_tokens(io.StringIO(part).readline):
            if tok.type == tokenize.COMMENT and tok.start[0] == 1:
                return part[:tok.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return _COMMENT.split(part, 1)[0].rstrip()


def _first_source(code: str) -> str | None:
    m = _SOURCE.search(code)
    return m.group(0) if m else None


_MARKS = internals.DYNAMIC_MARKS


def describe(kind: str, code: str, value: Any, mgr: Any, scope: _Scope, leaf: Any = None,
             root_level: bool = False) -> tuple[str, str, str]:
    """(what was compared, what the guard expected, what the new call held)."""
    if kind == "GLOBAL_STATE" and leaf is not None:
        return _global_state(code, leaf, value)
    if kind == "DIMENSION_DYNAMIC_MARKING_GUARD":
        m = re.search(r"hasattr\((.*), '(\w+)'\) == False", code)
        if m and m.group(2) in _MARKS:
            mark = _MARKS[m.group(2)]
            try:
                dims = internals.marked_dims(value, m.group(2))
            except Exception:  # noqa: BLE001
                dims = []
            return "marking", f"not marked by {mark}", f"marked by {mark} (dims {dims})"
    if kind == "TENSOR_MATCH":
        m = _TENSOR.search(code)
        if m:
            return _tensor(m, value)
    if kind == "TYPE_MATCH":
        expected = _TYPE_IN.search(code)
        name = expected.group(1).rsplit(".", 1)[-1] if expected else _type_name(
            internals.manager_type(mgr))
        return "type", name, type(value).__name__
    if kind == "ID_MATCH":
        expected = _TYPE_IN.search(code)
        name = expected.group(1).rsplit(".", 1)[-1] if expected else "object"
        ident = re.search(r", (\d+)\)", code)
        return ("identity", f"the {name} with id {ident.group(1) if ident else '?'}",
                f"{'the same' if ident and int(ident.group(1)) == id(value) else 'a'} "
                f"{type(value).__name__} with id {id(value)}")
    if kind == "EQUALS_MATCH" and " == " in code:
        return "value", code.split(" == ", 1)[1], _short(value)
    if kind == "NONE_MATCH":
        return "value", "None", _short(value)
    if kind == "NOT_NONE":
        return "value", "not None", _short(value)
    if kind in ("LENGTH_CHECK", "DICT_LENGTH", "TUPLE_ITERATOR_LEN"):
        n = re.search(r"== (\d+)", code)
        try:
            now = str(len(value))
        except Exception:  # noqa: BLE001
            now = _short(value)
        return "length", n.group(1) if n else code, now
    if kind in ("TRUE_MATCH", "FALSE_MATCH"):
        return "value", "True" if kind == "TRUE_MATCH" else "False", _short(value)
    sources = list(dict.fromkeys(_SOURCE.findall(code)))
    if root_level and not sources:  # a check of the frame as a whole (not of one value)
        return "check", code, "fails now"
    if sources:  # a relation between values (shapes, marks): show each value it reads
        readings = []
        for s in sources[:4]:
            v = scope.value(s)
            readings.append(f"{s} = {'?' if v is _MISSING else _short(v)}")
        return "check", code, ", ".join(readings)
    return "check", code, _short(value)


def _global_state(code: str, leaf: Any, value: Any) -> tuple[str, str, str]:
    """GLOBAL_STATE: which of torch's global settings changed (the leaf says which)."""
    import json

    changed: list[str] = []
    for line in internals.leaf_check_verbose(leaf, value):
        changed += line.split("changed:", 1)[-1].split()
    try:
        state = json.loads(code.split(" against ", 1)[1])
    except (IndexError, ValueError):
        state = {}
    if not changed:
        return "global state", "the global state the compile saw", "a changed global state"
    expected = ", ".join(f"{k} {json.dumps(state[k])}" if k in state else k for k in changed)
    seen = ", ".join(f"{k} {json.dumps(not state[k])}" if isinstance(state.get(k), bool)
                     else f"{k} changed" for k in changed)
    return "global state", expected, seen


def _tensor(m: re.Match[str], value: Any) -> tuple[str, str, str]:
    import torch

    if not isinstance(value, torch.Tensor):
        return "type", m.group("cls"), type(value).__name__
    if type(value).__name__ != m.group("cls"):
        return "type", m.group("cls"), type(value).__name__
    dtype = str(value.dtype)
    if dtype != m.group("dtype"):
        return "dtype", m.group("dtype").removeprefix("torch."), dtype.removeprefix("torch.")
    device = m.group("device")
    index = value.device.index
    if (device == "None") != (index is None) or (index is not None and str(index) != device):
        return "device", f"device index {device}", f"device {value.device}"
    if str(value.requires_grad) != m.group("rg"):
        return "requires_grad", m.group("rg"), str(value.requires_grad)
    for what, expected, now in (("size", m.group("size"), list(value.shape)),
                                ("stride", m.group("stride"), list(value.stride()))):
        want = [None if x.strip() == "None" else int(x)
                for x in expected.strip("[]").split(",") if x.strip()]
        if len(want) != len(now) or any(w is not None and w != n for w, n in zip(want, now)):
            return what, expected, str(now)
    return "dispatch keys", m.group("keys"), str(internals.dispatch_keys(value))


def _relational(kind: str, code: str, scope: _Scope) -> tuple[str, str, str] | None:
    """A relational guard's failure, worked out without calling it (it keeps state)."""
    if kind == "NO_TENSOR_ALIASING":
        sources = _SOURCE.findall(code)
        first: dict[int, str] = {}
        for s in sources:
            v = scope.value(s)
            if v is _MISSING:
                continue
            if id(v) in first:
                return "aliasing", "distinct tensors", f"{s} is {first[id(v)]}"
            first[id(v)] = s
        return None
    if scope.holds(code) is False:
        return "check", code, "False"
    return None


def _type_name(t: Any) -> str:
    return getattr(t, "__name__", None) or str(t)


def _short(value: Any) -> str:
    """A bounded reading of a value: tensors by dtype and shape, others by a short repr."""
    try:
        import torch

        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    except Exception:  # noqa: BLE001
        pass
    import reprlib

    r = reprlib.Repr()
    r.maxstring, r.maxother, r.maxlist, r.maxdict = 40, 40, 6, 4
    try:
        return shorten(r.repr(value), MAX_DETAIL)
    except Exception:  # noqa: BLE001 - a repr that raises
        return f"<{type(value).__name__}>"
