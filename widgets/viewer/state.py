"""What a viewer's front end is given: every synced value of a recording, by trait name.

The recording travels once, as the engine's JSON gzip-compressed, beside every
compile's graph layout (layout.py; graphviz runs in the kernel, the browser has none).
TraceViewer syncs these values and a standalone page (page.py) carries them inline;
both hand them to the same front end. Nothing here imports anywidget or ipywidgets,
so the page export and the command line stay light.
"""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

from capture.help import for_recording as help_for

from . import layout

if TYPE_CHECKING:
    from capture import Recording


def compile_number(recording: Recording, which: str | int | None) -> int:
    """The index in `recording.compiles` of a compile given by index or id ("0/0_1")."""
    if which is None:
        return 0
    if isinstance(which, int) and not isinstance(which, bool):
        if not 0 <= which < max(len(recording.compiles), 1):
            raise IndexError(f"compile number {which} is out of range: this recording "
                             f"has {len(recording.compiles)} compile(s)")
        return which
    return recording.compile_index(str(which))


def clamp_step(recording: Recording, k: int, step: int) -> int:
    last = len(recording.compiles[k].steps) - 1 if recording.compiles else 0
    return max(0, min(int(step), max(last, 0)))


def recording_gzip(recording: Recording) -> bytes:
    """The recording as the front end receives it: its JSON, gzip-compressed.

    `mtime=0` keeps the bytes the same for the same recording (saved notebooks diff).
    """
    return gzip.compress(recording.to_json().encode("utf-8"), compresslevel=6, mtime=0)


def layouts_gzip(recording: Recording) -> bytes:
    """Every compile's graph layout (see layout.py), as gzip-compressed JSON."""
    data = [layout.layout(c) for c in recording.compiles]
    return gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"),
                         compresslevel=6, mtime=0)


def viewer_state(recording: Recording, compile: str | int | None = 0,
                 step: int = 0) -> dict[str, Any]:
    """Every value the front end needs, by trait name: what TraceViewer syncs and what a
    standalone page hands to `render()`."""
    k = compile_number(recording, compile)
    return {
        "data": recording_gzip(recording),
        "graphs": layouts_gzip(recording),
        "titles": [c.title() for c in recording.compiles],
        # what each opcode, tracker class, guard kind and symbol means (capture/help.json)
        "help": help_for(recording),
        "compile": k,
        "step": clamp_step(recording, k, step),
        "predict": False,
        "predictions": [],
    }
