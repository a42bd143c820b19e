// The timeline's marks, stepping over and out of inlined calls, going to a typed step, and
// the keys: pure functions of a compile (widgets/viewer/js/navigation.js, controls.js).
import test from "node:test";
import assert from "node:assert/strict";
import { recording, compileById, source, synthetic } from "./load.mjs";

const nav = await source("navigation.js");
const { KEYS, KEY_HELP, keyAction } = await source("controls.js");
const { MARK, timelineMarks, timelineBins, columnSteps, stepAtColumn, lineRuns, stepOver, stepOut, typedStep, navigate } = nav;

const rec = recording("viewer");

// line 1 calls a function (depth 1, lines 5-6) that calls another (depth 2), returns to
// line 1's CALL, then runs line 2: the callee's steps come before the caller's CALL.
const nested = () => synthetic({ shape: [[1, 0], [1, 0], [5, 1], [6, 1], [9, 2], [6, 1], [1, 0], [2, 0]] });

test("every step that adds a node or a guard carries its mark, and no other step does", () => {
  for (const c of rec.compiles) {
    const marks = timelineMarks(c);
    assert.equal(marks.length, c.steps.length);
    c.steps.forEach((s, j) => {
      assert.equal(!!(marks[j] & MARK.node), s.nodes_added.length > 0, `${c.compile_id} step ${j}`);
      assert.equal(!!(marks[j] & MARK.guard), s.guards_added.length > 0, `${c.compile_id} step ${j}`);
      assert.equal(!!(marks[j] & MARK.inlined), s.depth > 0);
    });
  }
});

test("the break of the restarted attempt is marked a restart, the kept attempt's a break", () => {
  const restarted = compileById(rec, "0/0"), kept = compileById(rec, "0/0_1");
  assert.equal(restarted.outcome, "restarted");
  assert.ok(timelineMarks(restarted)[restarted.graph_break.step] & MARK.restart);
  assert.ok(timelineMarks(kept)[kept.graph_break.step] & MARK.break);
  const breaks = (c) => [...timelineMarks(c)].filter((m) => m & (MARK.break | MARK.restart)).length;
  assert.equal(breaks(restarted), 1);
  assert.equal(breaks(compileById(rec, "2/0")), 0);
});

test("an inlined call is marked where it begins, and its steps as inlined", () => {
  const c = nested(), marks = timelineMarks(c);
  assert.deepEqual([...marks].map((m) => !!(m & MARK.call)), [false, false, true, false, true, false, false, false]);
  assert.deepEqual([...marks].map((m) => !!(m & MARK.inlined)), [false, false, true, true, true, true, false, false]);
});

test("the columns of a timeline hold every step, in order, at any width", () => {
  for (const [n, w] of [[12, 800], [800, 800], [140013, 793], [1, 50], [3, 2]]) {
    let next = 0;
    const seen = new Set();
    for (let x = 0; x < w; x++) {
      const [lo, hi] = columnSteps(n, w, x);
      assert.ok(lo >= (n >= w ? next : next - 1) && hi >= lo, `n=${n} w=${w} x=${x}`);
      if (n >= w) assert.equal(lo, next, `n=${n} w=${w} x=${x}: no step skipped or repeated`);
      for (let j = lo; j < hi; j++) seen.add(j);
      next = hi;
    }
    assert.equal(next, n, `n=${n} w=${w}: the last column ends at the last step`);
    assert.equal(seen.size, n, `n=${n} w=${w}: every step in a column`);
  }
});

test("the bins of a long compile keep every mark: a node step is never lost between pixels", () => {
  const c = synthetic({ shape: Array.from({ length: 5000 }, () => [1, 0]) });
  c.steps[3777].nodes_added = ["add"];
  const bins = timelineBins(c, 300);
  const marked = [...bins].map((m, x) => (m & MARK.node ? x : -1)).filter((x) => x >= 0);
  assert.equal(marked.length, 1);
  const [lo, hi] = columnSteps(5000, 300, marked[0]);
  assert.ok(lo <= 3777 && 3777 < hi);
});

