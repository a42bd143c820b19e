"""The benchmark's quick mode still runs and prints a whole report.

It checks the shape of the report, never the numbers against the targets:
timings belong to `python bench/run.py`, not to the test suite.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _rows(text: str, heading: str) -> list[list[str]]:
    """The body rows of the markdown table under the heading that starts with `heading`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("###"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header


def _number(cell: str) -> float:
    assert re.fullmatch(r"-?\d+(\.\d+)?", cell), f"not a number: {cell!r}"
    return float(cell)


@pytest.fixture(scope="module")
def report() -> str:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_smoke_report_times_every_model_in_every_variant(report: str) -> None:
    rows = _rows(report, "### 1. Recording overhead")
    models = {row[0] for row in rows}
    assert "gpt-2" in models
    if importlib.util.find_spec("transformers") is not None:
        assert {"gpt2-1", "bert-1"} <= models
    for row in rows:
        _, steps, measure, plain, recorded, logged, ratio, logged_ratio = row
        assert measure in ("compile wall s", "compile CPU s")
        assert _number(steps) > 0
        for cell in (plain, recorded, logged):
            assert _number(cell) > 0
        assert _number(ratio) == pytest.approx(_number(recorded) / _number(plain), rel=0.01, abs=0.002)
        assert _number(logged_ratio) > 0


def test_smoke_report_sizes_recordings_per_step(report: str) -> None:
    rows = _rows(report, "### 2. Memory")
    assert [row[0] for row in rows] == ["gpt-1", "gpt-2"]
    small, large = (int(row[1]) for row in rows)
    assert large > small  # two sizes of the same model: more layers, more steps
    for row in rows:
        numbers = [_number(cell) for cell in row[1:10]]
        assert all(n > 0 for n in numbers)
        steps, kb, per_step = numbers[0], numbers[5], numbers[6]
        assert per_step == pytest.approx(kb * 1024 / steps, rel=0.05)


def test_smoke_report_times_the_viewer_and_a_lesson(report: str) -> None:
    (viewer,) = _rows(report, "### 3. Viewer latency")
    assert viewer[0] == "gpt-2"
    median, worst = _number(viewer[3]), _number(viewer[4])
    assert 0 < median <= worst
    (lesson,) = _rows(report, "### 4. Lesson cost")
    assert lesson[0] == "START.ipynb" and lesson[3] == "ok"
    assert _number(lesson[2]) > 0


def test_smoke_report_ends_with_every_target(report: str) -> None:
    targets = [row[0] for row in _rows(report, "### Targets")]
    assert sum(t.startswith("overhead ") for t in targets) == len(
        _rows(report, "### 1. Recording overhead")) // 2
    assert "viewer median ms" in targets and "viewer worst ms" in targets
    assert all(row[3] in ("yes", "NO") for row in _rows(report, "### Targets"))


def test_collector_bench_counts_each_generation_in_both_variants() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "collector.py"), "gpt-1",
                           "--rounds", "1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in proc.stdout.splitlines()[2:] if line.startswith("|")]
    assert [r[1] for r in rows] == ["plain", "recorded"]
    for _, _, wall, counts, seconds in rows:
        assert _number(wall) > 0
        gens = [int(n) for n in counts.split(" / ")]
        assert len(gens) == 3 and gens[0] > 0  # a compile allocates: young collections ran
        assert len(seconds.split(" / ")) == 3
