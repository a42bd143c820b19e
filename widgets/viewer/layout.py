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
nodes as text instead.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture import Compile, Node

LABEL_WIDTH = 34  # characters of one label line in the drawing


def label_lines(n: Node) -> list[str]:
    """The node's label: its name, what it does, and its dtype and shape if known."""
    if n.op == "placeholder":
        what = "input"
    elif n.op == "output":
        what = "output"
    elif n.op == "call_method":
        what = f".{n.target}()"
    elif n.op == "get_attr":
        what = f"attr {n.target}"
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
    if len(created) > len(lines[0]):
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
        out.append(f'  n{k} [label="{label}"{shape}];')
        for name in dict.fromkeys(n.inputs):  # each input once, in order
            a = index.get(name)
            if a is not None and a != k:
                edges.append(f"  n{a} -> n{k};")
    return "\n".join(out + edges + ["}"])


def layout(c: Compile, engine: str = "dot") -> dict[str, Any]:
    """Lay the compile's whole graph out once: geometry and label lines, or an error."""
    if not c.nodes:
        return {"width": 0, "height": 0, "nodes": [], "edges": []}
    try:
        import graphviz

        raw = graphviz.Source(dot_source(c), engine=engine).pipe(format="json", encoding="utf-8")
    except ImportError:
        return {"error": "the graphviz Python package is not installed (pip install graphviz)"}
    except Exception as e:  # graphviz.ExecutableNotFound, or dot failing on odd input
        if type(e).__name__ == "ExecutableNotFound":
            return {"error": "the `dot` program is missing (Debian: apt-get install graphviz)"}
        return {"error": f"dot failed: {str(e)[:200]}"}
    return _geometry(json.loads(raw), c)


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

