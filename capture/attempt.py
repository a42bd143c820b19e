"""One compile attempt while Dynamo traces it: the steps, nodes and guards it makes.

An `AttemptRecorder` lives from the first instruction of an attempt until its
compile ends, and fills in the attempt's record, a `Compile`. It snapshots (never references) what it sees: each tracker becomes a
`Var` (by way of the `VarReader`), each FX node a `Node`, each guard a `Guard`,
at the step that made it, and nothing stored for a step is changed later.

NOTE (speed): `step` runs once per instruction Dynamo executes, tens of
thousands of times for a real model. Most steps add no node and no guard, so it
looks at the graph's length and tail and the guard set's length first; readings
of trackers are looked up in bulk (`VarReader.indices`); instruction readings
are kept per code and offset.
"""

from __future__ import annotations

import weakref
from operator import is_
from dataclasses import dataclass, replace
from typing import Any

from . import internals
from .bytecode import CodeReader, disassemble_code, instructions, step_fields
from .explain import registry_entry
from .graph import describe_node, node_name
from .guards import describe_guard
from .recording import Compile, GraphBreak, Outcome, ResumeFunction
from .shapewatch import ShapeWatch
from .text import LINE_LIMIT, MAX_NAME, exact, listing, shorten
from .variables import VarReader

# Instructions that may rename the FX node of the value they store (`set_name_hint`).
_NAMING = frozenset(("STORE_FAST", "STORE_DEREF"))


# NOTE (bookkeeping, not records): these three are read on every step, so they are
# slots dataclasses, whose fields read as fast as a tuple unpacks (a NamedTuple's
# unpack and fields are slower), and are updated in place rather than made again.

@dataclass(slots=True)
class TranslatorInfo:
    """Where a translator is: kept per translator for the attempt (see `_tx_info`)."""

    tx: weakref.ref             # the translator, held weakly (an inlined call's is freed)
    code: int                   # its code's index in `Compile.codes`
    depth: int                  # inlining depth: 0 for the frame's own
    inline_stack: tuple[tuple[str, int | None], ...]  # (caller's code name, line), outermost first
    code_name: str
    by_offset: dict[int, tuple]  # the code's readings: offset -> (offset, opname, argrepr, lineno)


@dataclass(slots=True)
class LocalsReading:
    """A translator's symbolic locals as the last step read them (see `_locals`)."""

    names: tuple                # the names
    held: tuple                 # their trackers (compared by identity)
    pairs: tuple[tuple[str, int], ...]  # what the step stored: (name, index), shared while unchanged
    changing: tuple[int, ...]   # positions whose reading can still change
    ids: tuple[int, ...]        # the readings' indices, by position


@dataclass(slots=True)
class KnownNode:
    """An FX node the attempt has recorded."""

    node: Any                   # kept, so that its id stays its own
    index: int                  # in `Compile.nodes`
    name: str                   # its name when last seen


