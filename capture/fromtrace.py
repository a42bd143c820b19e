"""A `TORCH_TRACE` log read into a `Recording`: the compiles of a run that cannot be repeated.

`TORCH_TRACE=DIR python prog.py` (or under `torchrun`, one file per rank) makes torch write
its structured trace, the stream tlparse reads: one record a line, a glog prefix and a JSON
header, then the record's payload on tab-indented lines::

    V1205 05:02:12.360000 8137 torch/_dynamo/convert_frame.py:303] {"dynamo_start": {"stack":
        [{"line": 12, "name": "f", "filename": 1}]}, "frame_id": 0, "frame_compile_id": 0,
        "attempt": 0}
    V1205 05:02:12.419000 8137 torch/_dynamo/output_graph.py:2841] {"dynamo_output_graph":
        {...}, "frame_id": 0, "frame_compile_id": 0, "attempt": 1, "has_payload": "d012..."}
    \tclass GraphModule(torch.nn.Module):
    \t    def forward(self, L_x_: "f32[4][1]cpu"):

`frame_id`, `frame_compile_id` and `attempt` make Dynamo's compile id (`0/0`, `0/0_1`);
`has_payload` is the md5 of the payload's lines joined by newlines, so a payload cut short
(a log of a run that was killed) is told from a whole one. File names in stacks are
interned by `{"str": [name, index]}` records.

What the log holds becomes the records a live recording makes (`Compile`, `Guard`,
`GraphBreak`, `Node`, `Stage`, `Event`), each holding only what the log says: the compile
ids and how they relate (restarted attempts, recompiles and what they replaced, resume
functions), each graph break's reason, explanation, hints and user stack, recompile
reasons as Dynamo wrote them, the guard tree and its checks with their user lines, the
output graph as Dynamo printed it, AOTAutograd's and Inductor's stages (their code; no
links to Dynamo's nodes, which need the live graphs), and compile times. The log holds no
steps, no stack and no locals and no source: every compile has zero steps, and a note
(`EventKind.NOTE`, the recording's first event, `missing_note`) says so once, with the
command that records the program step by step.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .recording import (
    CodeInfo, Compile, Event, EventKind, GraphBreak, Guard, Node, Outcome, Recording, Stage,
)
from .text import MAX_NAME, MESSAGE_LIMIT, cut, exact, listing, shorten

_HEADER = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] (\{.*)$")
_LEAF = re.compile(r"^[| ]*\+- ([A-Z][A-Z0-9_]*): (.*)$")
# the tail of a guard's comment: `tests/problems/print_in_forward.py:13 in f (HINT: ...)`
_GUARD_PLACE = re.compile(r"^(.+?):(\d+) in (\S+)(?: \(HINT: .*\))?$")
_USER_FRAME = re.compile(r'^  File "(.+)", line (\d+), in (.+)$')
_GB_LINK = re.compile(r"https?://\S+/gb/gb(\d{4})\.html")
_SKIP_HEAD = "Graph break: torch.compile cannot properly resume from this graph break"
_GAVE_UP = "Failed to handle graph break gracefully. Skipping the function"
_ANOTHER = "*** While handling this graph break, another graph break occurred: ***"
_LIMIT = "Dynamo recompile limit exceeded"

# torch's name of a stage -> Dynamo Lab's (`capture.stages.STAGE_NAMES`)
_STAGES = {"aot_joint_graph": ("aot_joint", "joint"),
           "aot_forward_graph": ("aot_forward", "forward"),
           "aot_inference_graph": ("aot_forward", "inference"),
           "aot_backward_graph": ("aot_backward", "backward"),
           "inductor_post_grad_graph": ("inductor_post_grad", ""),
           "inductor_output_code": ("inductor_output_code", "")}
# the records (by kind, or by artifact name) a compile is read from
_READ = frozenset(("dynamo_output_graph", "dynamo_cpp_guards_str", "compilation_metrics",
                   "dynamo_graph_break_reason", "recompile_reasons", *_STAGES))
_AMBIENT_KINDS = frozenset(("GLOBAL_STATE", "TORCH_FUNCTION_MODE_STACK", "DEFAULT_DEVICE",
                            "GRAD_MODE", "DETERMINISTIC_ALGORITHMS", "SHAPE_ENV"))

MISSING = ("read from a TORCH_TRACE log, which holds compile ids, graph breaks with their "
           "reasons and user stacks, recompile reasons, guards, output graphs, the stages "
           "after Dynamo and compile times, but not Dynamo's steps, stack, locals or the "
           "source: to step through a frame, record the program: {command}")


class TraceError(Exception):
    """A path that is not a readable TORCH_TRACE log, in one line saying what to give."""


@dataclass
class Entry:
    """One record of the log: its kind (`dynamo_start`, `artifact`, ...), its header, and
    its payload (None when it has none, or when the log ended inside it)."""

    kind: str
    header: dict[str, Any]
    payload: str | None = None
    cut: bool = False   # the payload did not match its md5: the log ends inside it

    @property
    def key(self) -> tuple[int, int, int] | None:
        h = self.header
        if "frame_id" not in h or "compiled_autograd_id" in h:
            return None
        try:
            return int(h["frame_id"]), int(h["frame_compile_id"]), int(h.get("attempt") or 0)
        except (TypeError, ValueError):
            return None

    @property
    def name(self) -> str:
        """An artifact's name, or the kind."""
        meta = self.header.get(self.kind)
        if self.kind == "artifact" and isinstance(meta, dict):
            return str(meta.get("name", ""))
        return self.kind


