// What `dynamo-lab explain` says about each compile, as the kernel shipped it
// (widgets/viewer/state.py `answers`, capture/explain.py `viewer_answers`, entry k for
// compile k), kept beside the decoded recording (which stays exactly what the engine
// wrote): the compile menu, the break card and the compare view say these words and make
// up none of their own. Pure functions (no DOM): node imports this file and tests it.

import { fileLabel } from "./navigation.js";

const shipped = new WeakMap();   // a decoded recording -> its answers

/** Keep `answers` (the model's `answers`) as what explain says of recording `rec`'s compiles. */
export function setAnswers(rec, answers) {
  shipped.set(rec, Array.isArray(answers) ? answers : []);
}

/** What explain says about compile k (capture/explain.py `viewer_answers`), or null: none
 * was shipped, or it names another compile. */
export function answerOf(rec, k) {
  const all = shipped.get(rec);
  const a = all && all[k];
  return a && a.compile_id === (rec.compiles[k] || {}).compile_id ? a : null;
}

/** `file:line:  text` of a place explain names, or null. */
export function placeText(p) {
  if (!p || p.lineno == null) return null;
  return `${fileLabel(p.file)}:${p.lineno}` + (p.line ? `:  ${p.line}` : "");
}

/** Explain's answer for compile k as lines, as explain prints them: {kind, text, user}
 * with `user` the user's own line (`file:line:  text`) where explain names one: its
 * function's statement, each cause of its recompile with its guard, each graph break it
 * met, each refusal, each fix. [] when explain says nothing of it. */
export function answerLines(rec, k) {
  const a = answerOf(rec, k);
  if (!a) return [];
  const out = [];
  if (a.frame) out.push({ kind: "outcome", text: `${a.frame.function}: ${a.frame.statement}`, user: null });
  for (const c of a.causes) {
    out.push({ kind: "cause", user: placeText(c.user),
      text: `recompiles of ${c.function}${c.expected ? " (expected)" : ""}: ${c.statement} · guard: ${c.kind} ${c.source || ""}`.trim() });
  }
  for (const b of a.graph_breaks) {
    const elsewhere = b.user && (b.user.file !== b.file || b.user.lineno !== b.lineno);
    out.push({ kind: "break", user: elsewhere ? placeText(b.user) : null,
      text: `graph break in ${b.function} at ${fileLabel(b.file)}:${b.lineno}: ${b.reason}` + (b.gb_id ? ` (${b.gb_id})` : "") });
  }
  for (const r of a.refusals) out.push({ kind: "refused", text: `refused (${r.kind}): ${r.message}`, user: null });
  for (const fix of a.advice) out.push({ kind: "fix", text: `fix: ${fix}`, user: null });
  return out;
}

/** A line of `answerLines` as plain text. */
export function answerLineText(x) {
  return x.text + (x.user ? ` · your line: ${x.user}` : "");
}

/** The user's own line explain names for a guard that failed on the call that made
 * compile `later` ({compile_id, kind, source, what}), as `placeText`; null where explain
 * names none or it is the line that installed the guard. */
export function failedGuardUser(rec, later, fg) {
  const a = later == null ? null : answerOf(rec, later);
  const g = a && a.failed_guards.find((x) => x.compile_id === fg.compile_id && x.kind === fg.kind &&
    x.source === fg.source && (x.what || null) === (fg.what || null));
  return g && g.user && (g.user.file !== g.file || g.user.lineno !== g.lineno) ? placeText(g.user) : null;
}
