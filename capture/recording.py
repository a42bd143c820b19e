"""The records a recording is made of: plain data, no live torch objects. Most are
frozen; `Step`, `Compile` and `Recording` are filled in while Dynamo runs and are
not changed once the recording has finished.

One step of a compile, as it appears in ``Recording.to_json()`` (schema 2; vars
are interned per compile: ``stack`` and ``locals`` hold indices into ``vars``;
``offset`` is an offset in the compile's ``codes[code].walked``, the instructions
Dynamo's translator walks)::

    {"index": 5, "offset": 30, "opname": "CALL", "argrepr": "0", "lineno": 2,
     "depth": 0, "code": 0, "code_name": "f", "graph_size": 2,
     "nodes_added": ["sin"], "nodes_renamed": [], "guards_added": [7],
     "inline_stack": [], "stack": [3], "locals": {"x": 1, "y": 2}}

and one of the compile's ``vars``::

    {"kind": "TensorVariable", "python_type": "Tensor", "source": null,
     "detail": "f32[4] node=sin", "lazy": false, "realized": true,
     "node": "sin"}

``Recording.to_json(columns=True)`` writes each compile's ``steps`` and ``vars`` as
objects of columns instead (what the viewer is sent: a 140,000-step recording's JSON is
about a quarter of the size and parses several times faster), and ``from_json`` reads
both. The steps::

    {"length": 2, "strings": ["RESUME", "0", "f", "LOAD_FAST", "x"],
     "offset": [0, 2], "opname": [0, 3], "argrepr": [1, 4], "lineno": [1, 2],
     "depth": [0, 0], "code": [0, 0], "code_name": [2, 2], "graph_size": [0, 0],
     "stack": [[], [1]], "locals": [0, 0], "locals_table": [{"x": 1}],
     "inline_stack": [0, 0], "inline_stacks": [[]],
     "nodes_added": [], "nodes_renamed": [], "guards_added": [[1, [7]]]}

A step's ``index`` is its place (an ``index`` column is written only where some step's
is not, as in steps made by hand); ``opname``, ``argrepr`` and ``code_name`` index
``strings``; ``locals`` and ``inline_stack`` index the tables of the distinct values;
the three lists of additions hold ``[index, value]`` for the steps where they are not
empty. The vars: ``{"length": n, "strings": [...], "kind": [...], ...}``, a column per
field, each text an index into ``strings`` or null, ``lazy`` and ``realized`` as they are.

Every record carries what a learner reads; the viewer, the text view, the
lesson checks and the tests all consume these records and nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from .text import guard_where

SCHEMA_VERSION = 2

# NOTE (views import records, never the reverse): `str()` of a `Compile` or a `Recording`
# is its text view, `capture/textview.py`, which puts its functions here when it is
# imported (importing `capture` imports it), so this module imports no view.
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
                "instructions": [_plain(i) for i in self.instructions],
                "walked": [_plain(i) for i in self.walked],
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


@dataclass(slots=True, eq=False)
class Step:
    """One instruction the tracer executed, and the state it left behind.

    The stack and the symbolic locals are kept as indices into the compile's
    table of readings (`Compile.vars`, shared by every step, as in the JSON):
    `stack` and `locals` give them back as `Var`s. A compile keeps its steps as
    plain tuples (`Steps`), where steps whose locals did not change share one
    tuple of pairs; a `Step` is made each time one is read. Every field is as
    Dynamo held it at the end of this step; nothing is rewritten afterwards.
    """

    index: int
    offset: int          # in the instructions the translator walks (CodeInfo.walked)
    opname: str
    argrepr: str
    lineno: int | None
    depth: int           # inlining depth: 0 for the frame itself
    code: int            # index in Compile.codes
    code_name: str = ""
    stack_ids: tuple[int, ...] = ()
    locals_ids: dict[str, int] = field(default_factory=dict)
    graph_size: int = 0
    nodes_added: list[str] | tuple[()] = ()
    nodes_renamed: list[tuple[str, str]] | tuple[()] = ()
    guards_added: list[int] | tuple[()] = ()
    inline_stack: tuple[tuple[str, int | None], ...] = ()
    vars: list[Var] = field(default_factory=list)

    @classmethod
    def of(cls, *, stack: list[Var], locals: dict[str, Var], vars: list[Var] | None = None,
           **fields: Any) -> Step:
        """A step made from readings rather than indices (tools and tests): the readings
        are added to `vars` (a new table unless one is given)."""
        table = vars if vars is not None else []
        ids = {id(v): i for i, v in enumerate(table)}

        def intern(v: Var) -> int:
            i = ids.get(id(v))
            if i is None:
                i = ids[id(v)] = len(table)
                table.append(v)
            return i

        return cls(stack_ids=tuple(intern(v) for v in stack),
                   locals_ids={k: intern(v) for k, v in locals.items()}, vars=table, **fields)

    @property
    def stack(self) -> list[Var]:
        """The VariableTracker stack after the step, bottom first."""
        table = self.vars
        return [table[i] for i in self.stack_ids]

    @property
    def locals(self) -> dict[str, Var]:
        """The symbolic locals after the step (of the function being traced at that step)."""
        table = self.vars
        return {name: table[i] for name, i in self.locals_ids.items()}

    def _key(self) -> tuple:
        return (self.index, self.offset, self.opname, self.argrepr, self.lineno, self.depth,
                self.code, self.stack, self.locals, self.graph_size, list(self.nodes_added),
                [tuple(p) for p in self.nodes_renamed], list(self.guards_added),
                tuple(self.inline_stack), self.code_name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Step):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"Step(index={self.index}, offset={self.offset}, opname={self.opname!r}, "
                f"argrepr={self.argrepr!r}, lineno={self.lineno}, depth={self.depth}, "
                f"stack={self.stack!r}, nodes_added={list(self.nodes_added)!r})")

    def __str__(self) -> str:
        line = f"L{self.lineno}" if self.lineno is not None else "L?"
        indent = "  " * self.depth
        head = f"#{self.index:<4} {line:<5} {indent}{self.opname} {self.argrepr}".rstrip()
        stack = ", ".join(str(v) for v in reversed(self.stack))
        text = f"{head:<44} stack(top first): [{stack}]"
        if self.nodes_added:
            text += f"  +nodes {', '.join(self.nodes_added)}"
        for old, new in self.nodes_renamed:
            text += f"  renamed {old} -> {new}"
        if self.guards_added:
            text += f"  +{len(self.guards_added)} guard(s)"
        return text


# NOTE (the collector): a compile's steps are kept column by column, each field a list
# of numbers, strings and shared tuples, and every step's stack in one flat array of
# indices (an `array` is not a container the garbage collector tracks). Storing a step
# therefore leaves no new object behind for the collector, where a tuple a step (or a
# `Step` object) did: a real model's compile makes tens of thousands of steps, and each
# object they left alive counted towards the next young collection, so recording ran
# about half as many young collections again as a plain compile, each promoting what of
# Dynamo's was alive at that moment, until a full collection fell inside the compile
# (bench/README.md, "The collector"). The locals stay (name, index) pairs in a tuple
# that steps of a frame share while they are unchanged. A `Step` is made when one is read.

_STEP_FIELDS = 15   # index, offset, opname, argrepr, lineno, depth, code, code_name, stack,
#                     locals, graph_size, nodes_added, nodes_renamed, guards_added, inline_stack
_STACK = 8          # the stack's place among them


def _step(row: tuple, table: list[Var]) -> Step:
    (index, offset, opname, argrepr, lineno, depth, code, code_name, stack, locals_,
     graph_size, added, renamed, guards, inline_stack) = row
    return Step(index, offset, opname, argrepr, lineno, depth, code, code_name, stack,
                dict(locals_), graph_size, list(added) if added else (),
                list(renamed) if renamed else (), list(guards) if guards else (), inline_stack,
                table)


class Steps(Sequence[Step]):
    """A compile's steps: a sequence of `Step`s over the compile's table of readings,
    stored column by column (see the note above)."""

    __slots__ = ("_cols", "_stack", "_ends", "_vars")

    def __init__(self, vars: list[Var], steps: Iterable[Step] = ()) -> None:
        self._vars = vars
        self._cols: tuple[list, ...] = tuple([] for _ in range(_STEP_FIELDS))
        self._stack = array("q")   # every step's stack, one after the other
        self._ends = array("q")    # where each step's stack ends in it
        for s in steps:
            self.append(s)

    def add(self, row: tuple) -> None:
        """Store a step given as its fields in order (all but `vars`), each a number, a
        string, None or a tuple of those; the locals as a tuple of (name, index) pairs."""
        (index, offset, opname, argrepr, lineno, depth, code, code_name, stack, locals_,
         graph_size, added, renamed, guards, inline_stack) = row
        (c_index, c_offset, c_opname, c_argrepr, c_lineno, c_depth, c_code, c_code_name, _,
         c_locals, c_size, c_added, c_renamed, c_guards, c_inline) = self._cols
        c_index.append(index)
        c_offset.append(offset)
        c_opname.append(opname)
        c_argrepr.append(argrepr)
        c_lineno.append(lineno)
        c_depth.append(depth)
        c_code.append(code)
        c_code_name.append(code_name)
        c_locals.append(locals_)
        c_size.append(graph_size)
        c_added.append(added)
        c_renamed.append(renamed)
        c_guards.append(guards)
        c_inline.append(inline_stack)
        flat = self._stack
        flat.extend(stack)
        self._ends.append(len(flat))

    def append(self, step: Step) -> None:
        stack, locals_ = step.stack_ids, step.locals_ids
        if step.vars is not self._vars:  # a step made over a table of its own
            table, moved = self._vars, {}
            for i in (*stack, *locals_.values()):
                if i not in moved:
                    moved[i] = len(table)
                    table.append(step.vars[i])
            stack = tuple(moved[i] for i in stack)
            locals_ = {k: moved[i] for k, i in locals_.items()}
        self.add((step.index, step.offset, step.opname, step.argrepr, step.lineno,
                  step.depth, step.code, step.code_name, tuple(stack),
                  tuple(locals_.items()),
                  step.graph_size, tuple(step.nodes_added),
                  tuple(tuple(p) for p in step.nodes_renamed),
                  tuple(step.guards_added), tuple(step.inline_stack)))

    def _stacks(self, start: int, stop: int) -> list[tuple[int, ...]]:
        flat, ends = self._stack, self._ends
        begin = ends[start - 1] if start else 0
        out = []
        for k in range(start, stop):
            end = ends[k]
            out.append(tuple(flat[begin:end]))
            begin = end
        return out

    def row(self, i: int) -> tuple:
        """Step i's fields in order, as `add` took them."""
        n = len(self._ends)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("step index out of range")
        cols = self._cols
        return (*[col[i] for col in cols[:_STACK]], self._stacks(i, i + 1)[0],
                *[col[i] for col in cols[_STACK + 1:]])

    def rows(self) -> list[tuple]:
        """Every step's fields, in order (made when asked for: read, never change them)."""
        cols = list(self._cols)
        cols[_STACK] = self._stacks(0, len(self._ends))
        return list(zip(*cols))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, i: int) -> Step: ...
    @overload
    def __getitem__(self, i: slice) -> list[Step]: ...

    def __getitem__(self, i: int | slice) -> Step | list[Step]:
        if isinstance(i, slice):
            return [_step(self.row(k), self._vars) for k in range(*i.indices(len(self)))]
        return _step(self.row(i), self._vars)

    def __iter__(self) -> Iterator[Step]:
        table = self._vars
        for row in self.rows():
            yield _step(row, table)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Steps, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # filled in while Dynamo runs

    def __repr__(self) -> str:
        return f"<{len(self)} steps>"


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


