// Help where a word appears: an opcode, a VariableTracker class, a guard kind or a symbol
// explains itself on hover and on keyboard focus, in the project's own words (the `help`
// the kernel sends with the recording: capture/help.py `for_recording`, made from
// capture/help.json, which the text view and notebooks/GLOSSARY.md share). At a graph
// break, Dynamo's own explanation and hints from the installed torch's graph-break
// registry (read when recording: GraphBreak.gb_id and .registry), repeats of one break
// merged. And what a screen reader hears: the step said after each change.
//
// A word carries what it is in data-* attributes (`data-help-op`, `data-help-tracker`,
// `data-help-guard`, `data-help-symbol`, `data-help-term` for a word of dynamic shapes:
// `Eq`, a range, unbacked, `torch._check`, with `data-help-said` the text shown); one
// tooltip element per viewer (role="tooltip") says it, and the word points at it with
// aria-describedby while it shows. All of it is text (textContent), never markup.

import { h, plural } from "./dom.js";
import { instructionOf, lastStep } from "./recording.js";
import { symbolSaid } from "./shapes.js";

const HELP_ATTRS = ["data-help-op", "data-help-tracker", "data-help-guard", "data-help-symbol", "data-help-term"];
const HELP_SELECTOR = HELP_ATTRS.map((a) => `[${a}]`).join(",");
export const SYMBOL_RE = /\b(?:zuf|zf|ps|s|u)\d+\b/g;
let tipCount = 0;

/** The help of one word: {title, lines} (lines of text), or null when there is none. */
export function helpOf(help, rec, k, attrs) {
  if (!help) return null;
  const op = attrs["data-help-op"], kind = attrs["data-help-tracker"];
  const guard = attrs["data-help-guard"], symbol = attrs["data-help-symbol"];
  if (op != null) {
    const e = (help.opcodes || {})[op];
    if (!e) return { title: op, lines: ["No help for this opname yet."] };
    const lines = [e.does, `Dynamo: ${e.dynamo}`];
    const where = e.python ? `Python ${e.python.join(", ")} only` : "Python 3.11, 3.12 and 3.13";
    lines.push(help.python ? `${where}; this recording: Python ${help.python}.` : `${where}.`);
    return { title: `${op} (opcode)`, lines };
  }
  if (kind != null) {
    const e = (help.trackers || {})[kind];
    if (!e) return { title: kind, lines: ["A VariableTracker class with no help yet."] };
    return { title: `${kind} (VariableTracker)`, lines: [e.text, e.family ? `(said of every …${e.family}; no entry of its own)` : null].filter(Boolean) };
  }
  if (guard != null) {
    const text = (help.guards || {})[guard];
    return { title: `${guard} (guard kind)`, lines: [text || "No help for this guard kind yet."] };
  }
  const term = attrs["data-help-term"];
  if (term != null) {
    const text = (help.terms || {})[term];
    if (!text) return null;
    const said = attrs["data-help-said"];
    return { title: said && said !== term ? `${said} (${term})` : term, lines: [text] };
  }
  if (symbol != null) {
    const m = /^(zuf|zf|ps|s|u)\d+$/.exec(symbol);
    const syms = help.symbols || {};
    const lines = [(m && syms[m[1]]) || syms.other || "A symbol of Dynamo's shape environment."];
    const c = rec && k != null ? rec.compiles[k] : null;
    // where the readings first show it, and what the shape environment held of it
    for (const x of [symbolOrigin(c, symbol), symbolSaid(c, symbol)]) if (x) lines.push(x);
    return { title: `${symbol} (symbol)`, lines };
  }
  return null;
}

/** Where a symbol comes from, read from the recording: the first reading of an input whose
 * shape holds it (`dimension 0 of L['x']`), and the first step that shows it. */
