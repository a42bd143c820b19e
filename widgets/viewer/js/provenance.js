// Provenance: where a link leads. A guard, a graph node, a tracker's source and a recompile
// reason each lead to the step that made it; the note says so where the jump lands.

import { guardStep, instructionOf, nameAt, nodeStep, recompileTarget, whereRead } from "./recording.js";
import { code } from "./dom.js";

/** Where a click on element `t` of compile k leads: {compile, step, flash, note} (the
 * note as page content; `flash` marks what was followed), or null for no link. */
export function linkTarget(rec, k, t) {
  const c = rec.compiles[k];
  const reason = t.closest("[data-reason]");
  const guard = t.closest("[data-guard]");
  const node = t.closest("[data-node]");
  const source = t.closest("[data-source]");
  if (reason) {
    const target = recompileTarget(rec, k, c.recompile_reasons[Number(reason.dataset.reason)]);
    if (!target) return null;
    const was = rec.compiles[target.compile];
    const g = target.guard != null ? was.guard_details[target.guard] : null;
    return {
      compile: target.compile, step: target.step, flash: { guard: target.guard },
      note: g ? ["This guard failed and caused the recompile: ", code(g.text)] :
        "The recording names no guard of this compile that failed (it was compiled before recording began).",
    };
  }
  if (guard) {
    const g = Number(guard.dataset.guard);
    const to = guardStep(c, g);
    if (to == null) return null;
    return { compile: k, step: to, flash: { guard: g }, note: ["This step installed the guard ", code(c.guard_details[g].text)] };
  }
  if (node) {
    const n = Number(node.dataset.node);
    const to = nodeStep(c, n);
    return { compile: k, step: to, flash: { node: n }, note: ["This step made the graph node ", code(nameAt(c.nodes[n], to))] };
  }
  if (source) {
    const src = source.dataset.source;
    const to = whereRead(c, src);
    if (to == null) return null;
    const s = c.steps[to];
    return {
      compile: k, step: to, flash: { source: src },
      note: ["The source ", code(src), " was first read here, by ", code(instructionOf(s)),
        s.lineno != null ? ` on line ${s.lineno}` : ""],
    };
  }
  return null;
}
