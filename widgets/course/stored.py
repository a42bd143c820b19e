"""The widget state a lesson stores: its viewers' recordings, never the viewer's module.

JupyterLab (with widget state saving on) and `nbconvert --execute` save every live
widget's state in the notebook, and an anywidget's state holds its whole front end
(`_esm`, `_css`): one copy of viewer.js and viewer.css per viewer, so that every change
to the viewer made every lesson stale. A lesson keeps what its viewers showed (the
recording, the layouts, where they were opened) and drops the module: the course site
renders the stored state with the package's own module, and a kernel sends the module
again when the cell runs.

    python -m widgets.course.stored notebooks/*.ipynb             # strip, in place
    python -m widgets.course.stored --check notebooks/*.ipynb     # exit 1 if any stores one
    python -m widgets.course.stored --execute notebooks/04_guards.ipynb   # run, strip, save

`./lab` starts JupyterLab with `pre_save_hook` below, so saving a lesson strips it too.
Storing a lesson (with or without `--execute`) also folds each exercise's evidence (the
output of the cell after its check) and its check's code (widgets/course/evidence.py), so
that nothing stored shows an answer before the learner gives one. Saving from JupyterLab does
not fold: a learner who opened a fold keeps it open.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

from .evidence import fold_evidence

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# anywidget names a model by its Python class: `_anywidget_id` in the stored state.
VIEWER_ID = "widgets.viewer.TraceViewer"
MODULE_KEYS = ("_esm", "_css")
# Stored values the page does not need: ipywidgets' own bookkeeping.
_NOT_VALUES = {"layout", "tabbable", "tooltip"}


def viewer_models(nb: Any) -> dict[str, Any]:
    """model id -> the stored model of each TraceViewer in a notebook (a dict or NotebookNode)."""
    store = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {model_id: model for model_id, model in store.items()
            if model.get("model_name") == "AnyModel"
            and model.get("state", {}).get("_anywidget_id") == VIEWER_ID}


def stored_viewers(nb: Any) -> dict[str, dict[str, Any]]:
    """model id -> the values a TraceViewer synced (its recording, its layouts, where it
    was opened), buffers decoded, from the widget state the notebook saved."""
    found = {}
    for model_id, model in viewer_models(nb).items():
        values = {k: v for k, v in model.get("state", {}).items()
                  if not k.startswith("_") and k not in _NOT_VALUES}
        values = json.loads(json.dumps(values))  # a plain copy, free of nbformat's NotebookNode
        for buffer in model.get("buffers", []):
            raw = buffer.get("data", "")
            data = bytes.fromhex(raw) if buffer.get("encoding") == "hex" else base64.b64decode(raw)
            target: Any = values
            for key in buffer["path"][:-1]:
                target = target[key]
            target[buffer["path"][-1]] = data
        found[model_id] = values
    return found


def modules_stored(nb: Any) -> int:
    """How many of the notebook's stored viewers hold the viewer's module or CSS."""
    return sum(any(key in model.get("state", {}) for key in MODULE_KEYS)
               for model in viewer_models(nb).values())


def strip_modules(nb: Any) -> int:
    """Drop every stored viewer's `_esm` and `_css`, in place; from how many viewers."""
    dropped = 0
    for model in viewer_models(nb).values():
        state = model.get("state", {})
        if any(key in state for key in MODULE_KEYS):
            dropped += 1
        for key in MODULE_KEYS:
            state.pop(key, None)
    return dropped


def strip_file(path: Path) -> int:
    """Strip a notebook file in place and fold its exercises' evidence, written as nbformat
    writes it; how many modules were dropped."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    dropped = strip_modules(nb)
    if fold_evidence(nb) or dropped:
        path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    return dropped


def pre_save_hook(model: dict[str, Any], **_: Any) -> None:
    """Jupyter's `ContentsManager.pre_save_hook`: a notebook is saved without the modules."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        strip_modules(model["content"])


def execute_file(path: Path, timeout: int = 600) -> int:
    """Run a notebook top to bottom in a fresh kernel, keep its widget state, strip it, fold
    its exercises' evidence, save."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    dropped = strip_modules(nb)
    fold_evidence(nb)
    nbformat.write(nb, path)
    return dropped


def main(argv: list[str] | None = None) -> int:
    """Strip, check or execute the given notebooks; 1 when --check finds a module."""
    parser = argparse.ArgumentParser(
        prog="python -m widgets.course.stored",
        description="Keep the viewer's module (_esm, _css) out of the lessons' stored widget "
                    "state; their recordings stay.")
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK.ipynb")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 if any notebook stores the module")
    what.add_argument("--execute", action="store_true",
                      help="run each notebook first (a fresh kernel), then strip and save it")
    opts = parser.parse_args(argv)
    status = 0
    for name in opts.notebooks:
        path = Path(name)
        if not path.is_file() or path.suffix != ".ipynb":
            print(f"stored: error: {name} is not a notebook (.ipynb file)", file=sys.stderr)
            return 2
        if opts.check:
            n = modules_stored(json.loads(path.read_text(encoding="utf-8")))
            if n:
                print(f"stored: {name}: {n} viewer(s) store the viewer's module: run "
                      f"python -m widgets.course.stored {name}", file=sys.stderr)
                status = 1
            continue
        dropped = execute_file(path) if opts.execute else strip_file(path)
        print(f"stored: {name}: {'ran; ' if opts.execute else ''}the module dropped from "
              f"{dropped} viewer(s)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
