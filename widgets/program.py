"""What `dynamo-lab record` runs: a script or a module, as `python` itself would run it.

    program = Program.script("train.py", ["--epochs", "1"])     # python train.py --epochs 1
    program = Program.module("pkg.train", ["--epochs", "1"])    # python -m pkg.train --epochs 1
    program.name, program.path, program.source()   # for notes, the page's title, refusals
    globals_ = program.run()                        # as __main__, sys.argv and sys.path[0] set

A wrong name raises `ProgramError` with one line that says what to give instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROG = "dynamo-lab"


class ProgramError(Exception):
    """A script or module that cannot be run, in one line (a usage error: status 2)."""

    status = 2


@dataclass(frozen=True)
class Program:
    """A script or a module, with the arguments it is run with."""

    name: str       # as messages say it: prog.py, or pkg.train
    path: Path      # its file (a package's __main__.py)
    run: Callable[[], dict[str, Any]]   # run it as __main__; its globals

    @classmethod
    def script(cls, given: str, args: list[str]) -> Program:
        """`python SCRIPT ARGS`: the script's folder first on sys.path."""
        path = Path(given)
        if not path.exists():
            raise ProgramError(f"{given}: no such file; give the path of a Python script, "
                               f"e.g. {PROG} record train.py -o trace.json")
        if path.is_dir():
            raise ProgramError(f"{given} is a folder; give the path of a Python script "
                               "(.py file), or a module with -m")
        path = path.resolve()

        def run() -> dict[str, Any]:
            with _as_main([str(path), *args], str(path.parent)):
                return runpy.run_path(str(path), run_name="__main__")

        return cls(path.name, path, run)

    @classmethod
    def module(cls, name: str, args: list[str]) -> Program:
        """`python -m MODULE ARGS`: the working folder first on sys.path; a package runs
        its __main__."""
        why = ""
        with _as_main([name, *args], os.getcwd()):
            try:
                spec = importlib.util.find_spec(name)
                if spec is not None and spec.submodule_search_locations is not None:
                    spec = importlib.util.find_spec(f"{name}.__main__")
            except (ImportError, ValueError) as e:
                spec, why = None, f" ({e})"
        if spec is None or not spec.origin or not os.path.isfile(spec.origin):
            raise ProgramError(f"no module named {name!r}{why}: give a module importable from "
                               f"here, e.g. {PROG} record -m package.train -o trace.json")
        path = Path(spec.origin)

        def run() -> dict[str, Any]:
            # alter_sys: sys.argv[0] becomes the module's file and sys.modules['__main__']
            # the module while it runs, as under `python -m`.
            with _as_main([str(path), *args], os.getcwd()):
                return runpy.run_module(name, run_name="__main__", alter_sys=True)

        return cls(name, path, run)

    def source(self) -> str:
        """Its text (read for what it hands to torch.compile, never run again)."""
        try:
            return self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def where(self, error: BaseException) -> str:
        """` (prog.py, line 12)`: the innermost frame in the program's folder, or ""."""
        folder = str(self.path.parent) + os.sep
        mine = [f for f in traceback.extract_tb(error.__traceback__)
                if f.filename.startswith(folder)]
        if not mine:
            return ""
        return f" ({os.path.relpath(mine[-1].filename, self.path.parent)}, line {mine[-1].lineno})"


@contextlib.contextmanager
def _as_main(argv: list[str], path0: str) -> Iterator[None]:
    """`sys.argv` and `sys.path[0]` as `python` sets them for its program; put back after."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = argv
    if sys.path:
        sys.path[0] = path0
    else:
        sys.path.insert(0, path0)
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