@dataclass(slots=True)
class Compile:
    """One attempt at one frame, in the order Dynamo made them."""

    compile_id: str
    code_name: str
    filename: str
    firstlineno: int
    source_lines: list[str] = field(default_factory=list)
    codes: list[CodeInfo] = field(default_factory=list)
    steps: Steps = field(default_factory=list)  # type: ignore[assignment]  # see __post_init__
    # every reading of a tracker the steps refer to, by index (see Step)
    vars: list[Var] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    graph_code: str | None = None
    guards: list[str] = field(default_factory=list)
    guard_details: list[Guard] = field(default_factory=list)
    guard_tree: str | None = None
    modified_bytecode: str | None = None
    # the same code as instructions: what the installed code does, step by step
    modified_instructions: list[Instr] = field(default_factory=list)
    resume_functions: list[ResumeFunction] = field(default_factory=list)
    graph_break: GraphBreak | None = None
    restart_reason: str | None = None
    recompile_reasons: list[str] = field(default_factory=list)
    # a recompile: the compile it was made instead of (the cache entry Dynamo checked
    # first), and every guard of the earlier compiles that failed on the call
    replaces: str | None = None
    failed_guards: tuple[FailedGuard, ...] = ()
    outcome: str = Outcome.UNFINISHED
    error: str | None = None
    truncated: bool = False
    # torch._dynamo.reset() inside a recording restarts Dynamo's ids at 0/0: the
    # number of resets seen before this compile tells equal ids apart
    generation: int = 0
    # AOTAutograd's and Inductor's stages, in pipeline order (record(after_dynamo=True))
    stages: tuple[Stage, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.steps, Steps):  # a list of Steps, or none
            self.steps = Steps(self.vars, self.steps)

    @property
    def frame_id(self) -> int:
        return int(self.compile_id.split("/")[0].lstrip("!"))

    @property
    def attempt(self) -> int:
        _, _, tail = self.compile_id.partition("/")
        return int(tail.split("_")[1]) if "_" in tail else 0

    @property
    def restarted(self) -> bool:
        return self.outcome == Outcome.RESTARTED

    def title(self) -> str:
        """`[0/0] f — graph break at line 6, restarted` and the like."""
        text = f"[{self.compile_id}] {self.code_name}"
        notes = []
        gb = self.graph_break
        if gb is not None and gb.lineno is not None:
            where = f" in {gb.code_name}" if gb.code_name and gb.code_name != self.code_name else ""
            notes.append(f"graph break{where} at line {gb.lineno}")
        elif gb is not None:
            notes.append("graph break")
        if self.outcome not in (Outcome.COMPILED, Outcome.GRAPH_BREAK) or (
                gb is None and self.outcome != Outcome.COMPILED):
            notes.append(self.outcome.replace("_", " "))
        if self.truncated:
            notes.append("truncated")
        if self.generation:
            text += f" (after reset {self.generation})"
        return text + (" — " + ", ".join(notes) if notes else "")

    def __str__(self) -> str:
        return TEXT_VIEWS["compile"](self)


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


