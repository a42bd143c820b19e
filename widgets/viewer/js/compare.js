// Compare mode's data: two compiles of one frame side by side, as capture.compare aligned
// them in the kernel (widgets/viewer/state.py `comparisons`, one entry per pair offered),
// and how the compiles of a recording relate (a recompile of, a resume of). Pure functions
// of the recording and those entries (no DOM): node imports this file and tests it.
//
// Nothing here reads a reason's text: a recompile names the compile it replaces
// (`replaces`) and the guards that failed (`failed_guards`, each naming its compile and,
// by index, the guard as installed), and the pairs carry guard indices.

import { decode } from "./decode.js";
import { compileId, instructionOf, lastStep, memo } from "./recording.js";

/** The `comparisons` bytes of a model, decoded (an empty list when there are none). */
export async function comparisonsOf(model) {
  const data = model.get("comparisons");
  return data ? await decode(data) : [];
}

// -- the compiles of one frame, and how they relate ----------------------------------------

/** Compiles of one code object (and one generation: ids start again after a reset). On a
 * page of several ranks (capture.ranks.merged: each compile has its `rank`, each rank
 * generations of its own) the compiles of that code on every rank. */
function frameKey(c) {
  return JSON.stringify([c.code_name, c.filename, c.firstlineno, c.rank == null ? c.generation || 0 : "ranks"]);
}

/** Whether `a` and `b` are of one generation, where compile ids name the same compiles
 * (ids start again after a reset, and on a page of several ranks with each rank). */
function sameGeneration(a, b) {
  return (a.generation || 0) === (b.generation || 0);
}

/** The index of the compile with this id in this generation, or -1. */
export function indexOfCompile(rec, id, generation = 0) {
  return rec.compiles.findIndex((c) => c.compile_id === id && (c.generation || 0) === generation);
}

/** The other compiles of compile k's frame, in recording order. */
export function framePartners(rec, k) {
  const key = frameKey(rec.compiles[k]);
  const out = [];
  rec.compiles.forEach((c, j) => { if (j !== k && frameKey(c) === key) out.push(j); });
  return out;
}

/** Whom compile k is compared with by default: the compile it replaces, else a compile
 * that replaces it, else the nearest compile of its frame (earlier first); null if alone. */
export function defaultPartner(rec, k) {
  const c = rec.compiles[k];
  const gen = c.generation || 0;
  const partners = framePartners(rec, k);
  if (c.replaces != null) {
    const j = indexOfCompile(rec, c.replaces, gen);
    if (partners.includes(j)) return j;
  }
  const later = partners.find((j) => j > k && rec.compiles[j].replaces === c.compile_id && sameGeneration(rec.compiles[j], c));
  if (later !== undefined) return later;
  const earlier = partners.filter((j) => j < k);
  if (earlier.length) return earlier[earlier.length - 1];
  return partners.length ? partners[0] : null;
}

/** Whom to compare with after the viewer moved from compile `from` to compile `to`:
 * the compile left when the two swapped sides, the same partner within the frame, else
 * the default for the new compile. */
export function keptPartner(rec, partner, from, to) {
  if (to === partner) return from;
  if (partner != null && framePartners(rec, to).includes(partner)) return partner;
  return defaultPartner(rec, to);
}

/** One failed guard in a few words: `L['x'] size: expected [4], got [8]`. */
export function failedText(fg) {
  const what = fg.what ? ` ${fg.what}` : "";
  return `${fg.source || fg.kind}${what}: expected ${fg.expected}, got ${fg.seen}`;
}

/** How compile k relates to the compiles before it, in a few words, or "": a recompile
 * (`recompile of [0/0]: L['x'] size: expected [4], got [8]`), a resume function (`resume
 * of [0/0_1] after its graph break at line 6`). For the compile selector. */
