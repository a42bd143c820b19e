// The bytecode Dynamo walks beside the original dis: how the rows line up.
import test from "node:test";
import assert from "node:assert/strict";
import { viewer, recording } from "./load.mjs";

const { alignBytecode, bytecodeView, instructionText } = viewer;

const ins = (opname, original, changed = false) => ({ offset: 0, opname, argrepr: "", lineno: 1, is_jump_target: false, original, changed });
const orig = (...names) => names.map((opname, k) => ({ offset: 2 * k, opname, argrepr: "", lineno: 1, is_jump_target: false }));

/** Every original instruction appears once, in order, and every walked one once, in order. */
function wellFormed(code, rows) {
  const o = rows.map((r) => r.original).filter((x) => x != null);
  const w = rows.map((r) => r.walked).filter((x) => x != null);
  assert.deepEqual(o, code.instructions.map((_, k) => k));
  assert.deepEqual(w, code.walked.map((_, k) => k));
}

test("an unchanged code lines up one to one, nothing marked", () => {
  const code = { instructions: orig("RESUME", "LOAD_FAST", "RETURN_VALUE"), walked: [ins("RESUME", 0), ins("LOAD_FAST", 1), ins("RETURN_VALUE", 2)] };
  const rows = alignBytecode(code);
  assert.deepEqual(rows.map((r) => [r.walked, r.original, r.changed]), [[0, 0, false], [1, 1, false], [2, 2, false]]);
});

test("a stripped EXTENDED_ARG stays on the original side, marked removed", () => {
  const code = { instructions: orig("RESUME", "EXTENDED_ARG", "JUMP_FORWARD", "RETURN_VALUE"),
    walked: [ins("RESUME", 0), ins("JUMP_FORWARD", 2, true), ins("RETURN_VALUE", 3)] };
  const rows = alignBytecode(code);
  wellFormed(code, rows);
  assert.deepEqual(rows[1], { walked: null, original: 1, changed: true });
  assert.deepEqual(rows[2], { walked: 1, original: 2, changed: true });
});

test("instructions Dynamo inserts for super() stand alone on the walked side", () => {
  const code = { instructions: orig("LOAD_GLOBAL", "PRECALL", "CALL"),
    walked: [ins("LOAD_GLOBAL", 0), ins("LOAD_DEREF", null, true), ins("LOAD_FAST", null, true), ins("PRECALL", 1, true), ins("CALL", 2, true)] };
  const rows = alignBytecode(code);
  wellFormed(code, rows);
  assert.deepEqual(rows.map((r) => [r.walked, r.original]), [[0, 0], [1, null], [2, null], [3, 1], [4, 2]]);
});

test("a rewritten POP_JUMP_IF_NOT_NONE sits beside the first instruction that replaces it", () => {
  const code = recording("cleaned").compiles[0].codes[0];
  assert.equal(code.cleaned, true);
  const rows = alignBytecode(code);
  wellFormed(code, rows);
  const removed = code.instructions.findIndex((i, k) => /IF_NOT_NONE|IF_NONE/.test(i.opname) && !code.walked.some((w) => w.original === k));
  assert.ok(removed >= 0, code.instructions.map((i) => i.opname).join(" "));
  const row = rows.find((r) => r.original === removed);
  assert.equal(code.walked[row.walked].opname, "LOAD_CONST");
  assert.equal(code.walked[row.walked].argrepr, "None");
  assert.ok(row.changed);
  const view = bytecodeView(recording("cleaned").compiles[0], 0);
  assert.ok(view.aligned);
  assert.ok(view.rows.some((r) => r.change === "changed" && /IS_NOT_NONE|IF_NOT_NONE|IF_NONE/.test(r.original)));
  assert.ok(view.rows.some((r) => r.change === "inserted" && /IS_OP/.test(r.walked)));
});

test("every step's offset is an offset of the walked list, shown as current", () => {
  const c = recording("cleaned").compiles[0];
  c.steps.forEach((s, i) => {
    const code = c.codes[s.code];
    assert.ok(code.walked.some((w) => w.offset === s.offset), `step ${i} offset ${s.offset}`);
    const current = bytecodeView(c, i).rows.find((r) => r.current);
    assert.match(current.walked, new RegExp(`\\b${s.offset}\\s+${s.opname}\\b`));
  });
});

test("an instruction reads as dis prints it", () => {
  assert.equal(instructionText({ offset: 30, opname: "CALL", argrepr: "1", lineno: 4, is_jump_target: true }, true),
    "   4 >>   30 CALL                 1");
  assert.equal(instructionText({ offset: 56, opname: "RETURN_VALUE", argrepr: "", lineno: 5, is_jump_target: false }, false),
    "          56 RETURN_VALUE");
});