class AttemptRecorder:
    """Records one compile attempt as Dynamo makes it: its live bookkeeping, and the
    record it fills in, `self.compile`."""

    def __init__(self, compile_: Compile, output: Any, code: Any, reader: VarReader,
                 codes: CodeReader) -> None:
        self.compile = compile_
        self.detailed = True  # False: record(only=...) keeps a summary of this one, no steps
        self.output = output
        self.code = code
        self.reader = reader
        self.codes = codes  # the recording's: listings are read when it finishes
        self.seen_guards: set[Any] = set()
        self.guard_n = 0
        self.graph_n = 0
        self.graph_tail: Any = None
        self.known_nodes: dict[int, KnownNode] = {}  # id(fx node) ->
        # nodes seen by a hook in the middle of a step, listed when the step is stored
        self.pending_nodes: list[str] = []
        # where an unsupported instruction was met (kept for a fullgraph error)
        self.unsupported_at: GraphBreak | None = None
        self.tx_info: dict[int, TranslatorInfo] = {}  # id(tx) ->
        # per code index: offset -> (offset, opname, argrepr, lineno)
        self.inst_info: list[dict[int, tuple]] = [{}]
        self.last_locals: dict[int, LocalsReading] = {}  # id(tx) ->
        self.code_index: dict[Any, int] = {code: 0}
        self.top: Any = None  # the top of the stack after the last step (what STORE_* stores)
        self._names: dict[str, str] = {}  # local name -> as recorded
        # Guards present before the first instruction are the ambient ones that
        # OutputGraph installs for every frame (global state, default device, ...).
        guards = internals.guard_set(output)
        for g in guards:
            self.seen_guards.add(g)
            compile_.guard_details.append(describe_guard(g, ambient=True))
        self.guard_n = len(guards)
        env = internals.shape_env(output)
        self.shapes = ShapeWatch(env) if env is not None else None
        reader.begin(compile_.vars)

    # -- steps -------------------------------------------------------------------

    def step(self, tx: Any, inst: Any) -> None:
        """Store the step `inst` just made in `tx`."""
        c = self.compile
        index = len(c.steps)
        info = self.tx_info.get(id(tx))
        if info is None or info.tx() is not tx:
            info = self._tx_info(tx)
        code, depth, inline_stack = info.code, info.depth, info.inline_stack
        code_name, by_offset = info.code_name, info.by_offset
        # Each inlined call gets its own copy of its code's instructions: readings
        # are kept per code and offset, so no copy is kept alive.
        at = internals.instruction_offset(inst)
        ins = by_offset.get(at)
        if ins is None:
            ins = step_fields(inst, internals.walked_instructions(tx))
            if at is not None:  # an instruction Dynamo made up has none: not kept
                by_offset[at] = ins
        offset, opname, argrepr, lineno = ins
        if lineno is None:
            lineno = internals.current_line(tx)

        output = self.output
        graph = internals.current_graph(output)
        if (internals.graph_size(graph) != self.graph_n
                or internals.graph_tail(graph) is not self.graph_tail):
            nodes_added = tuple(self.new_nodes(index))
        else:
            nodes_added = ()
        if self.pending_nodes:
            nodes_added = (*self.pending_nodes, *nodes_added)
            self.pending_nodes = []
        if internals.guard_count(internals.guard_set(output)) != self.guard_n:
            guards_added = tuple(self.new_guards(index))
        else:
            guards_added = ()
        shapes = self.shapes
        if shapes is not None and shapes.changed():
            shapes.note(index, nodes_added[-1] if nodes_added else None)
        nodes_renamed = tuple(self._renamed(index)) if opname in _NAMING else ()

        tx_stack = internals.stack(tx)
        self.top = tx_stack[-1] if tx_stack else None
        graph_size = self.graph_n
        stack = self.reader.indices(tx_stack)
        locals_ = self._locals(tx)
        # the fields in the order capture.steps.STEP_FIELDS declares them (a test checks)
        c.steps.add(index, offset, opname, argrepr, lineno, depth, code, code_name, graph_size,
                    nodes_added, nodes_renamed, guards_added, inline_stack, stack, locals_)

    def _locals(self, tx: Any) -> tuple[tuple[str, int], ...]:
        """The symbolic locals as (name, index of its reading) pairs, as `Steps` stores
        them; the previous step's tuple if unchanged.

        The same names bound to the same tracker objects read the same, except
        those whose reading can still change (see `VarReader`): only those are
        looked at again. An equal result still shares the previous tuple.
        """
        raw = internals.symbolic_locals(tx)
        values = tuple(raw.values())
        names = tuple(raw)
        last = self.last_locals.get(id(tx))
        # the same names (hence as many) bound to the very same trackers
        if last is not None and last.names == names and all(map(is_, values, last.held)):
            out, changing = last.pairs, last.changing
            if not changing:
                return out
            read, ids = self.reader.index, last.ids
            for pos in changing:
                if read(values[pos]) != ids[pos]:
                    break
            else:
                return out
        ids = self.reader.indices(values)
        changing = self.reader.may_change(values)
        out = tuple(zip(map(self._local_name, names), ids))
        if last is None:
            self.last_locals[id(tx)] = LocalsReading(names, values, out, changing, ids)
        else:
            if last.pairs == out:
                out = last.pairs  # share the unchanged tuple between steps
            last.names, last.held, last.pairs, last.changing, last.ids = \
                names, values, out, changing, ids
        return out

    def _local_name(self, name: str) -> str:
        """A local's name as records keep it (names come from the program's code object)."""
        shown = self._names.get(name)
        if shown is None:
            shown = self._names[name] = shorten(name, MAX_NAME)
        return shown

    def _renamed(self, index: int) -> list[tuple[str, str]] | tuple[()]:
        """Nodes the store just renamed: `STORE_FAST y` names the node of the value it
        stores after `y` (the value is the stack's top before the step)."""
        node = internals.tracker_node(self.top, internals.lazy_tracker_class()) \
            if self.top is not None else None
        known = self.known_nodes.get(id(node)) if node is not None else None
        if known is None or node_name(node) == known.name:
            return ()
        old, new = known.name, node_name(node)
        known.name = new
        c = self.compile
        i = known.index
        record = c.nodes[i]
        c.nodes[i] = replace(record, name=new, created_name=record.created_name or old,
                             renamed_at=index)
        # Readings taken from now on show the new name; earlier steps keep theirs.
        self.reader.node_renamed(old)
        self.last_locals.clear()
        return [(old, new)]

    def _code_index(self, code: Any) -> int:
        index = self.code_index.get(code)
        if index is None:
            index = self.code_index[code] = len(self.compile.codes)
            self.compile.codes.append(self.codes.info(code))
            self.inst_info.append({})
        return index

    def _tx_info(self, tx: Any) -> TranslatorInfo:
        """Where a translator is: its code, inlining depth and callers. The translator is
        held weakly: an inlined call's translator, and all it holds, is freed as usual
        when the call returns."""
        code = internals.code_of(tx)
        index = self._code_index(code)
        info = self.compile.codes[index]
        self.codes.note_walked(code, internals.walked_instructions(tx))
        chain = []
        up = internals.parent(tx)
        while up is not None:
            chain.append((self.compile.codes[self._code_index(internals.code_of(up))].name,
                          internals.current_line(up)))
            up = internals.parent(up)
        result = TranslatorInfo(weakref.ref(tx), index, len(chain), tuple(reversed(chain)),
                                info.name, self.inst_info[index])
        self.tx_info[id(tx)] = result
        return result

    # -- nodes and guards -------------------------------------------------------

    def new_nodes(self, index: int) -> list[str]:
        """Record the FX nodes made since the last look, under the names they have now."""
        graph = internals.root_graph(self.output)
        nodes = graph.nodes
        n = len(nodes)
        tail = internals.graph_tail(graph)
        if n == self.graph_n and tail is self.graph_tail:
            return []
        known = self.known_nodes
        added = []
        for node in reversed(nodes):
            if id(node) in known:
                break
            added.append(node)
        added.reverse()
        missing = n - self.graph_n - len(added)
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
        c = self.compile
        names = []
        for node in added:
            known[id(node)] = KnownNode(node, len(c.nodes), node_name(node))
            c.nodes.append(describe_node(node, index))
            names.append(node_name(node))
        self.graph_n, self.graph_tail = n, tail
        return names

    def new_guards(self, index: int | None) -> list[int]:
        """Record the guards installed since the last look; their indices in guard_details."""
        inner = internals.guard_set(self.output)
        n = len(inner)
        if n == self.guard_n:
            return []
        seen = self.seen_guards
        fresh = []
        if n > self.guard_n:
            # Guards are appended to an ordered set: the new ones are at its end.
            for g in reversed(inner):
                if g in seen:
                    break
                fresh.append(g)
            fresh.reverse()
        if len(fresh) < n - self.guard_n:  # some were discarded meanwhile
            fresh = [g for g in inner if g not in seen]
        self.guard_n = n
        c = self.compile
        added = []
        for g in fresh:
            seen.add(g)
            added.append(len(c.guard_details))
            c.guard_details.append(describe_guard(g, step=index))
        return added

    # -- the rest of a compile ----------------------------------------------------

    def note_exception(self, tx: Any, exc: BaseException) -> str | None:
        """A step raised: note a restart (returns its reason, the first time) or where an
        unsupported instruction was met."""
        c = self.compile
        if internals.is_restart(exc) and c.outcome != Outcome.RESTARTED:
            c.outcome = Outcome.RESTARTED
            c.restart_reason = exact(internals.restart_reason(exc) or type(exc).__name__)
            return c.restart_reason
        if internals.is_unsupported(exc) and self.unsupported_at is None:
            # The innermost step it passes through is where the instruction was.
            self.unsupported_at = self.break_here(tx, "", exc)
        return None

    def break_here(self, tx: Any, reason: str, exc: BaseException) -> GraphBreak:
        """The user line of an unsupported instruction: Dynamo's own `real_stack` of the
        exception when it has one (the innermost user frame, inside inlined helpers),
        else the translator's current line; and Dynamo's message, whole (`reason`, as
        `log_graph_break` got it, or the exception's own when there is none)."""
        frame = internals.user_frame(exc)
        if frame is not None:
            lineno, code_name, line = frame
        else:
            import linecache

            code = internals.code_of(tx)
            lineno, code_name = internals.current_line(tx), code.co_name
            line = linecache.getline(code.co_filename, lineno).strip() if lineno else ""
        parts = internals.break_parts(exc) if exc is not None else None
        message = reason or (internals.break_message(exc) if exc is not None else "")
        headline = break_reason(reason, exc)
        gb_id, entry = registry_entry(headline, parts.link if parts else None, message)
        return GraphBreak(reason=headline, lineno=lineno, gb_id=gb_id, registry=entry,
                          line=shorten(line, LINE_LIMIT) if line else None,
                          code_name=shorten(code_name, MAX_NAME), step=len(self.compile.steps),
                          explanation=explanation(exc),
                          message=exact(message) if message else None,
                          hints=tuple(map(exact, parts.hints)) if parts else (),
                          link=exact(parts.link) if parts and parts.link else None)

    def graph_break(self, tx: Any, reason: str, exc: BaseException) -> GraphBreak:
        """Dynamo logged the graph break of this attempt: record where it happened."""
        gb = self.break_here(tx, reason, exc)
        inner = self.unsupported_at
        if inner is not None and (inner.lineno, inner.code_name) == (gb.lineno, gb.code_name):
            gb = replace(gb, step=inner.step)  # the instruction itself, maybe in a helper
        self.unsupported_at = None
        self.compile.graph_break = gb
        return gb

    def record_graph(self, gm: Any, storing: bool) -> None:
        """The graph is handed to the backend: its code, and each node's place in it."""
        c = self.compile
        # Read from the graph, not `gm.code`: that would realize the lazy module the
        # backend is about to receive (see internals.graph_code).
        c.graph_code = listing(internals.graph_code(gm).strip("\n"))
        # The backend is called from inside a step (RETURN_VALUE or the break):
        # nodes made since that step began belong to it.
        if storing:
            self.pending_nodes += self.new_nodes(len(c.steps))
        self.final_names()
        final = {node_name(node): node for node in gm.graph.nodes}
        for i, record in enumerate(c.nodes):
            node = final.get(record.name)
            if node is None:
                c.nodes[i] = replace(record, in_graph=False)
            else:
                c.nodes[i] = replace(record, inputs=tuple(node_name(n) for n in node.all_input_nodes))
        recorded = {record.name for record in c.nodes}
        for name, node in final.items():
            if name not in recorded:
                c.nodes.append(describe_node(node, None))

    def final_names(self) -> None:
        """Give each node record its final name (the one in the graph code).

        Steps are not touched: each keeps the names Dynamo used at that step. A
        node renamed by a store already has `created_name` and `renamed_at`; one
        renamed some other way gets `created_name` with no step.
        """
        c = self.compile
        for known in self.known_nodes.values():
            node, i = known.node, known.index
            record = c.nodes[i]
            if node_name(node) != record.name:
                c.nodes[i] = replace(record, name=node_name(node),
                                     created_name=record.created_name or record.name)
        renamed = {r.created_name: r.name for r in c.nodes
                   if r.created_name is not None and r.created_name != r.name}
        if renamed:
            for i, record in enumerate(c.nodes):
                if any(a in renamed for a in record.inputs):
                    c.nodes[i] = replace(record, inputs=tuple(renamed.get(a, a)
                                                              for a in record.inputs))

    def record_bytecode(self, new_code: Any) -> None:
        """The code object Dynamo installs in place of the frame's, and its resume functions."""
        c = self.compile
        installed = instructions(new_code)
        c.modified_instructions = list(installed)
        c.modified_bytecode = listing(disassemble_code(new_code, installed))
        for name in new_code.co_names:
            offset = internals.resume_offset(name)
            if offset is None:
                continue
            fn = internals.resume_function(self.output, name)
            resume_code = getattr(fn, "__code__", None)
            if resume_code is not None:
                resume = instructions(resume_code)
                c.resume_functions.append(ResumeFunction(
                    global_name=shorten(name, MAX_NAME),
                    code_name=shorten(resume_code.co_name, MAX_NAME),
                    bytecode=listing(disassemble_code(resume_code, resume)),
                    argnames=tuple(shorten(a, MAX_NAME) for a in
                                   resume_code.co_varnames[:resume_code.co_argcount]),
                    offset=offset, instructions=resume))


