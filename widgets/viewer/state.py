"""What a viewer's front end is given: every synced value of a recording, by trait name.

The recording travels once, as the engine's JSON (steps as columns) gzip-compressed,
beside every compile's graph layout (layout.py; graphviz runs in the kernel, the browser has none).
TraceViewer syncs these values and a standalone page (page.py) carries them inline;
both hand them to the same front end. Nothing here imports anywidget or ipywidgets,
so the page export and the command line stay light.
"""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

from capture.compare import compare
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
    """The recording as the front end receives it: its JSON with the steps and readings
    as columns (`Recording.to_json(columns=True)`: on a 140,000-step recording 15.8 MB
    where the rows are 55 MB, parsed in the page in under half the time), gzip-compressed.

    `mtime=0` keeps the bytes the same for the same recording (saved notebooks diff).
    """
    text = recording.to_json(columns=True, separators=(",", ":"))
    return gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)


def layouts_gzip(recording: Recording) -> bytes:
    """Every compile's graph layout (see layout.py), as gzip-compressed JSON: dot's time
    for all of them is bounded (`layout.layouts`)."""
    data = layout.layouts(recording.compiles)
    return gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"),
                         compresslevel=6, mtime=0)


# -- compare mode: two compiles of one frame, aligned by capture.compare -------------------

# Every pair of a frame's compiles is offered while a frame has at most this many; past it,
# each recompile beside the compile it replaces and each compile beside the one before.
ALL_PAIRS_UP_TO = 4


def _runs(aligned: list[tuple[int | None, int | None]]) -> list[list[int | None]]:
    """The alignment as runs `[a, b, n]`: n pairs from (a, b) on, each side counting up
    (a side that is None stays None): a few runs where the pairs would be thousands."""
    runs: list[list[int | None]] = []
    for x, y in aligned:
        if runs:
            a, b, n = runs[-1]
            if (x is None) == (a is None) and (y is None) == (b is None) and \
                    (x is None or x == a + n) and (y is None or y == b + n):
                runs[-1][2] = n + 1
                continue
        runs.append([x, y, 1])
    return runs


def _pairs(recording: Recording) -> list[tuple[int, int]]:
    """The pairs (earlier, later) of compiles of one frame the compare mode offers."""
    frames: dict[tuple, list[int]] = {}
    for k, c in enumerate(recording.compiles):
        frames.setdefault((c.code_name, c.filename, c.firstlineno, c.generation), []).append(k)
    pairs: set[tuple[int, int]] = set()
    for ks in frames.values():
        if len(ks) <= ALL_PAIRS_UP_TO:
            pairs.update((x, y) for j, x in enumerate(ks) for y in ks[j + 1:])
            continue
        pairs.update(zip(ks, ks[1:]))
        for k in ks:
            c = recording.compiles[k]
            if c.replaces is not None:
                try:
                    pairs.add((recording.compile_index(c.replaces, c.generation), k))
                except KeyError:   # replaced a compile made before recording
                    pass
    return sorted(pairs)


def comparisons(recording: Recording) -> list[dict[str, Any]]:
    """What the compare mode shows, per pair of compiles of one frame: `ka`, `kb` (indices
    in `compiles`) and `Comparison.to_dict()`, its alignment as runs (`_runs`). Every pair
    is aligned, at any size: `align_steps` is one linear walk (two compiles of a 12-layer
    GPT-2, 41,407 steps each, in under a tenth of a second)."""
    out, memo = [], {}   # what is read of a compile serves every pair it is in
    for ka, kb in _pairs(recording):
        a, b = recording.compiles[ka], recording.compiles[kb]
        d = compare(recording, a.compile_id, b.compile_id, generation=a.generation,
                    memo=memo).to_dict()
        d["runs"] = _runs([tuple(p) for p in d.pop("aligned")])
        out.append({"ka": ka, "kb": kb, **d})
    return out


def comparisons_gzip(recording: Recording) -> bytes:
    """`comparisons(recording)` as gzip-compressed JSON."""
    return gzip.compress(json.dumps(comparisons(recording), separators=(",", ":")).encode("utf-8"),
                         compresslevel=6, mtime=0)


def answers(recording: Recording) -> list[dict[str, Any]]:
    """What `dynamo-lab explain` says about each compile, entry k for `recording.compiles[k]`
    (capture.explain `viewer_answers`: the outcome, the user's lines, the failed guards and
    the fixes, from one explanation of the whole recording): the compile menu, the break
    card and the compare view show these words and no others of their own."""
    from capture.explain import viewer_answers   # reads the installed torch's graph-break registry

    return viewer_answers(recording)


def viewer_state(recording: Recording, compile: str | int | None = 0,
                 step: int = 0) -> dict[str, Any]:
    """Every value the front end needs, by trait name: what TraceViewer syncs and what a
    standalone page hands to `render()`."""
    k = compile_number(recording, compile)
    return {
        "data": recording_gzip(recording),
        "graphs": layouts_gzip(recording),
        "titles": [c.title() for c in recording.compiles],
        # two compiles of one frame side by side (compare mode), see comparisons()
        "comparisons": comparisons_gzip(recording),
        # explain's statements, per compile (see answers())
        "answers": answers(recording),
        # what each opcode, tracker class, guard kind and symbol means (capture/help.json)
        "help": help_for(recording),
        "compile": k,
        "step": clamp_step(recording, k, step),
        "predict": False,
        "predictions": [],
    }
