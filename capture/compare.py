"""Two compiles of one code object side by side: `capture.compare(recording, "0/0", "0/1")`.

What a learner asks of a recompile: where did the second trace first go another way,
which guards does each compile hold that the other does not, and how did the graph
change. The answer is plain data (`Comparison`), read from the two `Compile`s only;
`str()` of it reads like a diff (`-` only in the first, `+` only in the second, `~`
changed)::

    compare [0/0] and [0/1] of f (prog.py:3)
    [0/1] replaces [0/0]: 1 guard of [0/0] failed on the call
      TENSOR_MATCH L['x'] size: expected [4, 3], got [8, 3]  (step 3, line 4)
    steps: 9 aligned, 0 only in [0/0], 2 only in [0/1]
    first divergence at line 4, [0/0] step 3 / [0/1] step 3 LOAD_FAST x: shape
      - TensorVariable f32[4, 3]  <- L['x']
      + TensorVariable f32[s0, 3]  <- L['x']
    guards: 1 changed, 0 only in [0/0], 2 only in [0/1]
      ~ TENSOR_MATCH L['x']
        - TENSOR_MATCH: check_tensor(L['x'], ..., size=[4, 3], stride=[3, 1])
        + TENSOR_MATCH: check_tensor(L['x'], ..., size=[None, 3], stride=[3, 1])
    graph: ...
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from . import shapes
from .recompiles import step_line
from .recording import Compile, FailedGuard, Node, Recording, Step, Var
from .records import CodeInfo
from .steps import STEP_FIELDS, Steps
from .text import visible

# Object ids and addresses in guard text differ between runs and compiles of the same thing.
_VOLATILE = [
    (re.compile(r"(___check_(?:type|obj)_id\([^()]*?), \d+\)"), r"\1, <id>)"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,16}\b"), "0x<addr>"),
    (re.compile(r"\b\d{9,}\b"), "<id>"),
    # Dynamo numbers some generated globals process-wide
    (re.compile(r"__compiled_fn_\d+\w*"), "__compiled_fn_N"),
    (re.compile(r"__builtins_dict___\d+"), "__builtins_dict___N"),
    (re.compile(r"__resume_at_(\d+)_\d+"), r"__resume_at_\1_N"),
]
_JUMPS = ("JUMP", "FOR_ITER", "SEND")


@functools.lru_cache(maxsize=1 << 16)
def normalised(text: str) -> str:
    """Guard text with object ids and addresses replaced, so they do not count as changes."""
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first place where the two traces went different ways.

    `a` and `b` are step indices in each compile (None where only the other has a step
    there); `why` is one of `instruction`, `branch taken`, `inlining`, `tracker kind`,
    `shape`, `value`; `was` and `now` say what each held (a tracker, an instruction)."""

    a: int | None
    b: int | None
    lineno: int | None
    instruction: str
    why: str
    was: str = ""
    now: str = ""


@dataclass(frozen=True, slots=True)
class GuardChange:
    """A guard of both compiles (same kind and source) whose check differs."""

    a: int  # index in the first compile's guard_details
    b: int  # ... and in the second's
    kind: str
    source: str | None


@dataclass(frozen=True, slots=True)
class NodeChange:
    """A graph node of both compiles (same name) that differs in target, shape or dtype."""

    name: str
    what: tuple[str, ...]
    was: str
    now: str


