// Predict mode: before each step forward the learner says what the instruction will do,
// then sees. `question` and `grade` are pure (node tests them); `PredictMode` holds the
// question asked and the answer so far for the Viewer, and paints them.
//
// The choices carry what they choose as data-* attributes (`data-answer`, `data-kind`,
// `data-effect`, `data-action`); the Viewer turns a click on one into the answer or the
// step. Python reads the answers back (widgets' exercises, review_predictions) with the
// same effects vocabulary: a test holds the two lists together.

import { breakStep, instructionOf, memo, pushedKind } from "./recording.js";
import { code, h } from "./dom.js";

/** What an instruction can do besides pushing: [id, as a choice, as it is told after]. */
export const EFFECTS = [
  ["node", "adds a node to the FX graph", "added a node to the FX graph"],
  ["guard", "installs a guard", "installed a guard"],
  ["break", "breaks the graph", "broke the graph"],
  ["inline", "inlines a call (steps into it)", "inlined a call"],
  ["return", "returns from its frame", "returned from its frame"],
];

function pushedKinds(c) {   // kinds the compile pushes, most frequent first, and by opname
  return memo(c, "kinds", () => {
    const count = new Map(), byOp = new Map();
    c.steps.forEach((s, j) => {
      const kind = pushedKind(c, j);
      if (!kind) return;
      count.set(kind, (count.get(kind) || 0) + 1);
      if (!byOp.has(s.opname)) byOp.set(s.opname, new Set());
      byOp.get(s.opname).add(kind);
    });
    const top = [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
    return { top, byOp };
  });
}

/** The key of each effect: the same in every question (the viewer's own letters for a node,
 * a guard and a break). */
export const EFFECT_KEYS = { node: "n", guard: "g", break: "b", inline: "i", return: "r" };

/** The key of each choice of what is pushed, in the order shown: 0 for nothing, then 1-9
 * for the first nine kinds; the rest have none (, and . move the choice through all). */
export function pushKeys(kinds) {
  return [null, ...kinds].map((_, j) => (j <= 9 ? String(j) : null));
}

export const COMMON_KINDS = 3;   // the compile's most pushed kinds, offered at every question

// Instructions that only keep CPython's books: when one does nothing visible, predict mode
// takes it without asking (there is nothing to reason about).
const BOOKKEEPING = new Set(["RESUME", "NOP", "PRECALL", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL"]);

/** What step i + 1 does, as predict mode asks it: the instruction about to run, the
 * choices (tracker kinds pushed in this compile, and EFFECTS), the truth, and whether it
 * is worth asking (`bookkeeping`: a no-op such as RESUME or PRECALL that did nothing).
 * Null at the last step. */
export function question(c, i) {
  if (!(i >= 0 && i < c.steps.length - 1)) return null;
  const here = c.steps[i], next = c.steps[i + 1];
  const inlines = next.depth > here.depth;
  // Entering a callee: the instruction about to run is the caller's call, whose own step
  // is recorded once the callee has returned.
  let shown = next;
  if (inlines) {
    const j = c.steps.findIndex((s, k) => k > i + 1 && s.depth <= here.depth);
    shown = j >= 0 ? c.steps[j] : null;
  }
  const does = [];
  if (next.nodes_added.length) does.push("node");
  if (next.guards_added.length) does.push("guard");
  if (breakStep(c) === i + 1) does.push("break");
  if (inlines) does.push("inline");
  if (/^RETURN/.test(next.opname)) does.push("return");
  const pushes = inlines ? null : pushedKind(c, i + 1);
  // The same choices for every instruction of one opname: the compile's most pushed kinds
  // and every kind that opname pushes anywhere in it, so being offered says nothing.
  const { top, byOp } = pushedKinds(c);
  const kinds = [...new Set([...top.slice(0, COMMON_KINDS), ...(byOp.get(next.opname) || [])])];
  if (pushes && !kinds.includes(pushes)) kinds.push(pushes);
  kinds.sort();
  return {
    step: i + 1,
    instruction: shown ? instructionOf(shown) : "a call",
    lineno: shown ? shown.lineno : null,
    code_name: shown ? shown.code_name : here.code_name,
    // where the instruction asked about is, for the bytecode pane to mark it while asking
    code: shown ? shown.code : null, offset: shown ? shown.offset : null,
    kinds, truth: { pushes, does },
    bookkeeping: !inlines && BOOKKEEPING.has(next.opname) && !pushes && !does.length,
  };
}

/** Is an answer ({pushes: kind or null, does: [...]}) right about question q? */
export function grade(q, answer) {
  const does = [...new Set(answer.does)].sort();
  const truth = [...q.truth.does].sort();
  return (answer.pushes ?? null) === q.truth.pushes &&
    does.length === truth.length && does.every((d, k) => d === truth[k]);
}

/** What predict mode keeps of an answer to q about compile c, as the `predictions` trait
 * holds it; `chosen` is {pushes, does: a Set of effect ids}. */
export function prediction(c, q, chosen) {
  const answer = { pushes: chosen.pushes, does: EFFECTS.map((e) => e[0]).filter((d) => chosen.does.has(d)) };
  return {
    compile: c.compile_id, step: q.step, instruction: q.instruction, lineno: q.lineno,
    answer, truth: q.truth, correct: grade(q, answer),
  };
}

/** Predict mode's state and its box, owned by the Viewer: `ask` before a step forward,
 * `choose` what a clicked choice carries, `settle` the answer when the step is taken. */
export class PredictMode {
  constructor() {
    this.el = h("div", { class: "dl-predict", hidden: true });
    this.on = false;
    this.asking = null;    // the question asked, or null
    this.answer = null;    // the answer so far: {pushes, does: a Set of effect ids}
    this.verdict = null;   // about the last step taken: {q, answer, correct} or {q, skipped}
  }

  /** Before stepping forward from step i: whether to ask (a bookkeeping step, and one
   * already answered in `predictions`, are taken without asking: each counts once). */
  ask(c, i, predictions = []) {
    const q = question(c, i);
    if (q && predictions.some((p) => p.compile === c.compile_id && p.step === q.step)) {
      this.verdict = null;
      return false;
    }
    if (q && q.bookkeeping) this.verdict = { q, skipped: true };
    if (!q || q.bookkeeping) return false;
    this.asking = q;
    this.answer = { pushes: undefined, does: new Set() };   // nothing chosen yet
    this.hint = null;
    this.verdict = null;
    return true;
  }

  /** A choice: what the instruction pushes (one), or an effect (ticked or not). */
  choose({ answer, kind, effect }) {
    if (!this.asking) return;
    if (answer === "pushes") {
      this.answer.pushes = kind ?? null;
      this.hint = null;
    }
    else if (this.answer.does.has(effect)) this.answer.does.delete(effect);
    else this.answer.does.add(effect);
  }

  /** Move the choice of what is pushed to the next (dir 1) or previous (-1) of nothing and
   * the kinds offered, as , and . do: every kind is reached by key, however many. */
  cycle(dir) {
    if (!this.asking) return;
    const all = [null, ...this.asking.kinds];
    const at = this.answer.pushes === undefined ? (dir > 0 ? -1 : all.length) : all.indexOf(this.answer.pushes);
    this.answer.pushes = all[(at + dir + all.length) % all.length];
    this.hint = null;
  }

  /** The answer to the question asked, as the `predictions` trait keeps it (null: none). */
  settle(c) {
    const q = this.asking;
    if (!q) return null;
    if (this.answer.pushes === undefined) {   // a bare Enter is not an answer
      this.hint = "First choose what it pushes (0 for “nothing”, 1–9, or , and . through all), then reveal (Enter); skip (S) steps without answering.";
      return null;
    }
    const record = prediction(c, q, this.answer);
    this.verdict = { q, answer: record.answer, correct: record.correct };
    return record;
  }

  /** The box: the score over `predictions` (every answer so far), the question, the verdict. */
  paint(predictions) {
    const el = this.el;
    el.hidden = !this.on;
    if (!this.on) return;
    const right = predictions.filter((p) => p.correct).length;
    const q = this.asking;
    const out = [h("div", { class: "dl-predict-head" }, h("b", null, "Predict"),
      h("span", { class: "dl-score dl-dim" }, ` · ${right} of ${predictions.length} right`),
      q ? null : h("span", { class: "dl-dim" }, " · press forward (→) to be asked about the next instruction"))];
    // What a bare reveal lacks is said first, where the box begins (it scrolls).
    if (q && this.hint) out.push(h("div", { class: "dl-verdict dl-wrong dl-hint", role: "status" }, this.hint));
    if (q) out.push(...asked(q, this.answer));
    const v = this.verdict;
    if (v && v.skipped && !q) {
      out.push(h("div", { class: "dl-verdict dl-dim" }, code(v.q.instruction),
        ": bookkeeping that changed nothing here, taken without asking."));
    } else if (v && !q) {
      const truth = [v.q.truth.pushes ? ["pushed ", code(v.q.truth.pushes)] : "pushed nothing"];
      for (const [id, , told] of EFFECTS) if (v.q.truth.does.includes(id)) truth.push(told);
      out.push(h("div", { class: `dl-verdict ${v.correct ? "dl-right" : "dl-wrong"}` },
        v.correct ? "Right: " : "Not quite. It ", truth.flatMap((t, j) => (j ? [", ", t] : [t])), ".",
        v.correct ? "" : wrongParts(v.q.truth, v.answer)));
    }
    el.replaceChildren(...out);
    if (q && this.hint) el.scrollTop = 0;
  }
}

/** Which part of a wrong answer was wrong: the kind pushed, effects missed or not made. */
function wrongParts(truth, answer) {
  const out = [];
  if ((answer.pushes ?? null) !== truth.pushes) {
    out.push([" You said it pushes ", answer.pushes ? code(answer.pushes) : "nothing", "."]);
  }
  const told = (ids) => EFFECTS.filter((e) => ids.includes(e[0])).map((e) => e[1]).join(", ");
  const missed = truth.does.filter((d) => !answer.does.includes(d));
  const extra = answer.does.filter((d) => !truth.does.includes(d));
  if (missed.length) out.push(` You missed: ${told(missed)}.`);
  if (extra.length) out.push(` It did not: ${told(extra)}.`);
  return out;
}

/** The question and its choices, each with its key: 0-9 for what it pushes (in the order
 * shown), a letter for each effect (EFFECT_KEYS, the same in every question). */
function asked(q, answer) {
  const chip = (key, label, pressed, data) => h("button", {
    class: "dl-chip", type: "button", "aria-pressed": String(pressed), "data-key": key,
    title: key ? `key ${key.toUpperCase()}` : "key , or . moves the choice here", ...data,
  }, key ? h("span", { class: "dl-key", "aria-hidden": "true" }, key.toUpperCase()) : null, label);
  const keys = pushKeys(q.kinds);
  const pushes = [null, ...q.kinds].map((kind, j) => chip(keys[j], kind ?? "nothing", answer.pushes === kind,
    { "data-answer": "pushes", "data-kind": kind }));
  const does = EFFECTS.map(([id, label]) => chip(EFFECT_KEYS[id], label, answer.does.has(id), { "data-answer": "does", "data-effect": id }));
  const more = q.kinds.length > 9 ? h("span", { class: "dl-dim" }, " , . go through all") : null;
  return [
    h("div", { class: "dl-question" }, "Next: ", code(q.instruction),
      q.lineno != null ? ` on line ${q.lineno}` : "", " in ", code(q.code_name), ". What will it do?"),
    // The effects first: five, the same in every question, always in view; then the kinds,
    // as many as the opname pushes anywhere in the compile (two dozen in a model's CALL).
    h("div", { class: "dl-choices", role: "group", "aria-label": "it (tick all that apply)" },
      h("span", { class: "dl-dim" }, "It (tick all that apply): "), does),
    h("div", { class: "dl-choices", role: "group", "aria-label": "it pushes (choose one)" },
      h("span", { class: "dl-dim" }, "It pushes: "), pushes, more),
    h("div", { class: "dl-choices" },
      h("button", { class: "dl-button dl-reveal", type: "button", title: "check your answer and take the step (Enter)", "data-action": "reveal" }, "reveal"),
      h("button", { class: "dl-button dl-skip", type: "button", title: "take the step without answering (S)", "data-action": "skip" }, "skip")),
  ];
}
