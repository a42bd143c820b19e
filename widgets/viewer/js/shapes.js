// Shapes at a step, read from the recording's `shapes` (capture/shapes.py): what the shapes
// pane (panes/shapes.js) shows, as plain values; where its links lead; and the words of
// dynamic shapes as elements that explain themselves on hover (`data-help-term`, help.js).

import { h } from "./dom.js";
import { lastStep } from "./recording.js";

export const SYMBOL = /^(?:zuf|zf|ps|s|u)\d+$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;
// The words of a symbolic expression that explain themselves.
const TERMS = /\b(?:zuf|zf|ps|s|u)\d+\b|\b(?:Eq|Ne|Max|Min|FloorDiv|Mod|int_oo|guard_or_false|guard_or_true)\b|torch\._check\b|\[-?(?:\d+|int_oo), -?(?:\d+|int_oo)\]/g;

// -- what the pane shows (pure) -------------------------------------------------------------

/** `L['x'].size()[0]` -> {input: "L['x']", dim: 0}; any other source is an input of its own. */
export function sizeSource(source) {
  const m = /^(.*)\.size\(\)\[(\d+)\]$/.exec(source || "");
  return m ? { input: m[1], dim: Number(m[2]) } : { input: source, dim: null };
}

/** torch's note of a place (`x + y  # f.py:3 in f (fake_impls.py:1960 in infer_size)`) ->
 * {line, fn, code (the user's text, or null), framework (the function that asked, or null)}. */
