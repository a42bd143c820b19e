"""The stages after Dynamo: AOTAutograd's graphs and Inductor's code, linked to Dynamo's nodes.

A backend built on AOTAutograd (`aot_eager`, `aot_eager_decomp_partition`, `inductor`,
anything made with `aot_autograd`) logs each stage on the structured trace, the stream
`TORCH_TRACE` writes and tlparse reads: the joint graph, the forward and backward graphs
after partitioning (or the inference graph), Inductor's post-grad graph and its output
code. With `record(after_dynamo=True)` a handler on that logger (installed by
`capture.hooks`, always undone) turns each into a `Stage` of the compile that made it.

Provenance, node by node (each unit says `via` which rule linked it):

- `from_node`: AOTAutograd retraces Dynamo's graph node by node and records, on each
  node it makes, the Dynamo node it was interpreting (`meta["from_node"]`); Inductor's
  pattern matcher copies that onto a replacement.
- `seq_nr`: a backward node carries the autograd sequence number of the forward op it
  differentiates (`meta["seq_nr"]`), so it comes from that op's Dynamo nodes.
- `input` / `tangent`: an AOT placeholder says which flat input it is, or which output's
  gradient it receives (`meta["desc"]`): the Dynamo placeholder, or the node returned there.
- `origins`: a kernel computes post-grad nodes (its IR nodes' `origins`): the union of
  their links.

Nothing is guessed: a unit no rule links is marked `invented`.

NOTE (the caches): a stage Inductor's FX graph cache or AOTAutograd's cache serves is
re-logged as text with no graph behind it, so nothing could link back; both caches are on
by default, so on any second run every Inductor stage came back that way. Its text does
not carry the links either (only an extern kernel's call is headed by its source nodes).
So while recording after Dynamo those caches are turned off (`capture.hooks`, undone when
the recording ends; a note in the recording says so), and each stage is built: the code
is what the cache would have served (tests/test_stages.py compares the two), and nothing
is written to the cache. A stage still served as text (a cache turned off some other way
is not turned on) is kept with `from_cache=True` and no units.

NOTE (fidelity): apart from the caches, recording the stages changes no configuration.
The handler's other effect is that torch now builds every structured-trace payload while
recording (it builds none without a handler): the cost `bench/stages.py` measures.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

from . import internals
from .recording import Compile, Event, EventKind, Recording, Stage, StageUnit
from .text import MAX_NAME, MESSAGE_LIMIT, listing, shorten

# structured trace artifact -> stage name
STAGE_NAMES = {
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_forward",
    "aot_inference_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "inductor_post_grad_graph": "inductor_post_grad",
    "inductor_output_code": "inductor_output_code",
}

# How TORCH_LOGS=aot_graphs,output_code heads each stage.
_TITLES = {
    ("aot_joint", "joint"): "Joint graph",
    ("aot_forward", "forward"): "Forward graph",
    ("aot_forward", "inference"): "Forward graph (inference)",
    ("aot_backward", "backward"): "Backward graph",
    ("inductor_post_grad", "forward"): "AFTER POST GRAD (forward)",
    ("inductor_post_grad", "backward"): "AFTER POST GRAD (backward)",
    ("inductor_post_grad", "inference"): "AFTER POST GRAD (inference)",
}


# The note a recording after Dynamo carries when it compiled past a cache.
BYPASSED = ("after Dynamo: {} turned off while recording, so every stage was built and "
            "linked to Dynamo's nodes (its code is the code the cache holds; nothing was "
            "written to the cache)")


class _Links:
    """What one compile's stages link to: its Dynamo graph, and forward ops by seq_nr."""

    def __init__(self, c: Compile) -> None:
        self.names = {n.name for n in c.nodes if n.in_graph}
        self.placeholders = [n.name for n in c.nodes if n.in_graph and n.op == "placeholder"]
        self.returned: list[str | None] = []  # what the Dynamo graph returns, in order
        self.graph_id: int | None = None
        self.by_seq: dict[int, list[str]] = {}
        self._order = {n.name: k for k, n in enumerate(c.nodes)}

    def order(self, name: str) -> int:
        """Where a Dynamo node comes in its graph (for listing a kernel's nodes in order)."""
        return self._order.get(name, len(self._order))

    def dynamo_graph(self, gm: Any) -> None:
        """The GraphModule Dynamo handed the backend: its id, inputs and outputs."""
        graph = internals.fx_graph_of(gm)
        self.graph_id = id(graph)
        self.placeholders = [n.name for n in graph.nodes if n.op == "placeholder"]
        for n in graph.nodes:
            if n.op == "output":
                values = n.args[0] if n.args else ()
                values = values if isinstance(values, (list, tuple)) else (values,)
                self.returned = [getattr(v, "name", None) for v in values]
        self.names |= {n.name for n in graph.nodes}

    def of(self, node: Any) -> tuple[tuple[str, ...], str]:
        """The Dynamo nodes an AOT or post-grad node came from, and the rule that says so."""
        found = []
        for name, graph_id in internals.node_sources(node):
            if name in self.names and (self.graph_id is None or graph_id in (None, self.graph_id)):
                if name not in found:
                    found.append(name)
        if found:
            seq = internals.node_seq_nr(node)
            if seq is not None:
                known = self.by_seq.setdefault(seq, [])
                known += [n for n in found if n not in known]
            return tuple(found), "from_node"
        seq = internals.node_seq_nr(node)
        if seq is not None and self.by_seq.get(seq):
            return tuple(self.by_seq[seq]), "seq_nr"
        if node.op == "placeholder":
            kind, idx, of_output = internals.node_desc(node)
            if kind == "PlainAOTInput" and idx is not None and idx < len(self.placeholders):
                return (self.placeholders[idx],), "input"
            if kind == "TangentAOTInput" and of_output is not None \
                    and of_output < len(self.returned) and self.returned[of_output] in self.names:
                return (self.returned[of_output],), "tangent"
        return (), ""


