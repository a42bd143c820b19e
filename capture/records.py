"""The records a recording is made of: plain data, no live torch objects, all frozen.

What a compile holds besides its steps (`capture/steps.py`): the readings of trackers
(`Var`), instructions and code objects, FX nodes, guards, resume functions, graph breaks,
failed guards, events and the stages after Dynamo. `capture/recording.py` holds the
`Compile` and the `Recording` made of them, and `capture/codec.py` their JSON.

Every record carries what a learner reads; the viewer, the text view, the lesson checks
and the tests all consume these records and nothing else.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any

from .text import guard_where

# NOTE (views import records, never the reverse): `str()` of a `Compile` or a `Recording`
# is its text view, `capture/textview.py`, which puts its functions here when it is
# imported (importing `capture` imports it), so no record module imports a view.
TEXT_VIEWS: dict[str, Any] = {}

@dataclass(frozen=True, slots=True)
class Var:
    """A VariableTracker as a learner reads it: class, modelled type, source, detail."""

    kind: str
    python_type: str | None = None
    source: str | None = None
    detail: str = ""
    lazy: bool = False
    realized: bool = True
    node: str | None = None

    def __str__(self) -> str:
        text = self.kind
        if self.detail:
            text += f" {self.detail}"
        if self.lazy and self.realized:
            text += " (lazy, realized)"
        if self.source:
            text += f"  <- {self.source}"
        return text


@dataclass(frozen=True, slots=True)
class Instr:
    """One instruction of a code object: of its `dis` listing, or of the cleaned list
    Dynamo's translator walks (then `original` is the index in `dis` of the instruction
    it came from, None for one Dynamo inserted, and `changed` says Dynamo rewrote it)."""

    offset: int
    opname: str
    argrepr: str = ""
    lineno: int | None = None
    is_jump_target: bool = False
    original: int | None = None
    changed: bool = False
    label: str | None = None  # a jump target's name where dis names targets (3.13: `L1`)

    def __str__(self) -> str:
        return self.line()

    def line(self, mark_width: int = 2) -> str:
        """The row as a listing prints it: a jump target marked `>>`, or by its label
        (`L1:`) where `dis` labels targets, right-aligned to `mark_width`."""
        mark = f"{self.label}:" if self.label else ">>" if self.is_jump_target else ""
        return f"{mark:>{mark_width}} {self.offset:4d} {self.opname:<20} {self.argrepr}".rstrip()


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """A code object the compile walked: the frame itself or an inlined callee.

    Two listings: `instructions`, the code's own `dis`, and `walked`, the cleaned
    copy Dynamo's translator steps through (on 3.11 it strips EXTENDED_ARG, turns
    `POP_JUMP_*_IF_NONE` into `LOAD_CONST None; IS_OP; POP_JUMP_*`, makes super()'s
    arguments explicit and renumbers offsets), each row aligned with `instructions`
    (`Instr.original`, `Instr.changed`). A step's offset is an offset in `walked`.
    Where Dynamo's own listing was never seen (a step cap before the code's first
    step), `walked` is the `dis` listing, each row its own original.

    While recording, a compile's codes carry their name, file and source only: the
    listings are read once per code object when the recording finishes
    (`capture.bytecode.CodeReader`), so recording stays fast and nothing here
    holds a live code object.
    """

    name: str
    filename: str
    firstlineno: int
    source_lines: tuple[str, ...] = ()
    instructions: tuple[Instr, ...] = ()
    walked: tuple[Instr, ...] = ()
    qualname: str = ""   # `co_qualname`: `PretrainedConfig.__getattribute__`, `f.<locals>.g`

    @property
    def cleaned(self) -> bool:
        """Whether Dynamo's cleaning changed the listing (rows rewritten, inserted or removed)."""
        walked = self.walked
        return (len(walked) != len(self.instructions)
                or any(i.changed or i.original is None for i in walked))

    @property
    def bytecode(self) -> str:
        """The disassembly as text, one instruction a line, with line numbers."""
        return disassembly_text(self.instructions)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "qualname": self.qualname, "filename": self.filename,
                "firstlineno": self.firstlineno, "source_lines": list(self.source_lines),
                "instructions": [plain(i) for i in self.instructions],
                "walked": [plain(i) for i in self.walked],
                "cleaned": self.cleaned}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CodeInfo:
        return cls(name=d["name"], qualname=d.get("qualname", ""), filename=d["filename"],
                   firstlineno=d["firstlineno"],
                   source_lines=tuple(d["source_lines"]),
                   instructions=tuple(Instr(**i) for i in d["instructions"]),
                   walked=tuple(Instr(**i) for i in d["walked"]))


