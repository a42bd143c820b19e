"""The trace viewer: TraceViewer (an anywidget), the values it syncs, the standalone page.

    from widgets.viewer import TraceViewer        # also `from widgets import TraceViewer`
    TraceViewer(recording, compile=None, step=0)
    viewer_state(recording, compile=0, step=0)    # every synced value, for any front end
    from widgets.viewer.page import write_html    # the same front end as one HTML file

widget.py    TraceViewer: the synced traits and Python's side of them
state.py     the values: the recording and graph layouts gzip-compressed, titles, where to open
layout.py    each compile's FX graph laid out once by graphviz
page.py      a recording as one self-contained HTML page
viewer.js    the front end, one ES module joined from js/ (python -m widgets.viewer.join)
viewer.css   its style, JupyterLab's --jp-* variables with fallbacks

TraceViewer is imported on first use, so that the page export and `viewer_state`
never import anywidget or ipywidgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .state import compile_number, viewer_state

HERE = Path(__file__).resolve().parent


def __getattr__(name: str) -> Any:
    if name == "TraceViewer":
        from .widget import TraceViewer

        return TraceViewer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["HERE", "TraceViewer", "compile_number", "viewer_state"]
