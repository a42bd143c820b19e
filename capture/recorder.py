"""The recorder: turns what Dynamo does, step by step, into a `Recording`.

`record()` installs the hooks of `capture.hooks`, routes every callback to a
`Recorder`, and always undoes the hooks on the way out. The recorder snapshots
(never references) what it sees: each tracker becomes a `Var`, each FX node a
`Node`, each guard a `Guard`, at the step that made it.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import linecache
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from . import hooks
from .bytecode import code_info, disassemble_code
from .guards import bounded_tree, describe_guard, guard_tree_leaves, match_guard_texts
from .graph import describe_node
from .recording import Compile, Event, GraphBreak, Recording, ResumeFunction, Step
from .variables import VarReader, rename_nodes, shorten

DEFAULT_MAX_STEPS = 50_000
_NO_FULL_COLLECTIONS = 1 << 30  # a generation-2 threshold never reached while recording

_lock = threading.Lock()
_active: Recorder | None = None


@dataclass
class _Attempt:
    """Live bookkeeping for one attempt while it is being traced; dropped after."""

    compile: Compile
    output: Any
    code: Any
    seen_guards: set[Any] = field(default_factory=set)
    guard_n: int = 0
    graph_n: int = 0
    graph_tail: Any = None
    # id(fx node) -> (node, index in Compile.nodes); the node is kept so ids stay unique
    known_nodes: dict[int, tuple[Any, int]] = field(default_factory=dict)
    # nodes seen by a hook in the middle of a step, listed when the step is stored
    pending_nodes: list[str] = field(default_factory=list)
    # where an unsupported instruction was met (kept for a fullgraph error)
    unsupported_at: GraphBreak | None = None
    # id(tx) -> (weak ref to tx, code index, depth, inline stack, code name, inst_info[code])
    tx_info: dict[int, tuple] = field(default_factory=dict)
    # per code index: offset -> (offset, opname, argrepr, lineno)
    inst_info: list[dict[int, tuple]] = field(default_factory=lambda: [{}])
    # id(tx) -> (identity key, index dict, positions that can change, indices)
    last_locals: dict[int, tuple] = field(default_factory=dict)
    code_index: dict[Any, int] = field(default_factory=dict)


class Recorder:
    """Receives Dynamo's callbacks (see `capture.hooks`) and fills a `Recording`."""

    __dynamo_lab_listener__ = True

    def __init__(self, recording: Recording, max_steps: int) -> None:
        self.recording = recording
        self.max_steps = max_steps
        self.stored = 0
        self.thread = threading.get_ident()
        self.reader = VarReader()
        self._attempt: _Attempt | None = None
        self._output: Any = None
        self._live: dict[int, _Attempt] = {}  # id(output graph) -> attempt
        self._reasons: dict[Any, list[str]] = {}  # code -> failed guards of this recompile
        self._counters_before = read_counters()
        self.interrupt_pending = False  # set by record()'s SIGINT handler
        self.generation = 0  # resets of Dynamo seen while recording

    # -- callbacks -----------------------------------------------------------

    def on_step(self, tx: Any, inst: Any, exc: BaseException | None) -> None:
        if threading.get_ident() != self.thread:
            return
        try:  # _safely, inlined: this runs once per instruction
            self._step(tx, inst, exc)
        except Exception as e:  # noqa: BLE001 - reported in the recording
            self._recorder_error(e)
        if self.interrupt_pending:
            self.interrupt_pending = False
            if not isinstance(exc, KeyboardInterrupt):
                raise KeyboardInterrupt  # the press was lost in a callback: stop here

    def on_graph_break(self, tx: Any, reason: str, exc: BaseException) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._graph_break, tx, reason, exc)

    def on_backend(self, output: Any, gm: Any) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._backend, output, gm)

    def on_compile_end(self, code: Any, compile_id: Any, result: Any,
                       exc: BaseException | None, falls_back: bool = False) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._compile_end, code, compile_id, result, exc, falls_back)

    def on_recompile_reasons(self, code: Any, reasons: list[str]) -> None:
        if threading.get_ident() == self.thread:
            self._reasons[code] = [_reason_line(r) for r in reasons]

    def on_bytecode(self, code: Any, new_code: Any) -> None:
        if threading.get_ident() == self.thread:
            self._safely(self._bytecode, code, new_code)
        return None

    def on_warning(self, message: str) -> None:
        if threading.get_ident() == self.thread:
            attempt = self._attempt
            self.recording.events.append(Event(
                "warning", attempt.compile.compile_id if attempt else None,
                shorten(_first_line(message), 300)))

    def _safely(self, fn: Callable[..., None], *args: Any) -> None:
        """A recorder bug must never disturb Dynamo: it becomes an event instead."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - reported in the recording
            self._recorder_error(e)

    def _recorder_error(self, e: Exception) -> None:
        attempt = self._attempt
        self.recording.events.append(Event(
            "recorder_error", attempt.compile.compile_id if attempt else None,
            shorten(f"{type(e).__name__}: {e}", 300)))

    # -- steps -----------------------------------------------------------------

    def _step(self, tx: Any, inst: Any, exc: BaseException | None) -> None:
        output = tx.output
        if output is not self._output:
            self._begin_attempt(tx, output)
        attempt = self._attempt
        assert attempt is not None
        c = attempt.compile
        if exc is not None:
            self._note_exception(attempt, tx, exc)
        if self.stored >= self.max_steps:
            if not c.truncated:
                c.truncated = self.recording.truncated = True
                self.recording.events.append(Event(
                    "step_cap", c.compile_id,
                    f"max_steps={self.max_steps} reached: later steps are not stored "
                    "(Dynamo runs on unaffected)"))
            return
        self.stored += 1
        index = len(c.steps)
        info = attempt.tx_info.get(id(tx))
        if info is None or info[0]() is not tx:
            info = self._tx_info(attempt, tx)
        _, code, depth, inline_stack, code_name, by_offset = info
        # Each inlined call gets its own copy of its code's instructions: readings
        # are kept per code and offset, so no copy is kept alive.
        ins = by_offset.get(inst.offset)
        if ins is None:
            ins = self._inst_info(by_offset, inst)
        offset, opname, argrepr, lineno = ins
        if lineno is None:
            lineno = tx.lineno

        # Most steps add no node and no guard: one cheap look at each tells. Empty
        # additions share one empty tuple (each object kept per step is one more for
        # the garbage collector to walk).
        graph = output.tracers[-1].graph  # OutputGraph.graph without its two properties
        if graph._len != attempt.graph_n or graph._root._prev is not attempt.graph_tail:
            nodes_added = self._new_nodes(attempt, index) or ()
        else:
            nodes_added = ()
        if attempt.pending_nodes:
            nodes_added = attempt.pending_nodes + list(nodes_added)
            attempt.pending_nodes = []
        guards = output.tracing_context.guards_context.dynamo_guards.inner  # OutputGraph.guards
        if len(guards._dict) != attempt.guard_n:
            guards_added = self._new_guards(attempt, index) or ()
        else:
            guards_added = ()

        stack = self.reader.indices(tx.stack)
        c.steps.append(Step(index, offset, opname, argrepr, lineno, depth, code, stack,
                            self._locals(attempt, tx), attempt.graph_n, nodes_added,
                            guards_added, inline_stack, code_name, c.vars))

    def _locals(self, attempt: _Attempt, tx: Any) -> dict[str, int]:
        """The symbolic locals as indices of readings; the previous step's dict if unchanged.

        The same names bound to the same tracker objects read the same, except
        those whose reading can still change (see `VarReader`): only those are
        looked at again. An equal result still shares the previous dict.
        """
        raw = tx.symbolic_locals
        values = tuple(raw.values())
        key = (tuple(raw), tuple(map(id, values)))
        last = attempt.last_locals.get(id(tx))
        if last is not None and last[0] == key:
            out, changing = last[1], last[2]
            if not changing:
                return out
            read, ids = self.reader.index, last[3]
            for pos in changing:
                if read(values[pos]) != ids[pos]:
                    break
            else:
                return out
        ids = self.reader.indices(values)
        changing = self.reader.may_change(values)
        out = dict(zip(key[0], ids))
        if last is not None and last[1] == out:
            out = last[1]  # share the unchanged dict between steps
        # Every tracker read stays alive in the reader, so the ids in `key` stay theirs.
        attempt.last_locals[id(tx)] = (key, out, changing, ids)
        return out

    def _inst_info(self, by_offset: dict[int, tuple], inst: Any) -> tuple:
        positions = getattr(inst, "positions", None)
        argval = inst.argval
        arg = ("" if argval is None else repr(argval) if inst.opname == "LOAD_CONST"
               else str(argval))
        info = (inst.offset if inst.offset is not None else -1, inst.opname,
                shorten(arg, 80), getattr(positions, "lineno", None))
        if inst.offset is not None:  # an instruction Dynamo made up has none: not kept
            by_offset[inst.offset] = info
        return info

    def _begin_attempt(self, tx: Any, output: Any) -> None:
        from torch._guards import CompileContext

        root = tx
        while getattr(root, "parent", None) is not None:
            root = root.parent
        code = root.f_code
        trace_id = CompileContext.current_trace_id()
        compile_id = str(trace_id) if trace_id is not None else "?"
        info = code_info(code)
        c = Compile(compile_id=compile_id, code_name=code.co_name, filename=code.co_filename,
                    firstlineno=code.co_firstlineno, source_lines=list(info.source_lines),
                    codes=[info])
        c.recompile_reasons = list(self._reasons.get(code, []))
        if any(o.compile_id == compile_id and o.generation == self.generation
               for o in self.recording.compiles):
            # the same id again: Dynamo was reset while recording
            self.generation += 1
            self.recording.events.append(Event(
                "reset", None, f"Dynamo was reset: compile ids start again (generation "
                f"{self.generation})"))
        c.generation = self.generation
        attempt = _Attempt(compile=c, output=output, code=code)
        attempt.code_index[code] = 0
        # Guards present before the first instruction are the ambient ones that
        # OutputGraph installs for every frame (global state, default device, ...).
        for g in output.guards.inner:
            attempt.seen_guards.add(g)
            c.guard_details.append(describe_guard(g, ambient=True))
        attempt.guard_n = len(output.guards.inner)
        self.recording.compiles.append(c)
        self._attempt, self._output = attempt, output
        self._live[id(output)] = attempt
        self.reader.begin(c.vars)
        kind = "recompile" if c.recompile_reasons else "compile"
        message = f"{c.code_name} ({_short_path(c.filename)}:{c.firstlineno})"
        if c.recompile_reasons:
            message += " because " + c.recompile_reasons[0].splitlines()[0]
        self.recording.events.append(Event(kind, compile_id, message))

    def _tx_info(self, attempt: _Attempt, tx: Any) -> tuple:
        """Where a translator is: its code, inlining depth and callers. The translator is
        held weakly: an inlined call's translator, and all it holds, is freed as usual
        when the call returns."""
        code = tx.f_code
        index = attempt.code_index.get(code)
        if index is None:
            index = attempt.code_index[code] = len(attempt.compile.codes)
            attempt.compile.codes.append(code_info(code))
            attempt.inst_info.append({})
        chain = []
        parent = getattr(tx, "parent", None)
        while parent is not None:
            chain.append((parent.f_code.co_name, parent.lineno))
            parent = getattr(parent, "parent", None)
        info = (weakref.ref(tx), index, len(chain), tuple(reversed(chain)), code.co_name,
                attempt.inst_info[index])
        attempt.tx_info[id(tx)] = info
        return info

    def _new_nodes(self, attempt: _Attempt, index: int) -> list[str]:
        graph = attempt.output.graph
        nodes = graph.nodes
        n = len(nodes)
        tail = graph._root._prev  # the last node; torch.fx keeps nodes in a ring
        if n == attempt.graph_n and tail is attempt.graph_tail:
            return []
        known = attempt.known_nodes
        added = []
        for node in reversed(nodes):
            if id(node) in known:
                break
            added.append(node)
        added.reverse()
        missing = n - attempt.graph_n - len(added)
        if missing > 0:
            # The rest were inserted before existing nodes: lifted inputs (parameters,
            # buffers) go among the placeholders at the front, so look from there.
            at_end = {id(node) for node in added}
            front = []
            for node in nodes:
                if id(node) not in known and id(node) not in at_end:
                    front.append(node)
                    if len(front) == missing:
                        break
            added = front + added
        c = attempt.compile
        names = []
        for node in added:
            known[id(node)] = (node, len(c.nodes))
            c.nodes.append(describe_node(node, index))
            names.append(node.name)
        attempt.graph_n, attempt.graph_tail = n, tail
        return names

    def _new_guards(self, attempt: _Attempt, index: int | None) -> list[int]:
        inner = attempt.output.guards.inner
        n = len(inner)
        if n == attempt.guard_n:
            return []
        seen = attempt.seen_guards
        fresh = []
        if n > attempt.guard_n:
            # Guards are appended to an ordered set: the new ones are at its end.
            for g in reversed(inner):
                if g in seen:
                    break
                fresh.append(g)
            fresh.reverse()
        if len(fresh) < n - attempt.guard_n:  # some were discarded meanwhile
            fresh = [g for g in inner if g not in seen]
        attempt.guard_n = n
        c = attempt.compile
        added = []
        for g in fresh:
            seen.add(g)
            added.append(len(c.guard_details))
            c.guard_details.append(describe_guard(g, step=index))
        return added

    def _note_exception(self, attempt: _Attempt, tx: Any, exc: BaseException) -> None:
        from torch._dynamo import exc as dynamo_exc

        c = attempt.compile
        if isinstance(exc, dynamo_exc.RestartAnalysis) and c.outcome != "restarted":
            c.outcome = "restarted"
            c.restart_reason = shorten(_first_line(getattr(exc, "restart_reason", None)
                                                   or type(exc).__name__), 300)
            self.recording.events.append(Event("restart", c.compile_id, c.restart_reason))
        elif isinstance(exc, dynamo_exc.Unsupported) and attempt.unsupported_at is None:
            # The innermost step it passes through is where the instruction was.
            attempt.unsupported_at = self._break_here(tx, c, "", exc)

    def _break_here(self, tx: Any, c: Compile, reason: str, exc: BaseException) -> GraphBreak:
        """The user line of an unsupported instruction: Dynamo's own `real_stack` of the
        exception when it has one (the innermost user frame, inside inlined helpers),
        else the translator's current line."""
        stack = getattr(exc, "real_stack", None)
        if stack:
            frame = stack[-1]
            lineno, code_name, line = frame.lineno, frame.name, (frame.line or "").strip()
        else:
            lineno, code_name = tx.lineno, tx.f_code.co_name
            line = linecache.getline(tx.f_code.co_filename, lineno).strip() if lineno else ""
        return GraphBreak(reason=_break_reason(reason, exc), lineno=lineno,
                          line=shorten(line, 200) if line else None,
                          code_name=code_name, step=len(c.steps),
                          explanation=_explanation(exc))

    # -- the rest of a compile -------------------------------------------------------

    def _graph_break(self, tx: Any, reason: str, exc: BaseException) -> None:
        attempt = self._live.get(id(tx.output))
        if attempt is None:
            return
        c = attempt.compile
        gb = self._break_here(tx, c, reason, exc)
        inner = attempt.unsupported_at
        if inner is not None and (inner.lineno, inner.code_name) == (gb.lineno, gb.code_name):
            gb = replace(gb, step=inner.step)  # the instruction itself, maybe in a helper
        attempt.unsupported_at = None
        c.graph_break = gb
        self.recording.events.append(Event(
            "graph_break", c.compile_id,
            f"line {c.graph_break.lineno} in {c.graph_break.code_name}: {c.graph_break.reason}"))

    def _backend(self, output: Any, gm: Any) -> None:
        attempt = self._live.get(id(output))
        if attempt is None:
            return
        c = attempt.compile
        c.graph_code = gm.code.strip("\n")
        # The backend is called from inside a step (RETURN_VALUE or the break):
        # nodes made since that step began belong to it.
        if self.stored < self.max_steps:
            attempt.pending_nodes += self._new_nodes(attempt, len(c.steps))
        self._settle_names(attempt)
        final = {node.name: node for node in gm.graph.nodes}
        for i, record in enumerate(c.nodes):
            node = final.get(record.name)
            if node is None:
                c.nodes[i] = replace(record, in_graph=False)
            else:
                c.nodes[i] = replace(record, inputs=tuple(n.name for n in node.all_input_nodes))
        recorded = {record.name for record in c.nodes}
        for name, node in final.items():
            if name not in recorded:
                c.nodes.append(describe_node(node, None))

    def _settle_names(self, attempt: _Attempt) -> None:
        """Give nodes renamed while tracing their final names, in every record.

        Dynamo renames a node after the variable it is stored in (`sin` becomes
        `y` at `STORE_FAST y`), so the graph code says `y = l_x_.sin()`. Steps
        and stack readings use the final name too, so each names one graph node.
        """
        c = attempt.compile
        renamed = {}
        for node, i in attempt.known_nodes.values():
            old = c.nodes[i].name
            if node.name != old:
                renamed[old] = node.name
                c.nodes[i] = replace(c.nodes[i], name=node.name)
        if not renamed:
            return
        # Steps refer to readings by index: renaming the readings renames every step.
        if rename_nodes(c.vars, renamed) and self.reader.table is c.vars:
            self.reader.renamed()
        attempt.pending_nodes = [renamed.get(n, n) for n in attempt.pending_nodes]
        for step in c.steps:
            if step.nodes_added:
                step.nodes_added = [renamed.get(n, n) for n in step.nodes_added]
        for i, record in enumerate(c.nodes):
            if any(a in renamed for a in record.inputs):
                c.nodes[i] = replace(record, inputs=tuple(renamed.get(a, a) for a in record.inputs))

    def _bytecode(self, code: Any, new_code: Any) -> None:
        attempt = self._attempt
        if attempt is None or attempt.code is not code:
            attempt = next((a for a in reversed(list(self._live.values())) if a.code is code), None)
        if attempt is None:
            return
        c = attempt.compile
        c.modified_bytecode = disassemble_code(new_code)
        scope = getattr(attempt.output, "global_scope", {}) or {}
        for name in new_code.co_names:
            if name.startswith("__resume_at_"):
                fn = scope.get(name)
                resume_code = getattr(fn, "__code__", None)
                if resume_code is not None:
                    c.resume_functions.append(ResumeFunction(
                        global_name=name, code_name=resume_code.co_name,
                        bytecode=disassemble_code(resume_code),
                        argnames=resume_code.co_varnames[:resume_code.co_argcount]))

    def _compile_end(self, code: Any, compile_id: Any, result: Any,
                     exc: BaseException | None, falls_back: bool = False) -> None:
        self._reasons.pop(code, None)
        attempts = [a for a in self._live.values() if a.code is code]
        if not attempts:
            if exc is not None:
                self._unrecorded_failure(code, compile_id, exc)
            return
        last = attempts[-1]
        for a in attempts:
            if a.output is not None:
                self._settle_names(a)
        # Guards can still be installed after the last instruction (while the
        # graph is compiled): they belong to no step.
        self._new_guards(last, None)
        c = last.compile
        guarded = getattr(result, "guarded_code", None) if result is not None else None
        if exc is not None:
            if c.graph_break is None and last.unsupported_at is not None:
                c.graph_break = last.unsupported_at  # where the break that failed it was
            c.error = shorten(f"{type(exc).__name__}: {_first_line(exc)}", 400)
            if falls_back:
                # Dynamo swallows this one: the frame runs eagerly, the call succeeds.
                c.outcome = "skipped"
                self.recording.events.append(Event(
                    "skipped", c.compile_id, f"Dynamo gave up on {c.code_name}; it runs "
                    f"without compiling ({c.error})"))
            else:
                c.outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "error"
                self.recording.events.append(Event(c.outcome, c.compile_id, c.error))
        elif guarded is not None:
            tree = str(guarded.guard_manager)
            leaves = guard_tree_leaves(tree)
            c.guard_tree = bounded_tree(tree)
            c.guards = [leaf.text for leaf in leaves]
            c.guard_details = match_guard_texts(c.guard_details, leaves)
            previous = _previous_attempt(self.recording, c)
            if c.resume_functions:
                if c.graph_break is None and previous is not None and previous.graph_break:
                    c.graph_break = _split_point(c, previous.graph_break)
                c.outcome = "graph break"
            else:
                c.outcome = "compiled"
        else:
            c.outcome = "skipped"
            reason = getattr(result, "skip_reason", None)
            if reason:
                c.error = shorten(str(reason), 400)
        for a in attempts:
            if a.compile.outcome == "unfinished":
                a.compile.outcome = c.outcome if exc is not None else "abandoned"
            self._live.pop(id(a.output), None)
            a.output = None
        if self._attempt in attempts:
            self._attempt, self._output = None, None
        self.reader.clear()

    def _unrecorded_failure(self, code: Any, compile_id: Any, exc: BaseException) -> None:
        """A compile that failed before its first instruction: the cache limit, typically."""
        text = f"{type(exc).__name__}: {_first_line(exc)}"
        if "recompile limit" in text.lower():
            from torch._dynamo import config

            kind = "cache_limit"
            text = (f"hit a recompile limit (recompile_limit={config.recompile_limit}, "
                    f"accumulated_recompile_limit={config.accumulated_recompile_limit}): "
                    "calls that fail every guard now run eagerly, without compiling")
        else:
            kind = "interrupted" if isinstance(exc, KeyboardInterrupt) else "error"
        self.recording.events.append(Event(
            kind, str(compile_id) if compile_id is not None else None,
            shorten(f"{code.co_name}: {text}", 400)))

    def finish(self, ended_by: str | None) -> None:
        """Close the recording: mark what never finished, read Dynamo's counters."""
        for attempt in list(self._live.values()):
            c = attempt.compile
            if c.outcome == "unfinished":
                c.outcome = "interrupted" if ended_by == "KeyboardInterrupt" else "unfinished"
        self._live.clear()
        self._attempt = self._output = None
        self.reader.clear()
        self.recording.ended_by = ended_by
        after = read_counters()
        self.recording.counters_total = after
        self.recording.counters = {k: v - self._counters_before.get(k, 0) for k, v in after.items()}
        if ended_by:
            self.recording.events.append(Event("ended", None, ended_by))


