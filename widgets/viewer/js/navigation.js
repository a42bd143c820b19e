// Where a step is and how to get elsewhere: the file and line a learner knows it by, the
// timeline's marks (which steps add graph nodes or guards, where the graph break and a
// restart are, where inlined calls run, the runs of the current line), stepping over an
// inlined call, running to the end of one, and going to a typed step. Pure functions of a
// compile (no DOM), so node tests them directly; the controls draw the marks
// (timeline.js), the Viewer turns an action into a step.
//
// An inlined call in the recording: Dynamo's InliningInstructionTranslator runs the
// callee's instructions one level deeper (`depth`), and they are recorded before the
// caller's CALL that started them, which is recorded when the callee has returned. So the
// steps of one call are a run of deeper steps, and the caller's CALL comes right after.

import { breakStep, lastStep, memo } from "./recording.js";

// -- where a step is -------------------------------------------------------------------------

/** A file as a learner knows it: a Jupyter cell's temporary file (IPython writes each cell
 * to /tmp/ipykernel_<pid>/<hash>.py) is "cell"; any other file, its base name. */
export function fileLabel(filename) {
  const f = String(filename || "");
  if (/(^|[\\/])ipykernel_\d+[\\/][^\\/]+\.py$/.test(f) || /^<ipython-input-\d+/.test(f)) return "cell";
  return f.split(/[\\/]/).pop();
}

/** For a step with no line of its own, the line its frame reaches next (the def line of an
 * inlined function, for the instructions before its first line); null for a step that has
 * a line, or when the frame never reaches one. */
export function lineBefore(c, i) {
  const s = c.steps[i];
  if (!s || s.lineno != null) return null;
  const next = memo(c, "lineBefore", () => {
    const out = new Map();   // step -> the line reached next in its frame
    const pending = new Map();   // frame key -> the steps waiting for a line
    c.steps.forEach((t, j) => {
      const key = `${t.depth}:${t.code}:${JSON.stringify(t.inline_stack)}`;
      if (t.lineno == null) {
        if (!pending.has(key)) pending.set(key, []);
        pending.get(key).push(j);
      } else if (pending.has(key)) {
        for (const w of pending.get(key)) out.set(w, t.lineno);
        pending.delete(key);
      }
    });
    return out;
  });
  if (next.has(i)) return next.get(i);
  const info = c.codes[s.code];
  return info ? info.firstlineno : null;
}


/** The kinds of mark a step can carry on the timeline (bits of `timelineMarks`). */
export const MARK = { node: 1, guard: 2, break: 4, restart: 8, inlined: 16, call: 32 };

/** Per step, the marks it carries: MARK bits in a Uint8Array. `inlined` is every step
 * run inside an inlined call; `call` is the first step of one (where the call begins). */
export function timelineMarks(c) {
  return memo(c, "timeline", () => {
    const n = c.steps.length, marks = new Uint8Array(n);
    for (let j = 0; j < n; j++) {
      const s = c.steps[j];
      let m = 0;
      if (s.nodes_added.length) m |= MARK.node;
      if (s.guards_added.length) m |= MARK.guard;
      if (s.depth > 0) m |= MARK.inlined;
      if (j > 0 && s.depth > c.steps[j - 1].depth) m |= MARK.call;
      marks[j] = m;
    }
    const b = breakStep(c);
    if (b != null) marks[b] |= c.outcome === "restarted" ? MARK.restart : MARK.break;
    return marks;
  });
}

/** The timeline at `width` pixels: per pixel column, the OR of the marks of its steps. */
export function timelineBins(c, width) {
  const marks = timelineMarks(c), n = marks.length;
  const w = Math.max(1, Math.floor(width));
  const bins = new Uint8Array(w);
  for (let j = 0; j < n; j++) bins[binOf(n, w, j)] |= marks[j];
  return bins;
}

/** The pixel column of step j on a timeline of w columns for n steps. */
export function binOf(n, w, j) {
  return n <= 1 ? 0 : Math.min(w - 1, Math.floor((j * w) / n));
}

/** The steps of pixel column x (of w) for n steps, [lo, hi): with fewer steps than
 * columns, a step is a band of columns and each column is within one step. */
export function columnSteps(n, w, x) {
  if (n <= 0) return [0, 0];
  if (n < w) {
    const j = Math.min(n - 1, Math.floor((x * n) / w));
    return [j, j + 1];
  }
  const at = (col) => Math.min(n, Math.ceil((col * n) / w));
  return [at(x), x + 1 >= w ? n : at(x + 1)];
}