class StageCollector:
    """Turns the structured trace's stage artifacts into `Stage`s of the recorded compiles.

    Called by the handler `capture.hooks` installs on `torch.__trace`, in the thread
    that logged; only the recording's own thread is listened to.
    """

    __dynamo_lab_listener__ = True

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.thread = threading.get_ident()
        self._links: dict[int, _Links] = {}  # id(compile) -> links
        # the caches turned off while recording (by capture.hooks), said once in a note
        self.bypassed: list[str] = []
        self._noted = False

    def on_trace(self, record: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        try:
            self._artifact(record)
        except Exception as e:  # noqa: BLE001 - a recorder bug must never break a compile
            self.recording.events.append(Event(
                EventKind.RECORDER_ERROR, internals.artifact_compile_id(record),
                shorten(f"recording a stage: {type(e).__name__}: {e}", MESSAGE_LIMIT)))

    def _compile(self, compile_id: str | None) -> Compile | None:
        if compile_id is None:
            return None
        for c in reversed(self.recording.compiles):
            if c.compile_id == compile_id:
                return c
        return None

    def _artifact(self, record: Any) -> None:
        name = internals.trace_artifact_name(record)
        if name != "dynamo_output_graph" and name not in STAGE_NAMES:
            return
        c = self._compile(internals.artifact_compile_id(record))
        if c is None:
            return
        links = self._links.get(id(c))
        if links is None:
            links = self._links[id(c)] = _Links(c)
        live = internals.artifact_object(name)
        if name == "dynamo_output_graph":
            if live is not None:
                links.dynamo_graph(live)
            return
        if self.bypassed and not self._noted:
            self._noted = True
            self.recording.events.append(Event(EventKind.NOTE, c.compile_id, BYPASSED.format(
                " and ".join(self.bypassed))))
        code = listing((internals.artifact_payload(record) or "").rstrip("\n")) or ""
        stage = self._stage(name, code, live, links, c)
        c.stages = (*c.stages, stage)

    def _stage(self, name: str, code: str, live: Any, links: _Links, c: Compile) -> Stage:
        stage_name = STAGE_NAMES[name]
        graph = _graph_kind(name, code, internals.is_backward_compile(name)
                            if name.startswith("inductor") else None, c)
        if live is None:
            return Stage(name=stage_name, code=code, graph=graph, from_cache=True)
        if name == "inductor_output_code":
            return Stage(name=stage_name, code=code, graph=graph,
                         units=_kernel_units(live, links, code))
        units, inputs, outputs, saved, recomputed = _graph_units(live, links, code, graph)
        return Stage(name=stage_name, code=code, graph=graph, units=units, inputs=inputs,
                     outputs=outputs, saved=saved, recomputed=recomputed)


def _graph_kind(name: str, code: str, is_backward: bool | None, c: Compile) -> str:
    if name == "aot_joint_graph":
        return "joint"
    if name == "aot_inference_graph":
        return "inference"
    if name in ("aot_forward_graph", "aot_backward_graph"):
        return name.split("_")[1]
    # Inductor compiles the graphs AOTAutograd made; its output code says which (`# AOT ID:
    # ['0_forward']`), its post-grad graph only through the compile's `is_backward`.
    m = re.search(r"# AOT ID: \['[^']*_(forward|backward|inference)'\]", code[:400])
    if m:
        return m.group(1)
    if is_backward:
        return "backward"
    head = "\n".join(code.splitlines()[:2])  # `def forward(self, ...)` of a post-grad graph
    if is_backward is None and re.search(r"\btangents_\d+: ", head):
        return "backward"  # re-logged from the cache: a backward graph takes the tangents
    if any(s.graph == "inference" for s in c.stages):
        return "inference"
    return "forward"


def _graph_units(gm: Any, links: _Links, code: str, graph: str
                 ) -> tuple[tuple[StageUnit, ...], tuple[str, ...], tuple[str, ...],
                            tuple[str, ...], tuple[str, ...]]:
    lines = code.splitlines()
    units = []
    inputs, recomputed = [], []
    for node in internals.fx_graph_of(gm).nodes:
        if node.op == "output":
            continue
        name = shorten(node.name, MAX_NAME)
        found, via = links.of(node)
        if node.op == "placeholder":
            inputs.append(name)
        elif graph == "backward" and internals.node_partitioner_tag(node) == "is_forward":
            recomputed.append(name)  # a forward op the backward computes again
        units.append(StageUnit(
            name=name, dynamo_nodes=found, invented=not found, op=node.op,
            target=shorten(internals.target_text(node), MAX_NAME),
            via=via, lines=_node_lines(lines, node.name)))
    outputs, saved = [], []
    for kind, value, _ in internals.output_descs(gm):
        if value is None:
            continue
        (saved if kind.startswith("SavedForBackwards") else outputs).append(
            shorten(value, MAX_NAME))
    return tuple(units), tuple(inputs), tuple(outputs), tuple(saved), tuple(recomputed)


def _node_lines(lines: list[str], name: str) -> tuple[int, ...]:
    """Where a printed graph shows a node: `name: "f32[..]" = ...`, `name = ...`, or an
    argument `name: "f32[..]"` of `def forward(...)`."""
    own = re.compile(rf"^\s*{re.escape(name)}(?::\s|\s=\s)")
    arg = re.compile(rf"[(\s,]{re.escape(name)}: \"")
    for k, line in enumerate(lines, 1):
        if own.match(line):
            return (k,)
    for k, line in enumerate(lines, 1):
        if line.lstrip().startswith("def forward(") and arg.search(line):
            return (k,)
    return ()


def _kernel_units(graph: Any, links: _Links, code: str) -> tuple[StageUnit, ...]:
    lines = code.splitlines()
    calls_seen: dict[str, int] = {}
    units = []
    for kernel, kind, origins in internals.output_code_kernels(graph):
        found: list[str] = []
        post_grad: list[str] = []
        for node in origins:
            if node.name not in post_grad:
                post_grad.append(node.name)
            names, _ = links.of(node)
            found += [n for n in names if n not in found]
        found.sort(key=links.order)
        k = calls_seen[kernel] = calls_seen.get(kernel, 0) + 1
        units.append(StageUnit(
            name=shorten(kernel, MAX_NAME), dynamo_nodes=tuple(found), invented=not found,
            op=kind, target=shorten(", ".join(post_grad), MAX_NAME), via="origins" if found else "",
            post_grad_nodes=tuple(shorten(p, MAX_NAME) for p in post_grad),
            lines=_kernel_lines(lines, kernel, k)))
    return tuple(units)


def _kernel_lines(lines: list[str], kernel: str, k: int) -> tuple[int, ...]:
    """A kernel's definition (`cpp_fused_relu_0 = async_compile...`) and its k-th call."""
    out = []
    define = re.compile(rf"^{re.escape(kernel)} = ")
    call = re.compile(rf"^\s+(?:\w+ = )?{re.escape(kernel)}\(")
    n = 0
    for i, line in enumerate(lines, 1):
        if define.match(line):
            out.append(i)
        elif call.match(line):
            n += 1
            if n == k:
                out.append(i)
    return tuple(out)


# -- reading a recording's stages ------------------------------------------------------


def steps_of(c: Compile, unit: StageUnit) -> tuple[int, ...]:
    """The steps that created the Dynamo nodes a unit came from, in order."""
    by_name = {n.name: n.step for n in c.nodes}
    return tuple(sorted({by_name[n] for n in unit.dynamo_nodes
                         if by_name.get(n) is not None}))


def became(c: Compile, dynamo_node: str) -> list[tuple[Stage, StageUnit]]:
    """Every stage unit a Dynamo node became (what a node lights up in the viewer)."""
    return [(s, u) for s in c.stages for u in s.units if dynamo_node in u.dynamo_nodes]


# -- the text view ---------------------------------------------------------------------


def stages_text(c: Compile) -> str:
    """The stages as `TORCH_LOGS=aot_graphs,output_code` prints them, each followed by
    where its nodes or kernels came from."""
    if not c.stages:
        return ""
    out = ["\nafter Dynamo (AOTAutograd and Inductor):"]
    for s in c.stages:
        if s.name == "inductor_output_code":
            out.append(f"\nOutput code ({s.graph}):")
        else:
            title = _TITLES.get((s.name, s.graph), f"{s.name} ({s.graph})")
            out.append(f"\n===== {title} =====")
        out.append(_indent(s.code) if s.code else "  (no text)")
        if s.from_cache:
            out.append("  (from the cache: no graph was built, so nothing links back)")
            continue
        out += _choice_lines(s)
        if s.units:
            out.append("  came from (Dynamo nodes, and the steps that made them):")
            out += [f"    {line}" for line in _unit_lines(c, s.units)]
    return "\n".join(out)


def _choice_lines(s: Stage) -> list[str]:
    out = []
    if s.saved:
        out.append(f"  saved for backward: {', '.join(s.saved)}")
    if s.recomputed:
        out.append(f"  recomputed in backward: {', '.join(s.recomputed)}")
    return out


def _unit_lines(c: Compile, units: Iterable[StageUnit]) -> list[str]:
    out = []
    for u in units:
        if u.invented:
            out.append(f"{u.name:<24} invented (no Dynamo node)")
            continue
        steps = steps_of(c, u)
        where = f"  steps {', '.join(map(str, steps))}" if steps else ""
        out.append(f"{u.name:<24} <- {', '.join(u.dynamo_nodes)}  [{u.via}]{where}")
    return out


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


__all__ = ["StageCollector", "STAGE_NAMES", "steps_of", "became", "stages_text"]
