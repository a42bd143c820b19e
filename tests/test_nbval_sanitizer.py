"""The lessons' nbval sanitizer hides what changes from run to run and nothing a learner reads:
a stored output edited to a wrong folded constant, a wrong float or a wrong user line fails nbval.

A small notebook is executed for real (Dynamo and all), then nbval compares it with itself,
unedited and edited, through notebooks/nbval_sanitize.cfg.
"""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("nbval")

ROOT = Path(__file__).resolve().parent.parent
SANITIZER = ROOT / "notebooks" / "nbval_sanitize.cfg"

CELLS = [
    "import torch\nimport capture",
    # a recompile reason: its guard comment names the user line that installed the guard
    "def repeat(t, word):\n    return t * len(word)\n\n\n"
    "compiled = torch.compile(repeat, backend='eager')\n"
    "with capture.logs('recompiles') as log:\n"
    "    compiled(torch.ones(2), 'spam')\n"
    "    compiled(torch.ones(2), 'eggs!')\n"
    "print(log.text)",
    # Python Dynamo traced once, folded into the graph: a big int and a long float
    "def folded(x):\n    return x * 0.7071067811865476 + sum(range(3_000_000))\n\n\n"
    "codes = []\n\n\n"
    "def keep(gm, example_inputs):\n    codes.append(gm.code)\n    return gm.forward\n\n\n"
    "torch.compile(folded, backend=keep)(torch.ones(2))\n"
    "print(codes[0])",
]


def sanitize(text: str) -> str:
    """The sanitizer's rules applied in file order, as nbval applies them."""
    parser = configparser.ConfigParser()
    parser.read(SANITIZER)
    for section in parser.sections():
        text = re.sub(parser[section]["regex"], parser[section]["replace"], text)
    return text


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sanitized")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    path = folder / "mini.ipynb"
    nbformat.write(nb, path)
    return path


def stdout_of(nb, index: int) -> str:
    return "".join(o.get("text", "") for o in nb.cells[index].outputs if o.get("name") == "stdout")


def nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(SANITIZER), str(path), "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)


def edited(source: Path, index: int, old: str, new: str) -> Path:
    nb = nbformat.read(source, as_version=4)
    for out in nb.cells[index].outputs:
        if out.get("name") == "stdout":
            assert old in out["text"], out["text"]
            out["text"] = out["text"].replace(old, new)
    path = source.with_name(f"edited_{index}_{abs(hash((old, new)))}.ipynb")
    nbformat.write(nb, path)
    return path


def test_the_sanitized_outputs_keep_lines_and_constants(executed):
    nb = nbformat.read(executed, as_version=4)
    reason, graph = sanitize(stdout_of(nb, 1)), sanitize(stdout_of(nb, 2))
    assert re.search(r"# return t \* len\(word\) +# CELL\.py:2 in repeat", reason), reason
    assert "0.7071067811865476" in graph and "4499998500000" in graph, graph
    # and what does change between runs is hidden: the kernel's pid and the cell's file
    assert "ipykernel" not in reason


def test_an_unedited_notebook_passes_nbval(executed):
    result = nbval(executed)
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.parametrize("index, old, new", [
    (2, "4499998500000", "4499998500001"),       # a wrong folded integer
    (2, "0.7071067811865476", "0.7071067811865477"),  # a wrong constant
    (1, ".py:2 in repeat", ".py:3 in repeat"),   # a guard blamed on the wrong line
])
def test_a_stored_output_edited_to_a_wrong_value_fails_nbval(executed, index, old, new):
    result = nbval(edited(executed, index, old, new))
    assert result.returncode != 0, f"nbval accepted {new!r} for {old!r}"