test("a click near a mark lands on the marked step, a click elsewhere on its column's step", () => {
  const c = synthetic({ shape: Array.from({ length: 5000 }, () => [1, 0]) });
  c.steps[3777].nodes_added = ["add"];
  const w = 300, x = Math.floor((3777 * w) / 5000);
  for (const dx of [-2, -1, 0, 1, 2]) assert.equal(stepAtColumn(c, w, x + dx), 3777);
  assert.equal(stepAtColumn(c, w, 10), columnSteps(5000, w, 10)[0]);
  assert.equal(stepAtColumn(c, w, -40), 0);
  assert.equal(stepAtColumn(c, w, 9999), 4999);
  const kept = compileById(rec, "0/0_1");
  const b = kept.graph_break.step, bx = Math.floor(((b + 0.5) * 800) / kept.steps.length);
  assert.equal(stepAtColumn(kept, 800, bx), b, "the break wins over anything near it");
});

test("the current line's runs are the stretches of steps on it, broken by inlined calls", () => {
  const c = nested();
  assert.deepEqual(lineRuns(c, 0), [[0, 1], [6, 6]]);
  assert.deepEqual(lineRuns(c, 6), [[0, 1], [6, 6]]);
  assert.deepEqual(lineRuns(c, 3), [[3, 3], [5, 5]]);
  assert.deepEqual(lineRuns(c, 7), [[7, 7]]);
  const real = compileById(rec, "0/0_1");
  real.steps.forEach((s, j) => {
    if (s.lineno == null) return;
    const runs = lineRuns(real, j);
    assert.ok(runs.some(([a, b]) => a <= j && j <= b), `step ${j} is in one of its line's runs`);
  });
});

test("step over goes from before an inlined call to its caller's CALL; elsewhere nowhere", () => {
  const c = nested();
  assert.equal(stepOver(c, 1), 6);      // the next step begins the call: to line 1's CALL after it
  assert.equal(stepOver(c, 3), 5);      // inside the callee, over the nested call
  assert.equal(stepOver(c, 0), null);   // the next step is in the same frame
  assert.equal(stepOver(c, 7), null);   // the last step
});

test("run to the end of the call goes to the step its caller resumes at", () => {
  const c = nested();
  assert.equal(stepOut(c, 2), 6);
  assert.equal(stepOut(c, 3), 6);
  assert.equal(stepOut(c, 4), 5);       // depth 2 returns to depth 1
  assert.equal(stepOut(c, 0), null);    // in the frame itself
  assert.equal(stepOut(synthetic({ shape: [[1, 0], [5, 1], [6, 1]] }), 1), null, "the recording ends inside the call");
});

test("step over and out on a real recording land on a CALL of the frame that made the call", () => {
  let checked = 0;
  for (const c of rec.compiles) {
    for (let i = 0; i < c.steps.length; i++) {
      const over = stepOver(c, i);
      if (over == null) continue;
      checked++;
      assert.equal(c.steps[over].depth, c.steps[i].depth, `${c.compile_id} step ${i}`);
      assert.match(c.steps[over].opname, /CALL/);
      assert.equal(stepOut(c, i + 1), over, "out of the call from its first step is over it");
    }
  }
  assert.ok(checked >= 1, "the fixture has an inlined call");
});

test("a typed step is an integer within the compile; past the ends it is brought inside", () => {
  const c = nested();
  assert.deepEqual(typedStep(c, " 3 "), { to: 3, clamped: false });
  assert.deepEqual(typedStep(c, "99"), { to: 7, clamped: true });
  assert.deepEqual(typedStep(c, "-2"), { to: 0, clamped: true });
  for (const bad of ["", "x", "2.5", "1e3"]) assert.equal(typedStep(c, bad), null, bad);
  assert.equal(navigate("goto:5", c, 0).to, 5);
  assert.match(navigate("goto:99", c, 0).note, /0 to 7/);
  assert.equal(navigate("goto:x", c, 0).to, null);
  assert.match(navigate("goto:x", c, 0).none, /0 to 7/);
  assert.equal(navigate("forward", c, 0), undefined, "not a navigation action");
  assert.match(navigate("out", c, 0).none, /not in an inlined call/);
});

test("every key the viewer answers is in the keys list, and the new ones do what it says", () => {
  const listed = KEY_HELP.map(([k]) => k).join(" ").toLowerCase();
  for (const key of Object.keys(KEYS)) {
    const name = { ArrowRight: "→", ArrowLeft: "←", " ": "space", "=": "+", "-": "−" }[key] ?? key.toLowerCase();
    assert.ok(listed.includes(name.toLowerCase()), `key ${JSON.stringify(key)} is not in the keys list`);
  }
  const press = (key, extra = {}) => keyAction({ key, shiftKey: false, ...extra }, false);
  assert.equal(press("o"), "over");
  assert.equal(press("U"), "out");
  assert.equal(press("j"), "goto-focus");
  assert.equal(press("?", { shiftKey: true }), "keys");
});

