"""`dynamo-lab`: record a Python script's compiles, and turn a saved recording into a page.

For people outside Jupyter::

    dynamo-lab record train.py --epochs 1 -o trace.json     # or -o trace.html, or both
    dynamo-lab html trace.json -o trace.html

`record` runs the script as `python train.py --epochs 1` would (its own `sys.argv`,
`__name__ == "__main__"`, its folder first on `sys.path`) inside `capture.record()`,
and writes whatever Dynamo compiled. The script's arguments run to the end of the
line, or up to the first `-o`/`--out`: what follows that is dynamo-lab's again. A
script that takes an `-o` of its own gets it when dynamo-lab's options come first:
`dynamo-lab record -o trace.json train.py -o model.pt`.

Progress, notes and errors go to stderr, prefixed `dynamo-lab:`; every error is one
line. A script that raises still gets its recording written, up to that point.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

PROG = "dynamo-lab"
FORMATS = {".json": "json", ".html": "html", ".htm": "html"}
# Options of `record` that take a value (needed to find where the script's name is).
_VALUE_OPTIONS = ("-o", "--out", "--max-steps")
# Progress: the first line after this many seconds of recording, then again every
# PROGRESS_EVERY seconds (rewritten in place on a terminal).
PROGRESS_AFTER = 2.0
PROGRESS_EVERY = {True: 1.0, False: 10.0}


class CommandError(Exception):
    """A one-line error for the user; `main` prints it and returns `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def step_total(recording: Any) -> int:
    """Steps stored over all of a recording's compiles."""
    return sum(len(c.steps) for c in recording.compiles)


def say(message: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    print(f"{PROG}: {message}", file=stream, flush=True)


# -- arguments ---------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    from capture import DEFAULT_MAX_STEPS

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Record what PyTorch Dynamo does while a script runs, and write it as a "
                    "recording (JSON) or as one self-contained HTML page that steps through "
                    "it in any browser.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    rec = sub.add_parser(
        "record", help="run a Python script and record every compile Dynamo makes",
        usage=f"{PROG} record SCRIPT.py [ARGS ...] -o OUT.json|OUT.html [options]",
        description="Run SCRIPT.py as `python SCRIPT.py ARGS` would, recording every compile "
                    "Dynamo makes while it runs. The script's ARGS run up to the first -o/--out; "
                    "a script with an -o of its own: give dynamo-lab's options first "
                    "(record -o trace.json SCRIPT.py -o x).")
    # SCRIPT.py and its ARGS are split off by split_record_args before argparse runs.
    rec.add_argument("-o", "--out", action="append", required=True, metavar="FILE",
                     help="where to write: FILE.json (the recording) or FILE.html (a page); "
                          "give -o twice for both")
    rec.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                     help=f"store at most N instructions in all (default {DEFAULT_MAX_STEPS}); "
                          "Dynamo runs on past the cap and the recording says it was cut")
    rec.add_argument("--traceback", action="store_true",
                     help="when the script raises, also print its traceback")
    rec.add_argument("-q", "--quiet", action="store_true", help="no progress or notes")

    page = sub.add_parser(
        "html", help="turn a saved recording (JSON) into one self-contained HTML page",
        description="Write a recording saved as JSON (dynamo-lab record -o x.json, or "
                    "Recording.to_json()) as one HTML page that opens from file:// with no "
                    "network.")
    page.add_argument("recording", metavar="TRACE.json", help="the recording to read")
    page.add_argument("-o", "--out", metavar="PAGE.html",
                      help="the page to write (default: TRACE.html beside the recording)")
    page.add_argument("--compile", metavar="ID",
                      help="open at the compile with this id (0/0, 0/0_1, 1/0)")
    page.add_argument("--step", type=int, default=0, metavar="N", help="open at step N")
    page.add_argument("-q", "--quiet", action="store_true", help="no notes")
    return parser


def split_record_args(tokens: list[str]) -> tuple[list[str], str | None, list[str]]:
    """`record`'s tokens as (dynamo-lab's options, the script, the script's arguments).

    When -o comes before the script, everything after the script is the script's.
    Otherwise the script's arguments end at the first -o/--out, and the rest of the
    line is dynamo-lab's options again.
    """
    before: list[str] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith("-") and tokens[i] != "-":
        token = tokens[i]
        if token == "--":
            i += 1
            break
        before.append(token)
        if token in _VALUE_OPTIONS and i + 1 < len(tokens):
            before.append(tokens[i + 1])
            i += 1
        i += 1
    if i >= len(tokens):
        return before, None, []
    script, rest = tokens[i], tokens[i + 1:]
    after: list[str] = []
    if not any(t in ("-o", "--out") or t.startswith("--out=") for t in before):
        for j, token in enumerate(rest):
            if token in ("-o", "--out") or token.startswith("--out="):
                rest, after = rest[:j], rest[j:]
                break
    return [*before, *after], script, rest


# -- recording a script ----------------------------------------------------------------

class Progress:
    """Says on stderr how far a long recording has got, from a thread of its own."""

    def __init__(self, recording: Any, what: str, stream: TextIO | None = None) -> None:
        self.recording = recording
        self.what = what
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dynamo-lab progress",
                                        daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def line(self) -> str:
        compiles = list(self.recording.compiles)
        steps = sum(len(c.steps) for c in compiles)
        seconds = time.monotonic() - self.start
        return (f"{PROG}: recording {self.what}: {len(compiles)} compile(s), "
                f"{steps:,} step(s), {seconds:.0f} s")

    def _run(self) -> None:
        if self._stop.wait(PROGRESS_AFTER):
            return
        every = PROGRESS_EVERY[self.tty]
        while True:
            text = self.line()
            try:
                if self.tty:
                    self.stream.write("\r" + text + "\x1b[K")
                else:
                    self.stream.write(text + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # stderr closed by the script
                return
            self.shown = True
            if self._stop.wait(every):
                return


def _where(error: BaseException, script: Path) -> str:
    """`script.py, line 12` for the innermost frame of the script's own files, if any."""
    frames = traceback.extract_tb(error.__traceback__)
    folder = str(script.parent) + os.sep
    mine = [f for f in frames if f.filename == str(script) or f.filename.startswith(folder)]
    if not mine:
        return ""
    f = mine[-1]
    name = os.path.relpath(f.filename) if f.filename.startswith(folder) else f.filename
    return f" ({name}, line {f.lineno})"


def _print_traceback(error: BaseException, script: Path) -> None:
    """The traceback as `python script.py` prints it: from the script's first frame on."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != str(script):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb or error.__traceback__, file=sys.stderr)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else ""


def run_script(script: Path, args: list[str], max_steps: int,
               quiet: bool = False) -> tuple[Any, BaseException | None]:
    """Run `script` as `python script args` would, recording; (recording, what it raised)."""
    import capture

    argv, path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [str(script), *args]
    # `python script.py` puts the script's folder first on sys.path.
    if sys.path:
        sys.path[0] = str(script.parent)
    else:
        sys.path.insert(0, str(script.parent))
    error: BaseException | None = None
    recording = None
    try:
        with capture.record(max_steps=max_steps) as recording:
            progress = None if quiet else Progress(recording, script.name)
            try:
                if progress is not None:
                    progress.__enter__()
                runpy.run_path(str(script), run_name="__main__")
            finally:
                if progress is not None:
                    progress.__exit__(None, None, None)
    except SystemExit as e:
        if e.code not in (None, 0):
            error = e
    except (Exception, KeyboardInterrupt) as e:
        error = e
    finally:
        sys.argv = argv
        if path0 is not None and sys.path:
            sys.path[0] = path0
    return recording, error


def _record(opts: argparse.Namespace) -> int:
    outs = [_out_path(o) for o in opts.out]
    if opts.max_steps < 1:
        raise CommandError(f"--max-steps must be at least 1 (got {opts.max_steps})", 2)
    script = Path(opts.script)
    if not script.exists():
        raise CommandError(f"{opts.script}: no such file; give the path of a Python script, "
                           f"e.g. {PROG} record train.py -o trace.json", 2)
    if script.is_dir():
        raise CommandError(f"{opts.script} is a folder; give the path of a Python script "
                           "(.py file)", 2)
    for out in outs:
        if not out.parent.is_dir():
            raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    script = script.resolve()
    recording, error = run_script(script, list(opts.args), opts.max_steps, opts.quiet)
    written = _write(recording, outs, quiet=opts.quiet, title=f"{script.name} · Dynamo Lab")
    summary = f"{len(recording.compiles)} compile(s), {step_total(recording):,} step(s)"
    if error is None:
        if not opts.quiet:
            say(f"wrote {written}: {summary}")
            if not recording.compiles:
                say(f"note: nothing was compiled while {script.name} ran: Dynamo records a "
                    "function only when a torch.compile'd function or module is called")
        return 0
    if opts.traceback:
        _print_traceback(error, script)
    if isinstance(error, SystemExit):
        what = f"exited with status {error.code}"
        status = error.code if isinstance(error.code, int) else 1
    elif isinstance(error, KeyboardInterrupt):
        what, status = "was interrupted (KeyboardInterrupt)", 130
    else:
        message = _first_line(error)
        what = (f"raised {type(error).__name__}" + (f": {message}" if message else "")
                + _where(error, script))
        status = 1
    hint = "" if opts.traceback else "; --traceback shows the script's traceback"
    raise CommandError(f"error: {script.name} {what}; the recording up to that point "
                       f"({summary}) is in {written}{hint}", status)


def _out_path(text: str) -> Path:
    path = Path(text)
    if path.suffix.lower() not in FORMATS:
        raise CommandError(f"cannot tell what to write to {text!r}: name it .json (the "
                           "recording) or .html (a page)", 2)
    return path


def _write(recording: Any, outs: list[Path], *, quiet: bool, title: str,
           compile: str | None = None, step: int = 0) -> str:
    """Write the recording to each path, by its suffix; the paths, joined for a message."""
    for out in outs:
        if FORMATS[out.suffix.lower()] == "json":
            out.write_text(recording.to_json(), encoding="utf-8")
        else:
            from .viewer import page

            if not quiet and step_total(recording) > 5_000:
                say(f"writing {out}: laying out {len(recording.compiles)} graph(s)…")
            page.write_html(recording, out, compile=compile, step=step, title=title)
    return " and ".join(str(o) for o in outs)


# -- a page from a saved recording ------------------------------------------------------

def read_recording(path: Path) -> Any:
    """A `Recording` from a JSON file, or a one-line CommandError saying what is wrong."""
    from capture import Recording
    from capture.recording import SCHEMA_VERSION

    if not path.exists():
        raise CommandError(f"{path}: no such file; give a recording written by "
                           f"`{PROG} record SCRIPT.py -o {path.name}`", 2)
    if path.is_dir():
        raise CommandError(f"{path} is a folder; give a recording's .json file", 2)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        raise CommandError(f"{path} is not a recording (not UTF-8 text): give a .json file "
                           f"written by `{PROG} record`") from None
    except json.JSONDecodeError as e:
        raise CommandError(f"{path} is not JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
                           f"give a file written by `{PROG} record -o x.json`") from None
    if not isinstance(data, dict) or "compiles" not in data or "schema" not in data:
        raise CommandError(f"{path} is JSON but not a recording (no schema and compiles); give "
                           f"a file written by `{PROG} record -o x.json` or Recording.to_json()")
    if data["schema"] != SCHEMA_VERSION:
        raise CommandError(f"{path} is a recording of schema {data['schema']!r}, and this "
                           f"version of dynamo-lab reads schema {SCHEMA_VERSION}: record it "
                           f"again (`{PROG} record SCRIPT.py -o {path.name}`)")
    try:
        return Recording.from_json(text)
    except (KeyError, TypeError, ValueError) as e:
        raise CommandError(f"{path} is a damaged recording ({type(e).__name__}: "
                           f"{_first_line(e)}); record it again") from None


def _html(opts: argparse.Namespace) -> int:
    source = Path(opts.recording)
    out = Path(opts.out) if opts.out else source.with_suffix(".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CommandError(f"the page must be named .html (got {str(out)!r})", 2)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    if opts.step < 0:
        raise CommandError(f"--step must be 0 or more (got {opts.step})", 2)
    recording = read_recording(source)
    if opts.compile is not None:
        try:
            recording.compile(opts.compile)
        except KeyError as e:
            raise CommandError(str(e.args[0]), 2) from None
    _write(recording, [out], quiet=opts.quiet, title=f"{source.name} · Dynamo Lab",
           compile=opts.compile, step=opts.step)
    if not opts.quiet:
        say(f"wrote {out}: {len(recording.compiles)} compile(s), {step_total(recording):,} step(s)")
    return 0


# -- entry point -----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """The `dynamo-lab` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script, script_args = None, []
    if argv and argv[0] == "record":
        options, script, script_args = split_record_args(argv[1:])
        argv = ["record", *options]
    parser = _parser()
    opts = parser.parse_args(argv)
    if opts.command == "record":
        if script is None:
            parser.exit(2, f"{PROG}: error: record needs a script: {PROG} record SCRIPT.py "
                           "[ARGS ...] -o OUT.json\n")
        opts.script, opts.args = script, script_args
    try:
        if opts.command == "record":
            return _record(opts)
        return _html(opts)
    except CommandError as e:
        message = str(e)
        say(message if message.startswith("error:") else f"error: {message}")
        return e.status
    except OSError as e:  # a file that cannot be written, a full disk
        say(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
        return 1


if __name__ == "__main__":
    sys.exit(main())
