"""The files `dynamo-lab` writes and reads: a recording as JSON or as a page, by suffix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capture.attempt import first_line

from .progress import PROG, say

FORMATS = {".json": "json", ".html": "html", ".htm": "html"}


class FileError(Exception):
    """A file that cannot be read or written as asked, in one line; `status` to exit with."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def out_path(text: str) -> Path:
    """The path to write, if its suffix says what to write there."""
    path = Path(text)
    if path.suffix.lower() not in FORMATS:
        raise FileError(f"cannot tell what to write to {text!r}: name it .json (the "
                        "recording) or .html (a page)", 2)
    return path


def write(recording: Any, outs: list[Path], *, quiet: bool, title: str,
          compile: str | None = None, step: int = 0) -> str:
    """Write the recording to each path, by its suffix; the paths, joined for a message."""
    for out in outs:
        if FORMATS[out.suffix.lower()] == "json":
            # steps and readings as columns, no spaces: a third of the rows' size, and
            # read back column by column (Recording.from_json reads rows and columns)
            out.write_text(recording.to_json(columns=True, separators=(",", ":")),
                           encoding="utf-8")
        else:
            from .viewer import page

            if not quiet and recording.step_count > 5_000:
                say(f"writing {out}: laying out {len(recording.compiles)} graph(s)…")
            page.write_html(recording, out, compile=compile, step=step, title=title)
    return " and ".join(str(o) for o in outs)


def read_recording(path: Path) -> Any:
    """A `Recording` from a JSON file, or a one-line FileError saying what is wrong."""
    from capture import Recording

    if not path.exists():
        raise FileError(f"{path}: no such file; give a recording written by "
                        f"`{PROG} record SCRIPT.py -o {path.name}`", 2)
    if path.is_dir():
        raise FileError(f"{path} is a folder; give a recording's .json file", 2)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        raise FileError(f"{path} is not a recording (not UTF-8 text): give a .json file "
                        f"written by `{PROG} record`") from None
    except json.JSONDecodeError as e:
        raise FileError(f"{path} is not JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
                        f"give a file written by `{PROG} record -o x.json`") from None
    if not isinstance(data, dict) or "compiles" not in data or "schema" not in data:
        raise FileError(f"{path} is JSON but not a recording (no schema and compiles); give "
                        f"a file written by `{PROG} record -o x.json` or Recording.to_json()")
    try:
        del text
        return Recording.from_dict(data)  # the engine says which schema it reads
    except ValueError as e:
        raise FileError(f"{path}: {first_line(e)} ({PROG} record SCRIPT.py -o "
                        f"{path.name})") from None
    except (KeyError, TypeError) as e:
        raise FileError(f"{path} is a damaged recording ({type(e).__name__}: "
                        f"{first_line(e)}); record it again") from None
