"""TraceViewer: step through a recording, one compile at a time, in stock ipywidgets.

One number drives everything: the `step` trait. The slider is linked to it in
Python, the Play button to the slider in the browser, and a single observer
re-renders the panes (pure functions in `widgets.panes` and `widgets.graphview`),
writing only those whose content changed.
"""

from __future__ import annotations

import itertools
from importlib import resources
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import traitlets

from . import graphview, panes

if TYPE_CHECKING:
    from capture import Compile, Recording

_scopes = itertools.count()


def _css() -> str:
    return resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")


# -- where the jumps go: pure, so they can be tested from a compile alone ----------------

def next_line(c: Compile, i: int) -> int | None:
    """The next step on another line of the same frame, or back in a caller (steps over calls)."""
    steps = c.steps
    if not 0 <= i < len(steps) - 1:
        return None
    here = steps[i]
    for j in range(i + 1, len(steps)):
        s = steps[j]
        if s.depth < here.depth:
            return j
        if s.depth == here.depth and (s.lineno != here.lineno or s.code != here.code
                                      or s.inline_stack != here.inline_stack):
            return j
    return None


def next_node(c: Compile, i: int) -> int | None:
    """The next step that adds a node to the FX graph."""
    return next((j for j in range(i + 1, len(c.steps)) if c.steps[j].nodes_added), None)


def next_guard(c: Compile, i: int) -> int | None:
    """The next step that installs a guard."""
    return next((j for j in range(i + 1, len(c.steps)) if c.steps[j].guards_added), None)


def break_step(c: Compile) -> int | None:
    """The step of the graph break, if this compile met one while it was recorded."""
    gb = c.graph_break
    if gb is None or gb.step is None or not c.steps:
        return None
    return min(gb.step, len(c.steps) - 1)


class _Marks:
    """For one compile: from each step, the next step with a node or a guard (None if none)."""

    def __init__(self, c: Compile) -> None:
        n = len(c.steps)
        self.node: list[int | None] = [None] * n
        self.guard: list[int | None] = [None] * n
        nxt_node = nxt_guard = None
        for j in range(n - 1, -1, -1):
            self.node[j], self.guard[j] = nxt_node, nxt_guard
            if c.steps[j].nodes_added:
                nxt_node = j
            if c.steps[j].guards_added:
                nxt_guard = j


def _classed(widget: W.DOMWidget, *classes: str) -> W.DOMWidget:
    for cls in classes:
        widget.add_class(cls)
    return widget


def _button(text: str, tip: str, cls: str) -> W.Button:
    """A button named by its words alone; a glyph, if any, comes from style.css by `cls`."""
    return _classed(W.Button(description=text, tooltip=tip, layout=W.Layout(width="auto")), cls)


def _pane(cls: str) -> W.HTML:
    return _classed(W.HTML(layout=W.Layout(min_width="0", width="auto")), "dl-pane", cls)


