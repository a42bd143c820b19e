"""The records a recording is made of: plain frozen data, no live torch objects.

One step of a compile, as it appears in ``Recording.to_json()`` (vars are
interned per compile: ``stack`` and ``locals`` hold indices into ``vars``)::

    {"index": 5, "offset": 30, "opname": "CALL", "argrepr": "1", "lineno": 2,
     "depth": 0, "code": 0, "stack": [3], "locals": {"x": 1, "y": null},
     "graph_size": 2, "nodes_added": ["sin"], "guards_added": [7],
     "inline_stack": []}

and one of the compile's ``vars``::

    {"kind": "TensorVariable", "python_type": "Tensor", "source": null,
     "detail": "f32[4] node=sin", "lazy": false, "realized": true,
     "node": "sin"}

Every record carries what a learner reads; the viewer, the text view, the
lesson checks and the tests all consume these records and nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


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
    """One instruction of a disassembled code object."""

    offset: int
    opname: str
    argrepr: str = ""
    lineno: int | None = None
    is_jump_target: bool = False

    def __str__(self) -> str:
        mark = ">>" if self.is_jump_target else "  "
        return f"{mark} {self.offset:4d} {self.opname:<20} {self.argrepr}".rstrip()


class CodeInfo:
    """A code object the compile walked: the frame itself or an inlined callee.

    Made from a live code object, its disassembly is read when first asked for:
    a code object never changes, so reading it later reads the same, and most
    callees a compile walks are never shown.
    """

    __slots__ = ("name", "filename", "firstlineno", "source_lines", "_instructions", "_code")

    def __init__(self, name: str, filename: str, firstlineno: int,
                 source_lines: tuple[str, ...] = (), instructions: tuple[Instr, ...] = (),
                 *, code: Any = None) -> None:
        self.name = name
        self.filename = filename
        self.firstlineno = firstlineno
        self.source_lines = tuple(source_lines)
        self._instructions = None if code is not None else tuple(instructions)
        self._code = code

    @property
    def instructions(self) -> tuple[Instr, ...]:
        if self._instructions is None:
            from .bytecode import instructions

            self._instructions = instructions(self._code)
            self._code = None
        return self._instructions

    @property
    def bytecode(self) -> str:
        """The disassembly as text, one instruction a line, with line numbers."""
        return disassembly_text(self.instructions)

    def _key(self) -> tuple:
        return (self.name, self.filename, self.firstlineno, self.source_lines, self.instructions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CodeInfo):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.filename, self.firstlineno))

    def __repr__(self) -> str:
        return (f"CodeInfo(name={self.name!r}, filename={self.filename!r}, "
                f"firstlineno={self.firstlineno})")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "filename": self.filename, "firstlineno": self.firstlineno,
                "source_lines": list(self.source_lines),
                "instructions": [_plain(i) for i in self.instructions]}


def disassembly_text(instructions: tuple[Instr, ...] | list[Instr]) -> str:
    lines = []
    last = None
    for ins in instructions:
        line = "" if ins.lineno is None or ins.lineno == last else str(ins.lineno)
        if ins.lineno is not None:
            last = ins.lineno
        lines.append(f"{line:>5} {ins}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Node:
    """An FX node the compile created, with the step that created it."""

    name: str
    op: str
    target: str
    args: str = ""
    inputs: tuple[str, ...] = ()
    shape: str | None = None
    dtype: str | None = None
    step: int | None = None
    in_graph: bool = True

    def __str__(self) -> str:
        meta = f" {self.dtype}{self.shape}" if self.dtype else ""
        return f"{self.name} = {self.op}[{self.target}]({self.args}){meta}"


@dataclass(frozen=True, slots=True)
class Guard:
    """One guard Dynamo installed, with where it came from."""

    text: str
    kind: str
    source: str | None = None
    ambient: bool = False
    step: int | None = None
    lineno: int | None = None
    line: str | None = None
    code_name: str | None = None

    def __str__(self) -> str:
        if self.ambient:
            where = "ambient"
        elif self.lineno:
            where = f"line {self.lineno}" + (f": {self.line}" if self.line else "")
        else:
            where = "after tracing"
        return f"{self.text}    # {where}"


@dataclass(frozen=True, slots=True)
class ResumeFunction:
    """A continuation Dynamo generated at a graph break."""

    global_name: str
    code_name: str
    bytecode: str
    argnames: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphBreak:
    """Why and where tracing stopped."""

    reason: str
    lineno: int | None = None
    line: str | None = None
    code_name: str | None = None
    step: int | None = None
    explanation: str | None = None


class Step:
    """One instruction the tracer executed, and the state it left behind.

    The stack and the symbolic locals are kept as indices into the compile's
    table of readings (`Compile.vars`, shared by every step, as in the JSON):
    `stack` and `locals` give them back as `Var`s. Steps whose locals did not
    change share one `locals_ids` dict.
    """

    __slots__ = ("index", "offset", "opname", "argrepr", "lineno", "depth", "code",
                 "stack_ids", "locals_ids", "graph_size", "nodes_added", "guards_added",
                 "inline_stack", "code_name", "vars")

    def __init__(self, index: int, offset: int, opname: str, argrepr: str, lineno: int | None,
                 depth: int, code: int, stack_ids: tuple[int, ...], locals_ids: dict[str, int],
                 graph_size: int, nodes_added: list[str] | tuple[()] = (),
                 guards_added: list[int] | tuple[()] = (),
                 inline_stack: tuple[tuple[str, int | None], ...] = (), code_name: str = "",
                 vars: list[Var] | None = None) -> None:
        self.index = index
        self.offset = offset
        self.opname = opname
        self.argrepr = argrepr
        self.lineno = lineno
        self.depth = depth
        self.code = code
        self.stack_ids = stack_ids
        self.locals_ids = locals_ids
        self.graph_size = graph_size
        self.nodes_added = nodes_added
        self.guards_added = guards_added
        self.inline_stack = inline_stack
        self.code_name = code_name
        self.vars = vars if vars is not None else []

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
                list(self.guards_added), tuple(self.inline_stack), self.code_name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Step):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

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
        if self.guards_added:
            text += f"  +{len(self.guards_added)} guard(s)"
        return text


@dataclass(slots=True)
class Compile:
    """One attempt at one frame, in the order Dynamo made them."""

    compile_id: str
    code_name: str
    filename: str
    firstlineno: int
    source_lines: list[str] = field(default_factory=list)
    codes: list[CodeInfo] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    # every reading of a tracker the steps refer to, by index (see Step)
    vars: list[Var] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    graph_code: str | None = None
    guards: list[str] = field(default_factory=list)
    guard_details: list[Guard] = field(default_factory=list)
    guard_tree: str | None = None
    modified_bytecode: str | None = None
    resume_functions: list[ResumeFunction] = field(default_factory=list)
    graph_break: GraphBreak | None = None
    restart_reason: str | None = None
    recompile_reasons: list[str] = field(default_factory=list)
    outcome: str = "unfinished"
    error: str | None = None
    truncated: bool = False
    # torch._dynamo.reset() inside a recording restarts Dynamo's ids at 0/0: the
    # number of resets seen before this compile tells equal ids apart
    generation: int = 0

    @property
    def frame_id(self) -> int:
        return int(self.compile_id.split("/")[0].lstrip("!"))

    @property
    def attempt(self) -> int:
        _, _, tail = self.compile_id.partition("/")
        return int(tail.split("_")[1]) if "_" in tail else 0

    @property
    def original_bytecode(self) -> str:
        return self.codes[0].bytecode if self.codes else ""

    @property
    def restarted(self) -> bool:
        return self.outcome == "restarted"

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
        if self.outcome not in ("compiled", "graph break") or (gb is None and self.outcome != "compiled"):
            notes.append(self.outcome)
        if self.truncated:
            notes.append("truncated")
        if self.generation:
            text += f" (after reset {self.generation})"
        return text + (" — " + ", ".join(notes) if notes else "")

    def __str__(self) -> str:
        from .text import compile_text

        return compile_text(self)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened while recording: compile, restart, recompile, break, limit."""

    kind: str
    compile_id: str | None
    message: str = ""

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
    max_steps: int | None = None
    truncated: bool = False
    ended_by: str | None = None
    result: Any = None

    def compile(self, compile_id: str, generation: int = 0) -> Compile:
        """The compile with this id (`0/0`, `0/0_1`, `1/0`); after a `torch._dynamo.reset()`
        inside the recording ids start again, and `generation=1` picks the later one."""
        for c in self.compiles:
            if c.compile_id == compile_id and c.generation == generation:
                return c
        known = ", ".join(c.compile_id for c in self.compiles) or "none"
        raise KeyError(f"no compile {compile_id!r} in this recording (it has: {known})")

    @property
    def steps(self) -> int:
        return sum(len(c.steps) for c in self.compiles)

    @property
    def graph_break_count(self) -> int:
        """Graph breaks met while recording (Dynamo's own counter misses some kinds)."""
        return sum(1 for e in self.events if e.kind == "graph_break")

    def __str__(self) -> str:
        from .text import recording_text

        return recording_text(self)

    def __repr__(self) -> str:
        ids = ", ".join(c.compile_id for c in self.compiles)
        return f"<Recording {len(self.compiles)} compile(s) [{ids}], {self.steps} steps>"

    # JSON -----------------------------------------------------------------

    def to_json(self, **dumps_kwargs: Any) -> str:
        """Serialise everything but `result` (a live value) to JSON."""
        return json.dumps(_recording_to_dict(self), **dumps_kwargs)

    @classmethod
    def from_json(cls, text: str) -> Recording:
        return _recording_from_dict(json.loads(text))


