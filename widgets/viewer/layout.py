"""The FX graph's layout: every node a compile created, placed once by graphviz.

The browser has no graphviz, so the kernel lays each compile's graph out once, from
every node the compile ever created, and the viewer's front end draws it and reveals
the nodes step by step: nothing moves while stepping.

`layout(c)` returns plain data, no markup: `dot -Tjson` gives the geometry of every
node and edge (xdot drawing operations), which is turned into a few numbers and SVG
path strings. The label lines are sent as a list of strings beside the geometry and
the front end puts them into the page as text. So no text from the program ever
travels inside markup.

    {"width": 98, "height": 170,
     "nodes": [{"node": 0, "shape": ["ellipse", 66.5, 26.2, 29.9, 26.3],
                "text": [[66.5, 17.7], ...], "lines": ["l_x_", "input", "f32[3]"]}, ...],
     "edges": [{"tail": 0, "head": 1, "path": "M55.9,50.9C...", "arrow": "49.9,69.4 ..."}]}

`node` is the node's index in `Compile.nodes`; coordinates are points, y downwards.
Without the `dot` program the layout is `{"error": "..."}` and the viewer lists the
nodes as text instead, with the error's advice (install graphviz).

Nothing waits for dot forever. It runs with a time limit sized to the graph
(`dot_limit`), and all of one recording's graphs share one budget (`DotBudget`,
`layouts`). A graph dot does not lay out in time, or cannot lay out, or one too big to
try, gets the project's own `layered(c)` layout, and the layout says which engine made
it and why: `{"engine": "layered", "why": "dot took more than 9 s", ...}` beside
`{"engine": "dot", ...}`. The viewer shows that note under the drawing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture import Compile, Node

LABEL_WIDTH = 34  # characters of one label line in the drawing
SMALL_WIDTH = 22  # ... of an input's or a parameter's name, drawn small (its end kept)
DOT_NODES = 1500  # a larger graph is laid out here, in layers, not by dot (which takes
                  # about a minute at 20,000 nodes): `layered(c)`, linear in the graph
# dot's time limit for one graph: DOT_SECONDS plus DOT_SECONDS_PER_NODE per node. Measured
# (graphviz 2.43, 2 shared cores): a few nodes ~20 ms; a 12-layer GPT-2's 715-node graph
# 0.2 s, its 1,413-node graph 1.3 s (4 s on a loaded machine), while the 1,414-node graph
# of its recompile was still in dot's network simplex (placing x coordinates) after 5
# minutes here and 37 in another run. So 9 s at 1,414 nodes: several times what a graph
# dot can lay out needs, and seconds, not minutes, for one it cannot.
DOT_SECONDS = 2.0
DOT_SECONDS_PER_NODE = 0.005
DOT_BUDGET = 30.0  # seconds of dot, at most, for all of one recording's graphs


class DotBudget:
    """The seconds dot may still spend on one recording's graphs (`layouts`): a recording
    with many large graphs waits for dot at most this long in all, not once per graph."""

    def __init__(self, seconds: float | None = None) -> None:
        self.total = DOT_BUDGET if seconds is None else seconds
        self.left = self.total


def dot_limit(c: Compile) -> float:
    """Seconds dot may take on this compile's graph, sized to its node count."""
    return DOT_SECONDS + DOT_SECONDS_PER_NODE * len(c.nodes)


def label_lines(n: Node) -> list[str]:
    """The node's label: its name, what it does, and its dtype and shape if known. An
    input or a parameter is drawn small: the end of its name, and its dtype and shape."""
    if n.op in ("placeholder", "get_attr"):
        name = n.name if len(n.name) <= SMALL_WIDTH else "…" + n.name[-(SMALL_WIDTH - 1):]
        return [name] + ([f"{n.dtype}{n.shape or ''}"] if n.dtype else [])
    if n.op == "output":
        what = "output"
    elif n.op == "call_method":
        what = f".{n.target}()"
    else:
        what = n.target
    lines = [n.name, what]
    if n.dtype:
        lines.append(f"{n.dtype}{n.shape or ''}")
    return [_cut(line) for line in lines if line]


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


