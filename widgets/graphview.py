"""The FX graph pane: laid out once per compile, revealed step by step with CSS.

`layout(c)` draws every node the compile ever created with graphviz, once. Each
node and edge carries classes saying its place in the order of appearance, so a
step is shown by a short `<style>` block (`step_style`) that hides what does not
exist yet and outlines what the step added. Nothing is laid out again while
stepping, so no node moves, and the browser only receives a few hundred bytes.

NOTE (rank classes): the node revealed k-th gets the classes of every prefix of
k written with a fixed number of digits, e.g. 347 -> `r3 r34 r347`. Hiding every
rank >= v then takes at most 9 selectors per digit: for v = 347, `r4`…`r9`,
`r35`…`r39` and `r347`…`r349`.

Nodes are drawn under the names they have in the final graph (the recording
settles Dynamo's in-place renames); a node that did not make it into the final
graph is drawn dashed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .panes import MESSAGE_LIMIT, clip, listing, visible

if TYPE_CHECKING:
    from capture import Compile, Node

LABEL_WIDTH = 34


@dataclass(frozen=True)
class GraphLayout:
    """A compile's graph laid out once, and the step at which each drawn node appears."""

    svg: str | None            # None when graphviz could not draw it
    labels: tuple[str, ...]    # one-line labels in the same order
    names: tuple[str, ...]     # node names in order of appearance
    reveal: tuple[int, ...]    # step at which drawn node k appears, non-decreasing
    digits: int
    text: str                  # the nodes as text, for the fallback and for tests
    error: str | None = None

    def visible(self, i: int) -> int:
        """How many drawn nodes exist at the end of step i."""
        return bisect_right(self.reveal, i)

    def rank_of(self, name: str) -> int | None:
        """The place of a node in the order of appearance."""
        return self.names.index(name) if name in self.names else None


def _label(n: Node) -> str:
    head = n.name
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
    lines = [head, what]
    if n.dtype:
        lines.append(f"{n.dtype}{n.shape or ''}")
    return "\n".join(_cut(visible(line)) for line in lines if line)


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