test("a Jupyter cell's temporary file is called a cell; other files keep their base name", () => {
  const { fileLabel } = nav;
  assert.equal(fileLabel("/tmp/ipykernel_12345/3914670157.py"), "cell");
  assert.equal(fileLabel("C:\\Temp\\ipykernel_7\\12.py"), "cell");
  assert.equal(fileLabel("/home/me/model.py"), "model.py");
  assert.equal(fileLabel("/tmp/ipykernel_x/notes.py"), "notes.py");
});

test("a step with no line says the line its frame reaches next, and the source marks it apart", async () => {
  const { lineBefore } = nav;
  const { stepSummary, sourceView } = await source("panes/caption.js").then(async (m) => ({ ...m, ...(await source("panes/source.js")) }));
  const c = synthetic({ shape: [[null, 0], [1, 0], [null, 1], [6, 1], [1, 0]] });
  assert.equal(lineBefore(c, 0), 1);
  assert.equal(lineBefore(c, 2), 6, "before an inlined function's first line: that line");
  assert.equal(lineBefore(c, 1), null, "a step with a line has none before");
  const d = stepSummary(c, 2);
  assert.equal(d.lineno, null);
  assert.equal(d.before, 6);
  const rows = sourceView(c, 2).rows;
  assert.ok(rows.every((r) => !r.current), "no line is marked current");
  assert.deepEqual(rows.filter((r) => r.before).map((r) => r.lineno), [6]);
  const ending = synthetic({ shape: [[1, 0], [null, 1]] });
  assert.equal(lineBefore(ending, 1), 5, "a frame that never reaches a line: its def line");
});

test("the caption names a function by its code's qualified name where the recording has it", async () => {
  const { stepSummary, functionName } = await source("panes/caption.js");
  const c = synthetic({ shape: [[1, 0], [5, 1], [6, 2], [1, 0]] });
  const base = c.codes[0];
  c.codes = [{ ...base, qualname: "Net.forward" },
    { ...base, name: "__getattribute__", qualname: "PretrainedConfig.__getattribute__" },
    { ...base, name: "times", qualname: "Net.forward.<locals>.times" }];
  c.steps.forEach((s, j) => { s.code = [0, 1, 2, 0][j]; });
  // self's class would say GPT2Config: the code says which class defined the method
  c.vars = [{ kind: "UserDefinedObjectVariable", python_type: "GPT2Config", source: "L['self'].config" }];
  c.steps[1].locals = { self: 0 };
  assert.equal(functionName(c, 1), "PretrainedConfig.__getattribute__");
  assert.equal(functionName(c, 2), "times", "a function made inside another: its own name");
  assert.equal(stepSummary(c, 2).inlinedFrom, "PretrainedConfig.__getattribute__");
  assert.equal(stepSummary(c, 1).inlinedFrom, "Net.forward");
  c.codes[1] = { ...base, name: "__getattribute__", qualname: "" };
  assert.equal(functionName(c, 1), "GPT2Config.callee", "no qualified name: self's class, the code's name");
});

test("the caption names a method by its class and says when a node is renamed", async () => {
  const { stepSummary, functionName } = await source("panes/caption.js");
  const c = synthetic({ shape: [[1, 0], [5, 1], [1, 0]] });
  c.vars = [{ kind: "UnspecializedNNModuleVariable", python_type: "Block", source: "L['self'].b" },
    { kind: "NNModuleVariable", python_type: "Net", source: "L['self']" }];
  c.steps[0].locals = { self: 1 };
  c.steps[1].locals = { self: 0 };
  c.steps[1].code_name = "forward";
  c.steps[0].code_name = c.steps[2].code_name = "forward";
  assert.equal(functionName(c, 1), "Block.forward");
  const d = stepSummary(c, 1);
  assert.equal(d.code_name, "Block.forward");
  assert.equal(d.inlinedFrom, "Net.forward");
  c.steps[2].nodes_renamed = [["sin", "y"]];
  assert.deepEqual(stepSummary(c, 2).renamed, [["sin", "y"]]);
  const tour = recording("tour").compiles[0];
  const at = tour.steps.findIndex((s) => s.nodes_renamed.length);
  assert.ok(at >= 0 && tour.steps[at].opname === "STORE_FAST", "the tour renames sin to y at STORE_FAST y");
  assert.deepEqual(stepSummary(tour, at).renamed, [["sin", "y"]]);
});