@dataclass
class TraceLog:
    """One file of a TORCH_TRACE folder (one process, one rank), read."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    rank: int | None = None
    truncated: bool = False   # the file ends mid-line or inside a payload
    unreadable: int = 0       # lines that were neither a record nor a payload
    # Dynamo's compile id -> seconds its compile took, restarts included (its metrics:
    # `entire_frame_compile_time_s`), filled in by `recording_of`
    compile_times: dict[str, float] = field(default_factory=dict)


# -- reading the files -------------------------------------------------------------------


def trace_files(path: str | Path) -> list[Path]:
    """The log files a path names: the file itself, or every file TORCH_TRACE wrote in a
    folder (`dedicated_log_torch_trace_*.log`, gzip'd or not; else every `.log`/`.gz`)."""
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such file or folder; give a TORCH_TRACE folder or one "
                         "of its files (made by TORCH_TRACE=DIR python prog.py)")
    if path.is_file():
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file()
                   and p.name.startswith("dedicated_log_torch_trace"))
    if not files:
        files = sorted(p for p in path.iterdir() if p.is_file()
                       and p.suffix in (".log", ".gz"))
    if not files:
        raise TraceError(f"{path} holds no TORCH_TRACE log (no dedicated_log_torch_trace_*.log "
                         "file); run the program with TORCH_TRACE=" f"{path} and give that folder")
    return files