const PRIORITY = [MARK.break, MARK.restart, MARK.node, MARK.guard, MARK.call];

/** The step a click at pixel column x (of w) means: the most telling marked step within
 * `reach` columns of it (a break, then a node, a guard, the start of a call; the nearest
 * first), else the first step of that column. */
export function stepAtColumn(c, w, x, reach = 2) {
  const marks = timelineMarks(c), n = marks.length;
  if (!n) return 0;
  if (x >= w) return n - 1;   // past the right end: the last step
  x = Math.max(0, Math.floor(x));
  for (const kind of PRIORITY) {
    for (let d = 0; d <= reach; d++) {
      for (const col of d ? [x - d, x + d] : [x]) {
        if (col < 0 || col >= w) continue;
        const [lo, hi] = columnSteps(n, w, col);
        for (let j = lo; j < hi; j++) if (marks[j] & kind) return j;
      }
    }
  }
  return Math.min(columnSteps(n, w, x)[0], n - 1);
}

/** The runs of consecutive steps on step i's line (same code and depth), as [first, last]
 * pairs: the timeline marks the current line's runs. A run ends where another line or
 * another frame's step (an inlined call) comes in between. Found once per line. */
export function lineRuns(c, i) {
  const s = c.steps[i];
  if (!s || s.lineno == null) return [];
  const cache = memo(c, "lineRuns", () => new Map());
  const key = `${s.code}:${s.depth}:${s.lineno}`;
  if (cache.has(key)) return cache.get(key);
  const runs = [], steps = c.steps;
  let start = -1;
  for (let j = 0; j < steps.length; j++) {
    const t = steps[j];
    const on = t.lineno === s.lineno && t.code === s.code && t.depth === s.depth;
    if (on && start < 0) start = j;
    else if (!on && start >= 0) { runs.push([start, j - 1]); start = -1; }
  }
  if (start >= 0) runs.push([start, steps.length - 1]);
  cache.set(key, runs);
  return runs;
}

// -- inlined calls ---------------------------------------------------------------------------

/** The next step after i at depth `depth` or shallower (null if none). */
function nextAtOrAbove(c, i, depth) {
  const steps = c.steps;
  for (let j = i + 1; j < steps.length; j++) if (steps[j].depth <= depth) return j;
  return null;
}

/** Step over: where step i's next step begins an inlined call, the step after the whole
 * call (the caller's CALL, once the callee has returned); null where no call begins. */
export function stepOver(c, i) {
  const s = c.steps[i], next = c.steps[i + 1];
  if (!s || !next || next.depth <= s.depth) return null;
  return nextAtOrAbove(c, i, s.depth);
}

/** Run to the end of the inlined call step i is in: the caller's step that the call
 * returns to (its CALL); null in the frame itself, or when the recording ends first. */
export function stepOut(c, i) {
  const s = c.steps[i];
  if (!s || s.depth === 0) return null;
  return nextAtOrAbove(c, i, s.depth - 1);
}

/** The step a typed text names: an integer within the compile, else null. `clamped`
 * says a number past either end was brought inside. */
export function typedStep(c, text) {
  const t = String(text).trim();
  if (!/^-?\d+$/.test(t) || !c.steps.length) return null;
  const n = Number(t), to = Math.max(0, Math.min(n, lastStep(c)));
  return { to, clamped: to !== n };
}

/** What a navigation action asks for at step i: {to} (null: nowhere), with the note the
 * jump leaves or what is said when there is nowhere to go; undefined for other actions. */
export function navigate(action, c, i) {
  if (action === "over") {
    return { to: stepOver(c, i), none: "The next step does not begin an inlined call: forward (→) steps." };
  }
  if (action === "out") {
    const to = stepOut(c, i);
    return { to, note: to != null ? "The inlined call returned here, to its caller's CALL." : null,
      none: c.steps[i] && c.steps[i].depth ? "The recording ends inside this inlined call." : "This step is in the frame itself, not in an inlined call." };
  }
  if (typeof action === "string" && action.startsWith("goto:")) {
    const t = typedStep(c, action.slice(5));
    if (!t) return { to: null, none: `Type a step number from 0 to ${lastStep(c)}.` };
    return { to: t.to, note: t.clamped ? `Steps are numbered 0 to ${lastStep(c)}: this is step ${t.to}.` : null };
  }
  return undefined;
}
