"""A recording as one self-contained HTML page: the widget's own front end, no kernel, no network.

The page is the widget without Jupyter. `viewer_state()` (widgets/viewer/) gives
every value the widget syncs, graph layouts included (graphviz runs here, at export);
the page carries those values inline and hands them to the same ES module the widget
runs, `widgets/viewer/viewer.js` (read from the package at export, never copied into the
source tree), through a small stand-in for anywidget's model: `get`, `set`, `on`,
`off`, `save_changes`. The module is inlined as text and imported from a blob URL,
because browsers refuse `import()` of a file next to a page opened from `file://`.

    from widgets.viewer.page import write_html
    write_html(recording, "trace.html")          # or: dynamo-lab html trace.json

What the page holds, in order: a Content-Security-Policy that allows no network
request and no script but the page's own (so nothing in a recording can run even if
some view put it into the DOM as markup), the CSS, one mount point per viewer with
its state as JSON and its binary values (the gzip-compressed recording and layouts)
as base64, the module as text, and the loader.

`module_html()` and `viewer_html()` are the two halves, for pages that hold several
viewers (the course site).
"""

from __future__ import annotations

import base64
import html
import json
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture import Recording

HERE = Path(__file__).resolve().parent
MODULE = HERE / "viewer.js"
CSS = HERE / "viewer.css"

# Binary trait values (bytes) travel as base64 next to the JSON of the other values.
_BINARY = (bytes, bytearray, memoryview)

# The page's own style: the viewer's CSS reads JupyterLab's --jp-* variables with
# fallbacks; this only sets up the page around it.
PAGE_CSS = """
html { color-scheme: light; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
       font-size: 14px; color: #222; background: #fff; }
.dl-page { max-width: 1400px; margin: 0 auto; padding: 12px 16px 24px; }
.dl-page-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px;
                border-bottom: 1px solid #ddd; margin-bottom: 10px; padding-bottom: 6px; }
.dl-page-head h1 { font-size: 16px; margin: 0; }
.dl-page-head span { color: #666; font-size: 12px; }
.dl-page-error { color: #b00020; white-space: pre-wrap; font-family: monospace; }
"""

# The loader: decode each viewer's values, import the module from a blob URL once,
# render every viewer. `Model` mirrors the part of anywidget's model that the
# contract allows (get, set, on, off, save_changes), with Backbone's semantics:
# `set` fires "change:NAME" (and "change") at once when the value changed.
LOADER_JS = r"""
(() => {
  "use strict";
  const bytesOf = (text) => {
    text = text.replace(/\s+/g, "");
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
    const bin = atob(text), out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };
  const sameValue = (a, b) => {
    if (a === b) return true;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
    if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) return false;
    try { return JSON.stringify(a) === JSON.stringify(b); } catch (e) { return false; }
  };
  class Model {
    constructor(state) { this.state = state; this.handlers = new Map(); }
    get(name) { return this.state[name]; }
    set(name, value) {
      const changes = typeof name === "object" && name !== null ? name : {[name]: value};
      const changed = [];
      for (const [key, v] of Object.entries(changes)) {
        const old = this.state[key];
        this.state[key] = v;
        if (!sameValue(old, v)) changed.push(key);
      }
      for (const key of changed) this.emit("change:" + key, this.state[key]);
      if (changed.length) this.emit("change", undefined);
    }
    save_changes() {}            // no kernel to tell
    send() {}
    on(events, callback) {
      for (const event of String(events).split(/\s+/).filter(Boolean)) {
        if (!this.handlers.has(event)) this.handlers.set(event, []);
        this.handlers.get(event).push(callback);
      }
    }
    off(events, callback) {
      if (events === undefined || events === null) {
        if (!callback) { this.handlers.clear(); return; }
        events = [...this.handlers.keys()].join(" ");
      }
      for (const event of String(events).split(/\s+/).filter(Boolean)) {
        const list = this.handlers.get(event);
        if (!list) continue;
        const kept = callback ? list.filter((f) => f !== callback) : [];
        if (kept.length) this.handlers.set(event, kept); else this.handlers.delete(event);
      }
    }
    emit(event, value) {
      for (const f of [...(this.handlers.get(event) || [])]) f.call(this, this, value, {});
    }
  }
  const stateOf = (id) => {
    const spec = JSON.parse(document.querySelector(`script[data-dl-state="${id}"]`).textContent);
    const buffers = document.querySelectorAll(`script[data-dl-buffer="${id}"]`);
    spec.buffers.forEach((path, i) => {
      const u8 = bytesOf(buffers[i].textContent);
      let obj = spec.state;
      for (const key of path.slice(0, -1)) obj = obj[key];
      obj[path[path.length - 1]] = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    });
    return spec.state;
  };
  const fail = (el, e) => {
    console.error(e);
    const p = document.createElement("p");
    p.className = "dl-page-error";
    p.textContent = "This viewer could not start: " + (e && e.message ? e.message : e);
    el.replaceChildren(p);
  };
  const start = async () => {
    const text = document.getElementById("dl-viewer-module").textContent
      .replace(/&(lt|amp);/g, (m, w) => (w === "lt" ? "<" : "&"));
    const url = URL.createObjectURL(new Blob([text], {type: "text/javascript"}));
    const widget = (await import(url)).default;
    for (const el of document.querySelectorAll("[data-dl-viewer]")) {
      try {
        const model = new Model(stateOf(el.dataset.dlViewer));
        el.dlModel = model;       // for tests and the console: the page's model
        if (widget.initialize) await widget.initialize({model});
        await widget.render({model, el});
      } catch (e) { fail(el, e); }
    }
    document.documentElement.dataset.dlReady = "1";
  };
  start().catch((e) => {
    for (const el of document.querySelectorAll("[data-dl-viewer]")) fail(el, e);
    document.documentElement.dataset.dlReady = "error";
  });
})();
"""


def module_source() -> str:
    """The viewer's ES module, as the widget loads it."""
    return MODULE.read_text(encoding="utf-8")


def css_source() -> str:
    return CSS.read_text(encoding="utf-8")


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
    (the loader turns them back), so no `</script` or `<!--` can end or bend it."""
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
    """The module as text and the loader that renders every viewer of the page (once a page)."""
    return (f'<script type="text/plain" id="dl-viewer-module">{_script_text(module_source())}'
            f'</script>\n<script nonce="{nonce}">{LOADER_JS}</script>\n')


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
    steps = sum(len(c.steps) for c in recording.compiles)
    return (f"{len(recording.compiles)} compile(s), {steps:,} step(s); "
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
