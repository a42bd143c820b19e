"""The README's two commands exist and say what they do; the metadata pins torch."""

import os
import re
import subprocess
import tomllib
from pathlib import Path

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
    check = subprocess.run(["bash", "-n", str(LAB)], capture_output=True, text=True)
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


def test_pyproject_names_the_project_and_pins_torch_exactly():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "dynamo-lab"
    torch_pins = [dep for dep in meta["dependencies"] if re.match(r"torch\b(?!-)", dep)]
    assert [pin.replace(" ", "") for pin in torch_pins] == ["torch==2.13.0"]
    assert meta["requires-python"].replace(" ", "") == ">=3.11,<3.12"


def test_readme_opens_with_the_two_commands():
    block = _first_code_block((ROOT / "README.md").read_text())
    assert block == ["./lab", "./lab test"]


def test_ci_runs_the_readme_test_command():
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    commands = [line.strip() for line in ci.read_text().splitlines() if not line.lstrip().startswith("#")]
    assert any(re.fullmatch(r"(exec )?\./lab test", line) for line in commands), commands