def outcome_of(*, error: BaseException | None, falls_back: bool, guarded: bool,
               has_resume_functions: bool) -> str:
    """How a compile ended, from what its end revealed (a pure function)."""
    if error is not None:
        if falls_back:
            return Outcome.SKIPPED  # Dynamo swallows it: the frame runs eagerly
        return Outcome.INTERRUPTED if isinstance(error, KeyboardInterrupt) else Outcome.ERROR
    if not guarded:
        return Outcome.SKIPPED
    return Outcome.GRAPH_BREAK if has_resume_functions else Outcome.COMPILED


def break_reason(reason: str, exc: BaseException) -> str:
    """The headline of a graph break: its type and the first line of Dynamo's message
    (`Failed to trace builtin operator`), exactly; the whole message is kept beside it."""
    gb_type = internals.break_type(exc)
    text = str(exc) if exc is not None else reason
    first = first_line(text) if text else reason
    if gb_type and gb_type not in first:
        first = f"{gb_type}: {first}"
    return exact(first)


def explanation(exc: BaseException) -> str | None:
    """The `Explanation:` part of a Dynamo graph-break message, whole (all its lines)."""
    if exc is None:
        return None
    text = internals.break_parts(exc).explanation
    return exact(text) if text is not None else None


def first_line(obj: Any) -> str:
    for line in str(obj).splitlines():
        if line.strip():
            return line.strip()
    return type(obj).__name__ if isinstance(obj, BaseException) else ""