export function relationOf(rec, k) {
  const c = rec.compiles[k];
  const gen = c.generation || 0;
  if (c.replaces != null) {
    const failed = (c.failed_guards || []).filter((fg) => fg.compile_id === c.replaces);
    const more = failed.length > 1 ? ` (+${failed.length - 1} more)` : "";
    return `recompile of [${c.replaces}]` + (failed.length ? `: ${failedText(failed[0])}${more}` : "");
  }
  for (let j = k - 1; j >= 0; j--) {
    const p = rec.compiles[j];
    if ((p.generation || 0) !== gen || !(p.resume_functions || []).some((r) => r.code_name === c.code_name)) continue;
    const gb = p.graph_break;
    return `resume of [${p.compile_id}]` + (gb && gb.lineno != null ? ` after its graph break at line ${gb.lineno}` : "");
  }
  return "";
}

// -- a pair, as shipped ----------------------------------------------------------------------

/** The pair of compiles ka and kb as shipped: {d, left, right} with `left` the earlier
 * compile (d.ka), or null when that pair was not compared. */
export function pairOf(comparisons, ka, kb) {
  const d = (comparisons || []).find((x) => (x.ka === ka && x.kb === kb) || (x.ka === kb && x.kb === ka));
  return d ? { d, left: d.ka, right: d.kb } : null;
}

/** The alignment as two arrays of step indices, -1 where one compile has no step: pair p
 * is (a[p], b[p]); `at.a[i]` is the pair of step i of the left compile, `at.b` the right. */
export function alignment(d) {
  return memo(d, "aligned", () => {
    const a = [], b = [];
    for (const [x, y, n] of d.runs || []) {
      for (let j = 0; j < n; j++) {
        a.push(x == null ? -1 : x + j);
        b.push(y == null ? -1 : y + j);
      }
    }
    const index = (side) => {
      let top = -1;
      for (const i of side) if (i > top) top = i;
      const at = new Int32Array(top + 1).fill(-1);
      side.forEach((i, p) => { if (i >= 0) at[i] = p; });
      return at;
    };
    return { a, b, at: { a: index(a), b: index(b) } };
  });
}

/** The step of the other compile beside step i of one side ("a": the left, "b": the
 * right): {step, exact} where exact says the two ran the same instruction at the same
 * line; where the other ran nothing there, its last step before (exact false), or null. */
export function partnerStep(d, side, i) {
  const al = alignment(d);
  const mine = al.at[side], other = side === "a" ? al.b : al.a;
  const p = i < mine.length ? mine[i] : -1;
  if (p < 0) return null;
  if (other[p] >= 0) return { step: other[p], exact: true };
  for (let q = p - 1; q >= 0; q--) if (other[q] >= 0) return { step: other[q], exact: false };
  for (let q = p + 1; q < other.length; q++) if (other[q] >= 0) return { step: other[q], exact: false };
  return null;
}

// -- what the compare mode shows --------------------------------------------------------

/** A guard that failed, as a row: what it read, expected and got, and where it came from. */
function failedRow(rec, k, fg) {
  const c = rec.compiles[k];
  const step = fg.step != null && c && c.steps.length ? Math.min(fg.step, lastStep(c)) : null;
  const g = c && fg.detail != null ? c.guard_details[fg.detail] : null;
  return {
    compile: k, step, lineno: fg.lineno, guard: fg.detail, kind: fg.kind || (g ? g.kind : ""),
    source: fg.source, what: fg.what, expected: fg.expected, seen: fg.seen,
    text: g ? g.text : null, line: lineText(c, fg.lineno, step),
  };
}

/** The source text of a line of compile c (in the code of step `step` when it has one). */
export function lineText(c, lineno, step = null) {
  if (!c || lineno == null) return null;
  const s = step != null ? c.steps[step] : null;
  const info = s && c.codes ? c.codes[s.code] : null;
  for (const code of [info, c].filter(Boolean)) {
    const k = lineno - code.firstlineno;
    if (code.source_lines && k >= 0 && k < code.source_lines.length) return code.source_lines[k].trim();
  }
  return null;
}

