"""What a TraceViewer sends its front end, read back as the front end reads it."""

from __future__ import annotations

import gzip
import json
from typing import Any

from capture.recording import steps_from_columns, vars_from_columns


def sent(viewer: Any) -> dict[str, Any]:
    """The recording's JSON as the viewer's `data` trait carries it (gunzipped, parsed),
    each compile's steps and vars as the lists of dicts the front end makes of the columns."""
    return expanded(json.loads(gzip.decompress(viewer.data)))


def expanded(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with each compile's steps and vars as rows where they came as columns."""
    for c in data.get("compiles", ()):
        if isinstance(c["steps"], dict):
            c["steps"] = list(steps_from_columns(c["steps"]))
        if isinstance(c["vars"], dict):
            c["vars"] = list(vars_from_columns(c["vars"]))
    return data