@dataclass
class Comparison:
    """Two compiles of one code object, aligned."""

    a: Compile
    b: Compile
    # (step in a, step in b): the same instruction at the same line; None where one has none
    aligned: list[tuple[int | None, int | None]] = field(default_factory=list)
    divergence: Divergence | None = None
    guards_only_in_a: list[int] = field(default_factory=list)  # indices in a.guard_details
    guards_only_in_b: list[int] = field(default_factory=list)
    guards_changed: list[GuardChange] = field(default_factory=list)
    nodes_added: list[str] = field(default_factory=list)    # names in b only
    nodes_removed: list[str] = field(default_factory=list)  # names in a only
    nodes_changed: list[NodeChange] = field(default_factory=list)
    # False where one compile is a restarted attempt: it built no guard tree, so each of its
    # guards is a kind and a source only, and guards are paired by those without their checks
    guard_checks_compared: bool = True
    # the guards of the first that failed on the call that made the second
    failed_guards: tuple[FailedGuard, ...] = ()
    # input dimensions the two compiles treat differently: (source, (value, how) in the
    # first, (value, how) in the second), a side None where that compile has no such dim
    dims_changed: list[tuple[str, tuple[str, str] | None, tuple[str, str] | None]] = \
        field(default_factory=list)
    # for each failed guard on a size: where that guard came from in the first compile
    # (capture.shapes.size_origin's sentence), by the failed guard's index in failed_guards
    shape_origins: dict[int, str] = field(default_factory=dict)

    @property
    def same_steps(self) -> int:
        return sum(1 for x, y in self.aligned if x is not None and y is not None)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for machines and the viewer: compile ids and indices, no records."""
        d = self.divergence
        return {
            "a": self.a.compile_id, "b": self.b.compile_id,
            "aligned": [list(p) for p in self.aligned],
            "divergence": None if d is None else {
                "a": d.a, "b": d.b, "lineno": d.lineno, "instruction": d.instruction,
                "why": d.why, "was": d.was, "now": d.now},
            "guards_only_in_a": list(self.guards_only_in_a),
            "guards_only_in_b": list(self.guards_only_in_b),
            "guards_changed": [{"a": g.a, "b": g.b, "kind": g.kind, "source": g.source}
                               for g in self.guards_changed],
            "guard_checks_compared": self.guard_checks_compared,
            "nodes_added": list(self.nodes_added), "nodes_removed": list(self.nodes_removed),
            "nodes_changed": [{"name": n.name, "what": list(n.what), "was": n.was, "now": n.now}
                              for n in self.nodes_changed],
            "failed_guards": [fg.detail for fg in self.failed_guards],  # guard_details indices, like the other guard lists
            "dims_changed": [{"source": src, "a": None if x is None else list(x),
                              "b": None if y is None else list(y)}
                             for src, x, y in self.dims_changed],
            "shape_origins": {str(k): v for k, v in self.shape_origins.items()},
        }

    def __str__(self) -> str:
        return visible(comparison_text(self))


def compare(recording: Recording, a: str, b: str, *, generation: int = 0,
            memo: dict | None = None) -> Comparison:
    """Align compiles `a` and `b` (compile ids, e.g. "0/0" and "0/1") of one code object.

    `memo`, a dict kept across calls on one recording, keeps what is read of each compile
    (its steps' places and readings) for the next pair that has it."""
    ca, cb = recording.compile(a, generation), recording.compile(b, generation)
    if (ca.code_name, ca.filename, ca.firstlineno) != (cb.code_name, cb.filename, cb.firstlineno):
        raise ValueError(
            f"{a} compiles {ca.code_name} ({ca.filename}:{ca.firstlineno}) and {b} compiles "
            f"{cb.code_name} ({cb.filename}:{cb.firstlineno}): compare two compiles of one "
            f"code object, e.g. a frame and its recompile ({_same_code(recording, ca)})")
    return compare_compiles(ca, cb, memo=memo)


def compare_compiles(ca: Compile, cb: Compile, *, memo: dict | None = None,
                     same_process: bool = True) -> Comparison:
    """`compare` on two `Compile`s of one code object, wherever they were recorded: with
    `same_process=False` (two ranks' recordings, say) the second is not taken for a
    recompile of the first, so no guard of it is read as failed."""
    out = Comparison(ca, cb)
    memo = {} if memo is None else memo
    interned = memo.setdefault("places", {})
    out.aligned = _aligned(_places_of(ca, interned, memo), _places_of(cb, interned, memo))
    out.divergence = first_divergence(ca, cb, out.aligned, memo)
    _compare_guards(out)
    _compare_nodes(out)
    if same_process:
        out.failed_guards = tuple(fg for fg in cb.failed_guards if fg.compile_id == ca.compile_id)
    _compare_shapes(out)
    return out


def _compare_shapes(cmp: Comparison) -> None:
    """The dimensions the two compiles treat differently, and where each failed size
    guard came from (the first compile's symbolic guards)."""
    da = {d.source: (d.value, d.how) for d in (cmp.a.shapes.dims if cmp.a.shapes else ())}
    db = {d.source: (d.value, d.how) for d in (cmp.b.shapes.dims if cmp.b.shapes else ())}
    for source in dict.fromkeys([*da, *db]):
        x, y = da.get(source), db.get(source)
        if x is None or y is None or x[1] != y[1] or (x[0] != y[0] and not (
                x[0].isdigit() and y[0].isdigit())):
            if x is not None and y is not None and x[1] == y[1] == "static":
                continue   # two static sizes: the size guard says it
            cmp.dims_changed.append((source, x, y))
    for k, fg in enumerate(cmp.failed_guards):
        if fg.source and re.search(r"\.size\(\)\[\d+\]$", fg.source):
            said = shapes.origin_statement(shapes.size_origin(cmp.a.shapes, fg.source),
                                           cmp.a.compile_id)
            if said:
                cmp.shape_origins[k] = said


def recompiles(recording: Recording) -> list[Comparison]:
    """Every recompile beside the compile it replaces (`Compile.replaces`), in order: what
    a viewer or page ships to show the pairs side by side."""
    out, memo = [], {}
    for c in recording.compiles:
        if c.replaces is None:
            continue
        try:
            out.append(compare(recording, c.replaces, c.compile_id, generation=c.generation,
                               memo=memo))
        except (KeyError, ValueError):  # the replaced compile was made before recording
            continue
    return out


def _same_code(recording: Recording, c: Compile) -> str:
    ids = [x.compile_id for x in recording.compiles
           if (x.code_name, x.filename, x.firstlineno) == (c.code_name, c.filename, c.firstlineno)]
    return f"{c.code_name} has {', '.join(ids)}"


# -- steps ------------------------------------------------------------------------


def _fields(steps: Any, names: tuple[str, ...]) -> list[list]:
    """The named fields of every step, one list a field: read from `Steps`' columns
    where the steps are stored so (no `Step` is made), else from each step."""
    if isinstance(steps, Steps):
        at = {f.name: k for k, f in enumerate(STEP_FIELDS)}
        columns = steps.columns()
        return [columns[at[n]] for n in names]
    return [[getattr(s, n) for s in steps] for n in names]


def _code_of(codes: list[CodeInfo], k: Any, name: str) -> tuple:
    """A code object as both compiles name it: its name, file and first line."""
    if isinstance(k, int) and 0 <= k < len(codes):
        info = codes[k]
        return (info.name, info.filename, info.firstlineno)
    return (name,)


def _places(steps: Any, codes: list[CodeInfo], interned: dict[tuple, int]) -> list[int]:
    """Each step's place as a number: the chain of inlining calls that led to it (each
    caller's code object and the offset of its call) and its own code object and offset.
    Two steps of two compiles share a number when they ran the same instruction of the
    same code reached by the same calls; `interned` is shared by both compiles."""
    offsets, depths, code_ks, names = _fields(steps, ("offset", "depth", "code", "code_name"))
    chain: list[int] = []   # the place of the last step at each depth: the callers' calls
    out = []
    for offset, depth, k, name in zip(offsets, depths, code_ks, names):
        depth = depth or 0
        parent = chain[depth - 1] if 0 < depth <= len(chain) else -1
        key = (parent, _code_of(codes, k, name), offset)
        place = interned.get(key)
        if place is None:
            place = interned[key] = len(interned)
        del chain[depth:]
        chain.append(place)
        out.append(place)
    return out


def align_steps(a: Any, b: Any, codes_a: list[CodeInfo] = (), codes_b: list[CodeInfo] = ()
                ) -> list[tuple[int | None, int | None]]:
    """Pairs of steps that ran the same instruction of the same code object, reached by the
    same inlining calls, in order; a step with no partner is paired with None.

    One walk over both: steps at the same place are paired; where the two differ, both
    are read on, one step at a time each, until a place one reached is reached by the
    other too, and the walk goes on from there. The work is linear in the steps (each
    step read ahead is passed over once), so two compiles of 80,000 steps align in a
    fraction of a second where a diff of the whole traces would not finish."""
    interned: dict[tuple, int] = {}
    return _aligned(_places(a, codes_a, interned), _places(b, codes_b, interned))


def _places_of(c: Compile, interned: dict[tuple, int], memo: dict) -> list[int]:
    key = ("places", id(c))
    if key not in memo:
        memo[key] = (c, _places(c.steps, c.codes, interned))
    return memo[key][1]


def _aligned(pa: list[int], pb: list[int]) -> list[tuple[int | None, int | None]]:
    """`align_steps` on the steps' places."""
    na, nb = len(pa), len(pb)
    out: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < na and j < nb:
        if pa[i] == pb[j]:
            out.append((i, j))
            i += 1
            j += 1
            continue
        meet = _meeting(pa, pb, i, j)
        if meet is None:
            break
        x, y = meet
        out += [(k, None) for k in range(i, x)]
        out += [(None, k) for k in range(j, y)]
        i, j = x, y
    out += [(k, None) for k in range(i, na)]
    out += [(None, k) for k in range(j, nb)]
    return out


def _meeting(pa: list[int], pb: list[int], i: int, j: int) -> tuple[int, int] | None:
    """The nearest (x, y), x >= i and y >= j, where the two walks meet again at one place:
    both read on a step at a time, and the first place one reaches that the other has
    already passed is where they meet; None when they never do."""
    seen_a: dict[int, int] = {}
    seen_b: dict[int, int] = {}
    na, nb = len(pa), len(pb)
    t = 0
    while i + t < na or j + t < nb:
        if i + t < na:
            p = pa[i + t]
            if p in seen_b:
                return i + t, seen_b[p]
            seen_a.setdefault(p, i + t)
        if j + t < nb:
            p = pb[j + t]
            if p in seen_a:
                return seen_a[p], j + t
            seen_b.setdefault(p, j + t)
        t += 1
    return None


_NODE_NAME = re.compile(r"\s*node=\S+")


def _reading(v: Var) -> tuple:
    return (v.kind, v.python_type, normalised(_NODE_NAME.sub("", v.detail)),
            normalised(v.source) if v.source else None)


def _why(x: Var, y: Var) -> str:
    if x.kind != y.kind or x.python_type != y.python_type:
        return "tracker kind"
    if x.kind.startswith("Tensor") or re.search(r"\[[^\]]*\]", x.detail or ""):
        return "shape"
    return "value"


def first_divergence(a: Compile, b: Compile, aligned: list[tuple[int | None, int | None]],
                     memo: dict | None = None) -> Divergence | None:
    """The first aligned step where the two traces differ: an instruction only one ran
    (a branch the other did not take, a call only one inlined), or the same instruction
    leaving a different tracker kind, shape or value on the stack or in the locals."""
    previous: tuple[int | None, int | None] = (None, None)
    memo = {} if memo is None else memo
    ra, rb = _Readings.of(a, memo), _Readings.of(b, memo)
    for k, (x, y) in enumerate(aligned):
        if x is None or y is None:
            # what the other ran instead, before the two meet again
            for x2, y2 in aligned[k:]:
                if x2 is not None and y2 is not None:
                    break
                x = x if x is not None else x2
                y = y if y is not None else y2
            s = a.steps[x] if x is not None else b.steps[y]
            why = "instruction"
            before = a.steps[previous[0]] if previous[0] is not None else None
            if before is not None and any(j in before.opname for j in _JUMPS):
                why = "branch taken"
            elif s.depth > 0 and (before is None or s.depth > before.depth or
                                  s.code_name != before.code_name):
                why = "inlining"
            text = f"{s.opname} {s.argrepr}".rstrip()
            line = step_line(a, x) if x is not None else step_line(b, y)
            return Divergence(x, y, line, text, why, was=_ran(a, x), now=_ran(b, y))
        if ra.same(x, rb, y):
            previous = (x, y)
            continue
        sa, sb = a.steps[x], b.steps[y]
        for va, vb in _readings(sa, sb):
            if va is None or vb is None or _reading(va) != _reading(vb):
                why = "tracker kind" if va is None or vb is None else _why(va, vb)
                return Divergence(x, y, step_line(a, x), f"{sa.opname} {sa.argrepr}".rstrip(), why,
                                  was=str(va) if va is not None else "(nothing)",
                                  now=str(vb) if vb is not None else "(nothing)")
        previous = (x, y)
    return None


class _Readings:
    """A compile's steps as what the comparison reads of them (the stack, top first, and
    the locals, each tracker as `_reading` says), read from the columns and each reading
    made once: so that walking 80,000 aligned steps makes no `Step`."""

    def __init__(self, c: Compile) -> None:
        self.stacks, self.locals = _fields(c.steps, ("stack", "locals"))
        if not isinstance(c.steps, Steps):   # Steps hold ids; a list holds Steps
            self.stacks = [s.stack_ids for s in c.steps]
            self.locals = [tuple(s.locals_ids.items()) for s in c.steps]
        self.vars = c.vars
        self.memo: dict[int, tuple] = {}

    @classmethod
    def of(cls, c: Compile, memo: dict) -> _Readings:
        key = ("readings", id(c))
        if key not in memo:
            memo[key] = (c, cls(c))
        return memo[key][1]

    def reading(self, i: int) -> tuple:
        r = self.memo.get(i)
        if r is None:
            r = self.memo[i] = _reading(self.vars[i])
        return r

    def same(self, x: int, other: _Readings, y: int) -> bool:
        """Whether step x here and step y of `other` leave the same readings."""
        sa, sb = self.stacks[x], other.stacks[y]
        if len(sa) != len(sb):
            return False
        if any(self.reading(p) != other.reading(q) for p, q in zip(sa, sb)):
            return False
        la, lb = self.locals[x], other.locals[y]
        if len(la) != len(lb):
            return False
        lb_at = dict(lb)
        return all(n in lb_at and self.reading(p) == other.reading(lb_at[n]) for n, p in la)


def _ran(c: Compile, i: int | None) -> str:
    if i is None:
        return "(nothing: the trace ended here)"
    s = c.steps[i]
    return f"line {step_line(c, i)} {s.opname} {s.argrepr}".rstrip()


def _readings(sa: Step, sb: Step) -> list[tuple[Var | None, Var | None]]:
    """The stack (top first) then the locals of two steps, paired."""
    st_a, st_b = list(reversed(sa.stack)), list(reversed(sb.stack))
    pairs = [(st_a[k] if k < len(st_a) else None, st_b[k] if k < len(st_b) else None)
             for k in range(max(len(st_a), len(st_b)))]
    la, lb = sa.locals, sb.locals
    pairs += [(la.get(n), lb.get(n)) for n in dict.fromkeys([*la, *lb])]
    return pairs


# -- guards and nodes -------------------------------------------------------------


def _guard_key(c: Compile, i: int) -> tuple:
    g = c.guard_details[i]
    return (normalised(g.source or ""), g.tree_kind or g.kind)


def _compare_guards(out: Comparison) -> None:
    a, b = out.a, out.b
    out.guard_checks_compared = not (a.restarted or b.restarted)
    by_key: dict[tuple, list[int]] = {}
    for j in range(len(b.guard_details)):
        by_key.setdefault(_guard_key(b, j), []).append(j)
    used: set[int] = set()
    for i, g in enumerate(a.guard_details):
        candidates = [j for j in by_key.get(_guard_key(a, i), []) if j not in used]
        if not candidates:
            out.guards_only_in_a.append(i)
            continue
        text = normalised(g.text)
        same = next((j for j in candidates if normalised(b.guard_details[j].text) == text),
                    None if out.guard_checks_compared else candidates[0])
        if same is not None:
            used.add(same)
            continue
        j = candidates[0]
        used.add(j)
        out.guards_changed.append(GuardChange(i, j, g.tree_kind or g.kind, g.source))
    out.guards_only_in_b = [j for j in range(len(b.guard_details)) if j not in used]

    def order(c: Compile) -> Any:
        return lambda i: (*_guard_key(c, i), normalised(c.guard_details[i].text))

    out.guards_only_in_a.sort(key=order(a))
    out.guards_only_in_b.sort(key=order(b))
    out.guards_changed.sort(key=lambda g: (g.source or "", g.kind, normalised(a.guard_details[g.a].text)))


def _node_text(n: Node) -> str:
    meta = f" {n.dtype}{n.shape}" if n.dtype or n.shape else ""
    return f"{n.op}[{n.target}]{meta}"


def _compare_nodes(out: Comparison) -> None:
    na = {n.name: n for n in out.a.nodes if n.in_graph}
    nb = {n.name: n for n in out.b.nodes if n.in_graph}
    out.nodes_removed = [name for name in na if name not in nb]
    out.nodes_added = [name for name in nb if name not in na]
    for name, x in na.items():
        y = nb.get(name)
        if y is None:
            continue
        what = tuple(f for f in ("op", "target", "shape", "dtype") if getattr(x, f) != getattr(y, f))
        if what:
            out.nodes_changed.append(NodeChange(name, what, _node_text(x), _node_text(y)))


# -- the text ---------------------------------------------------------------------


def comparison_text(cmp: Comparison) -> str:
    a, b = cmp.a, cmp.b
    ia, ib = f"[{a.compile_id}]", f"[{b.compile_id}]"
    out = [f"compare {ia} and {ib} of {a.code_name} ({a.filename.rsplit('/', 1)[-1]}:"
           f"{a.firstlineno})"]
    if b.replaces == a.compile_id or cmp.failed_guards:
        out.append(f"{ib} replaces {ia}: {len(cmp.failed_guards)} guard(s) of {ia} failed on the call")
        for fg in cmp.failed_guards:
            where = []
            if fg.step is not None:
                where.append(f"step {fg.step}")
            if fg.lineno is not None:
                where.append(f"line {fg.lineno}")
            what = f" {fg.what}" if fg.what else ""
            out.append(f"  {fg.kind} {fg.source or ''}{what}: expected {fg.expected}, got "
                       f"{fg.seen}" + (f"  ({', '.join(where)})" if where else ""))
            k = cmp.failed_guards.index(fg)
            if k in cmp.shape_origins:
                out.append(f"    shape: {cmp.shape_origins[k]}")
    if cmp.dims_changed:
        out.append(f"shapes: {len(cmp.dims_changed)} input dimension(s) treated differently")
        for source, x, y in cmp.dims_changed:
            was = f"{x[0]} ({x[1]})" if x else "-"
            now = f"{y[0]} ({y[1]})" if y else "-"
            out.append(f"  ~ {source}: {was} -> {now}")
    only_a = sum(1 for x, y in cmp.aligned if y is None)
    only_b = sum(1 for x, y in cmp.aligned if x is None)
    out.append(f"steps: {cmp.same_steps} aligned, {only_a} only in {ia}, {only_b} only in {ib}")
    d = cmp.divergence
    stepless = [f"[{c.compile_id}]" for c in (a, b) if not c.steps]
    if stepless:
        out.append(f"first divergence: not known, {' and '.join(stepless)} kept without steps "
                   "(read from a TORCH_TRACE log, or outside record(only=...)): record the "
                   "program to compare step by step")
    elif d is None:
        out.append("no divergence: the same instructions left the same trackers")
    else:
        steps = f"{ia} step {d.a if d.a is not None else '-'} / {ib} step " \
                f"{d.b if d.b is not None else '-'}"
        out.append(f"first divergence at line {d.lineno}, {steps} {d.instruction}: {d.why}")
        out.append(f"  - {d.was}")
        out.append(f"  + {d.now}")
    out.append(f"guards: {len(cmp.guards_changed)} changed, {len(cmp.guards_only_in_a)} only in "
               f"{ia}, {len(cmp.guards_only_in_b)} only in {ib}")
    if not cmp.guard_checks_compared:
        out.append("  (a restarted attempt built no guard tree: guards are paired by kind and "
                   "source, their checks not compared)")
    for g in cmp.guards_changed:
        out.append(f"  ~ {g.kind} {g.source or ''}".rstrip())
        out.append(f"    - {a.guard_details[g.a].text}")
        out.append(f"    + {b.guard_details[g.b].text}")
    out += [f"  - {a.guard_details[i].text}" for i in cmp.guards_only_in_a]
    out += [f"  + {b.guard_details[j].text}" for j in cmp.guards_only_in_b]
    out.append(f"graph: {len(cmp.nodes_changed)} node(s) changed, {len(cmp.nodes_removed)} only "
               f"in {ia}, {len(cmp.nodes_added)} only in {ib}")
    nodes_a = {n.name: n for n in a.nodes}
    nodes_b = {n.name: n for n in b.nodes}
    for n in cmp.nodes_changed:
        out.append(f"  ~ {n.name}: {n.was} -> {n.now}  ({', '.join(n.what)})")
    out += [f"  - {name} = {_node_text(nodes_a[name])}" for name in cmp.nodes_removed]
    out += [f"  + {name} = {_node_text(nodes_b[name])}" for name in cmp.nodes_added]
    return "\n".join(out)