@dataclass(slots=True)
class Recording:
    """Everything Dynamo compiled while recording, in order."""

    compiles: list[Compile] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    # What this recording's compiles added to Dynamo's counters; `counters_total`
    # is Dynamo's own process-wide reading (torch._dynamo.reset() does not clear it).
    counters: dict[str, int] = field(default_factory=dict)
    counters_total: dict[str, int] = field(default_factory=dict)
    torch_version: str = ""
    python_version: str = field(default_factory=lambda: sys.version.split()[0])
    # the caps it was made with: steps in all, steps of one compile, characters of text
    max_steps: int | None = None
    max_compile_steps: int | None = None
    max_chars: int | None = None
    truncated: bool = False
    ended_by: str | None = None
    result: Any = None

    def compile(self, compile_id: str, generation: int = 0) -> Compile:
        """The compile with this id (`0/0`, `0/0_1`, `1/0`); after a `torch._dynamo.reset()`
        inside the recording ids start again, and `generation=1` picks the later one."""
        return self.compiles[self.compile_index(compile_id, generation)]

    def compile_index(self, compile_id: str, generation: int = 0) -> int:
        """The position in `compiles` of the compile with this id (see `compile`); a
        KeyError naming the ids there are when there is none."""
        compile_id = str(compile_id)
        for k, c in enumerate(self.compiles):
            if c.compile_id == compile_id and c.generation == generation:
                return k
        known = ", ".join(c.compile_id for c in self.compiles) or "none"
        raise KeyError(f"no compile {compile_id!r} in this recording (it has: {known})")

    @property
    def step_count(self) -> int:
        """Steps stored, over all compiles."""
        return sum(len(c.steps) for c in self.compiles)

    @property
    def graph_break_count(self) -> int:
        """Graph breaks met while recording: one per break Dynamo logged (`log_graph_break`).
        Dynamo's own `graph_breaks` counter (`counters`) counts only breaks at an
        instruction it could not trace and resumes after (a call, say): not a branch on
        a tensor's value nor a break it cannot resume from, so it can be smaller."""
        return sum(1 for e in self.events if e.kind == EventKind.GRAPH_BREAK)

    def __str__(self) -> str:
        return TEXT_VIEWS["recording"](self)

    def __repr__(self) -> str:
        ids = ", ".join(c.compile_id for c in self.compiles)
        return f"<Recording {len(self.compiles)} compile(s) [{ids}], {self.step_count} steps>"

    # JSON -----------------------------------------------------------------

    def to_json(self, *, columns: bool = False, **dumps_kwargs: Any) -> str:
        """Serialise everything but `result` (a live value) to JSON (see the top of this
        module); with `columns`, each compile's steps and readings as columns."""
        return json.dumps(_recording_to_dict(self, columns), **dumps_kwargs)

    def to_dict(self, *, columns: bool = False) -> dict[str, Any]:
        """The JSON as Python data."""
        return _recording_to_dict(self, columns)

    @classmethod
    def from_json(cls, text: str) -> Recording:
        return _recording_from_dict(json.loads(text))