def _plain(obj: Any) -> Any:
    """A frozen record as a dict, tuples as lists."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else (_plain(v) if dataclasses.is_dataclass(v) else v)
                     for v in value]
        out[f.name] = value
    return out


def _compile_to_dict(c: Compile) -> dict[str, Any]:
    vars_out = [_plain(v) for v in c.vars]
    # Steps made by hand may carry tables of their own: theirs are added after.
    offsets: dict[int, dict[int, int]] = {}

    def remap(s: Step) -> tuple[list[int], dict[str, int]]:
        if s.vars is c.vars:
            return list(s.stack_ids), dict(s.locals_ids)
        moved = offsets.get(id(s.vars))
        if moved is None:
            moved = offsets[id(s.vars)] = {}
        for i in (*s.stack_ids, *s.locals_ids.values()):
            if i not in moved:
                moved[i] = len(vars_out)
                vars_out.append(_plain(s.vars[i]))
        return [moved[i] for i in s.stack_ids], {k: moved[i] for k, i in s.locals_ids.items()}

    steps = []
    for s in c.steps:
        stack, locals_ = remap(s)
        steps.append({
            "index": s.index, "offset": s.offset, "opname": s.opname,
            "argrepr": s.argrepr, "lineno": s.lineno, "depth": s.depth,
            "code": s.code, "code_name": s.code_name,
            "stack": stack, "locals": locals_,
            "graph_size": s.graph_size, "nodes_added": list(s.nodes_added),
            "guards_added": list(s.guards_added),
            "inline_stack": [list(x) for x in s.inline_stack],
        })
    return {
        "compile_id": c.compile_id, "code_name": c.code_name,
        "filename": c.filename, "firstlineno": c.firstlineno,
        "source_lines": list(c.source_lines),
        "codes": [ci.to_dict() for ci in c.codes],
        "vars": vars_out,
        "steps": steps,
        "nodes": [_plain(n) for n in c.nodes],
        "graph_code": c.graph_code,
        "guards": list(c.guards),
        "guard_details": [_plain(g) for g in c.guard_details],
        "guard_tree": c.guard_tree,
        "modified_bytecode": c.modified_bytecode,
        "resume_functions": [_plain(r) for r in c.resume_functions],
        "graph_break": _plain(c.graph_break) if c.graph_break else None,
        "restart_reason": c.restart_reason,
        "recompile_reasons": list(c.recompile_reasons),
        "outcome": c.outcome, "error": c.error, "truncated": c.truncated,
        "generation": c.generation,
    }


def _compile_from_dict(d: dict[str, Any]) -> Compile:
    vars_ = [Var(**v) for v in d["vars"]]
    codes = [CodeInfo(name=ci["name"], filename=ci["filename"], firstlineno=ci["firstlineno"],
                      source_lines=tuple(ci["source_lines"]),
                      instructions=tuple(Instr(**i) for i in ci["instructions"]))
             for ci in d["codes"]]
    steps = []
    last_locals: dict[tuple, dict[str, int]] = {}  # steps of one frame share unchanged locals
    for s in d["steps"]:
        inline_stack = tuple((a, b) for a, b in s["inline_stack"])
        where = (s["code"], inline_stack)
        locals_ = s["locals"]
        if last_locals.get(where) == locals_:
            locals_ = last_locals[where]
        else:
            last_locals[where] = locals_
        steps.append(Step(s["index"], s["offset"], s["opname"], s["argrepr"], s["lineno"],
                          s["depth"], s["code"], tuple(s["stack"]), locals_, s["graph_size"],
                          list(s["nodes_added"]) or (), list(s["guards_added"]) or (),
                          inline_stack, s["code_name"], vars_))
    return Compile(
        compile_id=d["compile_id"], code_name=d["code_name"], filename=d["filename"],
        firstlineno=d["firstlineno"], source_lines=list(d["source_lines"]), codes=codes,
        steps=steps, vars=vars_,
        nodes=[Node(**{**n, "inputs": tuple(n["inputs"])}) for n in d["nodes"]],
        graph_code=d["graph_code"], guards=list(d["guards"]),
        guard_details=[Guard(**g) for g in d["guard_details"]],
        guard_tree=d["guard_tree"], modified_bytecode=d["modified_bytecode"],
        resume_functions=[ResumeFunction(**{**r, "argnames": tuple(r["argnames"])})
                          for r in d["resume_functions"]],
        graph_break=GraphBreak(**d["graph_break"]) if d["graph_break"] else None,
        restart_reason=d["restart_reason"], recompile_reasons=list(d["recompile_reasons"]),
        outcome=d["outcome"], error=d["error"], truncated=d["truncated"],
        generation=d.get("generation", 0),
    )


def _recording_to_dict(r: Recording) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "torch_version": r.torch_version, "python_version": r.python_version,
        "max_steps": r.max_steps, "truncated": r.truncated, "ended_by": r.ended_by,
        "counters": dict(r.counters), "counters_total": dict(r.counters_total),
        "events": [_plain(e) for e in r.events],
        "compiles": [_compile_to_dict(c) for c in r.compiles],
    }


def _recording_from_dict(d: dict[str, Any]) -> Recording:
    if d.get("schema") != SCHEMA_VERSION:
        raise ValueError(
            f"this recording uses schema {d.get('schema')!r}; this version of capture reads "
            f"schema {SCHEMA_VERSION}: record it again with the current version")
    return Recording(
        compiles=[_compile_from_dict(c) for c in d["compiles"]],
        events=[Event(**e) for e in d["events"]],
        counters=dict(d["counters"]), counters_total=dict(d["counters_total"]),
        torch_version=d["torch_version"],
        python_version=d["python_version"], max_steps=d["max_steps"],
        truncated=d["truncated"], ended_by=d["ended_by"],
    )
