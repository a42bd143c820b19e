"""How each frame Dynamo met came out: compiled whole, in graphs split by breaks, skipped,
failed, refused at the recompile limit.

A frame is one function's code, as Dynamo's frame id names it; its resume functions (the
code after a graph break) belong to it. Restarted and abandoned attempts are not
compiles: Dynamo threw them away and compiled again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .recording import Compile, EventKind, Outcome, Recording

_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")
NOTHING_TRACED = "No ops traced"
RAISED = "FailOnRecompileLimitHit"   # in a cache-limit event's message: the call raised


def kept(c: Compile) -> bool:
    """Whether a compile attempt is one Dynamo kept (not thrown away to try again)."""
    return c.outcome not in (Outcome.RESTARTED, Outcome.ABANDONED)


def resumed_from(code_name: str) -> str | None:
    """`f` for `torch_dynamo_resume_in_f_at_14`: the function a resume function continues."""
    m = _RESUME.match(code_name)
    return m.group(1) if m else None


@dataclass
class Frame:
    """One function's compiles: its cache entries, the graphs after breaks, its outcome."""

    function: str
    file: str
    lineno: int
    compiles: list[Compile] = field(default_factory=list)   # kept, the function's own code
    resumes: list[Compile] = field(default_factory=list)    # kept, its resume functions
    refused: list[str] = field(default_factory=list)        # compile ids refused at the limit
    broken: set[str] = field(default_factory=set)           # its compiles that stop at a break
    limit_message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"function": self.function, "file": self.file, "lineno": self.lineno,
                "outcome": self.outcome, "compiles": [c.compile_id for c in self.compiles],
                "resumes": [c.compile_id for c in self.resumes],
                "recompiles": self.recompiles,
                "graphs": self.graphs, "graph_breaks": self.breaks,
                "errors": [c.error for c in self.compiles if c.outcome == Outcome.ERROR],
                "skipped_because": self.skipped_because,
                "refused": list(self.refused), "statement": self.statement()}

    @property
    def outcome(self) -> str:
        """failed, skipped, graph_break (compiled in graphs), compiled (whole)."""
        kinds = {c.outcome for c in self.compiles}
        if Outcome.ERROR in kinds:
            return "failed"
        if kinds and kinds <= {Outcome.SKIPPED}:
            return "skipped"
        if self.broken:
            return "graph_break"
        if Outcome.INTERRUPTED in kinds or Outcome.UNFINISHED in kinds:
            return "unfinished"
        return "compiled"

    @property
    def breaks(self) -> int:
        return len(self.broken)

    @property
    def graphs(self) -> int:
        """Graphs one call runs through: the frame's own up to its break, and each resume
        function that compiled a graph."""
        own = [c for c in self.compiles if c.outcome in (Outcome.COMPILED, Outcome.GRAPH_BREAK)]
        if not own:
            return 0
        return 1 + len({c.code_name for c in self.resumes
                        if c.outcome in (Outcome.COMPILED, Outcome.GRAPH_BREAK)})

    @property
    def recompiles(self) -> int:
        """Recompiles of the function and of its resume functions (each its own code)."""
        per_resume: dict[str, int] = {}
        for c in self.resumes:
            per_resume[c.code_name] = per_resume.get(c.code_name, 0) + 1
        return max(0, len(self.compiles) - 1) + sum(n - 1 for n in per_resume.values())

    @property
    def skipped_because(self) -> str | None:
        c = next((c for c in self.compiles if c.outcome == Outcome.SKIPPED), None)
        if c is None:
            return None
        if c.graph_break is not None:
            return c.graph_break.reason
        return (c.error or "").splitlines()[0] if c.error else None

    def _mix(self) -> str:
        """How a frame's several cache entries came out: `each whole`, `each ending at a
        graph break`, or the count of each where they differ."""
        words = {Outcome.COMPILED: "whole", Outcome.GRAPH_BREAK: "ending at a graph break",
                 Outcome.SKIPPED: "skipped", Outcome.ERROR: "failed"}
        counts: dict[str, int] = {}
        for c in self.compiles:
            outcome = Outcome.GRAPH_BREAK if c.compile_id in self.broken else c.outcome
            word = words.get(outcome, outcome.replace("_", " "))
            counts[word] = counts.get(word, 0) + 1
        if len(counts) == 1:
            return f"each {next(iter(counts))}"
        return ", ".join(f"{k} {w}" for w, k in counts.items())

    def after_break(self) -> str:
        """What the compiles of the code after its break came to (each a function of its
        own, `torch_dynamo_resume_in_f_at_14`, counted with this frame), or "" for none."""
        if not self.resumes:
            return ""
        ids = [c.compile_id for c in self.resumes]
        named = ", ".join(f"[{i}]" for i in ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
        n = len(ids)
        head = f"; Dynamo traced the code after the break as a function of its own: {named}"
        nothing = [c for c in self.resumes if c.outcome == Outcome.SKIPPED
                   and NOTHING_TRACED in (c.error or "")]
        skipped = [c for c in self.resumes if c.outcome == Outcome.SKIPPED and c not in nothing]
        if nothing and len(nothing) == n:
            return head + (", which had" if n == 1 else ", which have") + \
                " no tensor operations and runs as plain Python"
        if skipped and len(skipped) == n:
            return head + (", which was" if n == 1 else ", which were") + " skipped and runs eagerly"
        return head

    def statement(self) -> str:
        n = len(self.compiles)
        counted = f"{n} compile{'s' if n != 1 else ''}" + (
            f" ({n - 1} recompile{'s' if n != 2 else ''})" if n > 1 else "")
        outcome = self.outcome
        if outcome == "failed":
            errors = [c.error for c in self.compiles if c.outcome == Outcome.ERROR]
            text = f"{counted}, {self._mix()}; " if n > 1 else ""
            text += f"the compile failed: {errors[0]}" if errors else "the compile failed"
            text += (" (the call raised it; with torch._dynamo.config.suppress_errors it runs "
                     "eagerly instead)")
        elif outcome == "skipped":
            why = self.skipped_because
            if why and NOTHING_TRACED in why:
                text = "nothing to compile (no tensor operations): it runs as plain Python"
            else:
                text = ("skipped: Dynamo gave up on it, so nothing of it is compiled and it "
                        "runs eagerly on every call" + (f" (because: {why})" if why else ""))
        elif n > 1:
            text = f"{counted}, " + self._mix()
        elif outcome == "graph_break" and self.graphs > 1:
            text = f"compiled in {self.graphs} graphs, split by a graph break"
        elif outcome == "graph_break":
            text = ("compiled up to a graph break, in 1 graph; no graph was compiled for the "
                    "code after it")
        elif outcome == "unfinished":
            text = "the compile did not finish while recording"
        else:
            text = "compiled whole, one graph"
        text += self.after_break()
        if self.refused and "fail_on_recompile" in self.limit_message:
            text += ("; then the fail_on_recompile stance refused a recompile: that call "
                     "raised instead of compiling")
        elif self.refused and RAISED in self.limit_message:
            text += (f"; then the recompile limit refused [{self.refused[0]}] and, under "
                     "fullgraph=True, that call raised FailOnRecompileLimitHit")
        elif self.refused:
            text += (f"; then the recompile limit refused [{self.refused[0]}]: from that call on, "
                     "calls that fail every cache entry's guards run eagerly, uncompiled")
        return text


def _base(compile_id: str) -> str:
    """`0/0` for `0/0_1`: the compile id without its attempt."""
    return compile_id.split("_")[0]


def frames(recording: Recording) -> list[Frame]:
    """Every frame of the recording, in the order Dynamo first met it."""
    by_key: dict[tuple, Frame] = {}
    order: list[Frame] = []
    names: dict[tuple, Frame] = {}   # (generation, function name, file): for resume functions
    # a break met by an attempt Dynamo then restarted: the kept attempt stops there too,
    # though it may record no break of its own (a break in the return expression)
    broke = {(c.generation, _base(c.compile_id)) for c in recording.compiles
             if c.restarted and c.graph_break is not None}
    for c in recording.compiles:
        if not kept(c):
            continue
        if (c.generation, _base(c.compile_id)) in broke:
            c_broke = True
        else:
            c_broke = c.outcome == Outcome.GRAPH_BREAK
        parent = resumed_from(c.code_name)
        if parent is not None:
            owner = names.get((c.generation, parent, c.filename))
            if owner is not None:
                owner.resumes.append(c)
                continue
        key = (c.generation, c.frame_id)
        frame = by_key.get(key)
        if frame is None:
            frame = by_key[key] = Frame(c.code_name, c.filename, c.firstlineno)
            order.append(frame)
            names.setdefault((c.generation, c.code_name, c.filename), frame)
        frame.compiles.append(c)
        if c_broke:
            frame.broken.add(c.compile_id)
    for e in recording.events:
        if e.kind in (EventKind.CACHE_LIMIT, EventKind.FAIL_ON_RECOMPILE) and e.compile_id:
            frame_id = e.compile_id.split("/")[0]
            for frame in order:
                if frame.compiles and str(frame.compiles[0].frame_id) == frame_id.lstrip("!"):
                    frame.refused.append(e.compile_id)
                    frame.limit_message = e.message
    return order


def summary(found: list[Frame]) -> dict[str, int]:
    """Counts, truthfully: compiles Dynamo kept, frames by outcome, recompiles, refusals."""
    own = [f for f in found]
    return {
        "compiles": sum(len(f.compiles) + len(f.resumes) for f in own),
        # of those, compiles of the code after a graph break (a resume function), each
        # said with the frame it continues rather than listed as a function of its own
        "resumes": sum(len(f.resumes) for f in own),
        "frames": len(own),
        "compiled_whole": sum(f.outcome == "compiled" for f in own),
        "with_graph_breaks": sum(f.outcome == "graph_break" for f in own),
        "skipped": sum(f.outcome == "skipped" for f in own),
        "failed": sum(f.outcome == "failed" for f in own),
        "recompiles": sum(f.recompiles for f in own),
        "refused": sum(len(f.refused) for f in own),
    }


__all__ = ["Frame", "frames", "kept", "resumed_from", "summary"]