# NOTE (the JSON follows the records): a record becomes a dict of its fields, in
# order, tuples as lists; it is made again from that dict by keyword. Only what is
# not a plain field is written out below: a step's readings (indices into the
# compile's `vars`) and the code objects (two listings).

_READERS: dict[type, tuple[tuple[str, ...], Any]] = {}  # record class -> (names, getter)


def _reader(cls: type) -> tuple[tuple[str, ...], Any]:
    """A record class's field names and one getter of all their values (C speed)."""
    found = _READERS.get(cls)
    if found is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        found = _READERS[cls] = (names, operator.attrgetter(*names))
    return found


def _plain(obj: Any) -> Any:
    """A frozen record as a dict, tuples as lists."""
    names, get = _reader(type(obj))
    values = get(obj)
    if len(names) == 1:
        values = (values,)
    out = dict(zip(names, values))
    for name, value in out.items():
        if isinstance(value, tuple):
            out[name] = [list(v) if isinstance(v, tuple) else
                         (_plain(v) if dataclasses.is_dataclass(v) else v) for v in value]
    return out


def _record(cls: type, d: dict[str, Any]) -> Any:
    """A frozen record from its dict: list-valued fields declared as tuples become tuples
    (of `Instr`s where they hold instructions)."""
    def value(v: Any) -> Any:
        if not isinstance(v, list):
            return v
        return tuple(Instr(**x) if isinstance(x, dict) else tuple(x) if isinstance(x, list) else x
                     for x in v)

    return cls(**{k: value(v) for k, v in d.items()})


