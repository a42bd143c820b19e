"""Lesson 20's recordings: shipped for each Python, read back by capture's loader, and
made again by `python -m widgets.course.versions` (here on the running Python)."""

from __future__ import annotations

import pytest

import capture
from widgets.course import versions


@pytest.mark.parametrize("version", versions.PYTHONS)
@pytest.mark.parametrize("program", sorted(versions.PROGRAMS))
def test_every_program_ships_for_every_python(program, version):
    rec = versions.load(program, version)
    assert rec.python_version.startswith(version + ".")
    assert rec.torch_version.startswith("2.1")
    assert len(rec.compiles) == 1 and rec.compiles[0].steps
    assert rec.compiles[0].outcome != "unfinished"


def test_the_shipped_recordings_say_what_the_lesson_teaches():
    def walked(program, version, code=0):
        return [i.opname for i in versions.load(program, version).compiles[0].codes[code].walked]

    assert "PRECALL" in walked("method_call", "3.11")
    assert not {"PRECALL", "LOAD_METHOD"} & set(walked("method_call", "3.12") +
                                                walked("method_call", "3.13"))
    assert "LOAD_FAST_LOAD_FAST" in [i.opname for i in versions.load(
        "add", "3.13").compiles[0].codes[0].instructions]
    assert walked("add", "3.13") == walked("add", "3.11")   # Dynamo splits it back
    codes = {v: [c.name for c in versions.load("squares", v).compiles[0].codes]
             for v in versions.PYTHONS}
    assert "<listcomp>" in codes["3.11"]
    assert "<listcomp>" not in codes["3.12"] and "<listcomp>" not in codes["3.13"]
    assert sum(i.changed for i in versions.load("super_call", "3.11").compiles[0]
               .codes[0].walked) > 0
    assert sum(i.changed for i in versions.load("super_call", "3.13").compiles[0]
               .codes[0].walked) == 0


def test_the_generator_writes_what_the_loader_reads(tmp_path, capsys):
    assert versions.main(["--out", str(tmp_path)]) == 0
    made = sorted(p.name for p in tmp_path.glob("*.json"))
    assert made == sorted(f"{p}-py{versions.python()}.json" for p in versions.PROGRAMS)
    assert "versions: add-py" in capsys.readouterr().out
    fresh = capture.Recording.from_json((tmp_path / made[0]).read_text(encoding="utf-8"))
    program = made[0].split("-py")[0]
    if versions.python() in versions.PYTHONS:
        shipped = versions.load(program, versions.python())
        assert [s.opname for s in fresh.compiles[0].steps] == \
               [s.opname for s in shipped.compiles[0].steps]
