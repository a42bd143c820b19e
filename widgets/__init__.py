"""Dynamo Lab's views: the step-by-step viewer, the `%%capture_trace` cell magic, the course.

    %load_ext widgets
    %%capture_trace
    f = torch.compile(lambda x: x.sin() + 1, backend="eager")
    f(torch.randn(4))

or, from Python, ``widgets.TraceViewer(capture.trace(f, torch.randn(4)))``.

Importing this package imports neither torch nor IPython nor ipywidgets: `TraceViewer`
is loaded when it is first asked for, so `widgets.course.exercises` and `widgets.cli`
start fast and without a widget library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capture.run import SUPPORTED_TORCH, environment_problem, torch_version_problem

if TYPE_CHECKING:
    from .viewer import TraceViewer


def __getattr__(name: str) -> Any:
    """`widgets.TraceViewer`, imported on first use (with anywidget and ipywidgets)."""
    if name == "TraceViewer":
        from .viewer import TraceViewer

        return TraceViewer
    raise AttributeError(f"module 'widgets' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext widgets`: register the `%%capture_trace` cell magic, on a supported
    Python and torch (otherwise one line says which are supported)."""
    from IPython.core.error import UsageError

    problem = environment_problem()
    if problem:
        raise UsageError(problem)  # IPython shows a UsageError as its one line
    from .magic import CaptureTraceMagics

    ipython.register_magics(CaptureTraceMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext widgets`: remove the magic again."""
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("capture_trace", None)


__all__ = ["SUPPORTED_TORCH", "TraceViewer", "load_ipython_extension",
           "torch_version_problem", "unload_ipython_extension"]