def _lines(path: Path) -> Iterator[str | None]:
    """The file's lines, gunzipped where it is gzip'd; None last for a gzip file cut short."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f:   # type: ignore[operator]
            for raw in f:
                yield raw.decode("utf-8", "replace")
    except (EOFError, gzip.BadGzipFile, OSError):
        if not gz:
            raise
        yield None   # a gzip'd log cut short: what was decompressed is kept


def read_log(path: str | Path) -> TraceLog:
    """The records of one log file; TraceError when it is not a TORCH_TRACE log."""
    path = Path(path)
    log = TraceLog(path)
    current: Entry | None = None
    payload: list[str] = []
    seen_lines = 0

    def close() -> None:
        if current is None:
            return
        expected = current.header.get("has_payload")
        if expected is None and not payload:
            return
        text = "\n".join(payload)
        if isinstance(expected, str) and hashlib.md5(text.encode("utf-8")).hexdigest() != expected:
            current.cut = True
            log.truncated = True
        current.payload = text

    try:
        for line in _lines(path):
            seen_lines += 1
            if line is None:
                log.truncated = True
                break
            ended = line.endswith("\n")
            line = line.rstrip("\n")
            if line.startswith("\t"):
                if current is not None:
                    payload.append(line[1:])
                if not ended:
                    log.truncated = True
                continue
            m = _HEADER.match(line)
            header = None
            if m:
                try:
                    header = json.loads(m.group(1))
                except json.JSONDecodeError:
                    header = None
            if not isinstance(header, dict):
                if not ended and log.entries:
                    log.truncated = True   # the last line, cut
                elif line.strip():
                    log.unreadable += 1
                if not log.entries and seen_lines >= 20:
                    break
                continue
            close()
            kinds = [k for k in header if k not in (
                "frame_id", "frame_compile_id", "attempt", "has_payload", "rank",
                "compiled_autograd_id")]
            current, payload = Entry(kinds[0] if kinds else "", header), []
            log.entries.append(current)
            if log.rank is None and isinstance(header.get("rank"), int):
                log.rank = header["rank"]
            if not ended:
                log.truncated = True
        close()
    except OSError as e:
        raise TraceError(f"{path}: cannot read it ({e.strerror or e})") from None
    if not log.entries and seen_lines == 0:
        raise TraceError(f"{path} is empty: the run wrote nothing to it; give a log of a run "
                         "that compiled (TORCH_TRACE=DIR python prog.py)")
    if not log.entries:
        raise TraceError(f"{path} is not a TORCH_TRACE log (no line of it is a structured "
                         "trace record); give a file or folder written with TORCH_TRACE=DIR")
    if log.rank is None:
        m = re.search(r"_rank_(\d+)_", path.name)
        log.rank = int(m.group(1)) if m else None
    return log


# -- the records -------------------------------------------------------------------------


def compile_id(key: tuple[int, int, int]) -> str:
    frame, count, attempt = key
    return f"{frame}/{count}" + (f"_{attempt}" if attempt else "")


def _dtype_shape(annotation: str) -> tuple[str | None, str | None]:
    """`f32`, `[4, 3]` from a printed graph's `"f32[4, 3][3, 1]cpu"`; `Sym(s0)` has none."""
    m = re.match(r"^([a-z]+\d*)(\[[^\]]*\])", annotation)
    return (m.group(1), m.group(2)) if m else (None, None)


_ASSIGN = re.compile(r'^(\w+)(?:: "([^"]*)")? = (.*)$')
_PARAM = re.compile(r'(\w+)(?:: "([^"]*)")?')


