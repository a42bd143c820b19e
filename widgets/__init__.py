"""Dynamo Lab's views: the step-by-step viewer and the `%%capture_trace` cell magic.

    %load_ext widgets
    %%capture_trace
    f = torch.compile(lambda x: x.sin() + 1, backend="eager")
    f(torch.randn(4))

or, from Python, ``widgets.TraceViewer(capture.trace(f, torch.randn(4)))``.
Importing this package imports ipywidgets and IPython, never torch.
"""

from .viewer import TraceViewer


def load_ipython_extension(ipython):  # noqa: ANN001 - IPython's hook signature
    """`%load_ext widgets`: register the `%%capture_trace` cell magic."""
    from .magic import CaptureTraceMagics

    ipython.register_magics(CaptureTraceMagics)


def unload_ipython_extension(ipython):  # noqa: ANN001
    """`%unload_ext widgets`: remove the magic again."""
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("capture_trace", None)


__all__ = ["TraceViewer", "load_ipython_extension", "unload_ipython_extension"]
