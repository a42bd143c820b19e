// Bytecode as the viewer lists it: the instructions Dynamo walks (its cleaned copy) beside
// the original `dis`, aligned row by row, and one instruction as a line of a listing.
// Pure functions (no DOM).

import { memo } from "./recording.js";

/** The instructions Dynamo walks (schema 2's `walked`; the original `dis` before it). */
export function walkedOf(code) {
  return code.walked || code.instructions;
}

/** Original and walked bytecode side by side: rows of {walked, original} indices (either
 * may be null: an instruction Dynamo inserted, or one it removed) and whether Dynamo
 * changed the row. Rows follow the walked order; a removed original sits where it was,
 * beside the first instruction Dynamo inserted in its place if there is one
 * (POP_JUMP_IF_NOT_NONE beside the LOAD_CONST None; IS_OP; POP_JUMP_IF_TRUE that
 * replace it). */
export function alignBytecode(code) {
  const walked = code.walked;
  const original = code.instructions;
  if (!walked) return original.map((_, o) => ({ walked: null, original: o, changed: false }));
  const used = new Set(walked.map((w) => w.original).filter((o) => o != null));
  const rows = [];
  let next = 0;   // the first original not shown yet
  walked.forEach((w, k) => {
    const o = w.original;
    if (o != null && o >= next) {
      for (; next < o; next++) rows.push({ walked: null, original: next, changed: true });
      rows.push({ walked: k, original: o, changed: !!w.changed });
      next = o + 1;
    } else if (o == null && next < original.length && !used.has(next)) {
      rows.push({ walked: k, original: next, changed: true });   // a replacement
      next += 1;
    } else {
      rows.push({ walked: k, original: null, changed: w.changed !== false });
    }
  });
  for (; next < original.length; next++) rows.push({ walked: null, original: next, changed: true });
  return rows;
}

/** One instruction as a line of a listing: `  4 >>   30 CALL                 1`. */
export function instructionText(ins, showLine) {
  const line = showLine && ins.lineno != null ? String(ins.lineno) : "";
  const mark = ins.is_jump_target ? ">>" : "  ";
  return `${line.padStart(4)} ${mark} ${String(ins.offset).padStart(4)} ${ins.opname.padEnd(20)} ${ins.argrepr || ""}`.trimEnd();
}

function listingLines(list) {   // line numbers only where they change, as dis prints them
  let last = null;
  return list.map((ins) => {
    const show = ins.lineno != null && ins.lineno !== last;
    if (ins.lineno != null) last = ins.lineno;
    return instructionText(ins, show);
  });
}

/** A code's listings, made once: the walked and original lines, the walked index of each
 * offset, and the aligned rows where Dynamo cleaned the code. */
export function codeListing(code) {
  return memo(code, "listing", () => {
    const walked = walkedOf(code);
    const at = new Map(walked.map((ins, k) => [ins.offset, k]));
    return {
      walked: listingLines(walked), original: listingLines(code.instructions), at,
      rows: code.walked && code.cleaned ? alignBytecode(code) : null,
    };
  });
}
