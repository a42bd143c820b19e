// Predict mode: what it asks before a step, and how an answer is graded.
import test from "node:test";
import assert from "node:assert/strict";
import { viewer, recording, compileById, sinStep } from "./load.mjs";

const { question, grade, EFFECTS, pushedKind } = viewer;
const rec = recording("viewer");

test("before the call of torch.sin: it pushes a TensorVariable and adds a node", () => {
  const c = compileById(rec, "0/0_1");
  const q = question(c, sinStep(c) - 1);
  assert.equal(q.step, sinStep(c));
  assert.match(q.instruction, /^CALL/);
  assert.equal(q.truth.pushes, "TensorVariable");
  assert.ok(q.truth.does.includes("node"));
  assert.ok(q.kinds.includes("TensorVariable"));
});

test("the choices of kind come from the compile: the truth and kinds it pushes elsewhere", () => {
  for (const c of rec.compiles) {
    const pushed = new Set(c.steps.map((_, j) => pushedKind(c, j)).filter(Boolean));
    for (let i = 0; i < c.steps.length - 1; i++) {
      const q = question(c, i);
      assert.ok(q.kinds.length <= 12 && new Set(q.kinds).size === q.kinds.length);
      assert.ok(q.kinds.every((k) => pushed.has(k)), `${c.compile_id} step ${i}: ${q.kinds}`);
      if (q.truth.pushes) assert.ok(q.kinds.includes(q.truth.pushes));
      assert.deepEqual([...q.kinds].sort(), q.kinds, "in a fixed order that gives nothing away");
      assert.ok(q.truth.does.every((d) => EFFECTS.some((e) => e[0] === d)));
    }
    assert.equal(question(c, c.steps.length - 1), null, "nothing to ask at the last step");
  }
});

test("the graph break, a return and an inlined call are asked about as such", () => {
  const c = compileById(rec, "0/0_1");
  assert.ok(question(c, c.graph_break.step - 1).truth.does.includes("break"));
  const resume = compileById(rec, "1/0");
  const enter = resume.steps.findIndex((s, j) => j > 0 && s.depth > resume.steps[j - 1].depth);
  const q = question(resume, enter - 1);
  assert.ok(q.truth.does.includes("inline"));
  assert.match(q.instruction, /^CALL/, "the instruction about to run is the caller's call");
  assert.equal(q.truth.pushes, null);
  const ret = resume.steps.findIndex((s) => s.opname === "RETURN_VALUE");
  assert.ok(question(resume, ret - 1).truth.does.includes("return"));
});

test("an answer is right only when the kind and every effect are right", () => {
  const c = compileById(rec, "0/0_1");
  const q = question(c, sinStep(c) - 1);
  assert.equal(grade(q, { pushes: q.truth.pushes, does: [...q.truth.does] }), true);
  assert.equal(grade(q, { pushes: q.truth.pushes, does: [...q.truth.does].reverse() }), true);
  assert.equal(grade(q, { pushes: q.truth.pushes, does: [] }), false);
  assert.equal(grade(q, { pushes: null, does: [...q.truth.does] }), false);
  assert.equal(grade(q, { pushes: q.truth.pushes, does: [...q.truth.does, "return"] }), false);
});

test("a bookkeeping instruction that does nothing is taken without asking; one that acts is asked", () => {
  const c = compileById(rec, "0/0_1");
  // 3.11's PRECALL does nothing Dynamo shows; 3.12 and 3.13 have no PRECALL, and this
  // compile then has no bookkeeping step after its first (RESUME), so only the rest is asked.
  const precall = c.steps.findIndex((s) => s.opname === "PRECALL");
  if (precall > 0) {
    const q = question(c, precall - 1);
    assert.equal(q.truth.pushes, null);
    assert.deepEqual(q.truth.does, []);
    assert.equal(q.bookkeeping, true);
  }
  assert.equal(question(c, sinStep(c) - 1).bookkeeping, false);
  const resume = compileById(rec, "1/0");
  const enter = resume.steps.findIndex((s, j) => j > 0 && s.depth > resume.steps[j - 1].depth);
  assert.equal(question(resume, enter - 1).bookkeeping, false, "entering a call is asked");
});

test("every instruction of one opname is offered the same kinds: being offered says nothing", () => {
  for (const c of rec.compiles) {
    const offered = new Map();
    for (let i = 0; i < c.steps.length - 1; i++) {
      const q = question(c, i);
      if (!q || q.truth.does.includes("inline")) continue;
      const op = c.steps[i + 1].opname, key = JSON.stringify(q.kinds);
      if (!offered.has(op)) offered.set(op, key);
      assert.equal(offered.get(op), key, `${c.compile_id} ${op}`);
    }
  }
});


test("each effect has one key in every question, no pushed choice shares it, and , . reach every kind", () => {
  const { EFFECT_KEYS, pushKeys, PredictMode, keyAction } = viewer;
  const letters = EFFECTS.map(([id]) => EFFECT_KEYS[id]);
  assert.equal(new Set(letters).size, EFFECTS.length, "an effect's key is its own");
  assert.ok(letters.every((k) => /^[a-z]$/.test(k) && k !== "s"), "a letter, and not skip's");
  // What the letters and digits do while a question is asked: the choice, else the key's own action.
  const asking = { kinds: [] };
  assert.deepEqual(keyAction({ key: "N", shiftKey: true }, asking), { choose: "n", or: "node" });
  assert.deepEqual(keyAction({ key: "0", shiftKey: false }, asking), { choose: "0", or: "zoom-reset" });
  assert.deepEqual(keyAction({ key: ".", shiftKey: false }, asking), { cycle: 1 });
  assert.equal(keyAction({ key: "Enter", shiftKey: false }, asking), "reveal");
  assert.equal(keyAction({ key: "n", shiftKey: false }, null), "node", "not asking: the viewer's own key");
  for (const c of rec.compiles) {
    for (let i = 0; i < c.steps.length - 1; i++) {
      const q = question(c, i);
      const keys = pushKeys(q.kinds);
      assert.equal(keys.length, q.kinds.length + 1);
      assert.equal(keys[0], "0", "0 is always nothing");
      assert.deepEqual(keys.slice(1, 10), q.kinds.slice(0, 9).map((_, j) => String(j + 1)));
      assert.ok(keys.every((k) => k == null || !letters.includes(k)));
      // From nothing chosen, . goes through nothing and every kind offered, then comes back.
      const mode = Object.create(PredictMode.prototype);   // its state alone: no box (no DOM here)
      mode.asking = q;
      mode.answer = { pushes: undefined, does: new Set() };
      const seen = [];
      for (let n = 0; n <= q.kinds.length; n++) { mode.cycle(1); seen.push(mode.answer.pushes); }
      assert.deepEqual(seen, [null, ...q.kinds]);
      mode.cycle(1);
      assert.equal(mode.answer.pushes, null, "round again");
      mode.cycle(-1);
      assert.equal(mode.answer.pushes, q.kinds.length ? q.kinds.at(-1) : null);
    }
  }
});
