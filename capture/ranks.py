"""A `torchrun` job as one recording per rank, and what differs between the ranks.

Under `torchrun` every rank is a process with its own Dynamo: each compiles what it
runs, and ranks that run other code (a branch on the rank, a batch of another size)
compile other graphs, guards or recompiles, and can then run other collectives or wait
on each other. `dynamo-lab record` run by `torchrun` writes one recording per rank
(`launch_rank`, `rank_path`: `trace.json` becomes `trace.rank0.json`, ...), and
`compare_ranks` sets them side by side: each function compiled on one rank only, or a
different number of times; for the compiles of a function both made, in order, the
first step where the two traces went different ways (aligned by code object and offset,
`capture.compare.compare_compiles`), the first instruction only one rank ran (a branch
taken differently: the jump, its line and where each rank went), the input dimensions
that differ, and the guards, graph nodes, outcomes, recompiles and DDP bucket splits that
differ. `str()` of the `RankComparison` says it in sentences (tests/data/ranks/rank_branch.py)::

    ranks 0 and 1: rank 0 made 2 compile(s) of 2 function(s), 2 graph(s), ...; rank 1 made 3 ...
    branchy (rank_branch.py:22):
      [0/0] on both ranks:
        the traces first differ at line 24 (if dist.get_rank() == 1:), step 9 CALL 0: it left a
        different value
          rank 0 left ConstantVariable 0; rank 1 left ConstantVariable 1
        a branch taken differently at line 24 (if dist.get_rank() == 1:), step 12
        POP_JUMP_FORWARD_IF_FALSE: after it rank 0 went on at line 26 (LOAD_FAST y), rank 1 at
        line 25 (LOAD_FAST y)
        graph: 1 node(s) only on rank 1: y_1 = call_function[operator.mul] f32[4]
    sized (rank_branch.py:29):
      compiled 1 time(s) on rank 0 (1/0) and 2 on rank 1 (1/0, 1/1)
      rank 1's [1/1] replaces its [1/0]; guards that failed on the call (1): ...
      [1/0] on both ranks:
        input dimension L['x'].size()[0] is 4 on rank 0 and 6 on rank 1

`merged` and `rank_pairs` make one page of several ranks (`dynamo-lab html` of several
recordings): each compile marked with its rank, compared with the same function's
compiles on the other ranks.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .compare import Comparison, compare_compiles
from .recompiles import step_line
from .recording import Compile, Node, Recording
from .records import DdpSplit
from .text import visible
from .textview import failed_guard_line

_JUMPS = ("JUMP", "FOR_ITER", "SEND")   # instructions after which a trace can go two ways

# -- one rank of a job -------------------------------------------------------------------


class LaunchRank(NamedTuple):
    rank: int
    world_size: int
    local_rank: int


def launch_rank(environ: Mapping[str, str] = os.environ) -> LaunchRank | None:
    """This process's rank when `torchrun` (or a launcher setting the same variables:
    RANK, WORLD_SIZE and LOCAL_RANK) started it, else None."""
    try:
        rank, world = int(environ["RANK"]), int(environ["WORLD_SIZE"])
        local = int(environ["LOCAL_RANK"])
    except (KeyError, ValueError):
        return None
    if not 0 <= rank < world:
        return None
    return LaunchRank(rank, world, local)


def rank_path(path: Path, rank: int) -> Path:
    """`trace.json` -> `trace.rank0.json`: the file of one rank's recording."""
    return path.with_name(f"{path.stem}.rank{rank}{path.suffix}")


_RANK_IN_NAME = re.compile(r"\.rank(\d+)\.")


def rank_of(recording: Recording, name: str = "") -> int | None:
    """The rank a recording was made on: as recorded, else as its file is named."""
    if recording.rank is not None:
        return recording.rank
    m = _RANK_IN_NAME.search(Path(name).name + ".") if name else None
    return int(m.group(1)) if m else None


# -- the comparison ----------------------------------------------------------------------