def _previous_attempt(recording: Recording, c: Compile) -> Compile | None:
    base = c.compile_id.split("_")[0]
    previous = None
    for other in recording.compiles:
        if other is c:
            return previous
        if other.compile_id.split("_")[0] == base:
            previous = other
    return previous


def _split_point(c: Compile, first: GraphBreak) -> GraphBreak:
    """Where a restarted attempt stopped: its last instruction in the frame itself.

    The earlier attempt met the unsupported instruction (maybe inside an
    inlined helper); the restarted one compiles up to the frame's own
    instruction that leads there and stops, so that is its last step at depth 0.
    """
    own = [s for s in c.steps if s.depth == 0]
    if not own:
        return replace(first, step=None)
    last = own[-1]
    source = c.codes[0].source_lines if c.codes else ()
    k = (last.lineno or 0) - c.firstlineno
    line = source[k].strip() if 0 <= k < len(source) else None
    return replace(first, lineno=last.lineno, line=line or None, code_name=c.code_name,
                   step=last.index)


def _break_reason(reason: str, exc: BaseException) -> str:
    gb_type = getattr(exc, "gb_type", None)
    text = str(exc) if exc is not None else reason
    first = _first_line(text) if text else reason
    if gb_type and gb_type not in first:
        first = f"{gb_type}: {first}"
    return shorten(first, 300)