def disassembly_text(instructions: tuple[Instr, ...] | list[Instr]) -> str:
    lines = []
    last = None
    width = max((len(ins.label) + 1 for ins in instructions if ins.label), default=2)
    for ins in instructions:
        line = "" if ins.lineno is None or ins.lineno == last else str(ins.lineno)
        if ins.lineno is not None:
            last = ins.lineno
        lines.append(f"{line:>5} {ins.line(width)}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Node:
    """An FX node the compile created, with the step that created it.

    `name` is the node's final name, as in `graph_code`. A node is named after its
    op (`sin`) when created and renamed after the variable it is first stored in
    (`y`, at `STORE_FAST y`): `created_name` and `renamed_at` (the step) keep that.
    """

    name: str
    op: str
    target: str
    args: str = ""
    inputs: tuple[str, ...] = ()
    shape: str | None = None
    dtype: str | None = None
    step: int | None = None
    in_graph: bool = True
    created_name: str | None = None
    renamed_at: int | None = None
    module: str | None = None   # the module it was made in, innermost (`L['self'].h.3.attn`)

    def name_at(self, step: int) -> str:
        """The node's name as Dynamo held it at the end of `step`."""
        if self.created_name is None or (self.renamed_at is not None and step >= self.renamed_at):
            return self.name
        return self.created_name

    def __str__(self) -> str:
        meta = f" {self.dtype}{self.shape}" if self.dtype else ""
        return f"{self.name} = {self.op}[{self.target}]({self.args}){meta}"


@dataclass(frozen=True, slots=True)
class Guard:
    """One guard Dynamo installed, with where it came from.

    `kind` is the kind Dynamo installed (`CONSTANT_MATCH`); `text` and `tree_kind` are
    the check as the guard tree prints it (`EQUALS_MATCH: L['n'] == 2`), when the guard
    has a line there.
    """

    text: str
    kind: str
    source: str | None = None
    ambient: bool = False
    step: int | None = None
    lineno: int | None = None
    line: str | None = None
    code_name: str | None = None
    tree_kind: str | None = None
    leaf: int | None = None  # the index in `Compile.guards` of its line in the guard tree

    @property
    def where(self) -> str:
        """`line 3: y = x.sin()`, `ambient` or `after tracing`."""
        return guard_where(self.lineno, self.line, ambient=self.ambient)

    def __str__(self) -> str:
        return f"{self.text}    # {self.where}"


@dataclass(frozen=True, slots=True)
class ResumeFunction:
    """A continuation Dynamo generated at a graph break: it takes the live stack values
    and locals as arguments (`argnames`) and runs the frame's code from `offset`, where
    execution resumes: an offset in the instructions Dynamo walks (`CodeInfo.walked`),
    which is the original offset only where cleaning renumbered nothing before it."""

    global_name: str
    code_name: str
    bytecode: str
    argnames: tuple[str, ...] = ()
    offset: int | None = None
    instructions: tuple[Instr, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphBreak:
    """Why and where tracing stopped.

    `message` is Dynamo's whole graph-break message, exactly as it wrote it (what
    TORCH_LOGS=graph_breaks prints after "Graph Break Reason:"); `reason` is its
    headline (the graph-break type, `Failed to trace builtin operator`), and
    `explanation`, `hints` and `link` (the graph-break site's page for this break)
    are its parts. `step` is the step of the instruction that broke, None when that
    step was not stored (past a step cap). `gb_id` (`GB0109`) names the break in the
    installed torch's graph-break registry, and `registry` is that entry's variant as the
    registry writes it ({Gb_type, Context, Explanation, Hints}), read when recording.
    """

    reason: str
    lineno: int | None = None
    line: str | None = None
    code_name: str | None = None
    step: int | None = None
    explanation: str | None = None
    message: str | None = None
    hints: tuple[str, ...] = ()
    link: str | None = None
    gb_id: str | None = None
    registry: dict[str, Any] | None = None

class Outcome:
    """How a compile attempt ended: one of these names, in `Compile.outcome`."""

    COMPILED = "compiled"          # a graph and guards were installed for the whole frame
    GRAPH_BREAK = "graph_break"    # a graph up to a break, the rest in resume functions
    RESTARTED = "restarted"        # thrown away at a break; a new attempt (`_1`) follows
    SKIPPED = "skipped"            # Dynamo gave up on the frame; it runs without compiling
    ERROR = "error"                # the compile raised
    INTERRUPTED = "interrupted"    # a KeyboardInterrupt stopped it
    UNFINISHED = "unfinished"      # still running when the recording ended
    ABANDONED = "abandoned"        # another attempt of the same frame was kept instead

    ALL = (COMPILED, GRAPH_BREAK, RESTARTED, SKIPPED, ERROR, INTERRUPTED, UNFINISHED, ABANDONED)


class EventKind:
    """What an `Event` records: one of these names, in `Event.kind`."""

    COMPILE = "compile"
    RECOMPILE = "recompile"
    GRAPH_BREAK = "graph_break"
    RESTART = "restart"
    CACHE_LIMIT = "cache_limit"
    WARNING = "warning"
    STEP_CAP = "step_cap"
    SIZE_CAP = "size_cap"
    NOTE = "note"
    SKIPPED = "skipped"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    RESET = "reset"
    ENDED = "ended"
    RECORDER_ERROR = "recorder_error"
    FAIL_ON_RECOMPILE = "fail_on_recompile"  # the stance refused a recompile: an error

    ALL = (COMPILE, RECOMPILE, GRAPH_BREAK, RESTART, CACHE_LIMIT, WARNING, STEP_CAP, SIZE_CAP,
           SKIPPED, ERROR, INTERRUPTED, RESET, ENDED, RECORDER_ERROR, NOTE,
           FAIL_ON_RECOMPILE)

@dataclass(frozen=True, slots=True)
class FailedGuard:
    """A guard of an earlier compile that failed on the call that made Dynamo recompile.

    `compile_id` is the compile whose guards these are (the attempt that installed them,
    `0/0_1` after a restart); `guard` is the index in its `guards` of the check that
    failed (its line of the guard tree) and `detail` the index in its `guard_details` of
    the guard as installed (both None when that compile was made before recording); `step`
    the step that installed it
    (for a check built after tracing, a shape relation, the step that installed the
    first guard on the value it reads) and `lineno` that step's line. `what` names what
    was compared (`size`, `dtype`, `value`, `type` ...); `expected` is what the guard
    holds and `seen` what the new call had: `[4, 3]` and `[8, 3]`, `'Hello'` and `'World'`.
    """

    compile_id: str
    guard: int | None
    source: str | None
    expected: str
    seen: str
    kind: str = ""
    what: str = ""
    step: int | None = None
    lineno: int | None = None
    detail: int | None = None

    def __str__(self) -> str:
        where = f"  (line {self.lineno})" if self.lineno is not None else ""
        what = f" {self.what}" if self.what else ""
        return (f"[{self.compile_id}] {self.kind} {self.source or ''}{what}: expected "
                f"{self.expected}, got {self.seen}{where}")


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened while recording: compile, restart, recompile, break, limit."""

    kind: str  # one of EventKind.ALL
    compile_id: str | None
    message: str = ""
    # a refused recompile (cache limit, fail_on_recompile, error_on_recompile): the guards
    # of the earlier compiles that failed on the call
    failed_guards: tuple[FailedGuard, ...] = ()

    def __str__(self) -> str:
        where = f"[{self.compile_id}] " if self.compile_id else ""
        return f"{self.kind:<14} {where}{self.message}"

# -- stages after Dynamo ----------------------------------------------------------------
# One stage as it appears in a compile's JSON (`Compile.stages`, in pipeline order)::
#
#     {"name": "aot_forward", "graph": "forward", "code": "class GraphModule(...", 
#      "from_cache": false, "inputs": ["primals_1"], "outputs": ["sum_1"],
#      "saved": ["relu"], "recomputed": [],
#      "units": [{"name": "relu", "op": "call_function", "target": "aten.relu.default",
#                 "dynamo_nodes": ["h"], "invented": false, "via": "from_node",
#                 "post_grad_nodes": [], "lines": [12]}]}


@dataclass(frozen=True, slots=True)
class StageUnit:
    """One node of a graph after Dynamo, or one kernel of Inductor's code, and the Dynamo
    nodes it came from (`dynamo_nodes`, as `Compile.nodes` names them); `invented` where
    no link exists (a node AOTAutograd or Inductor made up), `via` says how it was linked."""

    name: str
    dynamo_nodes: tuple[str, ...] = ()
    invented: bool = False
    op: str = ""               # placeholder, call_function, get_attr; kernel, extern_kernel
    target: str = ""           # aten.mm.default, or what a kernel computes
    via: str = ""              # from_node, seq_nr, input, tangent, origins
    post_grad_nodes: tuple[str, ...] = ()  # a kernel's post-grad nodes (Inductor's origins)
    lines: tuple[int, ...] = ()            # 1-based lines of `Stage.code` that show it


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage after Dynamo, as its log prints it (`code`), node by node or kernel by kernel.

    `name` is `aot_joint`, `aot_forward`, `aot_backward`, `inductor_post_grad` or
    `inductor_output_code`; `graph` says `joint`, `forward`, `backward` or `inference`
    (AOTAutograd's inference graph is an `aot_forward` stage of graph `inference`).
    The partitioner's choice: a forward's `saved` values are kept for the backward; a
    backward's `recomputed` nodes are forward ops it computes again. A stage served from
    AOTAutograd's or Inductor's cache has its code but no units (`from_cache`): no graph
    was built, so nothing can be linked.
    """

    name: str
    code: str = ""
    units: tuple[StageUnit, ...] = ()
    graph: str = ""
    from_cache: bool = False
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    saved: tuple[str, ...] = ()
    recomputed: tuple[str, ...] = ()

    def unit(self, name: str) -> StageUnit:
        """The unit with this name (the first, for a kernel called twice)."""
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(f"no unit {name!r} in stage {self.name} ({self.graph})")

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stage:
        d = dict(d)
        d["units"] = tuple(from_plain(StageUnit, u) for u in d.get("units", ()))
        return from_plain(cls, d)


# NOTE (the JSON follows the records): a record becomes a dict of its fields, in
# order, tuples as lists; it is made again from that dict by keyword (`plain`,
# `from_plain`; `capture/codec.py` writes what is not a plain field).

_READERS: dict[type, tuple[tuple[str, ...], Any]] = {}  # record class -> (names, getter)


def _reader(cls: type) -> tuple[tuple[str, ...], Any]:
    """A record class's field names and one getter of all their values (C speed)."""
    found = _READERS.get(cls)
    if found is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        found = _READERS[cls] = (names, operator.attrgetter(*names))
    return found


def plain(obj: Any) -> Any:
    """A frozen record as a dict, tuples as lists."""
    names, get = _reader(type(obj))
    values = get(obj)
    if len(names) == 1:
        values = (values,)
    out = dict(zip(names, values))
    for name, value in out.items():
        if isinstance(value, tuple):
            out[name] = [list(v) if isinstance(v, tuple) else
                         (plain(v) if dataclasses.is_dataclass(v) else v) for v in value]
    return out


def from_plain(cls: type, d: dict[str, Any]) -> Any:
    """A frozen record from its dict: list-valued fields declared as tuples become tuples
    (of `Instr`s where they hold instructions)."""
    def value(v: Any) -> Any:
        if not isinstance(v, list):
            return v
        return tuple(Instr(**x) if isinstance(x, dict) else tuple(x) if isinstance(x, list) else x
                     for x in v)

    return cls(**{k: value(v) for k, v in d.items()})


# -- DDP's graph split ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DdpBucket:
    """One bucket of DDPOptimizer's split: the subgraph `submod_<index>` (in graph order),
    the FX nodes in it (as `Compile.nodes` names them), the parameters counted into it
    and their size in bytes; `extended` nodes were added past the cap so that the
    subgraph has an output."""

    index: int
    size: int
    params: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    extended: int = 0


@dataclass(frozen=True, slots=True)
class DdpSplit:
    """How DDPOptimizer split a compile's graph into one subgraph per gradient bucket
    (`Compile.ddp_split`).

    It walks the graph backwards (the order gradients become ready), counting each
    parameter's bytes into the current bucket, and starts a new bucket once the current
    one reaches `bucket_cap` (`first_bucket_cap` for the first bucket it fills, the last
    in graph order); a bucket with no parameters at the start of the graph joins the next.
    """

    bucket_cap: int
    first_bucket_cap: int
    buckets: tuple[DdpBucket, ...] = ()

    def cap_of(self, index: int) -> int:
        """The cap bucket `index` was filled to: the first cap for the last bucket."""
        return self.first_bucket_cap if index == len(self.buckets) - 1 else self.bucket_cap

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DdpSplit:
        d = dict(d)
        d["buckets"] = tuple(from_plain(DdpBucket, b) for b in d.get("buckets", ()))
        return from_plain(cls, d)
