"""An exercise's evidence and its check's code, stored folded until the learner has answered.

A lesson is read with its stored outputs (in JupyterLab before anything runs, and on the
course site), and the cell that follows a check cell shows what was measured: the graph, the
guards, the count, that is the answer. So that cell is stored with its output folded, with
nbformat's own marks (``metadata.jupyter.outputs_hidden`` for JupyterLab,
``metadata.collapsed`` for the classic notebook): JupyterLab shows a fold to click instead of
the output and unfolds it when the cell runs; the site shows it closed under a line saying
what it holds. Folding hides, it does not drop: the output stays stored, and nbval still
compares it. JupyterLab 4 writes the first line of a folded output on the fold, so an
evidence cell prints a label first (``print("Evidence for q1:")``).

The check cell's own code says the answer too: its explanation, its hint and the feedback for
each wrong option are written there. So its source is stored folded as well
(``metadata.jupyter.source_hidden``): the learner runs it without reading it, and its verdict
(its output) stays in view.

`python -m widgets.course.stored --execute` folds the evidence of the lesson it stores.
"""

from __future__ import annotations

import re
from typing import Any

# A check cell: one that calls `.check(` on an exercise (the same test the site uses).
CHECK = re.compile(r"^\s*[A-Za-z_][\w.]*\.check\(", re.MULTILINE)
# What the site says above folded evidence.
EVIDENCE_SUMMARY = "The evidence: it answers the exercise above. Open it once you have answered."
FOLDED_SUMMARY = "Output folded: open it to read it."
CHECK_SUMMARY = ("The check's code: its explanation and hints give the answer away. Open it once "
                 "you have answered.")
CODE_SUMMARY = "Code folded: open it to read it."


def _source(cell: Any) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def is_check(cell: Any) -> bool:
    return cell.get("cell_type") == "code" and bool(CHECK.search(_source(cell)))


def evidence_cells(nb: Any) -> list[int]:
    """Indices of the cells that hold an exercise's evidence: the first code cell after each
    check cell, when it stores an output and is no check cell itself."""
    cells = nb["cells"]
    found = []
    for i, cell in enumerate(cells):
        if not is_check(cell):
            continue
        j = next((k for k in range(i + 1, len(cells)) if cells[k].get("cell_type") == "code"),
                 None)
        if j is not None and cells[j].get("outputs") and not is_check(cells[j]):
            found.append(j)
    return found


def source_folded(cell: Any) -> bool:
    """Whether a cell is stored with its source folded (JupyterLab's mark)."""
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


def fold_source(cell: Any) -> None:
    """Store a cell's source folded: JupyterLab shows a fold to click instead of the code."""
    metadata = cell.setdefault("metadata", {})
    metadata["jupyter"] = {**metadata.get("jupyter", {}), "source_hidden": True}


def folded(cell: Any) -> bool:
    """Whether a cell is stored with its output folded (JupyterLab's mark)."""
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden"))


def fold(cell: Any) -> None:
    """Store a cell's output folded, for JupyterLab and the classic notebook alike."""
    metadata = cell.setdefault("metadata", {})
    metadata["collapsed"] = True
    jupyter = dict(metadata.get("jupyter", {}))
    jupyter["outputs_hidden"] = True
    metadata["jupyter"] = jupyter


def fold_evidence(nb: Any) -> int:
    """Fold every exercise's evidence (its output) and its check (its code) in a notebook, in
    place; how many cells were not folded yet."""
    changed = 0
    for index in evidence_cells(nb):
        cell = nb["cells"][index]
        if not (folded(cell) and cell.get("metadata", {}).get("collapsed")):
            changed += 1
        fold(cell)
    for cell in nb["cells"]:
        if is_check(cell):
            changed += not source_folded(cell)
            fold_source(cell)
    return changed
