"""Record a fixed set of programs and write each recording's JSON, to compare two versions
of the engine byte for byte (a change to the recorder must leave every recording as it was).

    .venv/bin/python bench/golden.py write /tmp/before      # on the old engine
    .venv/bin/python bench/golden.py write /tmp/after       # on the new one
    .venv/bin/python bench/golden.py compare /tmp/before /tmp/after

The programs: the lessons' programs (`widgets.course.versions.PROGRAMS`), the engine
tests' scenarios (`tests/scenarios.py`) and a 2-layer Hugging Face GPT-2 (`bench/models.py`).
Addresses and process-wide counters are normalised as the scenarios' oracle does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import re

_ID = re.compile(r"(?<![\d.])\d{11,}(?![\d.])")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def programs() -> dict:
    """name -> a function that records it and returns the Recording."""
    import capture
    import scenarios
    import torch
    from widgets.course import versions

    from bench.models import build

    out = {}
    for name in versions.PROGRAMS:
        out[f"lesson-{name}"] = lambda name=name: versions.record(name)
    for name, make in scenarios.SCENARIOS.items():
        def run(make=make):
            capture.prepare()
            calls = make()
            with capture.record() as rec:
                for fn, args in calls:
                    torch.compile(fn, backend="eager")(*args)
            return rec
        out[f"scenario-{name}"] = run

    def gpt2():
        model, args = build("gpt2-2")
        with torch.no_grad():
            return capture.trace(model, *args, backend="eager")
    out["gpt2-2"] = gpt2
    return out


def write(folder: Path) -> None:
    import scenarios

    folder.mkdir(parents=True, exist_ok=True)
    for name, run in programs().items():
        rec = run()
        for columns in (False, True):
            text = rec.to_json(columns=columns)
            for pattern, repl in scenarios._VOLATILE[:-1]:  # not the comment rule: JSON is one line
                text = pattern.sub(repl, text)
            text = _ID.sub("ID", text)  # object ids in guards (check_obj_id of a nested source)
            (folder / f"{name}{'-columns' if columns else ''}.json").write_text(text)
        print(f"{name}: {rec.step_count} steps", flush=True)


def compare(a: Path, b: Path) -> int:
    bad = 0
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    for name in names:
        pa, pb = a / name, b / name
        if not (pa.exists() and pb.exists()):
            print(f"{name}: only in one folder")
            bad += 1
        elif pa.read_bytes() != pb.read_bytes():
            print(f"{name}: differs")
            bad += 1
    print(f"{len(names) - bad} of {len(names)} identical")
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "write" and len(sys.argv) == 3:
        write(Path(sys.argv[2]))
    elif cmd == "compare" and len(sys.argv) == 4:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit("usage: golden.py write DIR | compare DIR_A DIR_B")