def _explanation(exc: BaseException) -> str | None:
    """The `Explanation:` paragraph of a Dynamo graph-break message, if it has one."""
    for line in str(getattr(exc, "msg", "") or exc).splitlines():
        line = line.strip()
        if line.startswith("Explanation:"):
            return shorten(line.removeprefix("Explanation:").strip(), 400)
    return None


def _reason_line(reason: str) -> str:
    """`0/0: n == 0  # f.py:4 in f` from Dynamo's multi-line failure text."""
    line = _first_line(reason)
    return shorten(re.sub(r"\s{2,}#", "  #", line), 400)


def _first_line(obj: Any) -> str:
    for line in str(obj).splitlines():
        if line.strip():
            return line.strip()
    return type(obj).__name__ if isinstance(obj, BaseException) else ""


def _short_path(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def read_counters() -> dict[str, int]:
    """Dynamo's own bookkeeping: graphs compiled, FX call nodes captured, breaks."""
    from torch._dynamo.utils import counters

    stats = counters.get("stats", {})
    return {
        "unique_graphs": int(stats.get("unique_graphs", 0)),
        "calls_captured": int(stats.get("calls_captured", 0)),
        "graph_breaks": int(sum(counters.get("graph_break", {}).values())),
    }


@contextlib.contextmanager
def record(*, max_steps: int = DEFAULT_MAX_STEPS) -> Iterator[Recording]:
    """Record everything Dynamo compiles inside the block, whatever the backend."""
    global _active
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps must be a positive whole number (got {max_steps!r}); "
                         "for example record(max_steps=10_000)")
    import torch

    with _lock:
        if _active is not None:
            raise RuntimeError(_busy_message())
        recording = Recording(torch_version=torch.__version__, max_steps=max_steps)
        recorder = Recorder(recording, max_steps)
        _active = recorder  # claimed before anything is installed
    undo = None
    thresholds = None
    previous_sigint = None
    ended_by = None
    try:
        undo = hooks.install(recorder)
        # NOTE: a recording keeps objects alive (one per step, and the trackers it has
        # read). Counted as long-lived, they can tip the collector into a full
        # (generation 2) collection that the same compile without recording would
        # not run: tens of milliseconds, and Dynamo's garbage finalized at another
        # moment. Full collections wait until the block ends; young ones run as
        # usual. Put back on the way out, unless the program changed them meanwhile.
        thresholds = gc.get_threshold()
        gc.set_threshold(thresholds[0], thresholds[1], _NO_FULL_COLLECTIONS)
        previous_sigint = _note_interrupts(recorder)
        yield recording
    except KeyboardInterrupt:
        ended_by = "KeyboardInterrupt"
        raise
    except BaseException as e:
        ended_by = shorten(f"{type(e).__name__}: {_first_line(e)}", 300)
        raise
    finally:
        # Restoration must survive a second interrupt: retry until everything is undone.
        while True:
            try:
                if previous_sigint is not None:
                    signal.signal(signal.SIGINT, previous_sigint)
                    previous_sigint = None
                if thresholds is not None:
                    if gc.get_threshold() == (*thresholds[:2], _NO_FULL_COLLECTIONS):
                        gc.set_threshold(*thresholds)
                    thresholds = None
                if undo is not None:
                    undo()
                    undo = None
                break
            except KeyboardInterrupt:
                pass
        with _lock:
            _active = None
        recorder.finish(ended_by)


