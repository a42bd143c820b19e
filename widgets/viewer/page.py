"""A recording as one self-contained HTML page: the widget's own front end, no kernel, no network.

The page is the widget without Jupyter. `viewer_state()` (widgets/viewer/) gives
every value the widget syncs, graph layouts included (graphviz runs here, at export);
the page carries those values inline and hands them to the same ES module the widget
runs, `widgets/viewer/viewer.js` (read from the package at export), through the page's
host, `js/page-host.js`: a small stand-in for anywidget's model (`get`, `set`, `on`,
`off`, `save_changes`) and the loader. The module is inlined as text and imported from
a blob URL, because browsers refuse `import()` of a file next to a page opened from
`file://`.

    from widgets.viewer.page import write_html
    write_html(recording, "trace.html")          # or: dynamo-lab html trace.json

What the page holds, in order: a Content-Security-Policy that allows no network
request and no script but the page's own (so nothing in a recording can run even if
some view put it into the DOM as markup), the CSS, one mount point per viewer with
its state as JSON and its binary values (the gzip-compressed recording and layouts)
as base64, the module as text, and the host (the page's one module script).

`module_html()` and `viewer_html()` are the two halves, for pages that hold several
viewers (the course site).
"""

from __future__ import annotations

import base64
import html
import json
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture import Recording

HERE = Path(__file__).resolve().parent
MODULE = HERE / "viewer.js"
CSS = HERE / "viewer.css"
HOST = HERE / "js" / "page-host.js"   # the page's stand-in for anywidget: the loader

# Binary trait values (bytes) travel as base64 next to the JSON of the other values.
_BINARY = (bytes, bytearray, memoryview)

# The page's own style: the viewer's CSS reads JupyterLab's --jp-* variables with
# fallbacks; this only sets up the page around it.
PAGE_CSS = """
html { color-scheme: light; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
       font-size: 14px; color: #222; background: #fff; }
.dl-page { max-width: 1400px; margin: 0 auto; padding: 12px 16px 24px;
           /* the window less this page's heading and margins (a notebook's toolbars are
              taller: the viewer's own CSS leaves 150 px for them) */
           --dl-viewer-height: clamp(460px, calc(100vh - 96px), 1200px); }
.dl-page-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px;
                border-bottom: 1px solid #ddd; margin-bottom: 10px; padding-bottom: 6px; }
.dl-page-head h1 { font-size: 16px; margin: 0; }
.dl-page-head span { color: #666; font-size: 12px; }
.dl-page-error { color: #b00020; white-space: pre-wrap; font-family: monospace; }
/* A reader whose system is dark gets a dark page: JupyterLab's dark theme's variables,
   which the viewer's CSS reads. */
@media (prefers-color-scheme: dark) {
  html { color-scheme: dark; }
  body { color: #e0e0e0; background: #111111; }
  .dl-page-head { border-bottom-color: #424242; }
  .dl-page-head span { color: #bdbdbd; }
  .dl-page-error { color: #ff8a80; }
  .dl-page {
    --jp-layout-color0: #111111; --jp-layout-color1: #212121; --jp-layout-color2: #424242;
    --jp-layout-color3: #616161; --jp-border-color1: #616161; --jp-border-color2: #424242;
    --jp-content-font-color1: rgba(255, 255, 255, 1); --jp-content-font-color2: rgba(255, 255, 255, 0.74);
    --jp-content-font-color3: rgba(255, 255, 255, 0.6); --jp-ui-font-color1: rgba(255, 255, 255, 0.87);
    --jp-ui-inverse-font-color1: rgba(0, 0, 0, 0.8); --jp-content-link-color: #64b5f6;
    --jp-brand-color1: #42a5f5; --jp-warn-color1: #ffa726; --jp-error-color1: #ef5350;
    --jp-success-color1: #66bb6a;
  }
}
"""


def module_source() -> str:
    """The viewer's ES module, as the widget loads it."""
    return MODULE.read_text(encoding="utf-8")


def css_source() -> str:
    return CSS.read_text(encoding="utf-8")


def host_source() -> str:
    """The page's own script (js/page-host.js): it imports the module and renders every viewer.

    It runs as it is written, so it must hold nothing that could end its `<script>`."""
    text = HOST.read_text(encoding="utf-8")
    if re.search(r"</script|<!--", text, re.IGNORECASE):
        raise ValueError(f"{HOST} holds `</script` or `<!--`, which would end or bend its <script>")
    return text


