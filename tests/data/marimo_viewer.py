"""A marimo app that shows the trace viewer through marimo's own anywidget support
(tests/test_hosts.py serves it with `marimo run`); a second cell reads the step back in
Python, so the test sees the model round-trip."""

import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    import torch

    import capture
    from widgets import TraceViewer

    def f(x):
        y = x.sin()
        print("<b>a graph break</b>")
        return y * 2

    viewer = mo.ui.anywidget(TraceViewer(capture.trace(f, torch.ones(2))))
    viewer
    return mo, viewer


@app.cell
def _(mo, viewer):
    # Runs again whenever the viewer's value changes in the page.
    mo.md(f"step in the kernel: {viewer.value['step']}")
    return


if __name__ == "__main__":
    app.run()
