"""What a notebook host shows of a TraceViewer when anywidget's front end does not load.

A TraceViewer's display carries, beside the widget view, a `text/html` rendering that a
host shows when it cannot draw the widget: a notebook viewer, a front end without the
widget manager, an export to Markdown. It says what `dynamo-lab explain` says of the
recording (compiles, graph breaks, recompiles; bounded) and the command that writes the
recording as a page any browser steps through, so the learner never meets an empty cell.
Hosts that draw widgets prefer the widget view, the richer type, and never show it.

The text is the engine's (`capture.explain`), escaped here: program text is never markup.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capture import Recording

MAX_LINES = 24        # of the summary: a cell's worth
MAX_CHARS = 3000
MAX_LINE = 160        # one line of it (a long guard, a long path)
# The page, from a recording saved as JSON (`dynamo-lab html` reads it, widgets/cli.py).
COMMAND = "dynamo-lab html trace.json -o trace.html"
SAVE = 'open("trace.json", "w").write(recording.to_json())'
MAGIC = "%%capture_trace --html trace.html"
CLASS = "dl-fallback"  # marks this rendering in a stored notebook (notebooks/conftest.py)


def summary(recording: Recording) -> str:
    """What `dynamo-lab explain` says of the recording, cut to MAX_LINES lines of at most
    MAX_LINE characters, MAX_CHARS in all; the cut says what is left out and where it is."""
    from capture.explain import explanation_text

    if not recording.compiles:
        return "nothing was compiled while recording"
    lines = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
             for line in explanation_text(recording).splitlines()]
    kept, size = [], 0
    for line in lines:
        if len(kept) == MAX_LINES or size + len(line) > MAX_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    while kept and not kept[-1].strip():
        kept.pop()
    left = len(lines) - len(kept)
    if left:
        kept.append(f"… {left} more line(s): `dynamo-lab explain trace.json` prints them all")
    return "\n".join(kept)


def headline(recording: Recording) -> str:
    return (f"Dynamo Lab's trace viewer did not load here (this host shows no anywidget front "
            f"end). The recording: {len(recording.compiles)} compile(s), "
            f"{recording.step_count:,} step(s).")


def fallback_html(recording: Recording) -> str:
    """The fallback as HTML: the same text, every piece of it escaped."""
    e = html.escape
    return (
        f'<div class="{CLASS}">'
        f"<p>{e(headline(recording))}</p>"
        f"<pre>{e(summary(recording))}</pre>"
        "<p>Step through it in any browser (no kernel needed): write it as a page,</p>"
        f"<pre>{e(COMMAND)}</pre>"
        f"<p>after saving it with <code>{e(SAVE)}</code> (in a notebook, "
        f"<code>{e(MAGIC)}</code> on the recording cell's first line does both).</p>"
        "</div>"
    )
