"""The README's two commands exist and say what they do; set-up installs torch 2.13.0 and the
package admits 2.13 and 2.14 on Python 3.11 to 3.13; CI runs the tests on each Python."""

import os
import re
import subprocess
import shutil
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

import widgets

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "lab"


def _first_code_block(markdown: str) -> list[str]:
    """The non-blank lines of the first fenced code block, comments dropped."""
    match = re.search(r"^```[^\n]*\n(.*?)^```", markdown, re.DOTALL | re.MULTILINE)
    assert match, "README.md has no code block"
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in match.group(1).splitlines()]
    return [line for line in lines if line]


def test_lab_script_is_executable_bash():
    assert LAB.is_file()
    assert os.access(LAB, os.X_OK), "./lab must be executable"
    assert LAB.read_text().startswith("#!/usr/bin/env bash\n")
    check = subprocess.run(["bash", "-n", str(LAB)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def test_lab_help_names_both_commands_and_sets_nothing_up():
    run = subprocess.run([str(LAB), "help"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    # Each command starts a line; the bare one is followed by the column gap.
    assert re.search(r"^\s*\./lab\s{2,}\S", run.stdout, re.MULTILINE), run.stdout
    assert re.search(r"^\s*\./lab test\s", run.stdout, re.MULTILINE), run.stdout
    assert run.stderr == ""


def test_lab_rejects_an_unknown_command():
    run = subprocess.run([str(LAB), "no-such-command"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert run.returncode != 0
    assert "help" in run.stderr


def test_lab_never_downloads_a_browser():
    # Browser builds cannot be fetched here: the tests use Debian's /usr/bin/chromium.
    assert "playwright install" not in LAB.read_text()


def _lab_setting(name: str) -> str:
    found = re.search(rf'^{name}="([^"]+)"$', LAB.read_text(), re.MULTILINE)
    assert found, f"./lab sets no {name}"
    return found[1]


def _torch_requirement() -> Requirement:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    torch_reqs = [Requirement(dep) for dep in meta["dependencies"] if Requirement(dep).name == "torch"]
    assert len(torch_reqs) == 1, meta["dependencies"]
    return torch_reqs[0]


def test_pyproject_names_the_project_and_python():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "dynamo-lab"
    assert meta["requires-python"].replace(" ", "") == ">=3.11,<3.14"


def test_learners_get_torch_2_13_0_and_the_package_admits_2_14():
    # The lessons are validated on exactly what ./lab installs (constraints.txt's torch line,
    # which ./lab reads); CI also tests 2.14.1.
    pinned = re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.MULTILINE)[1]
    other = _lab_setting("OTHER_TORCH_VERSION")
    assert (pinned, other) == ("2.13.0", "2.14.1")
    spec = _torch_requirement().specifier
    admitted = ["2.13.0", "2.13.0+cpu", "2.13.1", "2.14.0", "2.14.1", "2.14.1+cu130"]
    refused = ["2.12.1", "2.15.0", "3.0.0"]
    assert [v for v in admitted if spec.contains(v)] == admitted
    assert [v for v in refused if spec.contains(v)] == []
    # %load_ext widgets agrees with the metadata on where the range ends.
    assert str(spec) == str(Requirement(f"torch{widgets.SUPPORTED_TORCH}").specifier)
    assert [v for v in admitted + refused if widgets.torch_version_problem(v) is None] == admitted


def test_readme_opens_with_the_two_commands():
    block = _first_code_block((ROOT / "README.md").read_text())
    assert block == ["./lab", "./lab test"]


def test_the_other_torch_leaves_out_only_test_files_that_exist():
    # A renamed file would otherwise run on 2.14 unnoticed, or a typo leave a file in.
    found = re.search(r"^MATRIX_IGNORE=\(([^)]*)\)", LAB.read_text(), re.MULTILINE)
    assert found, "./lab sets no MATRIX_IGNORE"
    left_out = found[1].split()
    assert "tests/test_browser.py" in left_out and "tests/test_setup.py" in left_out
    assert [path for path in left_out if not (ROOT / path).is_file()] == []


CI_LEGS = ["setup", "test", "test-torch2.14", "test-matrix 3.12 2.14.1", "test-matrix 3.13 2.13.0"]
# Made in the background while the main leg's tests run; each matrix leg (the last three of
# CI_LEGS, in this order) runs in the background too, once its venv is made.
CI_BACKGROUND = ["setup-matrix 3.11 2.14.1", "setup-matrix 3.12 2.14.1", "setup-matrix 3.13 2.13.0"]


def test_ci_runs_the_readme_test_command_then_every_other_leg_and_fails_if_any_fails(tmp_path):
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    # .ci/run beside a ./lab that logs its arguments with its TMPDIR and nice value, and fails
    # as told (FAIL: calls, by commas).
    (tmp_path / ".ci").mkdir()
    shutil.copy(ci, tmp_path / ".ci" / "run")
    fake_lab = tmp_path / "lab"
    fake_lab.write_text('#!/usr/bin/env bash\n'
                        'echo "$*|${TMPDIR:-}|$(nice)" >>calls\n'
                        '[[ ",$FAIL," != *",$*,"* ]]\n')
    fake_lab.chmod(0o755)
    for fail in ["", *CI_LEGS, "test,test-matrix 3.13 2.13.0", CI_BACKGROUND[1]]:
        (tmp_path / "calls").unlink(missing_ok=True)
        temp = tmp_path / "temp"
        temp.mkdir(exist_ok=True)
        run = subprocess.run([str(tmp_path / ".ci" / "run")],
                             env={**os.environ, "FAIL": fail, "TMPDIR": str(temp)},
                             capture_output=True, text=True, timeout=60)
        # A venv the background could not make is made by its own leg: that alone fails nothing.
        assert (run.returncode != 0) == (fail not in ["", CI_BACKGROUND[1]]), (fail, run)
        calls = [c.split("|") for c in (tmp_path / "calls").read_text().splitlines()]
        order = [c[0] for c in calls]
        assert sorted(c for c in order if not c.startswith("setup-matrix")) == sorted(CI_LEGS), fail
        assert [c for c in order if c.startswith("setup-matrix")] == CI_BACKGROUND, fail
        # Set-up first, alone; each matrix leg after its own venv, in order, beside the main leg.
        assert order[0] == "setup", order
        legs = [c for c in order if c in CI_LEGS[2:]]
        assert legs == CI_LEGS[2:], order
        for venv, leg in zip(CI_BACKGROUND, CI_LEGS[2:]):
            assert order.index(venv) < order.index(leg), order
        # The background runs at the lowest priority, each matrix leg in a TMPDIR of its own;
        # the README's two commands run as they would by hand.
        by_call = {c[0]: c for c in calls}
        assert by_call["setup"][1:] == [str(temp), "0"] == by_call["test"][1:], calls
        folders = [by_call[leg][1] for leg in CI_LEGS[2:]]
        assert len(set(folders)) == 3 and all(f.startswith(f"{temp}/") for f in folders), calls
        assert {by_call[c][2] for c in CI_BACKGROUND + CI_LEGS[2:]} == {"19"}, calls
        assert run.stderr.count("ci: ./lab ") == len(CI_LEGS), run.stderr
        assert (f"ci: background set-up of {CI_BACKGROUND[1][13:]} failed" in run.stderr) == (
            fail == CI_BACKGROUND[1]), run.stderr
        # Each leg's output is printed, and nothing of .ci/run's own is left in the temp folder.
        for leg in CI_LEGS[2:]:
            assert f"ci: ---- background: ./lab {leg} ----" in run.stdout, run.stdout
        assert list(temp.iterdir()) == [], list(temp.iterdir())


def test_lab_test_matrix_refuses_what_the_package_does_not_support_and_sets_nothing_up():
    for args, word in [(["3.10", "2.14.1"], "Python '3.10'"), (["3.12", "2.12.0"], "torch '2.12.0'"),
                       (["3.12"], "usage")]:
        run = subprocess.run([str(LAB), "test-matrix", *args], cwd=ROOT, capture_output=True,
                             text=True, timeout=30)
        assert run.returncode != 0 and word in run.stderr, (args, run.stderr)
        assert "creating" not in run.stderr and "installing" not in run.stderr
    # Every supported Python is one the package admits, and each has its venv name.
    pythons = re.search(r"^MATRIX_PYTHONS=\(([^)]*)\)", LAB.read_text(), re.MULTILINE)[1].split()
    assert pythons == ["3.11", "3.12", "3.13"]