class TraceViewer(W.VBox):
    """Step through a `capture.Recording` the way Python Tutor steps through a program."""

    step = traitlets.Int(0, help="the index of the step shown (as in the text view's #i)")
    compile_index = traitlets.Int(0, help="which compile of the recording is shown")

    def __init__(self, recording: Recording, compile: str | int | None = None,
                 step: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.recording = recording
        self._scope = f"dl-g{next(_scopes)}"
        self._indexes: dict[int, panes.CompileIndex] = {}
        self._layouts: dict[int, graphview.GraphLayout] = {}
        self._marks: dict[int, _Marks] = {}
        self._keys: dict[int, Any] = {}
        self._busy = False  # while a compile is being set up, changes do not re-render
        self._build()
        self.add_class("dl-viewer")
        self.observe(self._on_step, "step")
        self.observe(self._on_compile, "compile_index")
        self._select(self._compile_number(compile) if compile is not None else 0, step)

    # -- building --------------------------------------------------------------------

    def _build(self) -> None:
        r = self.recording
        self.css = W.HTML(f"<style>{_css()}</style>")
        self.header = _classed(W.HTML(panes.recording_html(r)), "dl-header")
        options = ([(panes.visible(panes.cut(c.title(), 200)), k)
                    for k, c in enumerate(r.compiles)]
                   or [("(no compiles)", 0)])
        self.selector = W.Dropdown(options=options, value=0, description="compile",
                                   disabled=not r.compiles,
                                   layout=W.Layout(width="100%", max_width="760px"))
        self.selector.add_class("dl-compile")
        self.summary = _classed(W.HTML(), "dl-summary")

        self.first = _button("first", "first step", "dl-first")
        self.back = _button("back", "previous step", "dl-back")
        self.forward = _button("forward", "next step", "dl-forward")
        self.last = _button("last", "last step", "dl-last")
        self.play = W.Play(value=0, min=0, max=0, step=1, interval=400, show_repeat=False,
                           tooltip="play / pause", description="play")
        self.play.add_class("dl-play")
        self.slider = W.IntSlider(value=0, min=0, max=0, readout=False, continuous_update=True,
                                  description="step", layout=W.Layout(flex="1 1 auto",
                                                                      min_width="120px"))
        self.slider.add_class("dl-slider")
        self.position = _classed(W.HTML(), "dl-position")
        self.play_link = W.jslink((self.play, "value"), (self.slider, "value"))
        traitlets.link((self, "step"), (self.slider, "value"))
        traitlets.link((self, "compile_index"), (self.selector, "value"))

        self.to_line = _button("next line", "next step on another source line (steps over calls)",
                               "dl-next-line")
        self.to_node = _button("next node", "next step that adds a node to the FX graph",
                               "dl-next-node")
        self.to_guard = _button("next guard", "next step that installs a guard", "dl-next-guard")
        self.to_break = _button("graph break", "the step where the graph break happened",
                                "dl-graph-break")
        self.fit = _classed(W.ToggleButton(value=False, description="fit graph",
                                           tooltip="shrink the FX graph to the width of its pane",
                                           layout=W.Layout(width="auto")), "dl-fit-graph")
        self.fit.observe(self._on_fit, "value")

        self.first.on_click(lambda _: self._go(0))
        self.back.on_click(lambda _: self._go(self.step - 1))
        self.forward.on_click(lambda _: self._go(self.step + 1))
        self.last.on_click(lambda _: self._go(len(self._c.steps) - 1))
        self.to_line.on_click(lambda _: self._go(next_line(self._c, self.step)
                                                 or len(self._c.steps) - 1))
        self.to_node.on_click(lambda _: self._go(self._mark().node[self.step]))
        self.to_guard.on_click(lambda _: self._go(self._mark().guard[self.step]))
        self.to_break.on_click(lambda _: self._go(break_step(self._c)))

        self.caption = _classed(W.HTML(), "dl-caption-bar")
        self.source = _pane("dl-source")
        self.bytecode = _pane("dl-bytecode")
        self.stack = _pane("dl-stack")
        self.graph = W.HTML(layout=W.Layout(min_width="0"))  # title, per-step <style> or text
        self.drawing = W.HTML(layout=W.Layout(min_width="0"))  # the SVG, set once per compile
        self.guards = _pane("dl-guards")
        self.original = _pane("dl-original")
        self.rewritten = _pane("dl-rewritten")
        self.guard_tree = _pane("dl-guard-tree")

        grid = dict(grid_template_columns="repeat(2, minmax(0, 1fr))", grid_gap="6px",
                    width="100%")
        graph_box = _classed(W.VBox([self.graph, self.drawing], layout=W.Layout(min_width="0")),
                             "dl-pane", "dl-graph")
        panes_grid = W.GridBox(
            [W.VBox([self.source, self.bytecode], layout=W.Layout(min_width="0")),
             self.stack, graph_box, self.guards],
            layout=W.Layout(**grid))
        compare = W.GridBox([self.original, self.rewritten], layout=W.Layout(**grid))
        self.details = W.Accordion([compare, self.guard_tree], selected_index=None,
                                   titles=("Bytecode: original and rewritten", "Guard tree"))
        self.details.add_class("dl-details")
        controls = W.HBox([self.first, self.back, self.play, self.forward, self.last,
                           self.slider, self.position],
                          layout=W.Layout(flex_flow="row wrap", align_items="center"))
        controls.add_class("dl-controls")
        jumps = W.HBox([self.to_line, self.to_node, self.to_guard, self.to_break, self.fit],
                       layout=W.Layout(flex_flow="row wrap"))
        jumps.add_class("dl-jumps")
        self.children = [self.css, self.header, self.selector, self.summary, controls, jumps,
                         self.caption, panes_grid, self.details]

    # -- state -------------------------------------------------------------------------

    @property
    def _c(self) -> Compile:
        return self.recording.compiles[self.compile_index]

    @property
    def compile(self) -> Compile | None:
        """The compile on show."""
        return self._c if self.recording.compiles else None

    def _index(self) -> panes.CompileIndex:
        k = self.compile_index
        if k not in self._indexes:
            self._indexes[k] = panes.CompileIndex(self._c)
        return self._indexes[k]

    def _layout(self) -> graphview.GraphLayout:
        k = self.compile_index
        if k not in self._layouts:
            self._layouts[k] = graphview.layout(self._c)
        return self._layouts[k]

    def _mark(self) -> _Marks:
        k = self.compile_index
        if k not in self._marks:
            self._marks[k] = _Marks(self._c)
        return self._marks[k]

    def _compile_number(self, which: str | int) -> int:
        if isinstance(which, int) and not isinstance(which, bool):
            if not 0 <= which < len(self.recording.compiles):
                raise IndexError(f"compile number {which} is out of range: this recording "
                                 f"has {len(self.recording.compiles)} compile(s)")
            return which
        return self.recording.compiles.index(self.recording.compile(str(which)))

    @traitlets.validate("step")
    def _clamp(self, proposal: Any) -> int:
        last = len(self._c.steps) - 1 if self.recording.compiles else 0
        return max(0, min(int(proposal["value"]), max(last, 0)))

    def show(self, compile: str | int | None = None, step: int | None = None) -> TraceViewer:
        """Open at a compile (`"1/0"` or its number) and a step; returns the viewer."""
        k = self._compile_number(compile) if compile is not None else self.compile_index
        if k != self.compile_index:
            self.compile_index = k  # the observer resets the step to 0
        if step is not None:
            self.step = step
        return self

    def _on_fit(self, change: dict[str, Any]) -> None:
        # A class on the drawing's widget: the browser rescales, nothing is sent again.
        if change["new"]:
            self.drawing.add_class("dl-fit")
        else:
            self.drawing.remove_class("dl-fit")

    def _go(self, target: int | None) -> None:
        if target is not None:
            self.step = target

    def _on_compile(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self._select(change["new"], 0)

    def _on_step(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self._render()

    def _select(self, k: int, step: int) -> None:
        """Show compile k: set what is fixed per compile, then render the step."""
        r = self.recording
        self._keys.clear()
        if not r.compiles:
            self.summary.value = '<div class="dl-banner">Nothing was compiled while recording.</div>'
            for w in (self.first, self.back, self.forward, self.last, self.to_line,
                      self.to_node, self.to_guard, self.to_break, self.slider, self.play):
                w.disabled = True
            self.position.value = '<span class="dl-stepno">step 0 / 0</span>'
            return
        self._busy = True
        try:
            self.compile_index = k
            c = self._c
            last = max(len(c.steps) - 1, 0)
            self.slider.max = self.play.max = last   # first: the slider clamps its value
            self.step = step
        finally:
            self._busy = False
        self.slider.disabled = self.play.disabled = not c.steps
        self.summary.value = panes.compile_html(c)
        ix = self._index()
        self.original.value = panes.original_bytecode_html(c, ix)
        self.rewritten.value = panes.rewritten_bytecode_html(c)
        self.guard_tree.value = panes.guard_tree_html(c)
        self.drawing.value = graphview.svg_html(self._layout(), self._scope)
        self.to_break.disabled = break_step(c) is None
        self._render()

    # -- rendering ------------------------------------------------------------------------

    def _set(self, widget: W.HTML, key: Any, make: Any) -> None:
        """Re-render a pane only when what it depends on changed."""
        name = id(widget)
        if self._keys.get(name, _MISSING) == key:
            return
        self._keys[name] = key
        value = make()
        if widget.value != value:
            widget.value = value

    def _render(self) -> None:
        if not self.recording.compiles:
            return
        c, i, ix = self._c, self.step, self._index()
        g = self._layout()
        n = len(c.steps)
        self.position.value = f'<span class="dl-stepno">{panes.step_label(c, i)}</span>'
        self.caption.value = panes.caption_html(c, i)
        s = c.steps[i] if n else None
        at_end = i >= n - 1
        self.first.disabled = self.back.disabled = i <= 0
        self.forward.disabled = self.last.disabled = self.to_line.disabled = at_end
        marks = self._mark()
        self.to_node.disabled = not n or marks.node[i] is None
        self.to_guard.disabled = not n or marks.guard[i] is None

        gb = c.graph_break
        if s is not None:
            broke = gb is not None and gb.step is not None and i >= gb.step
            self._set(self.source, (s.code, s.lineno, s.inline_stack, broke),
                      lambda: panes.source_html(c, i, ix))
            self._set(self.bytecode, (s.code, s.offset, s.inline_stack),
                      lambda: panes.bytecode_html(c, i, ix))
        else:
            self._set(self.source, None, lambda: panes.source_html(c, i, ix))
            self._set(self.bytecode, None, lambda: panes.bytecode_html(c, i, ix))
        self._set(self.stack, i, lambda: panes.stack_html(c, i, ix))
        new_guards = bool(s is not None and s.guards_added)
        self._set(self.guards, (ix.guards_installed(i), i if new_guards else -1, at_end),
                  lambda: panes.guards_html(c, i, ix))
        before = g.visible(i - 1) if i > 0 else 0
        self._set(self.graph, (g.visible(i), before, at_end),
                  lambda: graphview.pane_html(g, i, c, self._scope))

    # -- display ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        r = self.recording
        titles = [c.title() for c in r.compiles[:6]]
        if len(r.compiles) > 6:
            titles.append(f"… {len(r.compiles) - 6} more")
        listed = ": " + "; ".join(titles) if titles else ""
        return f"TraceViewer({len(r.compiles)} compile(s){listed}; {r.steps} steps)"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = repr(self)  # ipywidgets cuts it at 110 characters
        return bundle


_MISSING = object()
