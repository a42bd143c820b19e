"""What a TraceViewer sends its front end, read back as the front end reads it."""

from __future__ import annotations

import gzip
import json
from typing import Any


def sent(viewer: Any) -> dict[str, Any]:
    """The recording's JSON as the viewer's `data` trait carries it (gunzipped, parsed)."""
    return json.loads(gzip.decompress(viewer.data))