export function symbolOrigin(c, symbol) {
  if (!c) return null;
  const dims = (detail) => {
    const m = /\[([^\]]*)\]/.exec(detail || "");
    return m ? m[1].split(",").map((x) => x.trim()) : [];
  };
  for (const v of c.vars) {
    const d = dims(v.detail).indexOf(symbol);
    if (v.source && d >= 0) {
      const j = c.steps.findIndex((s) => s.stack.some((id) => c.vars[id] === v) ||
        Object.values(s.locals).some((id) => c.vars[id] === v));
      return `From the recording: dimension ${d} of ${v.source} (${v.detail})${j >= 0 ? `, first seen at step ${j}` : ""}.`;
    }
  }
  const node = c.nodes.find((n) => n.op === "placeholder" && n.name === symbol);
  if (node) return "From the recording: an input of the graph (a placeholder) of its own.";
  return null;
}

/** Text with each symbol (`s77`) as a focusable word that explains itself. */
export function withSymbols(text) {
  const out = [];
  let at = 0;
  for (const m of String(text).matchAll(SYMBOL_RE)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(h("span", { class: "dl-sym", "data-help-symbol": m[0], tabindex: 0 }, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// -- the graph break: Dynamo's own words, once per break ----------------------------------

/** What Dynamo says about compile k's graph break: its GB id and type, the explanation and
 * hints (the message's, which name this program's values, else the registry's), the
 * registry's general form, and every other compile that met the same break (merged). */
export function breakHelp(rec, k) {
  const c = rec.compiles[k];
  const gb = c && c.graph_break;
  if (!gb) return null;
  const reg = gb.registry || null;
  const hints = [];
  for (const hint of (gb.hints && gb.hints.length ? gb.hints : (reg && reg.Hints) || [])) {
    if (hint && !hints.includes(hint.trim())) hints.push(hint.trim());
  }
  const same = [];
  rec.compiles.forEach((o, j) => {
    const b = o.graph_break;
    if (j !== k && b && b.reason === gb.reason && b.lineno === gb.lineno && b.code_name === gb.code_name &&
        (b.gb_id || null) === (gb.gb_id || null)) same.push(o.compile_id);
  });
  return {
    id: gb.gb_id || null, type: (reg && reg.Gb_type) || gb.reason,
    explanation: gb.explanation || (reg && reg.Explanation) || null, hints,
    general: reg && reg.Explanation && reg.Explanation !== gb.explanation ? reg.Explanation : null,
    context: reg ? reg.Context || null : null, link: gb.link || null, also: same,
  };
}

// -- the tooltip ------------------------------------------------------------------------

/** One tooltip for a viewer's root: shows the help of the word under the pointer or with
 * the keyboard focus. `context()` gives {help, rec, k}. Returns {el, hide, destroy}. */
export function helpTips(root, context) {
  const id = `dl-tip-${++tipCount}`;
  const el = h("div", { class: "dl-tooltip", role: "tooltip", id, hidden: true });
  root.append(el);
  let target = null;

  function show(t) {
    if (t === target) return;
    hide();
    const attrs = {};
    for (const a of [...HELP_ATTRS, "data-help-said"]) if (t.hasAttribute(a)) attrs[a] = t.getAttribute(a);
    const { help, rec, k } = context();
    const said = helpOf(help, rec, k, attrs);
    if (!said) return;
    el.replaceChildren(h("div", { class: "dl-tip-title" }, said.title), ...said.lines.map((x) => h("div", null, x)));
    el.hidden = false;
    target = t;
    t.setAttribute("aria-describedby", id);
    place(t);
  }

  function place(t) {
    const r = t.getBoundingClientRect(), box = root.getBoundingClientRect();
    const w = Math.min(440, Math.max(220, box.width - 16));
    el.style.maxWidth = `${w}px`;
    let left = r.left - box.left;
    left = Math.max(4, Math.min(left, box.width - w - 4));
    el.style.left = `${left}px`;
    el.style.top = `${r.bottom - box.top + 4}px`;
    const tip = el.getBoundingClientRect();
    // No room below in the window: above the word instead.
    if (tip.bottom > window.innerHeight && r.top - tip.height - 4 > 0) el.style.top = `${r.top - box.top - tip.height - 4}px`;
  }

  function hide() {
    if (target) target.removeAttribute("aria-describedby");
    target = null;
    el.hidden = true;
  }

  const word = (e) => (e.target && e.target.closest ? e.target.closest(HELP_SELECTOR) : null);
  // After a paint a word may come to lie under a pointer that has not moved: the browser
  // says "mouseover", but nobody pointed at it. Such a word shows its help once the pointer
  // moves (to other coordinates) again.
  let still = false, at = null;
  const moved = (e) => !at || e.clientX !== at[0] || e.clientY !== at[1];
  const on = {
    mouseover: (e) => {
      if (still && !moved(e)) return;
      still = false;
      at = [e.clientX, e.clientY];
      const t = word(e);
      if (t) show(t);
    },
    mousemove: (e) => {
      if (!moved(e)) return;
      at = [e.clientX, e.clientY];
      if (!still) return;
      still = false;
      const t = word(e);
      if (t && t !== target) show(t);
    },
    mouseout: (e) => { const t = word(e); if (t && t === target && !t.contains(e.relatedTarget) && document.activeElement !== t) hide(); },
    focusin: (e) => { const t = word(e); if (t) show(t); else hide(); },
    focusout: (e) => { if (target && !target.contains(e.relatedTarget)) hide(); },
    keydown: (e) => { if (e.key === "Escape" && target) { hide(); e.stopPropagation(); } },
  };
  for (const [name, f] of Object.entries(on)) root.addEventListener(name, f);
  return {
    el, hide,
    refresh() { still = true; if (target && !target.isConnected) hide(); },
    destroy() { for (const [name, f] of Object.entries(on)) root.removeEventListener(name, f); el.remove(); },
  };
}

// -- the viewer's aids, as one more pane ---------------------------------------------------

/** The tooltips, the live region and Enter on a guard, a graph node or a linked row (keyboard-only
 * provenance), on a viewer's root: a pane the Viewer paints like the others. The help is
 * the model's `help` value; Enter follows a link as a click does (`viewer.follow`). */
export function helpAids(viewer) {
  const root = viewer.root, help = viewer.model.get("help") || null;
  const follow = (t) => viewer.follow(t);
  let view = null;
  const tips = helpTips(root, () => ({ help, rec: view && view.rec, k: view && view.k }));
  const live = announcer();
  root.addEventListener("keydown", (e) => {   // before the Viewer's own keys: registered first
    const linked = e.key === "Enter" && !e.ctrlKey && !e.metaKey && !e.altKey && e.target.closest &&
      e.target.closest("[data-guard], [data-node], [data-graph-call], [data-resume], .dl-details [data-source]");
    if (!linked || linked.tagName === "BUTTON") return;
    e.preventDefault();
    e.stopImmediatePropagation();
    follow(linked);
    if (!linked.isConnected) root.focus({ preventScroll: true });   // redrawn away: keys still work
  });
  return {
    tips, live, selectCompile() { tips.hide(); },
    paint(v) {
      view = v;
      if (!live.el.isConnected) root.append(tips.el, live.el);   // the Viewer fills its root after making its panes
      live.say(v.c, v.i);
      queueMicrotask(() => tips.refresh());   // once the other panes have painted
    },
  };
}

// -- what a screen reader hears ----------------------------------------------------------

/** The slider's and the live region's words for step i: `step 12 of 77, line 5`. */
export function stepSpoken(c, i) {
  const s = c && c.steps[i];
  if (!s) return `step ${i} of ${c ? lastStep(c) : 0}`;
  return `step ${i} of ${lastStep(c)}, line ${s.lineno ?? "?"}`;
}

/** A polite live region that says each step, in the same frame as the step is painted (a
 * screen reader says the latest when keys are held; nothing changes the page later). */
export function announcer() {
  const el = h("div", { class: "dl-live", "aria-live": "polite", "aria-atomic": "true" });
  return {
    el,
    say(c, i) {
      const s = c && c.steps[i];
      const text = s ? `${stepSpoken(c, i)}: ${instructionOf(s)}${s.nodes_added.length ? `, adds ${s.nodes_added.join(", ")}` : ""}` +
        `${s.guards_added.length ? `, ${plural(s.guards_added.length, "guard")}` : ""}` : stepSpoken(c, i);
      if (el.textContent !== text) el.textContent = text;
    },
    destroy() {},
  };
}