_COMPILE_LISTS = {"nodes": Node, "guard_details": Guard, "resume_functions": ResumeFunction,
                  "failed_guards": FailedGuard}


def _step_columns(rows: list[tuple]) -> dict[str, Any]:
    """A compile's steps as columns (see the top of this module)."""
    strings: list[str] = []
    string_at: dict[str, int] = {}
    locals_table: list[dict] = []
    locals_at: dict[tuple, int] = {}
    inline_table: list[list] = []
    inline_at: dict[tuple, int] = {}
    names = ("offset", "opname", "argrepr", "lineno", "depth", "code", "code_name",
             "graph_size", "stack", "locals", "inline_stack")
    cols: dict[str, list] = {name: [] for name in names}
    (offsets, opnames, argreprs, linenos, depths, codes, code_names, sizes, stacks,
     locals_col, inline_col) = (cols[name] for name in names)
    added_col: list = []
    renamed_col: list = []
    guards_col: list = []
    indices: list[int] = []
    unplaced = False   # a step whose index is not its place (steps made by hand)

    def string(text: str) -> int:
        k = string_at.get(text)
        if k is None:
            k = string_at[text] = len(strings)
            strings.append(text)
        return k

    for i, (index, offset, opname, argrepr, lineno, depth, code, code_name, stack, locals_,
            graph_size, added, renamed, guards, inline_stack) in enumerate(rows):
        if index != i:
            unplaced = True
        indices.append(index)
        offsets.append(offset)
        opnames.append(string(opname))
        argreprs.append(string(argrepr))
        linenos.append(lineno)
        depths.append(depth)
        codes.append(code)
        code_names.append(string(code_name))
        sizes.append(graph_size)
        stacks.append(list(stack))
        k = locals_at.get(locals_)
        if k is None:
            k = locals_at[locals_] = len(locals_table)
            locals_table.append(dict(locals_))
        locals_col.append(k)
        k = inline_at.get(inline_stack)
        if k is None:
            k = inline_at[inline_stack] = len(inline_table)
            inline_table.append([list(x) for x in inline_stack])
        inline_col.append(k)
        if added:
            added_col.append([i, list(added)])
        if renamed:
            renamed_col.append([i, [list(p) for p in renamed]])
        if guards:
            guards_col.append([i, list(guards)])
    out = {"length": len(rows), "strings": strings, **cols, "locals_table": locals_table,
           "inline_stacks": inline_table, "nodes_added": added_col,
           "nodes_renamed": renamed_col, "guards_added": guards_col}
    if unplaced:
        out["index"] = indices
    return out