@dataclass
class FrameDiff:
    """One function both ranks compiled (code name, file, first line), its compiles on
    each rank in order, and the comparison of each pair (the k-th compile of each)."""

    function: str
    filename: str
    firstlineno: int
    a: list[Compile]
    b: list[Compile]
    pairs: list[Comparison] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return len(self.a) != len(self.b) or any(pair_differs(p) for p in self.pairs)


@dataclass
class RankComparison:
    """Two ranks' recordings, compared (`compare_ranks`)."""

    ranks: tuple[int, int]
    a: Recording
    b: Recording
    only_a: list[list[Compile]] = field(default_factory=list)  # functions only rank a compiled
    only_b: list[list[Compile]] = field(default_factory=list)
    frames: list[FrameDiff] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.only_a or self.only_b or any(f.differs for f in self.frames))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what `dynamo-lab explain --format json` prints for ranks)."""
        ra, rb = self.ranks
        return {
            "ranks": [ra, rb],
            "summary": {str(ra): summary(self.a), str(rb): summary(self.b)},
            "differs": self.differs,
            "only_on": {str(ra): [_frame(cs) for cs in self.only_a],
                        str(rb): [_frame(cs) for cs in self.only_b]},
            "functions": [_frame_dict(f, self.ranks) for f in self.frames if f.differs],
        }

    def __str__(self) -> str:
        return visible(ranks_text(self))


def _key(c: Compile) -> tuple[str, str, int]:
    return (c.code_name, c.filename, c.firstlineno)


def _by_function(r: Recording) -> dict[tuple[str, str, int], list[Compile]]:
    out: dict[tuple[str, str, int], list[Compile]] = {}
    for c in r.compiles:
        out.setdefault(_key(c), []).append(c)
    return out


def compare_ranks(a: Recording, b: Recording, ranks: tuple[int, int] = (0, 1)) -> RankComparison:
    """What rank `ranks[1]` (recording `b`) compiled differently from rank `ranks[0]` (`a`).

    Compiles are matched by the function they compile (code name, file, first line), and
    the k-th compile of a function on one rank with the k-th on the other."""
    out = RankComparison(ranks, a, b)
    fa, fb = _by_function(a), _by_function(b)
    out.only_a = [cs for k, cs in fa.items() if k not in fb]
    out.only_b = [cs for k, cs in fb.items() if k not in fa]
    memo: dict = {}
    for k, ca in fa.items():
        cb = fb.get(k)
        if cb is None:
            continue
        frame = FrameDiff(k[0], k[1], k[2], ca, cb)
        frame.pairs = [compare_compiles(x, y, memo=memo, same_process=False)
                       for x, y in zip(ca, cb)]
        out.frames.append(frame)
    return out


def pair_differs(p: Comparison) -> bool:
    return bool(p.divergence or p.guards_changed or p.guards_only_in_a or p.guards_only_in_b
                or p.nodes_added or p.nodes_removed or p.nodes_changed
                or p.a.outcome != p.b.outcome or dims_differ(p) or split_differs(p.a, p.b)
                or recompiled_differently(p.a, p.b)
                or any(x is None or y is None for x, y in p.aligned))


def _failed(c: Compile) -> tuple:
    return tuple((fg.kind, fg.source, fg.what, fg.expected, fg.seen) for fg in c.failed_guards)


def recompiled_differently(a: Compile, b: Compile) -> bool:
    """Whether one is a recompile and the other not, or they recompiled on other guards
    or values."""
    return (a.replaces is None) != (b.replaces is None) or _failed(a) != _failed(b)


def dims_differ(p: Comparison) -> list[tuple[str, str, str]]:
    """Input dimensions the two compiles saw as different sizes or treated differently:
    (source, what the first held, what the second held)."""
    da = {d.source: d for d in (p.a.shapes.dims if p.a.shapes else ())}
    db = {d.source: d for d in (p.b.shapes.dims if p.b.shapes else ())}
    out = []
    for source in dict.fromkeys([*da, *db]):
        x, y = da.get(source), db.get(source)
        if x is None or y is None:
            continue   # an input only one has: its guards and steps say so
        if (x.size, x.value, x.how) != (y.size, y.value, y.how):
            out.append((source, _dim(x), _dim(y)))
    return out


def _dim(d: Any) -> str:
    return str(d.size) if d.value == str(d.size) else f"{d.size} ({d.value}, {d.how})"


def split_differs(a: Compile, b: Compile) -> bool:
    sa, sb = a.ddp_split, b.ddp_split
    if sa is None or sb is None:
        return (sa is None) != (sb is None)
    return _split_shape(sa) != _split_shape(sb)


def _split_shape(s: DdpSplit) -> tuple:
    return (s.bucket_cap, s.first_bucket_cap,
            tuple((b.size, b.nodes, b.params) for b in s.buckets))


def branch(p: Comparison) -> tuple[int, int, int] | None:
    """The first instruction after which the two traces ran different instructions, when
    it is a jump (a branch taken differently): (step in a, step in b, index in `aligned`
    of the first step only one ran)."""
    previous = None
    for k, (x, y) in enumerate(p.aligned):
        if x is None or y is None:
            if previous is None:
                return None
            s = p.a.steps[previous[0]]
            if not any(j in s.opname for j in _JUMPS):
                return None
            return previous[0], previous[1], k
        previous = (x, y)
    return None


def _went(c: Compile, p: Comparison, k: int, side: int) -> str:
    """Where one side went on after a branch: its first step that the other did not run."""
    for pair in p.aligned[k:]:
        i = pair[side]
        if i is not None:
            s = c.steps[i]
            return f"line {step_line(c, i)} ({s.opname} {s.argrepr})".replace(" )", ")")
        if pair[1 - side] is None:
            break
    return "nowhere: its trace ended there"


def _source_line(c: Compile, lineno: int | None) -> str:
    if lineno is None:
        return ""
    for info in c.codes or ():
        k = lineno - info.firstlineno
        if info.filename == c.filename and 0 <= k < len(info.source_lines):
            return info.source_lines[k].strip()
    k = lineno - c.firstlineno
    return c.source_lines[k].strip() if 0 <= k < len(c.source_lines) else ""


def summary(r: Recording) -> dict[str, int]:
    """What one rank compiled: compiles, functions, graphs, graph breaks, recompiles."""
    return {"compiles": len(r.compiles), "functions": len(_by_function(r)),
            "graphs": r.counters.get("unique_graphs", 0),
            "graph_breaks": r.graph_break_count,
            "recompiles": sum(1 for c in r.compiles if c.replaces is not None)}


def _frame(cs: list[Compile]) -> dict[str, Any]:
    c = cs[0]
    return {"function": c.code_name, "file": c.filename, "lineno": c.firstlineno,
            "compiles": [x.compile_id for x in cs]}


def _node(n: Node) -> str:
    meta = f" {n.dtype}{n.shape}" if n.dtype or n.shape else ""
    return f"{n.name} = {n.op}[{n.target}]{meta}"


def _frame_dict(f: FrameDiff, ranks: tuple[int, int]) -> dict[str, Any]:
    pairs = []
    for p in f.pairs:
        d = p.divergence
        br = branch(p)
        pairs.append({
            "a": p.a.compile_id, "b": p.b.compile_id,
            "outcomes": [p.a.outcome, p.b.outcome],
            "divergence": None if d is None else {
                "steps": [d.a, d.b], "lineno": d.lineno, "instruction": d.instruction,
                "why": d.why, "a": d.was, "b": d.now},
            "branch": None if br is None else {
                "steps": [br[0], br[1]], "lineno": step_line(p.a, br[0]),
                "went": [_went(p.a, p, br[2], 0), _went(p.b, p, br[2], 1)]},
            "dims": [{"source": s, "a": x, "b": y} for s, x, y in dims_differ(p)],
            "guards_changed": [[p.a.guard_details[g.a].text, p.b.guard_details[g.b].text]
                               for g in p.guards_changed],
            "guards_only_a": [p.a.guard_details[i].text for i in p.guards_only_in_a],
            "guards_only_b": [p.b.guard_details[i].text for i in p.guards_only_in_b],
            "nodes_only_a": list(p.nodes_removed), "nodes_only_b": list(p.nodes_added),
            "nodes_changed": [n.name for n in p.nodes_changed],
            "ddp_split_differs": split_differs(p.a, p.b),
            "recompiled_differently": recompiled_differently(p.a, p.b),
        })
    return {"function": f.function, "file": f.filename, "lineno": f.firstlineno,
            "compiles": {str(ranks[0]): [c.compile_id for c in f.a],
                         str(ranks[1]): [c.compile_id for c in f.b]},
            # compiles one rank made beyond the other's: each with what it replaces and
            # the guards that failed on the call
            "more": [{"compile_id": c.compile_id, "replaces": c.replaces,
                      "failed_guards": [failed_guard_line(fg) for fg in c.failed_guards]}
                     for c in (f.a[len(f.b):] or f.b[len(f.a):])],
            "pairs": pairs}


# -- the text ----------------------------------------------------------------------------


def _where(filename: str, lineno: int) -> str:
    return f"{filename.rsplit('/', 1)[-1]}:{lineno}"


def _summary_text(s: dict[str, int]) -> str:
    return (f"{s['compiles']} compile(s) of {s['functions']} function(s), {s['graphs']} "
            f"graph(s), {s['graph_breaks']} graph break(s), {s['recompiles']} recompile(s)")


def ranks_text(cmp: RankComparison) -> str:
    ra, rb = cmp.ranks
    sa, sb = summary(cmp.a), summary(cmp.b)
    out = [f"ranks {ra} and {rb}: rank {ra} made {_summary_text(sa)}; rank {rb} "
           + ("the same" if sa == sb else f"made {_summary_text(sb)}")]
    for rank, only in ((ra, cmp.only_a), (rb, cmp.only_b)):
        for cs in only:
            c = cs[0]
            out.append(f"{c.code_name} ({_where(c.filename, c.firstlineno)}) was compiled on "
                       f"rank {rank} only ({', '.join(x.compile_id for x in cs)})")
    for f in cmp.frames:
        if f.differs:
            out += _frame_text(f, cmp.ranks)
    if not cmp.differs:
        out.append("no difference: both ranks compiled the same functions the same way "
                   "(the same steps, graphs and guards)")
    return "\n".join(out)


def _frame_text(f: FrameDiff, ranks: tuple[int, int]) -> list[str]:
    ra, rb = ranks
    out = [f"{f.function} ({_where(f.filename, f.firstlineno)}):"]
    if len(f.a) != len(f.b):
        out.append(f"  compiled {len(f.a)} time(s) on rank {ra} "
                   f"({', '.join(c.compile_id for c in f.a)}) and {len(f.b)} on rank {rb} "
                   f"({', '.join(c.compile_id for c in f.b)})")
        more, rank = (f.a[len(f.b):], ra) if len(f.a) > len(f.b) else (f.b[len(f.a):], rb)
        for c in more:
            if c.replaces is not None:
                out.append(f"  rank {rank}'s [{c.compile_id}] replaces its [{c.replaces}]; "
                           f"guards that failed on the call ({len(c.failed_guards)}):")
                out += [f"    {failed_guard_line(fg)}" for fg in c.failed_guards]
            else:
                out.append(f"  rank {rank}'s [{c.compile_id}]: {c.title()}")
    for p in f.pairs:
        if pair_differs(p):
            out += _pair_text(p, ranks)
    return out


def _pair_text(p: Comparison, ranks: tuple[int, int]) -> list[str]:
    ra, rb = ranks
    a, b = p.a, p.b
    ids = (f"[{a.compile_id}] on both ranks" if a.compile_id == b.compile_id
           else f"rank {ra}'s [{a.compile_id}] and rank {rb}'s [{b.compile_id}]")
    out = [f"  {ids}:"]
    if a.outcome != b.outcome:
        out.append(f"    outcome: {a.title()} on rank {ra}; {b.title()} on rank {rb}")
    if recompiled_differently(a, b):
        for rank, c in ((ra, a), (rb, b)):
            if c.replaces is None:
                out.append(f"    rank {rank}'s [{c.compile_id}] is no recompile")
                continue
            out.append(f"    rank {rank}'s [{c.compile_id}] replaces [{c.replaces}]; guards that "
                       f"failed on the call ({len(c.failed_guards)}):")
            out += [f"      {failed_guard_line(fg)}" for fg in c.failed_guards]
    for source, x, y in dims_differ(p):
        out.append(f"    input dimension {source} is {x} on rank {ra} and {y} on rank {rb}")
    d = p.divergence
    if d is not None:
        sa = "-" if d.a is None else d.a
        sb = "-" if d.b is None else d.b
        step = f"step {sa}" if sa == sb else f"rank {ra} step {sa} / rank {rb} step {sb}"
        line = _source_line(a if d.a is not None else b, d.lineno)
        out.append(f"    the traces first differ at line {d.lineno}"
                   + (f" ({line})" if line else "") + f", {step} {d.instruction}: "
                   + _WHY.get(d.why, d.why))
        if d.why == "branch taken" or d.why == "instruction" or d.why == "inlining":
            out.append(f"      rank {ra} ran {d.was}; rank {rb} ran {d.now}")
        else:
            out.append(f"      rank {ra} left {d.was}; rank {rb} left {d.now}")
    br = branch(p)
    if br is not None:
        x, y, k = br
        s = a.steps[x]
        lineno = step_line(a, x)
        line = _source_line(a, lineno)
        step = f"step {x}" if x == y else f"rank {ra} step {x} / rank {rb} step {y}"
        out.append(f"    a branch taken differently at line {lineno}"
                   + (f" ({line})" if line else "") + f", {step} {s.opname}: after it rank "
                   f"{ra} went on at {_went(a, p, k, 0)}, rank {rb} at {_went(b, p, k, 1)}")
    elif any(x is None or y is None for x, y in p.aligned) and d is None:
        only_a = sum(1 for x, y in p.aligned if y is None)
        only_b = sum(1 for x, y in p.aligned if x is None)
        out.append(f"    steps: {only_a} only on rank {ra}, {only_b} only on rank {rb}")
    for g in p.guards_changed:
        out.append(f"    guard {g.kind} {g.source or ''}".rstrip() + " differs:")
        out.append(f"      rank {ra}: {a.guard_details[g.a].text}")
        out.append(f"      rank {rb}: {b.guard_details[g.b].text}")
    out += [f"    guard only on rank {ra}: {a.guard_details[i].text}" for i in p.guards_only_in_a]
    out += [f"    guard only on rank {rb}: {b.guard_details[i].text}" for i in p.guards_only_in_b]
    nodes_a = {n.name: n for n in a.nodes}
    nodes_b = {n.name: n for n in b.nodes}
    if p.nodes_removed:
        out.append(f"    graph: {len(p.nodes_removed)} node(s) only on rank {ra}: "
                   + "; ".join(_node(nodes_a[n]) for n in p.nodes_removed))
    if p.nodes_added:
        out.append(f"    graph: {len(p.nodes_added)} node(s) only on rank {rb}: "
                   + "; ".join(_node(nodes_b[n]) for n in p.nodes_added))
    for n in p.nodes_changed:
        out.append(f"    graph node {n.name}: {n.was} on rank {ra}, {n.now} on rank {rb}")
    if split_differs(a, b):
        out.append("    " + _split_difference(a.ddp_split, b.ddp_split, ranks))
    return out


_WHY = {   # capture.compare's `Divergence.why`, said of two ranks
    "value": "it left a different value",
    "shape": "it left a tensor of another shape",
    "tracker kind": "it left another kind of value",
    "branch taken": "the ranks ran different instructions after a jump",
    "instruction": "the ranks ran different instructions",
    "inlining": "one rank inlined a call the other did not",
}


def _split_difference(sa: DdpSplit | None, sb: DdpSplit | None, ranks: tuple[int, int]) -> str:
    ra, rb = ranks

    def said(s: DdpSplit | None) -> str:
        if s is None:
            return "no DDP split"
        return "DDP buckets of " + ", ".join(f"{len(b.nodes)} node(s)" for b in s.buckets)

    return f"DDP split: rank {ra} {said(sa)}; rank {rb} {said(sb)}"


# -- one page of several ranks ---------------------------------------------------------------


def merged(recordings: list[Recording], ranks: list[int]) -> tuple[Recording, list[str]]:
    """Several ranks' recordings as one, for one page, and each compile's title naming its rank.

    Each rank's compiles in turn, each marked with its rank (`Compile.rank`) and moved to a
    generation of its own, so that compile ids, which repeat from rank to rank, stay apart
    as they do after a `torch._dynamo.reset()`: a recompile's `replaces` and its failed
    guards still name its own rank's compiles. Events say their rank; an event's failed
    guards are kept only where no other rank has a compile of that id. Dynamo's counters
    are each rank's own and are left out (the titles and the page's note say each rank's
    compiles)."""
    ids: dict[str, set[int]] = {}
    for r, k in zip(recordings, ranks):
        for c in r.compiles:
            ids.setdefault(c.compile_id, set()).add(k)
    first = recordings[0]
    out = Recording(torch_version=first.torch_version, python_version=first.python_version,
                    max_steps=first.max_steps, max_compile_steps=first.max_compile_steps,
                    max_chars=first.max_chars, world_size=first.world_size,
                    truncated=any(r.truncated for r in recordings))
    titles: list[str] = []
    offset = 0
    for r, k in zip(recordings, ranks):
        for c in r.compiles:
            titles.append(f"rank {k} · {c.title()}")
            out.compiles.append(dataclasses.replace(c, generation=c.generation + offset, rank=k))
        for e in r.events:
            alone = e.compile_id is None or ids.get(e.compile_id, {k}) == {k}
            out.events.append(dataclasses.replace(
                e, message=f"rank {k}: {e.message}",
                failed_guards=e.failed_guards if alone else ()))
        offset += 1 + max((c.generation for c in r.compiles), default=0)
    return out, titles


# Every pair of compiles of one function is compared while it has at most this many
# compiles over all ranks; past it, each beside the next and beside the same-numbered
# compile of the function on every other rank.
ALL_PAIRS_UP_TO = 8


def rank_pairs(recording: Recording) -> list[tuple[int, int, Comparison]]:
    """The pairs of compiles of one function (`merged`'s, across ranks and within one) a
    page's compare mode offers, by index, each compared (`compare_compiles`)."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    for k, c in enumerate(recording.compiles):
        groups.setdefault(_key(c), []).append(k)
    pairs: set[tuple[int, int]] = set()
    for ks in groups.values():
        if len(ks) <= ALL_PAIRS_UP_TO:
            pairs.update((x, y) for j, x in enumerate(ks) for y in ks[j + 1:])
            continue
        pairs.update(zip(ks, ks[1:]))
        by_rank: dict[Any, list[int]] = {}
        for k in ks:
            by_rank.setdefault(recording.compiles[k].rank, []).append(k)
        lists = list(by_rank.values())
        for j, xs in enumerate(lists):
            for ys in lists[j + 1:]:
                pairs.update(zip(xs, ys))
    out, memo = [], {}
    for x, y in sorted(pairs):
        a, b = recording.compiles[x], recording.compiles[y]
        same = a.rank == b.rank and a.generation == b.generation
        out.append((x, y, compare_compiles(a, b, memo=memo, same_process=same)))
    return out