def _busy_message() -> str:
    where = ("in another thread" if _active is not None and _active.thread != threading.get_ident()
             else "already, in this thread")
    return (f"a recording is active {where}: Dynamo Lab records one thing at a time. "
            "Finish the other `with capture.record():` block first.")


def _note_interrupts(recorder: Recorder) -> Any:
    """Remember a Ctrl-C / stop press, so a press CPython loses still stops the trace.

    CPython raises KeyboardInterrupt in whatever Python code runs next; while
    Dynamo traces, that is often a garbage-collector weakref callback, where the
    exception is printed as "Exception ignored" and dropped. The handler below
    notes the press before raising as usual; the recorder raises again at the
    next instruction if the first one was lost. Main thread only (a signal rule).
    Returns the handler to put back, or None.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        return None  # SIG_IGN or SIG_DFL: the program chose; leave it

    def on_sigint(signum: int, frame: Any) -> None:
        recorder.interrupt_pending = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)
    return previous


def trace(fn: Callable[..., Any], *args: Any, backend: Any = "eager", reset: bool = True,
          max_steps: int = DEFAULT_MAX_STEPS, compile_options: dict[str, Any] | None = None,
          **kwargs: Any) -> Recording:
    """Compile `fn` with `torch.compile`, call it once while recording, return the recording.

    `compile_options` go to `torch.compile` (e.g. ``{"fullgraph": True}``); any
    other keyword goes to `fn`. The call's return value is in `recording.result`.
    """
    import torch

    if not callable(fn):
        raise TypeError(f"trace() needs a function or module to compile, got "
                        f"{type(fn).__name__}; for example capture.trace(f, torch.randn(4))")
    if _active is not None:
        raise RuntimeError(_busy_message())  # before the reset, which would change things
    if reset:
        torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, **(compile_options or {}))
    with record(max_steps=max_steps) as recording:
        recording.result = compiled(*args, **kwargs)
    return recording


def active() -> bool:
    """Whether a recording is in progress (in any thread)."""
    return _active is not None


__all__ = ["record", "trace", "active", "DEFAULT_MAX_STEPS", "read_counters"]
