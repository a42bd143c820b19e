"""Shared fixtures. Each has a distinct name; add new ones below, do not rename these."""

from __future__ import annotations

import pytest
import torch

# -- the viewer and the magic ----------------------------------------------------------
# A program with a graph break, an inlined call, and a string that is also HTML.
# It lives in a real file so the recording can show its source lines.


def _helper(a):
    return a * 2


def _broken(x):
    y = torch.sin(x)
    print("a graph break")
    return _helper(y) + 1


def _tagged(x):
    s = "<script>alert(1)</script>"
    return x.cos(), s


@pytest.fixture(scope="session")
def viewer_recording():
    """[0/0] _broken (restarted), [0/0_1] _broken, [1/0] its resume function, [2/0] _tagged."""
    import capture

    torch._dynamo.reset()
    broken = torch.compile(_broken, backend="eager")
    tagged = torch.compile(_tagged, backend="eager")
    with capture.record() as recording:
        broken(torch.ones(4))
        tagged(torch.ones(3))
    torch._dynamo.reset()
    return recording


@pytest.fixture(scope="session")
def ipython_shell():
    """An IPython shell (no kernel, no colours) with `%load_ext widgets` done."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    result = shell.run_cell("%load_ext widgets")
    assert result.success, result
    shell.run_cell("import torch")
    return shell