/** The guards of compile `left` that failed on the call that made compile `right`. */
export function failedGuards(rec, left, right) {
  const a = rec.compiles[left], b = rec.compiles[right];
  if (!sameGeneration(a, b)) return [];   // its ids name compiles of another generation (or rank)
  return (b.failed_guards || []).filter((fg) => fg.compile_id === a.compile_id).map((fg) => failedRow(rec, left, fg));
}

/** Calls Dynamo refused to compile (a cache limit, fail_on_recompile) that failed guards
 * of the given compiles: [{kind, compile_id, message, rows}], rows as failedGuards'. */
export function refusals(rec, ks) {
  const byId = new Map(ks.filter((k) => k != null).map((k) => [rec.compiles[k].compile_id, k]));
  const out = [];
  for (const e of rec.events || []) {
    const rows = (e.failed_guards || []).filter((fg) => byId.has(fg.compile_id))
      .map((fg) => failedRow(rec, byId.get(fg.compile_id), fg));
    if (rows.length) out.push({ kind: e.kind, compile_id: e.compile_id, message: e.message, rows });
  }
  return out;
}

/** The guard rows of the pair: those changed (the left's text and the right's), then those
 * only in the left, then only in the right; each with the step that installed it. */
export function guardChanges(rec, d) {
  const a = rec.compiles[d.ka], b = rec.compiles[d.kb];
  const row = (k, c, g) => ({ compile: k, guard: g, text: c.guard_details[g].text,
    step: c.guard_details[g].step != null && c.steps.length ? Math.min(c.guard_details[g].step, lastStep(c)) : null });
  return {
    changed: d.guards_changed.map((x) => ({ kind: x.kind, source: x.source, was: row(d.ka, a, x.a), now: row(d.kb, b, x.b) })),
    onlyLeft: d.guards_only_in_a.map((g) => row(d.ka, a, g)),
    onlyRight: d.guards_only_in_b.map((g) => row(d.kb, b, g)),
  };
}

/** A tracker as the comparison reads it: object ids and node names do not count. */
export function readingOf(v) {
  if (!v) return "";
  const detail = (v.detail || "").replace(/\s*node=\S+/g, "").replace(/\b\d{9,}\b/g, "<id>").replace(/\b0x[0-9a-f]{6,16}\b/gi, "0x<addr>");
  return [v.kind, v.python_type, detail, v.source].join("\u0000");
}

/** Step i of compile c beside step j of compile o (null where o has none): its instruction,
 * line, stack (top first) and locals, each entry marked `differs` where the other's
 * reading at the same place differs, and the guards it installed. */
export function stepBeside(c, i, o, j) {
  const s = c.steps[i];
  if (!s) return null;
  const t = o && j != null ? o.steps[j] : null;
  const their = (id) => (id == null ? null : o.vars[id]);
  const stack = [];
  for (let pos = s.stack.length - 1, up = 0; pos >= 0; pos--, up++) {
    const theirs = t ? t.stack[t.stack.length - 1 - up] : undefined;
    const v = c.vars[s.stack[pos]];
    stack.push({ v, differs: !!t && readingOf(v) !== readingOf(their(theirs)) });
  }
  const locals = Object.entries(s.locals).map(([name, id]) => {
    const v = c.vars[id];
    return { name, v, differs: !!t && readingOf(v) !== readingOf(their(t.locals[name])) };
  });
  const sameInstruction = !!t && instructionOf(s) === instructionOf(t) && s.lineno === t.lineno;
  return {
    i, instruction: instructionOf(s), lineno: s.lineno, line: lineText(c, s.lineno, i), depth: s.depth,
    code_name: s.code_name, stack, locals, guards: s.guards_added || [], sameInstruction,
    stackDiffers: !!t && s.stack.length !== t.stack.length,
  };
}