def steps_from_columns(d: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Steps written as columns (`_step_columns`) read back: each step as its dict, as
    the schema's rows are."""
    strings, table, inline = d["strings"], d["locals_table"], d["inline_stacks"]
    sparse = {name: dict((i, v) for i, v in d[name])
              for name in ("nodes_added", "nodes_renamed", "guards_added")}
    added, renamed, guards = sparse["nodes_added"], sparse["nodes_renamed"], sparse["guards_added"]
    indices = d.get("index")
    for i in range(d["length"]):
        yield {"index": indices[i] if indices is not None else i, "offset": d["offset"][i], "opname": strings[d["opname"][i]],
               "argrepr": strings[d["argrepr"][i]], "lineno": d["lineno"][i],
               "depth": d["depth"][i], "code": d["code"][i],
               "code_name": strings[d["code_name"][i]], "graph_size": d["graph_size"][i],
               "nodes_added": added.get(i, []), "nodes_renamed": renamed.get(i, []),
               "guards_added": guards.get(i, []), "inline_stack": inline[d["inline_stack"][i]],
               "stack": d["stack"][i], "locals": table[d["locals"][i]]}


_VAR_FIELDS = tuple(f.name for f in dataclasses.fields(Var))
_VAR_STRINGS = ("kind", "python_type", "source", "detail", "node")   # the rest are bools


def _var_columns(vars_: list[Var]) -> dict[str, Any]:
    """A compile's readings as columns: each text field an index into `strings` (or
    null), the flags as they are (see the top of this module)."""
    strings: list[str] = []
    string_at: dict[str, int] = {}
    cols: dict[str, list] = {name: [] for name in _VAR_FIELDS}
    get = operator.attrgetter(*_VAR_FIELDS)
    interned = [cols[name] for name in _VAR_STRINGS]
    flags = [cols[name] for name in _VAR_FIELDS if name not in _VAR_STRINGS]
    at = [_VAR_FIELDS.index(name) for name in _VAR_STRINGS]
    flag_at = [k for k, name in enumerate(_VAR_FIELDS) if name not in _VAR_STRINGS]
    for v in vars_:
        values = get(v)
        for col, k in zip(interned, at):
            text = values[k]
            if text is None:
                col.append(None)
                continue
            j = string_at.get(text)
            if j is None:
                j = string_at[text] = len(strings)
                strings.append(text)
            col.append(j)
        for col, k in zip(flags, flag_at):
            col.append(values[k])
    return {"length": len(vars_), "strings": strings, **cols}


def vars_from_columns(d: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Readings written as columns (`_var_columns`) read back: each as its dict."""
    strings = d["strings"]
    for i in range(d["length"]):
        row = {}
        for name in _VAR_FIELDS:
            value = d[name][i]
            row[name] = strings[value] if name in _VAR_STRINGS and value is not None else value
        yield row


def _compile_to_dict(c: Compile, columns: bool = False) -> dict[str, Any]:
    if columns:
        return _compile_fields(c, _var_columns(c.vars), _step_columns(c.steps.rows()))
    vars_out = [_plain(v) for v in c.vars]  # every step's readings are in it (see Steps)
    steps = []
    stacks: dict[tuple, list] = {}
    for (index, offset, opname, argrepr, lineno, depth, code, code_name, stack, locals_,
         graph_size, added, renamed, guards, inline_stack) in c.steps.rows():
        crumbs = stacks.get(inline_stack)
        if crumbs is None:  # steps of one inlined call share their callers: converted once
            crumbs = stacks[inline_stack] = [list(x) for x in inline_stack]
        steps.append({"index": index, "offset": offset, "opname": opname, "argrepr": argrepr,
                      "lineno": lineno, "depth": depth, "code": code, "code_name": code_name,
                      "graph_size": graph_size, "nodes_added": list(added),
                      "nodes_renamed": [list(p) for p in renamed], "guards_added": list(guards),
                      "inline_stack": crumbs, "stack": list(stack), "locals": dict(locals_)})
    return _compile_fields(c, vars_out, steps)


def _compile_fields(c: Compile, vars_out: Any, steps: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Compile):
        value = getattr(c, f.name)
        if f.name == "codes":
            value = [ci.to_dict() for ci in value]
        elif f.name == "vars":
            value = vars_out
        elif f.name == "steps":
            value = steps
        elif f.name in _COMPILE_LISTS or f.name == "modified_instructions":
            value = [_plain(x) for x in value]
        elif f.name == "graph_break":
            value = _plain(value) if value is not None else None
        elif f.name == "stages":
            value = [stage.to_dict() for stage in value]
        elif isinstance(value, list):
            value = list(value)
        out[f.name] = value
    return out


def _compile_from_dict(d: dict[str, Any]) -> Compile:
    d = dict(d)
    read = d["vars"]
    vars_ = [Var(**v) for v in (vars_from_columns(read) if isinstance(read, dict) else read)]
    steps = Steps(vars_)
    add = steps.add
    # steps of one frame share unchanged locals: (as read, as stored)
    last_locals: dict[tuple, tuple[dict, tuple]] = {}
    rows = d["steps"]
    for s in (steps_from_columns(rows) if isinstance(rows, dict) else rows):
        inline_stack = tuple((a, b) for a, b in s["inline_stack"])
        where = (s["code"], inline_stack)
        read = s["locals"]
        last = last_locals.get(where)
        if last is not None and last[0] == read:
            locals_ = last[1]
        else:
            locals_ = tuple(read.items())
            last_locals[where] = (read, locals_)
        add((s["index"], s["offset"], s["opname"], s["argrepr"], s["lineno"], s["depth"],
             s["code"], s.get("code_name", ""), tuple(s["stack"]), locals_, s.get("graph_size", 0),
             tuple(s["nodes_added"]), tuple(tuple(p) for p in s["nodes_renamed"]),
             tuple(s["guards_added"]), inline_stack))
    d["vars"], d["steps"] = vars_, steps
    d["codes"] = [CodeInfo.from_dict(ci) for ci in d["codes"]]
    for name, cls in _COMPILE_LISTS.items():
        d[name] = [_record(cls, x) for x in d.get(name, ())]
    d["failed_guards"] = tuple(d["failed_guards"])
    d["modified_instructions"] = [Instr(**i) for i in d["modified_instructions"]]
    d["graph_break"] = _record(GraphBreak, d["graph_break"]) if d["graph_break"] else None
    d["stages"] = tuple(Stage.from_dict(stage) for stage in d.get("stages", ()))
    return Compile(**d)


_RECORDING_FIELDS = [f.name for f in dataclasses.fields(Recording) if f.name != "result"]


def _recording_to_dict(r: Recording, columns: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA_VERSION}
    for name in _RECORDING_FIELDS:
        value = getattr(r, name)
        if name == "compiles":
            value = [_compile_to_dict(c, columns) for c in value]
        elif name == "events":
            value = [_plain(e) for e in value]
        elif isinstance(value, dict):
            value = dict(value)
        out[name] = value
    return out


class SchemaMismatch(ValueError):
    """A recording written with another schema than this version of capture reads."""

    def __init__(self, found: Any) -> None:
        self.found, self.expected = found, SCHEMA_VERSION
        super().__init__(f"this recording uses schema {found!r}; this version of capture reads "
                         f"schema {SCHEMA_VERSION}: record it again with the current version")


def check_schema(d: Any) -> None:
    """Refuse a recording's JSON data (a dict) of another schema: `SchemaMismatch`, which
    says the schema found and the one read (the one check; doors phrase it their way)."""
    found = d.get("schema") if isinstance(d, dict) else None
    if found != SCHEMA_VERSION:
        raise SchemaMismatch(found)


def _recording_from_dict(d: dict[str, Any]) -> Recording:
    check_schema(d)
    d = {k: v for k, v in d.items() if k != "schema"}
    d["compiles"] = [_compile_from_dict(c) for c in d["compiles"]]
    d["events"] = [Event(**{**e, "failed_guards": tuple(
        FailedGuard(**g) for g in e.get("failed_guards", ()))}) for e in d["events"]]
    return Recording(**d)


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
        return _plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stage:
        d = dict(d)
        d["units"] = tuple(_record(StageUnit, u) for u in d.get("units", ()))
        return _record(cls, d)