def _dot_string(text: str) -> str:
    """A double-quoted dot string whose backslashes and quotes mean themselves."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _sized_label(n: Node) -> list[str]:
    """The lines dot sizes the box for: the longer of the node's two names, so that
    the name it had before a rename fits too."""
    lines = label_lines(n)
    created = getattr(n, "created_name", None) or n.name
    if len(created) > len(lines[0]) and n.op not in ("placeholder", "get_attr"):
        lines[0] = _cut(created)
    return lines


def dot_source(c: Compile) -> str:
    """The dot text for every node the compile created (`n<k>` is `c.nodes[k]`)."""
    out = [
        "digraph G {",
        '  graph [rankdir=TB, nodesep=0.2, ranksep=0.3, fontname="Helvetica"];',
        '  node [shape=box, style="rounded", fontsize=10, fontname="Helvetica", '
        'margin="0.08,0.03", height=0.3];',
        "  edge [arrowsize=0.6];",
    ]
    index = {n.name: k for k, n in enumerate(c.nodes)}
    edges = []
    for k, n in enumerate(c.nodes):
        # Escapes in a dot label: \n is a line break; a backslash is doubled above.
        label = "\\n".join(_dot_string(line)[1:-1] for line in _sized_label(n))
        shape = ", shape=ellipse" if n.op in ("placeholder", "output") else ""
        if n.op in ("placeholder", "get_attr"):
            shape += ', fontsize=8, margin="0.04,0.01", height=0.2'
        out.append(f'  n{k} [label="{label}"{shape}];')
        for name in dict.fromkeys(n.inputs):  # each input once, in order
            a = index.get(name)
            if a is not None and a != k:
                edges.append(f"  n{a} -> n{k};")
    return "\n".join(out + edges + ["}"])


def layouts(compiles: list[Compile]) -> list[dict[str, Any]]:
    """Every compile's layout, with dot's time for all of them bounded by one `DotBudget`."""
    budget = DotBudget()
    return [layout(c, budget=budget) for c in compiles]


def layout(c: Compile, engine: str = "dot", budget: DotBudget | None = None) -> dict[str, Any]:
    """Lay the compile's whole graph out once: dot's geometry and label lines within
    dot's time limit, else the layered layout saying why; an error without dot."""
    if not c.nodes:
        return {"width": 0, "height": 0, "nodes": [], "edges": []}
    if len(c.nodes) > DOT_NODES:
        return _fallback(c, f"{len(c.nodes):,} nodes, more than dot lays out in seconds")
    limit, why = dot_limit(c), "dot took more than {} s"
    if budget is not None:
        if budget.left <= 0.05:
            return _fallback(c, f"dot had used its {_seconds(budget.total)} s for this "
                                "recording's graphs")
        if budget.left < limit:
            limit, why = budget.left, (f"dot's {_seconds(budget.total)} s for this recording's "
                                       "graphs ran out")
    start = time.monotonic()
    try:
        done = run_limited([engine, "-Tjson"], dot_source(c).encode("utf-8"), limit)
    except FileNotFoundError:
        return {"error": f"the `{engine}` program is missing (Debian: apt-get install graphviz)"}
    except OSError as e:   # there, but not runnable
        return _fallback(c, f"dot could not run: {e}"[:200])
    except subprocess.TimeoutExpired:
        return _fallback(c, why.format(_seconds(limit)))
    finally:
        if budget is not None:
            budget.left -= time.monotonic() - start
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[:200]
        return _fallback(c, f"dot failed: {said or f'exit status {done.returncode}'}")
    try:
        d = json.loads(done.stdout)
    except ValueError:
        return _fallback(c, "dot wrote no readable layout")
    return {**_geometry(d, c), "engine": "dot"}


def run_limited(argv: list[str], data: bytes, seconds: float) -> subprocess.CompletedProcess:
    """Run a program on `data` for at most `seconds`: past that (or on any exception, an
    interrupt included) it is killed with every process it started, so that nothing is
    left running and no pipe stays open, and `subprocess.TimeoutExpired` is raised."""
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(data, timeout=seconds)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # its own group: it and its children
            except ProcessLookupError:
                pass
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _seconds(t: float) -> str:
    return f"{t:.0f}" if t >= 2 else f"{t:.1f}"


def _fallback(c: Compile, why: str) -> dict[str, Any]:
    """The layered layout of a graph dot did not lay out, saying why."""
    return {**layered(c), "why": why}


def _geometry(d: dict[str, Any], c: Compile) -> dict[str, Any]:
    """dot's JSON (y upwards, xdot operations) as the viewer draws it (y downwards)."""
    _, _, width, height = (float(v) for v in d["bb"].split(","))

    def pt(p: list[float]) -> str:
        return f"{p[0]:.1f},{height - p[1]:.1f}"

    def shape(ops: list[dict[str, Any]]) -> list[Any]:
        for op in ops:
            kind = op["op"]
            if kind in ("e", "E"):
                x, y, rx, ry = op["rect"]
                return ["ellipse", round(x, 1), round(height - y, 1), round(rx, 1), round(ry, 1)]
            if kind in ("b", "B"):
                return ["path", _bezier(op["points"], pt)]
            if kind in ("p", "P"):
                return ["polygon", " ".join(pt(p) for p in op["points"])]
        return ["none"]

    nodes = []
    for obj in d.get("objects", []):
        k = int(obj["name"][1:])
        text = [[round(op["pt"][0], 1), round(height - op["pt"][1], 1)]
                for op in obj.get("_ldraw_", []) if op["op"] == "T"]
        nodes.append({"node": k, "shape": shape(obj.get("_draw_", [])), "text": text,
                      "lines": label_lines(c.nodes[k])})
    names = {obj["_gvid"]: int(obj["name"][1:]) for obj in d.get("objects", [])}
    edges = []
    for e in d.get("edges", []):
        path = next((_bezier(op["points"], pt) for op in e.get("_draw_", [])
                     if op["op"] in ("b", "B")), "")
        arrow = next((" ".join(pt(p) for p in op["points"]) for op in e.get("_hdraw_", [])
                      if op["op"] in ("p", "P")), "")
        edges.append({"tail": names[e["tail"]], "head": names[e["head"]], "path": path,
                      "arrow": arrow})
    return {"width": round(width, 1), "height": round(height, 1), "nodes": nodes, "edges": edges}


