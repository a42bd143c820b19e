"""A recording: the compiles Dynamo made while recording, in order, and what happened.

`Compile` and `Recording` are filled in while Dynamo runs and not changed once the
recording has finished. What they are made of is split by concept:

- `capture/records.py`: the frozen records (readings, instructions, code objects, nodes,
  guards, graph breaks, events, stages);
- `capture/steps.py`: a step, declared once (`STEP_FIELDS`), and a compile's steps stored
  column by column (`Steps`);
- `capture/codec.py`: the JSON (`Recording.to_json`, `from_json`), rows or columns.

Every name other code imports from here still is importable from here.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from .codec import (  # noqa: F401  (importable from here)
    SCHEMA_VERSION, SchemaMismatch, check_schema, compile_fields, compile_to_dict,
    recording_fields, recording_to_dict, var_columns, vars_from_columns,
)
from .records import (  # noqa: F401  (importable from here)
    TEXT_VIEWS, CodeInfo, DdpBucket, DdpSplit, Event, EventKind, FailedGuard, GraphBreak, Guard, Instr, Node,
    Outcome, ResumeFunction, Stage, StageUnit, Var, disassembly_text,
)
from .steps import STEP_FIELDS, Step, StepField, Steps, step_columns, steps_from_columns  # noqa: F401
from .shapes import Shapes  # noqa: F401  (importable from here)


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
    # a failed compile: Dynamo's whole message (its details and user stack), bounded
    error_message: str | None = None
    truncated: bool = False
    # torch._dynamo.reset() inside a recording restarts Dynamo's ids at 0/0: the
    # number of resets seen before this compile tells equal ids apart
    generation: int = 0
    # AOTAutograd's and Inductor's stages, in pipeline order (record(after_dynamo=True))
    stages: tuple[Stage, ...] = ()
    # the symbols, symbolic guards and specializations (capture/shapes.py); None where
    # Dynamo made no shape environment
    shapes: Shapes | None = None
    # record(only=...) did not name this frame's function: a summary, no steps
    summary_only: bool = False
    # DDP under torch.compile: how DDPOptimizer split the graph into buckets
    # (capture/records.py `DdpSplit`); None where it did not split this graph
    ddp_split: DdpSplit | None = None
    # a page of several ranks' recordings (capture.ranks.merged): the rank that made it
    rank: int | None = None

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

    def resume_chain(self) -> list[dict[str, Any]]:
        """A nested graph break's chain of frames (torch._dynamo.config.nested_graph_breaks):
        where a break inside an inlined call made Dynamo write one resume function for each
        frame of the chain in this one compile, instead of compiling each caller as a frame
        of its own. Innermost first: each frame's function, the line it resumes after, the
        offset its resume function starts at, its name and the values it is handed beyond
        the chain's own two lists. Empty where the compile has at most one resume function."""
        out = []
        for rf in self.resume_functions:
            head, sep, line = rf.code_name.rpartition("_at_")
            if not sep or not head.startswith("torch_dynamo_resume_in_") or not line.isdigit():
                continue
            out.append({"function": head[len("torch_dynamo_resume_in_"):], "line": int(line),
                        "resumes_at": rf.offset, "resume_function": rf.global_name,
                        "resume_code": rf.code_name,
                        "carries": [a for a in rf.argnames
                                    if a not in ("__nested_resume_fns", "__nested_frame_values")]})
        return out if len(out) > 1 else []

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
        if self.summary_only:
            notes.append("summary only")
        if self.generation:
            text += f" (after reset {self.generation})"
        return text + (" — " + ", ".join(notes) if notes else "")

    def __str__(self) -> str:
        return TEXT_VIEWS["compile"](self)


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
    # one rank of a job of several processes (torchrun's RANK and WORLD_SIZE); None alone
    rank: int | None = None
    world_size: int | None = None
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
        """Serialise everything but `result` (a live value) to JSON (see `capture/steps.py`
        and `capture/codec.py`); with `columns`, each compile's steps and readings as columns."""
        return json.dumps(recording_to_dict(self, columns), **dumps_kwargs)

    def to_dict(self, *, columns: bool = False) -> dict[str, Any]:
        """The JSON as Python data."""
        return recording_to_dict(self, columns)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Recording:
        """A recording from its JSON data (rows or columns; `SchemaMismatch` for another
        schema)."""
        d = recording_fields(d)
        d["compiles"] = [Compile(**c) for c in d["compiles"]]
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> Recording:
        return cls.from_dict(json.loads(text))