/** Where the first divergence is on each side: {left, right} step indices (null where a
 * side ran nothing there), or null when the two traces never went different ways. */
export function divergenceSteps(d) {
  const dv = d && d.divergence;
  if (!dv) return null;
  let { a, b } = dv;
  // An instruction only one side ran: the other is shown at its step beside it.
  if (a == null && b != null) a = (partnerStep(d, "b", b) || {}).step ?? null;
  if (b == null && a != null) b = (partnerStep(d, "a", a) || {}).step ?? null;
  return { left: a, right: b, exactLeft: dv.a != null, exactRight: dv.b != null };
}

// -- where compare mode's links lead -------------------------------------------------------

/** Where a compare-mode link leads: `dataset` {cmpGo: "k:step", cmpGuard: "g" (optional),
 * cmpNote: "failed" | "installed" | ""} -> {compile, step, flash, note} or null. */
export function compareTarget(rec, dataset) {
  const m = /^(\d+):(\d+)$/.exec(dataset.cmpGo || "");
  if (!m) return null;
  const k = Number(m[1]), step = Number(m[2]);
  const c = rec.compiles[k];
  if (!c) return null;
  const g = dataset.cmpGuard != null && dataset.cmpGuard !== "" ? Number(dataset.cmpGuard) : null;
  const guard = g != null ? c.guard_details[g] : null;
  const s = c.steps[Math.min(step, lastStep(c))];
  const where = s && s.lineno != null ? ` (line ${s.lineno})` : "";
  let note = null;
  if (guard && dataset.cmpNote === "failed") note = [`This step of [${c.compile_id}]${where} installed the guard that failed: `, guard.text];
  else if (guard) note = [`This step of [${c.compile_id}]${where} installed the guard `, guard.text];
  return { compile: k, step: Math.min(step, lastStep(c)), flash: g != null ? { guard: g } : null, note };
}

/** Where "first divergence" leads from compile k compared with `other`: the step of k's
 * side (or, where k ran nothing there, the other compile's), {compile, step, note}. */
export function divergenceTarget(rec, comparisons, k, other) {
  const pair = other == null ? null : pairOf(comparisons, k, other);
  const at = pair && divergenceSteps(pair.d);
  if (!at) return null;
  const dv = pair.d.divergence;
  // On k's side when k ran the instruction there; else on the side that ran it alone.
  const left = k === pair.left ? at.exactLeft : !at.exactRight;
  const to = left ? pair.left : pair.right;
  const step = left ? at.left : at.right;
  if (step == null) return null;
  return { compile: to, step, note: `The first divergence: ${dv.instruction} on line ${dv.lineno} (${dv.why}).` };
}

/** What compare says where no guard of `a` is listed as failing for `b`: {text, reasons}, the
 * `reasons` Dynamo's own (its first failure only) where a TORCH_TRACE log kept no more. */
export function noFailedGuards(a, b) {
  const ia = compileId(a), ib = compileId(b);
  const replaces = b.replaces === a.compile_id && sameGeneration(a, b);
  const reasons = replaces && !b.steps.length ? b.recompile_reasons || [] : [];
  if (reasons.length) return { text: "Not recorded; Dynamo's own reason (its first failure only):", reasons };
  return { reasons, text: replaces ? `${ib} replaces ${ia}, but no guard of it is recorded as failing.` :
    `None recorded: ${ib} ${b.replaces ? `was compiled instead of [${b.replaces}]` : "is not a recompile"}.` };
}

/** Why no first divergence is found for `a` beside `b` (either kept without steps), or null. */
export function steplessNote(a, b) {
  const stepless = [a, b].filter((c) => !c.steps.length).map((c) => `[${c.compile_id}]`);
  if (!stepless.length) return null;
  return `Not known: ${stepless.join(" and ")} ${stepless.length > 1 ? "were" : "was"} kept without steps ` +
    "(read from a TORCH_TRACE log, or outside record(only=...)); record the program to compare it step by step.";
}