export function placeOf(note) {
  if (!note) return null;
  const hash = note.lastIndexOf("  # ");
  const code = hash >= 0 ? note.slice(0, hash).trim() || null : null;
  const rest = hash >= 0 ? note.slice(hash + 4) : note.trim().replace(/^#\s*/, "");
  const m = /:(\d+) in (\S+)/.exec(rest);
  const fw = /\(([^()]*) in (\w+)\)\s*$/.exec(rest);
  return { line: m ? Number(m[1]) : null, fn: m ? m[2] : null, code, framework: fw ? fw[2] : null };
}

// A symbol exists from the step that made it (one made outside any step: throughout).
const made = (sym, i) => sym.step == null || sym.step <= i;

/** What a symbol's replacement says at step i: null before it happened (or never), else
 * {name, to, number (a constant: specialized; else tied to another symbol), step, here,
 * line, code, why} — the line and why from the guard its step added on it, else torch's note. */
export function replacementAt(shapes, sym, i) {
  if (sym.replacement == null) return null;
  if (sym.replaced_step != null && sym.replaced_step > i) return null;
  const at = placeOf(sym.replaced_at) || {};
  const pat = new RegExp(`\\b${sym.name}\\b`);
  const g = shapes.guards.find((x) => x.step != null && x.step === sym.replaced_step && pat.test(x.expr));
  return {
    name: sym.name, to: sym.replacement, number: NUMBER.test(sym.replacement), step: sym.replaced_step,
    here: sym.replaced_step === i, line: g && g.lineno != null ? g.lineno : at.line ?? null,
    code: at.code ?? null, why: (g && g.why) || (at.framework ? `asked by ${at.framework}` : ""),
  };
}

/** One sentence for a replacement: `s77 became 4 here: line 3, a broadcast: ...`. */
export function becameText(r) {
  const when = r.here ? "here" : r.step != null ? `at step ${r.step}` : "when the graph was compiled";
  const where = [r.line != null ? `line ${r.line}${r.code ? ` (${r.code})` : ""}` : null, r.why || null].filter(Boolean);
  return `${r.name} became ${r.to} ${when}${where.length ? `: ${where.join(", ")}` : ""}`;
}

/** The pane at step i of compile c: {state: "old" (recorded before shapes were) | "none"
 * (no shape environment) | "static" (every size static: `sizes`) | "shapes", inputs, others,
 * guards, after, became, counts}. */
export function shapesAt(c, i) {
  if (!c || !("shapes" in c)) return { state: "old" };
  const shapes = c.shapes;
  if (!shapes) return { state: "none" };
  const atEnd = !c.steps.length || i >= lastStep(c);
  const byName = new Map(shapes.symbols.map((s) => [s.name, s]));
  const inputs = [];
  const inputOf = (name) => {
    let x = inputs.find((y) => y.input === name);
    if (!x) inputs.push((x = { input: name, dims: [] }));
    return x;
  };
  const shown = new Set();
  for (const d of shapes.dims) {
    const { input, dim } = sizeSource(d.source);
    const sym = d.dynamic === false || NUMBER.test(d.value) ? null : byName.get(d.value) || null;
    const row = { source: d.source, dim, size: d.size, value: d.value, how: d.how, policy: d.policy, marks: d.marks || [] };
    if (!sym && NUMBER.test(d.value)) {
      row.state = "static";
    } else {
      row.state = d.policy === "UNBACKED" || (sym && sym.name.startsWith("u")) ? "unbacked" : "dynamic";
      row.symbol = d.value;
      row.made = sym ? made(sym, i) : true;
      row.madeAt = sym ? sym.step : null;
      row.range = sym ? sym.range : null;   // as it was when the compile ended
      row.final = atEnd;
      row.isNew = !!sym && sym.step != null && sym.step === i;
      row.shared = sym ? sym.sources.filter((s) => s !== d.source) : [];
      row.became = sym && row.made ? replacementAt(shapes, sym, i) : null;
      if (row.became && row.became.number) row.state = "specialized";
      if (sym) shown.add(sym.name);
    }
    inputOf(input).dims.push(row);
  }
  // Symbols no input dimension stands for (nonzero's length, an .item()).
  const others = shapes.symbols.filter((s) => !shown.has(s.name) && made(s, i)).map((s) => ({
    name: s.name, unbacked: s.name.startsWith("u"), range: s.range, hint: s.hint, node: s.node,
    sources: s.sources, step: s.step, isNew: s.step != null && s.step === i, became: replacementAt(shapes, s, i), final: atEnd,
  }));
  const guards = [], after = [];
  shapes.guards.forEach((g, j) => {
    const row = { j, expr: g.expr, step: g.step, line: g.lineno, fn: g.function, why: g.why,
      code: (placeOf(g.user) || {}).code ?? null, node: g.node, oblivious: !!g.size_oblivious };
    if (g.step != null && g.step <= i) guards.push({ ...row, isNew: g.step === i });
    else if (g.step == null && atEnd) after.push(row);
  });
  const became = shapes.symbols.map((s) => replacementAt(shapes, s, i)).filter((r) => r && r.here);
  const symbols = shapes.symbols.filter((s) => made(s, i)).length;
  if (!shapes.symbols.length && shapes.dims.every((d) => NUMBER.test(d.value))) {
    return { state: "static", inputs, guards, after, others: [], became: [], symbols: 0 };
  }
  return { state: "shapes", inputs, others, guards, after, became, symbols,
    fresh: guards.filter((g) => g.isNew).length };
}

/** The symbols an input guard's text is about: those whose sources it names
 * (`9 <= L['x'].size()[0]` -> ["s77"]). */
export function symbolsOfText(c, text) {
  if (!c || !c.shapes || !text) return [];
  return c.shapes.symbols.filter((s) => s.sources.some((src) => text.includes(src))).map((s) => s.name);
}

/** What step i of compile c did to its shapes, in words (`made s77, added a symbolic
 * guard`), or null when nothing. */
export function newAt(c, i) {
  const shapes = c && c.shapes;
  if (!shapes || !c.steps.length) return null;
  const made = shapes.symbols.filter((s) => s.step === i).map((s) => s.name);
  const replaced = shapes.symbols.filter((s) => s.replaced_step === i && s.replacement != null).map((s) => s.name);
  const guards = shapes.guards.filter((g) => g.step === i).length;
  const said = [made.length ? `made ${made.join(", ")}` : null, replaced.length ? `replaced ${replaced.join(", ")}` : null,
    guards ? `added ${guards === 1 ? "a symbolic guard" : `${guards} symbolic guards`}` : null].filter(Boolean);
  return said.length ? said.join(", ") : null;
}

/** What compile c's shape environment held of symbol `name`, in a sentence, or null. */
export function symbolSaid(c, name) {
  const sym = c && c.shapes ? c.shapes.symbols.find((s) => s.name === name) : null;
  if (!sym) return null;
  const what = sym.sources.length ? `stands for ${sym.sources.join(" and ")}` : sym.node ? `is the size ${sym.node} made` : "was made";
  const parts = [`From the recording: ${name} ${what}${sym.step != null ? ` (made at step ${sym.step})` : ""}`,
    sym.hint != null ? `hint ${sym.hint}` : "no hint (unbacked)", `range ${sym.range} when the compile ended`];
  if (sym.replacement != null) parts.push(`replaced by ${sym.replacement}${sym.replaced_step != null ? ` at step ${sym.replaced_step}` : ""}`);
  return `${parts.join("; ")}. The shapes pane (the button beside the guards' title) shows it at each step.`;
}

/** The symbol names in a piece of text (`[s77, 3]` -> ["s77"]). */
export function symbolsIn(text) {
  return [...new Set(String(text || "").match(/\b(?:zuf|zf|ps|s|u)\d+\b/g) || [])];
}

/** Where a click on element `t` (a symbolic guard of the shapes pane) leads: {compile,
 * step, flash, note}, or null. */
export function shapeLink(rec, k, t) {
  const el = t.closest ? t.closest("[data-shape-guard], [data-shape-step]") : null;
  const c = rec.compiles[k];
  if (!el || !c || !c.shapes) return null;
  if (el.dataset.shapeGuard != null) {
    const j = Number(el.dataset.shapeGuard), g = c.shapes.guards[j];
    if (!g) return null;
    if (g.step == null) {
      return { compile: k, step: lastStep(c), flash: { shapeGuard: j },
        note: `The symbolic guard ${g.expr} was added when the graph was compiled, after the last step.` };
    }
    return { compile: k, step: g.step, flash: { shapeGuard: j }, note: `This step added the symbolic guard ${g.expr}.` };
  }
  const to = Number(el.dataset.shapeStep);
  return Number.isFinite(to) ? { compile: k, step: to, flash: { symbol: el.dataset.shapeSymbol || null } } : null;
}

// -- the words, as elements -------------------------------------------------------------------

/** Text with each word of dynamic shapes explaining itself (symbols also lit and linked). */
export function withTerms(text) {
  const out = [];
  let at = 0;
  text = String(text);
  for (const m of text.matchAll(TERMS)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    const w = m[0];
    if (SYMBOL.test(w)) out.push(h("span", { class: "dl-sym", "data-help-symbol": w, "data-shape-symbol": w, tabindex: 0 }, w));
    else if (w.startsWith("[")) out.push(shapeTerm("range", w));
    else out.push(shapeTerm(w, w));
    at = m.index + w.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

export function shapeTerm(name, said, cls = "dl-term") {
  return h("span", { class: cls, "data-help-term": name, "data-help-said": said, tabindex: 0 }, said);
}

export function shapeStepButton(step, label, symbol = null) {
  return h("button", { type: "button", class: "dl-link", "data-shape-step": step, "data-shape-symbol": symbol }, label);
}