def graph_nodes(code: str) -> list[Node]:
    """The nodes of Dynamo's output graph, read from the graph as the log prints it
    (`GraphModule.print_readable`): placeholders from `forward`'s parameters, one node per
    assignment of its body, and the output. Targets are as printed (`sin`, `torch.relu`)."""
    lines = code.splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip().startswith("def forward(")), None)
    if start is None:
        return []
    head = lines[start].split("  # ")[0].strip()
    end = start
    while not head.endswith("):") and end + 1 < len(lines):
        # a signature printed one parameter a line, each with a comment
        end += 1
        head += " " + lines[end].split("  # ")[0].strip()
    params = head[len("def forward("):head.rfind("):")] if "):" in head else ""
    placeholders: dict[str, Node] = {}
    nodes: list[Node] = []
    for m in _PARAM.finditer(params):
        name = m.group(1)
        if name == "self":
            continue
        dtype, shape = _dtype_shape(m.group(2) or "")
        node = Node(name=name, op="placeholder", target=name, shape=shape, dtype=dtype)
        placeholders[name] = node
        nodes.append(node)
    indent = len(lines[start]) - len(lines[start].lstrip())
    names = set(placeholders)
    for line in lines[end + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break   # the end of forward (a nested subgraph's class follows)
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("return"):
            args = text[len("return"):].strip()
            used = dict.fromkeys(n for n in re.findall(r"\b\w+\b", args) if n in names)
            nodes.append(Node(name="output", op="output", target="output",
                              args=shorten(args, 500), inputs=tuple(used)))
            break
        stmts = text.split(";  ")
        stmt = stmts[0]
        m = _ASSIGN.match(stmt)
        if m is None:
            # an in-place store prints as the store, then the node named after it:
            # `x[(i,)] = True;  setitem = x;  ...`
            alias = re.match(r"^(\w+) = (\w+)$", stmts[1]) if len(stmts) > 1 else None
            if alias and alias.group(2) in names and "] = " in stmt:
                name = alias.group(1)
                nodes.append(Node(name=name, op="call_function", target="operator.setitem",
                                  args=shorten(stmt, 500), inputs=tuple(dict.fromkeys(
                                      n for n in re.findall(r"\b\w+\b", stmt) if n in names))))
                names.add(name)
            continue
        name, annotation, expr = m.group(1), m.group(2) or "", m.group(3)
        if expr in placeholders and annotation == "":
            # `l_x_ = L_x_`: the placeholder as the graph names it
            k = nodes.index(placeholders[expr])
            nodes[k] = Node(name=name, op="placeholder", target=expr,
                            shape=nodes[k].shape, dtype=nodes[k].dtype)
            names.add(name)
            continue
        dtype, shape = _dtype_shape(annotation)
        call = re.match(r"^([\w.]+)\((.*)\)$", expr)
        if expr.startswith("self.") and call is None:
            op, target = "get_attr", expr[len("self."):]
        elif call and call.group(1).startswith("self."):
            op, target = "call_module", call.group(1)[len("self."):]
        elif call and "." in call.group(1) and call.group(1).split(".", 1)[0] in names:
            op, target = "call_method", call.group(1).split(".", 1)[1]
        elif call:
            op, target = "call_function", call.group(1)
        else:
            op, target = "call_function", expr
        args = call.group(2) if call else expr
        if op == "call_method":   # the receiver is the method's first argument
            receiver = call.group(1).split(".", 1)[0]
            args = f"{receiver}, {args}" if args else receiver
        used = dict.fromkeys(n for n in re.findall(r"\b\w+\b", args) if n in names)
        nodes.append(Node(name=name, op=op, target=shorten(target, MAX_NAME),
                          args=shorten(args, 500), inputs=tuple(used),
                          shape=shape, dtype=dtype))
        names.add(name)
    return nodes


def guard_records(tree: str) -> list[Guard]:
    """Each check of a guard tree as the log prints it, with the user line and place its
    comment names (`# y = x.sin()  # prog.py:13 in f`); none where it names none."""
    from .guards import _leaf_source   # the tree's checks, read as a live recording reads them

    out = []
    for line in tree.splitlines():
        m = _LEAF.match(line)
        if m is None:
            continue
        kind, rest = m.group(1), m.group(2)
        parts = rest.split("  # ")
        check = parts[0].rstrip()
        text = exact(f"{kind}: {check}")
        comments = [p.strip() for p in parts[1:]]
        lineno = user_line = code_name = None
        place = _GUARD_PLACE.match(comments[-1]) if comments else None
        if place:
            lineno, code_name = int(place.group(2)), place.group(3)
            said = "  # ".join(comments[:-1]).strip()
            user_line = shorten(said, MAX_NAME) if said else None
        ambient = kind in _AMBIENT_KINDS or any("init_ambient_guards" in c for c in comments)
        if ambient:
            lineno = user_line = code_name = None   # torch's own line, not the program's
        out.append(Guard(text=text, kind=kind, source=_leaf_source(text), ambient=ambient,
                         lineno=lineno, line=user_line, code_name=code_name,
                         tree_kind=kind, leaf=len(out)))
    return out


@dataclass
class _UserFrame:
    file: str
    lineno: int
    function: str
    line: str | None


def _user_frames(text: str) -> list[_UserFrame]:
    frames: list[_UserFrame] = []
    lines = text.splitlines()
    for k, line in enumerate(lines):
        m = _USER_FRAME.match(line)
        if m:
            code = lines[k + 1].strip() if k + 1 < len(lines) and lines[k + 1].startswith("    ") else None
            frames.append(_UserFrame(m.group(1), int(m.group(2)), m.group(3), code or None))
    return frames


def graph_break(payload: str, c: Compile) -> tuple[GraphBreak, bool]:
    """The graph break an artifact `dynamo_graph_break_reason` describes, and whether it
    made Dynamo skip the frame. Its line is the innermost frame of its user stack in the
    compiled frame's own file (none when the stack names no such frame)."""
    internal = payload.find("\nTraceback (most recent call last):")
    said = payload[:internal] if internal >= 0 else payload
    skipped = said.startswith(_SKIP_HEAD)
    if "User code traceback:" in said:
        user = said[said.index("User code traceback:"):]
    elif "The graph break occurred in the following user code:" in said:
        user = said[said.index("The graph break occurred in the following user code:"):]
    else:
        user = ""
    frames = _user_frames(user)
    mine = [f for f in frames if f.file == c.filename] or []
    place = mine[-1] if mine else None
    head, _, body = said.partition("Graph Break Reason: ")
    message = body.rstrip() if body else said.rstrip()
    if message.startswith(_GAVE_UP):
        # a break Dynamo could not handle: it skips the frame, which runs eagerly
        skipped = True
        message = message.split("\n", 1)[1].strip("\n") if "\n" in message else ""
    lines = [line for line in message.splitlines()]
    reason = ""
    if lines:
        first = lines[0].strip()
        rest = [line.strip() for line in lines[1:] if line.strip()]
        reason = rest[0] if first.startswith("Encountered graph break when attempting") and rest else first
    if _ANOTHER in message:
        # the break Dynamo met while handling the first names the whole (its type first)
        other = [line.strip() for line in message.split(_ANOTHER, 1)[1].splitlines() if line.strip()]
        if other:
            reason = f"{other[0]}: {reason}"
    if said.startswith(_SKIP_HEAD) and internal >= 0:
        # the break Dynamo could not resume from: the exception below, after its traceback
        m = re.search(r"^torch\._dynamo\.exc\.\w+: (.*(?:\n(?!\S).*|\n)*)", payload[internal:],
                      re.MULTILINE)
        if m:
            message = m.group(1).rstrip()
            reason = message.splitlines()[0].strip()
            lines = message.splitlines()
    explanation = next((line.strip()[len("Explanation: "):] for line in lines
                        if line.strip().startswith("Explanation: ")), None)
    hints = tuple(line.strip()[len("Hint: "):] for line in lines if line.strip().startswith("Hint: "))
    link = _GB_LINK.search(message)
    return GraphBreak(
        reason=exact(reason or "graph break"),
        lineno=place.lineno if place else None,
        line=shorten(place.line, MAX_NAME) if place and place.line else None,
        code_name=place.function if place else None,
        explanation=exact(explanation) if explanation else None,
        message=exact(message), hints=tuple(exact(h) for h in hints),
        link=link.group(0) if link else None,
        gb_id=f"GB{link.group(1)}" if link else None), skipped


def _stage(entry: Entry, c: Compile) -> Stage | None:
    name, graph = _STAGES[entry.name]
    code = listing((entry.payload or "").rstrip("\n")) or ""
    if not graph:
        m = re.search(r"# AOT ID: \['[^']*_(forward|backward|inference)'\]", code[:400])
        head = "\n".join(code.splitlines()[:2])
        if m:
            graph = m.group(1)
        elif re.search(r"\btangents_\d+: ", head):
            graph = "backward"
        elif any(s.graph == "inference" for s in c.stages):
            graph = "inference"
        else:
            graph = "forward"
    return Stage(name=name, code=code, graph=graph)


def _seconds(metrics: dict[str, Any]) -> str:
    t = metrics.get("entire_frame_compile_time_s")
    if not isinstance(t, (int, float)):
        return ""
    parts = [f"compile time {t:.3f} s"]
    for key, word in (("backend_compile_time_s", "backend"),
                      ("inductor_compile_time_s", "Inductor")):
        v = metrics.get(key)
        if isinstance(v, (int, float)):
            parts.append(f"{word} {v:.3f} s")
    return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


def _short_path(path: str) -> str:
    return path.rsplit("/", 1)[-1]


class _Builder:
    """Turns one log's entries into a Recording, compile by compile, in log order."""

    def __init__(self, log: TraceLog) -> None:
        self.log = log
        self.files: dict[int, str] = {}
        self.compiles: dict[tuple[int, int, int], Compile] = {}
        self.metrics: dict[tuple[int, int, int], dict[str, Any]] = {}
        self.breaks: dict[tuple[int, int, int], bool] = {}   # key -> the break skipped the frame
        self.recording = Recording(python_version="")
        self.program: str | None = None

    def compile(self, key: tuple[int, int, int]) -> Compile:
        c = self.compiles.get(key)
        if c is None:
            earlier = self.compiles.get((key[0], key[1], key[2] - 1)) if key[2] else None
            if earlier is None:   # the same frame's code, compiled before (a recompile)
                earlier = next((o for k, o in reversed(self.compiles.items()) if k[0] == key[0]), None)
            c = Compile(compile_id=compile_id(key),
                        code_name=earlier.code_name if earlier else "?",
                        filename=earlier.filename if earlier else "?",
                        firstlineno=earlier.firstlineno if earlier else 0)
            self.compiles[key] = c
        return c

    def frame_file(self, index: Any) -> str:
        return self.files.get(index, "?") if isinstance(index, int) else str(index or "?")

    def build(self) -> Recording:
        for e in self.log.entries:
            try:
                self.entry(e)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                # one record this reader does not understand: said, never fatal
                self.recording.events.append(Event(
                    EventKind.WARNING, compile_id(e.key) if e.key else None,
                    shorten(f"a {e.name} record of the log could not be read "
                            f"({type(exc).__name__}: {exc})", 300)))
        self.finish()
        return self.recording

    def find_program(self, meta: Any) -> None:
        """The script that ran: the file of a `<module>` frame in a logged stack."""
        if not isinstance(meta, dict):
            return
        for key in ("stack", "user_stack"):
            frames = meta.get(key)
            for frame in frames if isinstance(frames, list) else ():
                if isinstance(frame, dict) and frame.get("name") == "<module>":
                    self.program = self.frame_file(frame.get("filename"))
                    return

    def entry(self, e: Entry) -> None:
        h = e.header
        if e.kind == "str":
            name, index = h["str"]
            self.files[int(index)] = str(name)
            return
        if e.name == "torch_version" and e.payload and not e.cut:
            self.recording.torch_version = str(json.loads(e.payload).get("pytorch_version", ""))
            return
        if self.program is None:
            self.find_program(h.get(e.kind))
        key = e.key
        if key is None:
            return
        if e.kind == "dynamo_start":
            c = self.compile(key)
            stack = h["dynamo_start"].get("stack") or []
            if stack:
                top = stack[-1]
                c.code_name = shorten(str(top.get("name", "?")), MAX_NAME)
                c.filename = shorten(self.frame_file(top.get("filename")), MAX_NAME)
                c.firstlineno = int(top.get("line") or 0)
            return
        name = e.name
        if not (e.kind in _READ or name in _READ or name.endswith("_MODIFIED_BYTECODE")):
            return   # chromium events, tensor descriptions, ...: no compile is made of them
        if e.payload is None and e.kind != "compilation_metrics":
            return
        if e.cut:
            return   # a payload the log ends inside: not shown as if whole
        c = self.compile(key)
        if e.kind == "dynamo_output_graph":
            c.graph_code = listing(e.payload.rstrip("\n"))
            c.nodes = graph_nodes(e.payload)
        elif e.kind == "dynamo_cpp_guards_str":
            tree = "\n".join(line for line in e.payload.splitlines()
                             if not line.startswith("Guard latency"))
            c.guard_tree = exact(tree.rstrip("\n"))
            c.guard_details = guard_records(tree)
            c.guards = [g.text for g in c.guard_details]
        elif name == "dynamo_graph_break_reason":
            gb, skipped = graph_break(e.payload, c)
            gb = self.with_registry(gb)
            c.graph_break = gb
            self.breaks[key] = skipped
            self.recording.events.append(Event(
                EventKind.GRAPH_BREAK, c.compile_id,
                f"line {gb.lineno} in {gb.code_name}: {gb.reason}" if gb.lineno is not None
                else gb.reason))
        elif name == "recompile_reasons":
            text = e.payload
            try:
                reasons = json.loads(text) if text.startswith("[") else [text]
            except json.JSONDecodeError:
                reasons = [text]
            c.recompile_reasons = [exact(str(r)) for r in reasons]
            first = re.match(r"^(\d+/\d+(?:_\d+)?): ", c.recompile_reasons[0]) if reasons else None
            c.replaces = first.group(1) if first else None
        elif name.endswith("_MODIFIED_BYTECODE"):
            c.modified_bytecode = listing(e.payload.rstrip("\n"))
        elif name in _STAGES or e.kind in _STAGES:
            e_name = name if name in _STAGES else e.kind
            stage = _stage(Entry(e_name, h, e.payload), c)
            if stage is not None:
                c.stages = (*c.stages, stage)
        elif e.kind == "compilation_metrics":
            self.metrics[key] = h["compilation_metrics"]

    def with_registry(self, gb: GraphBreak) -> GraphBreak:
        """The break's entry in the graph-break registry, as a live recording reads it: from
        the installed torch, so only for a log the same torch wrote."""
        import torch

        if not gb.gb_id or self.recording.torch_version != torch.__version__:
            return gb
        from .explain import registry_entry

        gb_id, entry = registry_entry(gb.reason, gb.link, gb.message)
        return dataclasses.replace(gb, registry=entry) if gb_id == gb.gb_id else gb

    def kept_break(self, key: tuple[int, int, int], c: Compile, gb: GraphBreak) -> GraphBreak:
        """The break the kept attempt stops at: where its resume function starts
        (`torch_dynamo_resume_in_f_at_530` names the line), which is the call in the frame
        itself when the first attempt broke inside an inlined call; its text from the
        break's user stack."""
        prefix = f"torch_dynamo_resume_in_{c.code_name}_at_"
        after = list(self.compiles.items())
        after = after[after.index((key, c)) + 1:]
        lineno = next((int(o.code_name[len(prefix):]) for _, o in after
                       if o.code_name.startswith(prefix) and o.filename == c.filename
                       and o.code_name[len(prefix):].isdigit()), None)
        if lineno is None or lineno == gb.lineno:
            return gb
        frame = next((f for f in reversed(_user_frames(gb.message or ""))
                      if f.function == c.code_name and f.lineno == lineno), None)
        return dataclasses.replace(
            gb, lineno=lineno, code_name=c.code_name,
            line=shorten(frame.line, MAX_NAME) if frame and frame.line else None)

    def failure(self, c: Compile, m: dict[str, Any] | None) -> None:
        """A failed or skipped compile's error as a live recording keeps it: the type and
        the first line, and Dynamo's whole message beside it (bounded)."""
        if not m or not m.get("fail_type"):
            return
        reason = str(m.get("fail_reason") or "")
        first = next((line.strip() for line in reason.splitlines() if line.strip()), "")
        c.error = shorten(f"{m['fail_type']}: {first}".rstrip(": "), MESSAGE_LIMIT)
        c.error_message = cut(exact(f"{m['fail_type']}: {reason}"), MESSAGE_LIMIT)

    def refused(self, c: Compile, m: dict[str, Any], events: list[Event]) -> bool:
        """A compile the recompile limit refused: an event, as a live recording has it."""
        fail_type, reason = m.get("fail_type") or "", str(m.get("fail_reason") or "")
        if fail_type != "FailOnRecompileLimitHit" and not reason.startswith(_LIMIT):
            return False
        limit = re.search(r"currently set to (\d+)", reason)
        said = f" (recompile_limit={limit.group(1)})" if limit else ""
        if fail_type == "FailOnRecompileLimitHit":
            then = ("the call raised FailOnRecompileLimitHit (fullgraph=True) instead of "
                    "running eagerly")
        else:
            then = "calls that fail every guard now run eagerly, without compiling"
        because = (" because " + c.recompile_reasons[0].splitlines()[0]) if c.recompile_reasons else ""
        events.append(Event(EventKind.CACHE_LIMIT, c.compile_id,
                            f"{c.code_name}: hit a recompile limit{said}: {then}{because}"))
        return True

    def finish(self) -> None:
        rec = self.recording
        for m in self.metrics.values():
            t = m.get("entire_frame_compile_time_s")
            if isinstance(t, (int, float)) and m.get("compile_id"):
                self.log.compile_times[str(m["compile_id"])] = float(t)
        keys = list(self.compiles)
        later = {(k[0], k[1]): max(a for f, n, a in keys if (f, n) == (k[0], k[1])) for k in keys}
        events: list[Event] = []
        for key in keys:
            c = self.compiles[key]
            m = self.metrics.get(key)
            if m:   # the metrics name the code even where dynamo_start was cut off
                if c.code_name == "?" and m.get("co_name"):
                    c.code_name = shorten(str(m["co_name"]), MAX_NAME)
                if c.filename == "?" and m.get("co_filename"):
                    c.filename = shorten(str(m["co_filename"]), MAX_NAME)
                if not c.firstlineno and isinstance(m.get("co_firstlineno"), int):
                    c.firstlineno = m["co_firstlineno"]
                if not rec.python_version and m.get("python_version"):
                    rec.python_version = str(m["python_version"]).split()[0]
            if m is not None and self.refused(c, m, events):
                continue
            c.codes = [CodeInfo(name=c.code_name, filename=c.filename, firstlineno=c.firstlineno)]
            earlier = self.compiles.get((key[0], key[1], key[2] - 1)) if key[2] else None
            if key[2] < later[(key[0], key[1])]:
                c.outcome = Outcome.RESTARTED
                c.restart_reason = c.graph_break.reason if c.graph_break else None
            elif self.breaks.get(key):
                c.outcome = Outcome.SKIPPED   # Dynamo gave up on the frame: it runs eagerly
                self.failure(c, m)
            elif m is not None and m.get("fail_type"):
                c.outcome = Outcome.ERROR
                self.failure(c, m)
            elif m is not None:
                if c.graph_break is None and earlier is not None and earlier.graph_break is not None:
                    # the attempt after a restart compiles up to the break its first attempt met
                    c.graph_break = self.kept_break(key, c, earlier.graph_break)
                if c.graph_break is not None:
                    c.outcome = Outcome.GRAPH_BREAK
                elif m.get("has_guarded_code") is False or (
                        c.graph_code is None and m.get("graph_node_count") is None):
                    c.outcome = Outcome.SKIPPED   # Dynamo made no graph: the frame runs eagerly
                    c.error = "No ops traced (the log holds no graph for it)"
                else:
                    c.outcome = Outcome.COMPILED
            else:
                c.outcome = Outcome.UNFINISHED
            kind = EventKind.RECOMPILE if c.recompile_reasons else EventKind.COMPILE
            message = f"{c.code_name} ({_short_path(c.filename)}:{c.firstlineno})"
            if c.recompile_reasons:
                message += " because " + c.recompile_reasons[0].splitlines()[0]
            if m is not None and _seconds(m):
                message += f"; {_seconds(m)}"
            events.append(Event(kind, c.compile_id, message))
            if c.outcome == Outcome.RESTARTED:
                events.append(Event(EventKind.RESTART, c.compile_id, c.restart_reason or "restarted"))
            elif c.outcome == Outcome.ERROR:
                events.append(Event(EventKind.ERROR, c.compile_id, c.error or ""))
            elif c.outcome == Outcome.UNFINISHED and self.log.truncated:
                events.append(Event(EventKind.ENDED, c.compile_id,
                                    "the log ends before this compile finished"))
            rec.compiles.append(c)
        # graph-break events, read above, go after their compile's
        breaks = [e for e in rec.events if e.kind == EventKind.GRAPH_BREAK]
        others = [e for e in rec.events if e.kind != EventKind.GRAPH_BREAK]
        ordered: list[Event] = []
        for e in events:
            ordered.append(e)
            if e.kind in (EventKind.COMPILE, EventKind.RECOMPILE):
                ordered += [b for b in breaks if b.compile_id == e.compile_id]
        rec.events = [Event(EventKind.NOTE, None, missing_note(self.program)),
                      *ordered, *others]
        if self.log.truncated:
            rec.truncated = True
            rec.ended_by = "the log ends mid-record: the run was cut off, or the file was"
            rec.events.append(Event(EventKind.ENDED, None, rec.ended_by))


def missing_note(program: str | None) -> str:
    """What the log does not hold, said once, with the command that records it (the
    program's own file where a logged stack names it, `<module>`)."""
    script = program if program and program.endswith(".py") else "PROGRAM.py"
    return MISSING.format(command=f"dynamo-lab record {script} -o trace.html")


def recording_of(log: TraceLog) -> Recording:
    """The Recording one log file holds (zero steps; see the module's docstring)."""
    return _Builder(log).build()


def read(path: str | Path) -> list[tuple[TraceLog, Recording]]:
    """Every log a path names (a file, or a TORCH_TRACE folder: one file per process or
    rank), each read into a Recording; in rank order where the logs name ranks."""
    logs = [read_log(p) for p in trace_files(path)]
    logs.sort(key=lambda g: (g.rank is None, g.rank if g.rank is not None else 0, g.path.name))
    return [(log, recording_of(log)) for log in logs]


def note_of(recording: Recording) -> str | None:
    """The note saying what a recording read from a log lacks (None for a live one)."""
    first = recording.events[0] if recording.events else None
    if first is not None and first.kind == EventKind.NOTE and first.message.startswith(
            "read from a TORCH_TRACE log"):
        return first.message
    return None


__all__ = ["Entry", "TraceError", "TraceLog", "graph_break", "graph_nodes", "guard_records",
           "missing_note", "note_of", "read", "read_log", "recording_of", "trace_files"]