def _dot_string(text: str) -> str:
    """A double-quoted dot string whose backslashes and quotes mean themselves."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _rank_classes(k: int, digits: int) -> str:
    s = str(k).zfill(digits)
    return " ".join("r" + s[:j] for j in range(1, digits + 1))


def dot_source(c: Compile) -> tuple[str, GraphLayout]:
    """The dot text for every node the compile created, and the layout minus its SVG."""
    nodes = c.nodes
    last = max(len(c.steps) - 1, 0)
    # Nodes made after the last recorded step (the output node; any made past the step
    # cap) appear at the last step: that is when the graph is complete.
    order = sorted(range(len(nodes)), key=lambda j: (nodes[j].step if nodes[j].step is not None
                                                     else last, j))
    rank = {nodes[j].name: k for k, j in enumerate(order)}
    reveal = tuple(nodes[j].step if nodes[j].step is not None else last for j in order)
    digits = len(str(max(len(nodes) - 1, 0)))
    lines = [
        "digraph G {",
        '  graph [rankdir=TB, nodesep=0.2, ranksep=0.3, bgcolor="transparent", '
        'fontname="Helvetica"];',
        '  node [shape=box, style="rounded", fontsize=10, fontname="Helvetica", '
        'margin="0.08,0.03", height=0.3];',
        "  edge [arrowsize=0.6];",
    ]
    edges, text_rows = [], []
    for k, j in enumerate(order):
        n = nodes[j]
        label = _label(n)
        classes = f"dl-op-{n.op} {_rank_classes(k, digits)}" + ("" if n.in_graph else " dl-dropped")
        shape = ", shape=ellipse" if n.op in ("placeholder", "output") else ""
        lines.append(f'  n{k} [label={_dot_string(label)}, class="{classes}"{shape}];')
        for name in dict.fromkeys(n.inputs):  # each input once, in order
            a = rank.get(name)
            if a is not None and a != k:
                edges.append(f'  n{a} -> n{k} [class="{_rank_classes(max(a, k), digits)}"];')
        step = "after tracing" if n.step is None else f"step {n.step}"
        gone = "" if n.in_graph else "   (not in the final graph)"
        text_rows.append(f"{n}   # {step}{gone}")
    lines += edges + ["}"]
    partial = GraphLayout(svg=None, labels=tuple(_label(nodes[j]).replace("\n", " · ") for j in order),
                          names=tuple(nodes[j].name for j in order), reveal=reveal,
                          digits=digits, text="\n".join(text_rows))
    return "\n".join(lines), partial


def layout(c: Compile, engine: str = "dot") -> GraphLayout:
    """Lay out the whole graph once; without the `dot` program, a layout with no SVG."""
    source, partial = dot_source(c)
    if not c.nodes:
        return partial
    try:
        import graphviz

        svg = graphviz.Source(source, engine=engine).pipe(format="svg", encoding="utf-8")
    except ImportError:
        return _replace_error(partial, "the graphviz Python package is not installed")
    except Exception as e:  # graphviz.ExecutableNotFound, or dot failing on odd input
        name = type(e).__name__
        hint = ("install the `dot` program (Debian: apt-get install graphviz)"
                if name == "ExecutableNotFound" else f"dot failed: {str(e)[:200]}")
        return _replace_error(partial, hint)
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)
    return GraphLayout(svg=svg, labels=partial.labels, names=partial.names,
                       reveal=partial.reveal, digits=partial.digits, text=partial.text)


def _replace_error(g: GraphLayout, error: str) -> GraphLayout:
    return GraphLayout(svg=None, labels=g.labels, names=g.names, reveal=g.reveal,
                       digits=g.digits, text=g.text, error=error)


def hidden_selectors(g: GraphLayout, visible: int) -> list[str]:
    """Rank classes that together cover exactly the drawn nodes >= visible (see NOTE)."""
    total = len(g.reveal)
    if visible >= total:
        return []
    if visible <= 0:
        return ["r" + str(d) for d in range(10)] if g.digits else []
    s = str(visible).zfill(g.digits)
    out = []
    for j in range(g.digits):
        prefix = s[:j]
        out += [f"r{prefix}{d}" for d in range(int(s[j]) + 1, 10)]
    out.append("r" + s)
    return out


def step_style(g: GraphLayout, i: int, scope: str) -> str:
    """The `<style>` that shows the graph as it is at the end of step i."""
    shown = g.visible(i)
    before = g.visible(i - 1) if i > 0 else 0
    rules = []
    hidden = hidden_selectors(g, shown)
    if hidden:
        rules.append(", ".join(f".{scope} .{cls}" for cls in hidden) + " { display: none; }")
    if shown > before:
        # As specific as the stylesheet's own node rules, plus one class, so it wins.
        new = [f".dl-viewer .dl-drawing.{scope} svg .node.{_exact(k, g.digits)}"
               for k in range(before, shown)]
        rules.append(", ".join(f"{sel} path, {sel} polygon, {sel} ellipse" for sel in new)
                     + " { stroke: var(--jp-warn-color1); stroke-width: 3px;"
                       " fill: color-mix(in srgb, var(--jp-warn-color1) 30%, transparent); }")
    return "<style>" + "\n".join(rules) + "</style>"


def _exact(k: int, digits: int) -> str:
    return "r" + str(k).zfill(digits)


def svg_html(g: GraphLayout, scope: str) -> str:
    """The drawing, set once per compile; `step_style` then reveals it step by step."""
    if g.svg is None:
        return ""
    return f'<div class="dl-pane-body dl-drawing {scope}">{g.svg}</div>'


def caption_html(g: GraphLayout, i: int, c: Compile) -> str:
    """The graph pane's title line: how much of the graph exists, what this step added."""
    shown = g.visible(i) if c.steps else len(g.reveal)
    before = g.visible(i - 1) if i > 0 else 0
    new = list(g.names[before:shown]) if c.steps else []
    text = f"FX graph <span class=\"dl-dim\">· {shown} of {len(g.reveal)} node(s)"
    if new:
        text += " · new: " + ", ".join(f"<code>{clip(n)}</code>" for n in new)
    text += "</span>"
    return f'<div class="dl-title">{text}</div>'


def text_html(g: GraphLayout, i: int, c: Compile) -> str:
    """The fallback without graphviz: the nodes made so far as text, new ones marked."""
    shown = g.visible(i) if c.steps else len(g.reveal)
    before = g.visible(i - 1) if i > 0 else 0
    rows = g.text.splitlines()
    new = ' class="dl-new"'
    items = "".join(f"<li{new if k >= before and c.steps else ''}>{clip(rows[k])}</li>"
                    for k in range(shown))
    why = f'<div class="dl-faint">No drawing: {clip(g.error, MESSAGE_LIMIT)}.</div>' if g.error else ""
    code = ""
    if c.graph_code and (not c.steps or i == len(c.steps) - 1):
        rows = listing(c.graph_code.splitlines(), _code_row, "graph code")
        code = (f'<details><summary>the graph\'s Python code</summary>'
                f'<pre class="dl-code">{rows}</pre></details>')
    nodes = f'<ul class="dl-list">{items}</ul>' if items else '<div class="dl-faint">(no nodes yet)</div>'
    return f'<div class="dl-pane-body">{why}{nodes}{code}</div>'


def _code_row(line: str) -> str:
    return f'<span class="dl-row">{clip(line)}</span>'


def pane_html(g: GraphLayout, i: int, c: Compile, scope: str) -> str:
    """Everything of the graph pane that changes with the step: title, style or text."""
    if g.svg is None:
        return caption_html(g, i, c) + text_html(g, i, c)
    return caption_html(g, i, c) + step_style(g, i, scope)