def _bezier(points: list[list[float]], pt: Any) -> str:
    """xdot's B-spline control points (1 + 3k of them) as an SVG path."""
    head, rest = points[0], points[1:]
    return "M" + pt(head) + "".join(
        "C" + " ".join(pt(p) for p in rest[j:j + 3]) for j in range(0, len(rest) - 2, 3))



def _size(n: Node) -> tuple[float, float, list[str]]:
    """A node's box (points) in the layered layout, as dot would roughly size it."""
    lines = _sized_label(n)
    small = n.op in ("placeholder", "get_attr")
    size = 8 if small else 10
    width = max(len(line) for line in lines) * size * 0.56 + 12
    return max(width, 30.0), len(lines) * size * 1.2 + 8, lines


def layered(c: Compile) -> dict[str, Any]:
    """A fast layout for a big graph, linear in its size: each node one layer below its
    lowest input (an input or a parameter just above its first user), placed left to
    right in a layer in the order of its inputs' places; boxes and straight edges, in
    the same form as `layout`'s."""
    index = {n.name: k for k, n in enumerate(c.nodes)}
    inputs = [[index[i] for i in dict.fromkeys(n.inputs) if i in index and index[i] != k]
              for k, n in enumerate(c.nodes)]
    users: list[list[int]] = [[] for _ in c.nodes]
    for k, ins in enumerate(inputs):
        for a in ins:
            users[a].append(k)
    layer = [0] * len(c.nodes)
    for k, ins in enumerate(inputs):   # FX nodes come in topological order
        layer[k] = 1 + max((layer[a] for a in ins if a < k), default=-1)
    for k, n in enumerate(c.nodes):
        if not inputs[k] and users[k]:
            layer[k] = max(0, min(layer[u] for u in users[k]) - 1)
    rows: dict[int, list[int]] = {}
    for k in range(len(c.nodes)):
        rows.setdefault(layer[k], []).append(k)
    sizes = [_size(n) for n in c.nodes]
    x = [0.0] * len(c.nodes)
    y = [0.0] * len(c.nodes)
    top, width, gap = 8.0, 0.0, 14.0
    for r in sorted(rows):
        row = rows[r]
        row = sorted(row, key=lambda k: (sum(x[a] for a in inputs[k]) / len(inputs[k])
                                            if inputs[k] else float(k)))
        left = 8.0
        height = max(sizes[k][1] for k in row)
        for k in row:
            w = sizes[k][0]
            x[k], y[k] = left + w / 2, top + height / 2
            left += w + gap
        width = max(width, left)
        top += height + 26
    height = top
    nodes = []
    for k, n in enumerate(c.nodes):
        w, hgt, lines = sizes[k]
        x0, y0, x1, y1 = x[k] - w / 2, y[k] - hgt / 2, x[k] + w / 2, y[k] + hgt / 2
        if n.op in ("placeholder", "output"):
            shape: list[Any] = ["ellipse", round(x[k], 1), round(y[k], 1), round(w / 2, 1), round(hgt / 2, 1)]
        else:
            shape = ["polygon", f"{x0:.1f},{y0:.1f} {x1:.1f},{y0:.1f} {x1:.1f},{y1:.1f} {x0:.1f},{y1:.1f}"]
        line_h = (8 if n.op in ("placeholder", "get_attr") else 10) * 1.2
        first = y[k] - line_h * (len(lines) - 1) / 2 + 3
        nodes.append({"node": k, "shape": shape,
                      "text": [[round(x[k], 1), round(first + j * line_h, 1)] for j in range(len(lines))],
                      "lines": label_lines(n)})
    edges = []
    for k, ins in enumerate(inputs):
        for a in ins:
            sx, sy = x[a], y[a] + sizes[a][1] / 2
            ex, ey = x[k], y[k] - sizes[k][1] / 2 - 5
            mid = (sy + ey) / 2
            edges.append({"tail": a, "head": k,
                          "path": f"M{sx:.1f},{sy:.1f}C{sx:.1f},{mid:.1f} {ex:.1f},{mid:.1f} {ex:.1f},{ey:.1f}",
                          "arrow": f"{ex - 3.5:.1f},{ey:.1f} {ex + 3.5:.1f},{ey:.1f} {ex:.1f},{ey + 5:.1f}"})
    return {"width": round(width, 1), "height": round(height, 1), "nodes": nodes, "edges": edges,
            "engine": "layered"}