def csp(nonce: str) -> str:
    """No network at all; scripts only the page's own (by nonce) and the module's blob."""
    return ("default-src 'none'; "
            f"script-src 'nonce-{nonce}' blob:; "
            "style-src 'unsafe-inline'; "
            "img-src data: blob:; font-src data:; connect-src data: blob:; "
            "base-uri 'none'; form-action 'none'")


def new_nonce() -> str:
    return secrets.token_urlsafe(18)


def _script_text(text: str) -> str:
    """Text that a `<script type="text/plain">` holds verbatim: `<` and `&` as entities
    (the host turns them back), so no `</script` or `<!--` can end or bend it."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _style_text(css: str) -> str:
    return css.replace("</", "<\\/")  # `\/` is `/` in CSS; a `</style` cannot close it


def _json_text(value: Any) -> str:
    """JSON for a `<script type="application/json">`: ASCII, no `<` (so no `</script`)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def split_buffers(state: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[list, bytes]]]:
    """The state with every bytes value taken out, and the (path, bytes) taken."""
    found: list[tuple[list, bytes]] = []

    def walk(value: Any, path: list) -> Any:
        if isinstance(value, _BINARY):
            found.append((path, bytes(value)))
            return None
        if isinstance(value, dict):
            return {k: walk(v, [*path, k]) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v, [*path, i]) for i, v in enumerate(value)]
        return value

    return walk(state, []), found


def module_html(nonce: str) -> str:
    """The module as text and the host that renders every viewer of the page (once a page)."""
    return (f'<script type="text/plain" id="dl-viewer-module">{_script_text(module_source())}'
            f'</script>\n<script type="module" nonce="{nonce}">{host_source()}</script>\n')


def style_html() -> str:
    """The viewer's CSS and the page's, as `<style>` elements."""
    return (f"<style>{_style_text(css_source())}</style>\n"
            f"<style>{_style_text(PAGE_CSS)}</style>\n")


def viewer_html(state: dict[str, Any], key: str) -> str:
    """One viewer's mount point with its values: JSON, and each binary value as base64."""
    plain, buffers = split_buffers(state)
    spec = {"state": plain, "buffers": [path for path, _ in buffers]}
    parts = [f'<div class="dl-page-viewer" data-dl-viewer="{html.escape(key)}"></div>',
             f'<script type="application/json" data-dl-state="{html.escape(key)}">'
             f'{_json_text(spec)}</script>']
    for _, data in buffers:
        parts.append(f'<script type="application/octet-stream" data-dl-buffer="{html.escape(key)}">'
                     f'{base64.b64encode(data).decode("ascii")}</script>')
    return "\n".join(parts) + "\n"


def html_of(state: dict[str, Any], title: str = "Dynamo Lab recording",
            note: str = "") -> str:
    """A whole page for one viewer's values (what `viewer_state()` returns)."""
    nonce = new_nonce()
    head_note = f"<span>{html.escape(note)}</span>" if note else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp(nonce)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Dynamo Lab">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"{style_html()}</head>\n<body>\n<main class=\"dl-page\">\n"
        f'<header class="dl-page-head"><h1>{html.escape(title)}</h1>{head_note}</header>\n'
        f"{viewer_html(state, '0')}</main>\n{module_html(nonce)}</body>\n</html>\n")


def page_note(recording: Recording) -> str:
    return (f"{len(recording.compiles)} compile(s), {recording.step_count:,} step(s); "
            f"recorded on torch {recording.torch_version or '?'}, "
            f"Python {recording.python_version or '?'}. "
            "A standalone page: it needs no kernel and loads nothing.")


def _printable(text: str) -> str:
    """Text a UTF-8 file can hold: a lone surrogate (from an undecodable file name) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def write_html(recording: Recording, path: str | Path, *, compile: str | int | None = None,
               step: int = 0, title: str | None = None) -> Path:
    """Write `recording` as one HTML page that steps through it in any browser; the path.

    `compile` (an index or an id such as "1/0") and `step` say where the page opens.
    """
    from . import viewer_state

    state = viewer_state(recording, compile if compile is not None else 0, step)
    text = html_of(state, _printable(title or "Dynamo Lab recording"), page_note(recording))
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path
