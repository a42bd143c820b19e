"""Dynamo Lab's views: the step-by-step viewer and the `%%capture_trace` cell magic.

    %load_ext widgets
    %%capture_trace
    f = torch.compile(lambda x: x.sin() + 1, backend="eager")
    f(torch.randn(4))

or, from Python, ``widgets.TraceViewer(capture.trace(f, torch.randn(4)))``.
Importing this package imports ipywidgets and IPython, never torch.
"""

import importlib.metadata
import re

from .viewer import TraceViewer

# The torch releases the engine is checked on; pyproject.toml says the same.
SUPPORTED_TORCH = ">=2.13,<2.15"
_SUPPORTED_MINORS = ((2, 13), (2, 14))


def torch_version_problem(version: str | None) -> str | None:
    """Why a kernel with this torch (None: no torch) cannot run the lab, in one line; or None.

    Only the release's major.minor counts: 2.14.1+cu130 and 2.13.0+cpu are supported.
    """
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if found and (int(found[1]), int(found[2])) in _SUPPORTED_MINORS:
        return None
    has = f"torch {version}" if version else "no torch"
    return (f"Dynamo Lab supports torch 2.13 and 2.14 (torch{SUPPORTED_TORCH}) and this kernel "
            f"has {has}: install torch 2.13.0 (./lab does) and restart the kernel.")


def _installed_torch() -> str | None:
    """The installed torch's version, read from its metadata (importing torch takes seconds)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def load_ipython_extension(ipython):  # noqa: ANN001 - IPython's hook signature
    """`%load_ext widgets`: register the `%%capture_trace` cell magic, on a supported torch."""
    from IPython.core.error import UsageError

    problem = torch_version_problem(_installed_torch())
    if problem:
        raise UsageError(problem)  # IPython shows a UsageError as its one line
    from .magic import CaptureTraceMagics

    ipython.register_magics(CaptureTraceMagics)


def unload_ipython_extension(ipython):  # noqa: ANN001
    """`%unload_ext widgets`: remove the magic again."""
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("capture_trace", None)


__all__ = ["SUPPORTED_TORCH", "TraceViewer", "load_ipython_extension",
           "torch_version_problem", "unload_ipython_extension"]
