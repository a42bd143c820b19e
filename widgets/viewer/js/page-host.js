// The standalone page's host (widgets/viewer/page.py): anywidget's part, without Jupyter.
//
// The page holds the viewer's module as text (`#dl-viewer-module`, with `<` and `&` as
// entities) and, for each viewer, a mount point `[data-dl-viewer=ID]` with its values:
// JSON (`script[data-dl-state=ID]`: {state, buffers: the paths of the binary values}) and
// each binary value as base64 (`script[data-dl-buffer=ID]`, in the order of those paths).
// This script, inlined as the page's one module script, imports the viewer's module from
// a blob URL (browsers refuse `import()` of a file next to a page opened from file://)
// and renders every viewer. `PageModel` stands in for anywidget's model with the part of
// it the viewer uses (get, set, on, off, save_changes, send), with Backbone's semantics:
// `set` fires "change:NAME" (and "change") at once when the value changed.
//
// `<html data-dl-ready>` says when every viewer has started ("1") or the module failed
// ("error"). Not part of the joined viewer.js: node tests import it directly.

/** The bytes of base64 text. */
export function bytesOf64(text) {
  text = text.replace(/\s+/g, "");
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const bin = atob(text), out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function sameValue(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) return false;
  try { return JSON.stringify(a) === JSON.stringify(b); } catch (e) { return false; }
}

export class PageModel {
  constructor(state) { this.state = state; this.handlers = new Map(); }
  get(name) { return this.state[name]; }
  set(name, value) {
    const changes = typeof name === "object" && name !== null ? name : { [name]: value };
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

/** The values of viewer `id`, binary ones as DataViews (as anywidget hands them over). */
export function stateOf(doc, id) {
  const spec = JSON.parse(doc.querySelector(`script[data-dl-state="${id}"]`).textContent);
  const buffers = doc.querySelectorAll(`script[data-dl-buffer="${id}"]`);
  spec.buffers.forEach((path, i) => {
    const u8 = bytesOf64(buffers[i].textContent);
    let obj = spec.state;
    for (const key of path.slice(0, -1)) obj = obj[key];
    obj[path[path.length - 1]] = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  });
  return spec.state;
}

function fail(doc, el, e) {
  console.error(e);
  const p = doc.createElement("p");
  p.className = "dl-page-error";
  p.textContent = "This viewer could not start: " + (e && e.message ? e.message : e);
  el.replaceChildren(p);
}

/** Import the viewer's module from the page's text of it and render every viewer. */
export async function startPage(doc) {
  const mounts = doc.querySelectorAll("[data-dl-viewer]");
  try {
    const text = doc.getElementById("dl-viewer-module").textContent
      .replace(/&(lt|amp);/g, (m, w) => (w === "lt" ? "<" : "&"));
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    const widget = (await import(url)).default;
    for (const el of mounts) {
      try {
        const model = new PageModel(stateOf(doc, el.dataset.dlViewer));
        if (widget.initialize) await widget.initialize({ model });
        await widget.render({ model, el });
      } catch (e) { fail(doc, el, e); }
    }
    // The page is the viewer: keys work at once, with no click first.
    const first = doc.querySelector(".dl-viewer");
    if (first) first.focus({ preventScroll: true });
    doc.documentElement.dataset.dlReady = "1";
  } catch (e) {
    for (const el of mounts) fail(doc, el, e);
    doc.documentElement.dataset.dlReady = "error";
  }
}

// On the page that holds it; node, importing this file for its tests, has no document.
if (globalThis.document && document.getElementById("dl-viewer-module")) startPage(document);
