"""nbval and the viewer's fallback: a TraceViewer's display carries, beside the widget view,
the HTML a host shows when it cannot draw the widget (widgets/viewer/fallback.py).

nbval skips the widget view (its model id is random) and compares the rest. The fallback
is made from the recording the stored `text/plain` already names, and lessons stored
before it existed have none: it is left out of the comparison on both sides, the viewer's
only (an output whose HTML opens with the fallback's class next to a widget view).
"""

from __future__ import annotations

from typing import Any

from nbformat import from_dict

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FALLBACK = '<div class="dl-fallback">'


def _without_fallback(outputs: list[Any]) -> list[Any]:
    kept = []
    for out in outputs:
        data = out.get("data", {})
        html = data.get("text/html", "")
        html = "".join(html) if isinstance(html, list) else html
        if WIDGET_VIEW in data and html.startswith(FALLBACK):
            out = from_dict(dict(out, data={k: v for k, v in data.items() if k != "text/html"}))
        kept.append(out)
    return kept


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        compare = getattr(item, "compare_outputs", None)
        if compare is None or type(item).__module__ != "nbval.plugin":
            continue

        def without_fallback(test, ref, skip_compare=None, _compare=compare):
            return _compare(_without_fallback(test), _without_fallback(ref), skip_compare)

        item.compare_outputs = without_fallback
