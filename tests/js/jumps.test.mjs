// Where each jump and provenance link goes: pure functions of a compile.
import test from "node:test";
import assert from "node:assert/strict";
import { viewer, recording, compileById, sinStep, synthetic } from "./load.mjs";

const { nextLine, nextNode, nextGuard, breakStep, guardStep, nodeStep, whereRead, recompileTarget,
  lastStep, frameBefore } = viewer;

const rec = recording("viewer");

test("next node and next guard land on the next step that adds one, never past one", () => {
  for (const c of rec.compiles) {
    for (let i = 0; i < c.steps.length; i++) {
      for (const [jump, field] of [[nextNode, "nodes_added"], [nextGuard, "guards_added"]]) {
        const j = jump(c, i);
        const between = c.steps.slice(i + 1, j == null ? undefined : j);
        assert.ok(between.every((s) => s[field].length === 0), `${c.compile_id} step ${i}: skipped one`);
        if (j != null) assert.ok(j > i && c.steps[j][field].length > 0);
      }
    }
  }
});

test("a step's frame goes back to the last step at its depth, in its code and callers, with none shallower between", () => {
  for (const c of rec.compiles) {
    let inlined = 0;
    for (let i = 0; i < c.steps.length; i++) {
      const s = c.steps[i], j = frameBefore(c, i);
      if (j == null) {
        // a frame begins: step i - 1 was shallower (a call into it) or another frame at its depth
        const before = c.steps.slice(0, i).reverse().find((t) => t.depth <= s.depth);
        assert.ok(!before || before.depth < s.depth || before.code !== s.code ||
          JSON.stringify(before.inline_stack) !== JSON.stringify(s.inline_stack), `${c.compile_id} step ${i}`);
        continue;
      }
      const t = c.steps[j];
      assert.ok(j < i && t.depth === s.depth && t.code === s.code, `${c.compile_id} step ${i}`);
      assert.deepEqual(t.inline_stack, s.inline_stack);
      const between = c.steps.slice(j + 1, i);
      assert.ok(between.every((x) => x.depth > s.depth), `${c.compile_id} step ${i}: a shallower step between`);
      if (between.length) inlined++;
    }
    if (c.steps.some((s) => s.depth > 0)) assert.ok(inlined > 0, "some frame goes on across an inlined call");
  }
});

test("next node from step 0 of [0/0_1] is the call of torch.sin", () => {
  const c = compileById(rec, "0/0_1");
  assert.equal(nextNode(c, 0), sinStep(c));
  assert.equal(c.steps[sinStep(c)].opname, "CALL");
});

test("next line moves to another line of the same frame", () => {
  const c = compileById(rec, "0/0_1");
  const j = nextLine(c, 0);
  assert.notEqual(c.steps[j].lineno, c.steps[0].lineno);
  assert.ok(c.steps.slice(0, j).every((s) => s.lineno === c.steps[0].lineno));
});

test("next line steps over an inlined call, and out of it back to the caller", () => {
  // line 1 calls a function (depth 1, lines 5-6), finishes line 1, then runs line 2
  const c = synthetic({ shape: [[1, 0], [1, 0], [5, 1], [6, 1], [1, 0], [2, 0], [2, 0]] });
  assert.equal(nextLine(c, 0), 5);
  assert.equal(nextLine(c, 2), 3);      // inside the callee: its own next line
  assert.equal(nextLine(c, 3), 4);      // leaving the callee: back in the caller
  assert.equal(nextLine(c, 5), null);   // no line after the last one
  assert.equal(nextLine(c, 6), null);
});

test("the graph break is where the recording says, in both attempts; none elsewhere", () => {
  for (const id of ["0/0", "0/0_1"]) {
    const c = compileById(rec, id);
    assert.equal(breakStep(c), c.graph_break.step);
    assert.match(c.steps[breakStep(c)].opname, /CALL/);
  }
  assert.equal(breakStep(compileById(rec, "2/0")), null);
});

test("a guard leads to the step that installed it; ambient ones lead nowhere", () => {
  const c = compileById(rec, "0/0_1");
  c.guard_details.forEach((g, k) => {
    if (g.ambient || g.step == null) assert.equal(guardStep(c, k), null);
    else {
      assert.equal(guardStep(c, k), g.step);
      assert.ok(c.steps[g.step].guards_added.includes(k), `guard ${k} is not among its step's`);
    }
  });
});

test("a node leads to the step that made it; the output node to the last step", () => {
  for (const c of rec.compiles) {
    c.nodes.forEach((n, k) => {
      const j = nodeStep(c, k);
      if (n.step != null && n.step <= lastStep(c)) {
        assert.equal(j, n.step);
        const names = c.steps[j].nodes_added;
        assert.ok(names.includes(n.name) || names.includes(n.created_name), `${n.name} at ${j}: ${names}`);
      } else assert.equal(j, lastStep(c));
    });
  }
});

test("a source leads to the step that first had a reading of it on the stack", () => {
  const c = compileById(rec, "0/0_1");
  const j = whereRead(c, "L['x']");
  assert.equal(c.steps[j].opname, "LOAD_FAST");
  assert.equal(c.steps[j].argrepr, "x");
  for (let i = 0; i < j; i++) {
    assert.ok(c.steps[i].stack.every((id) => c.vars[id].source !== "L['x']"));
  }
  assert.equal(whereRead(c, "L['no such thing']"), null);
});

test("a recompile reason leads to the guard on the tensor that failed, in the earlier compile", () => {
  const r = recording("recompiled");
  const k = r.compiles.findIndex((c) => c.recompile_reasons.length);
  assert.ok(k > 0, "the second call recompiles");
  const target = recompileTarget(r, k, r.compiles[k].recompile_reasons[0]);
  assert.equal(r.compiles[target.compile].compile_id, "0/0");
  const guard = r.compiles[target.compile].guard_details[target.guard];
  assert.equal(guard.kind, "TENSOR_MATCH");
  assert.equal(guard.source, "L['x']");
  assert.equal(target.step, guard.step);
});

test("a recompile reason leads to the failed guard the recording names, whatever its words", () => {
  const r = recording("recompiled");
  const k = r.compiles.findIndex((c) => c.recompile_reasons.length);
  const fg = r.compiles[k].failed_guards[0];
  assert.ok(fg && fg.detail != null, "the recording names the failed guard");
  // a reason that reads like no guard at all: its words are never read
  const target = recompileTarget(r, k, "words that match nothing");
  assert.equal(target.guard, fg.detail);
  assert.equal(r.compiles[target.compile].compile_id, fg.compile_id);
});
