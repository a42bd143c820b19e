"""TraceViewer: step through a recording in the browser, one compile at a time.

The widget sends the recording once (state.py says how) and the front end (`viewer.js`,
one ES module joined from js/, and `viewer.css`) renders every pane, the controls and the
jumps by itself: stepping never waits for the kernel, and keeps working while a cell runs
or after the kernel is gone.

Python still drives and reads the viewer through synced traits: `step`, `compile`
(an index, or a compile id such as "1/0" when set), `predict` (predict mode on or
off) and `predictions` (the learner's answers in predict mode, a list of dicts).

    TraceViewer(recording, compile=None, step=0)
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from .fallback import fallback_html
from .state import clamp_step, compile_number, viewer_state

if TYPE_CHECKING:
    from capture import Recording

HERE = Path(__file__).resolve().parent


class _CompileTrait(traitlets.Int):
    """An index into the recording's compiles; a compile id ("1/0") is accepted too."""

    info_text = "a compile's index or its id"

    def validate(self, obj: Any, value: Any) -> int:
        if isinstance(value, str):
            value = compile_number(obj.recording, value)
        return super().validate(obj, value)


class TraceViewer(anywidget.AnyWidget):
    """Step through a `capture.Recording` the way Python Tutor steps through a program."""

    # anywidget names the front end's model after the class's module and name, and every
    # stored lesson names "widgets.viewer.TraceViewer": the class is the package's.
    __module__ = "widgets.viewer"

    _esm = HERE / "viewer.js"
    _css = HERE / "viewer.css"

    data = traitlets.Bytes(help="the recording's JSON, steps and readings as columns, gzip-compressed").tag(sync=True)
    graphs = traitlets.Bytes(help="each compile's graph layout, gzip-compressed JSON").tag(sync=True)
    titles = traitlets.List(traitlets.Unicode(), help="each compile's title").tag(sync=True)
    comparisons = traitlets.Bytes(help="pairs of compiles of one frame, aligned (compare mode), gzip-compressed JSON").tag(sync=True)
    answers = traitlets.List(traitlets.Dict(), help="what `dynamo-lab explain` says about each compile").tag(sync=True)
    help = traitlets.Dict(help="what the recording's opcodes, trackers, guard kinds and symbols mean").tag(sync=True)
    compile = _CompileTrait(0, help="the compile shown: its index (a compile id when set)").tag(sync=True)
    step = traitlets.Int(0, help="the index of the step shown (as in the text view's #i)").tag(sync=True)
    predict = traitlets.Bool(False, help="predict mode: ask before each step forward").tag(sync=True)
    predictions = traitlets.List(traitlets.Dict(), help="the learner's answers in predict mode").tag(sync=True)

    def __init__(self, recording: Recording, compile: str | int | None = None,
                 step: int = 0, **kwargs: Any) -> None:
        self.recording = recording
        # While set, a new compile keeps the step that comes with it (the constructor is given
        # both; the front end sends both). Per thread: JupyterLab may deliver the front end's
        # messages on a kernel subshell's thread while a cell runs.
        self._step_given = threading.local()
        self._step_given.active = True
        try:
            super().__init__(**viewer_state(recording, compile, step), **kwargs)
        finally:
            self._step_given.active = False

    # -- the traits, as Python sets them --------------------------------------------------

    @traitlets.validate("step")
    def _clamp(self, proposal: Any) -> int:
        return clamp_step(self.recording, self.compile, proposal["value"])

    @traitlets.observe("compile")
    def _compile_changed(self, change: dict[str, Any]) -> None:
        # Set from Python alone, another compile opens at its first step.
        if not getattr(self._step_given, "active", False):
            self.step = 0

    def set_state(self, sync_data: dict[str, Any]) -> None:
        self._step_given.active = True
        try:
            super().set_state(sync_data)
        finally:
            self._step_given.active = False

    def show(self, compile: str | int | None = None, step: int | None = None) -> TraceViewer:
        """Open at a compile ("1/0" or its index) and a step; returns the viewer."""
        with self.hold_sync():
            if compile is not None:
                k = compile_number(self.recording, compile)
                if k != self.compile:
                    self.compile = k   # the observer starts it at step 0
            if step is not None:
                self.step = step
        return self

    @property
    def current(self) -> Any:
        """The `capture.Compile` on show (None for a recording with no compiles)."""
        r = self.recording
        return r.compiles[self.compile] if r.compiles else None

    # -- display ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        r = self.recording
        titles = [c.title() for c in r.compiles[:6]]
        if len(r.compiles) > 6:
            titles.append(f"… {len(r.compiles) - 6} more")
        listed = ": " + "; ".join(titles) if titles else ""
        return f"TraceViewer({len(r.compiles)} compile(s){listed}; {r.step_count} steps)"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # Beside the widget view, what a host that cannot draw it shows (fallback.py):
        # hosts that draw widgets take the widget view, the richer type.
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle   # (data, metadata) from some versions
        if data is not None:
            data["text/plain"] = repr(self)  # ipywidgets cuts it at 110 characters
            data["text/html"] = fallback_html(self.recording)
        return bundle
