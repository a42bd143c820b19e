"""Every version a stored lesson output shows is pinned in constraints.txt, the one place pins
live; ./lab, the matrix venvs and Binder all install through it; the learner's venv holds it.

A release of an unpinned dependency once broke `./lab test` (lesson 16 printed transformers
5.24.0, a fresh venv got 5.25.0). These tests fail where that would happen again.
"""

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"


def _pins() -> dict[str, str]:
    """constraints.txt as {canonical name: version}; every line is NAME==VERSION."""
    pins = {}
    for raw in CONSTRAINTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        spec = str(req.specifier)
        assert spec.startswith("==") and "," not in spec, f"not an exact pin: {raw!r}"
        assert canonicalize_name(req.name) not in pins, f"pinned twice: {req.name}"
        pins[canonicalize_name(req.name)] = spec[2:]
    return pins


def _outputs(notebook: str) -> list[tuple[str, str]]:
    """(source, stored text output) of every code cell of a lesson."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text())
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        text = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                       for o in cell.get("outputs", []))
        cells.append(("".join(cell["source"]), text))
    return cells


def test_every_line_is_an_exact_pin_and_the_project_itself_is_not_pinned():
    pins = _pins()
    assert "dynamo-lab" not in pins
    # What lessons and tests record depends on these; each must stay pinned.
    for name in ["torch", "transformers", "tokenizers", "tlparse", "sympy", "numpy", "nbval",
                 "jupyterlab", "anywidget", "ipywidgets", "graphviz", "nbconvert", "ipython",
                 "playwright", "pytest"]:
        assert name in pins, f"{name} is not pinned in constraints.txt"


def test_the_versions_stored_lessons_print_are_the_pinned_ones():
    pins = _pins()
    torch_pin = pins["torch"]
    seen = []
    for notebook in sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")):
        for line in (line for _, text in _outputs(notebook) for line in text.splitlines()):
            # Lesson 20's recordings from the other Pythons say which torch made them.
            if re.search(r"Python 3\.1[23]\b", line):
                continue
            # "transformers 5.24.0 | torch 2.13.0+cpu", "Python 3.11 | torch 2.13.0+cpu",
            # "this kernel runs Python 3.11 with torch 2.13.0+cpu"
            for name, version in re.findall(r"\b(torch|transformers|tlparse|tokenizers|sympy)"
                                            r"[ =]+(\d+\.\d+\.\d+)(?:\+\w+)?\b", line):
                seen.append((notebook, name, version))
                assert version == pins[name], (
                    f"{notebook} shows {name} {version}, constraints.txt pins {pins[name]}: "
                    "re-store the lesson or update the pin")
    names = {(nb, name) for nb, name, _ in seen}
    # The cells that print versions are found (a reworded cell would silently escape the check).
    assert ("16_debugging_a_real_model.ipynb", "transformers") in names, seen
    assert ("01_cpython_frames.ipynb", "torch") in names, seen
    assert ("20_across_pythons.ipynb", "torch") in names, seen
    # START checks for the pinned torch by its version, as a True/False line.
    start = "".join(src for src, _ in _outputs("START.ipynb"))
    assert f'"{torch_pin}"' in start, "START.ipynb no longer checks for the pinned torch"


def test_the_learners_venv_holds_the_pinned_versions():
    import torch

    pins = _pins()
    if torch.__version__.split("+")[0] != pins["torch"]:
        pytest.skip(f"torch {torch.__version__} is a matrix venv's, not the learner's")
    wrong = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in pins and dist.version.split("+")[0] != pins[name]:
            wrong[name] = (dist.version, pins[name])
    assert wrong == {}, f"installed, pinned: {wrong}; run ./lab setup"


def test_lab_and_binder_install_through_constraints_txt():
    lab = (ROOT / "lab").read_text()
    # ./lab takes torch's version from the pin and passes the pins to every pip install.
    assert "sed -n 's/^torch==//p' \"$CONSTRAINTS\"" in lab
    installs = [line for line in lab.splitlines() if re.search(r"pip_install (-e|\"torch)", line)]
    assert installs and all('-c "$(constraints_file)"' in line for line in installs), installs
    # Binder: a nested -c read from binder/, and the same torch, the CPU build. pip's own
    # parser reads the file, in a process of its own: importing pip here would switch
    # setuptools' distutils shim off for the rest of the test session (its `spec_for_pip`),
    # and Inductor, which imports setuptools, would then fail in later tests.
    reader = ("import json, sys\n"
              "from pip._internal.network.session import PipSession\n"
              "from pip._internal.req.req_file import parse_requirements\n"
              "reqs = parse_requirements(sys.argv[1], session=PipSession())\n"
              "print(json.dumps([[r.requirement, r.constraint] for r in reqs]))\n")
    read = subprocess.run([sys.executable, "-c", reader, str(ROOT / "binder" / "requirements.txt")],
                          capture_output=True, text=True, timeout=60)
    assert read.returncode == 0, read.stderr
    reqs = json.loads(read.stdout)
    constrained = {canonicalize_name(r.split("==")[0]): r.split("==")[1] for r, c in reqs if c}
    assert constrained == _pins()
    torch_lines = [r for r, c in reqs if not c and r.startswith("torch")]
    assert torch_lines == [f"torch=={_pins()['torch']}+cpu"]


def test_a_matrix_venv_gets_every_pin_but_torch(tmp_path):
    # ./lab's constraints_file, run as ./lab runs it for a matrix venv (TORCH_SOURCE=pypi).
    script = (f'source <(sed -n "/^constraints_file()/,/^}}/p" {ROOT}/lab); '
              f'CONSTRAINTS={CONSTRAINTS}; VENV={tmp_path}; TORCH_SOURCE=pypi; constraints_file')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    made = Path(out.stdout.strip()).read_text()
    assert "torch==" not in made.replace("# ", "") and "transformers==" in made
