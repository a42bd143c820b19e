"""The same small functions recorded on each Python: what lesson 20 sets side by side.

CPython's bytecode changes with every minor version, and Dynamo walks whatever the
running interpreter compiled. Lesson 20 records these functions live on the kernel's
Python (3.11) and reads the recordings made on 3.12 and 3.13 from JSON shipped beside
the lessons (`notebooks/recordings/`), written by this module run with each Python::

    .venv-py3.12-torch2.14.1/bin/python -m widgets.course.versions
    .venv-py3.13-torch2.13.0/bin/python -m widgets.course.versions

Each run writes one `<program>-py<major>.<minor>.json` per program below (a
`capture.Recording`, read back with `capture.Recording.from_json`); the recording
itself says which torch made it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import capture

FOLDER = Path(__file__).resolve().parents[2] / "notebooks" / "recordings"
PYTHONS = ("3.11", "3.12", "3.13")


def method_call(x):
    return x.sin().cos()


def add(x, y):
    return x + y


def squares(xs):
    return sum([x * x for x in xs])


def maybe_bias(x, bias=None):
    if bias is None:
        return x * 2
    return x * 2 + bias


class Base(torch.nn.Module):
    def forward(self, x):
        return x.relu()


class Child(Base):
    def forward(self, x):
        return super().forward(x) + 1


# for the lesson's exercises: not shown before they are asked
def blend(a, b):
    return (a * b).sum()


def pairs(xs):
    return sum(x * y for x, y in zip(xs, xs))


def _child_args() -> tuple[Any, ...]:
    return (torch.ones(3),)


# program -> (the function Dynamo compiles, its arguments)
PROGRAMS: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]] = {
    "method_call": (method_call, lambda: (torch.ones(3),)),
    "add": (add, lambda: (torch.ones(3), torch.ones(3))),
    "squares": (squares, lambda: ([torch.ones(2), torch.ones(2)],)),
    "maybe_bias": (maybe_bias, lambda: (torch.ones(3),)),
    "super_call": (Child(), _child_args),
    "blend": (blend, lambda: (torch.ones(3), torch.ones(3))),
    "pairs": (pairs, lambda: ([torch.ones(2), torch.ones(2)],)),
}


def python() -> str:
    """This interpreter's version as major.minor."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def record(program: str) -> capture.Recording:
    """Record one program on this interpreter (backend eager: only Dynamo's work differs)."""
    fn, args = PROGRAMS[program]
    return capture.trace(fn, *args(), backend="eager")


def path(program: str, version: str) -> Path:
    return FOLDER / f"{program}-py{version}.json"


def load(program: str, version: str) -> capture.Recording:
    """A shipped recording, read with capture's JSON loader."""
    return capture.Recording.from_json(path(program, version).read_text(encoding="utf-8"))


def recordings(program: str) -> dict[str, capture.Recording]:
    """Python version -> recording: live for this interpreter, shipped for the others."""
    out = {}
    for version in PYTHONS:
        if version == python():
            out[version] = record(program)
        elif path(program, version).exists():
            out[version] = load(program, version)
    return out


def main(argv: list[str] | None = None) -> int:
    """Write this interpreter's recordings of every program into the recordings folder."""
    parser = argparse.ArgumentParser(
        prog="python -m widgets.course.versions",
        description="Record lesson 20's functions on this Python and write them as JSON.")
    parser.add_argument("--out", type=Path, default=FOLDER, help="folder (default: %(default)s)")
    opts = parser.parse_args(argv)
    opts.out.mkdir(parents=True, exist_ok=True)
    for program in PROGRAMS:
        rec = record(program)
        target = opts.out / path(program, python()).name
        target.write_text(rec.to_json(indent=None, separators=(",", ":")) + "\n",
                          encoding="utf-8")
        print(f"versions: {target.name}: {len(rec.compiles)} compile(s), "
              f"{rec.step_count} steps (Python {python()}, torch {rec.torch_version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
