// Shapes at a step (shapes.js): what the shapes pane shows, where its links lead, and how
// a note of torch's is read. The compiles' `shapes` are what Recording.to_json() wrote for
// two of tests/test_shapes.py's programs (mark_dynamic specialized by a broadcast; a Python
// `if` on a size), with their step counts; the step numbers asserted are theirs.
import test from "node:test";
import assert from "node:assert/strict";
import { source } from "./load.mjs";

const { sizeSource, placeOf, replacementAt, becameText, shapesAt, symbolsOfText, symbolsIn, shapeLink, newAt, symbolSaid } = await source("shapes.js");

const steps = (n) => Array.from({ length: n }, () => ({}));
const broadcast = {
  steps: steps(5),
  shapes: {
    symbols: [{ name: "s77", sources: ["L['x'].size()[0]"], hint: "4", range: "[4, 4]", replacement: "4",
      replaced_at: "  # <marked_broadcast>:3 in f (_subclasses/fake_impls.py:1960 in infer_size)", step: 3, replaced_step: 3, node: null }],
    guards: [{ expr: "Eq(s77, 4)", user: "  # <marked_broadcast>:3 in f", lineno: 3, function: "f",
      framework: "_subclasses/fake_impls.py:1960 in infer_size", why: "a broadcast: the two sizes must match",
      size_oblivious: false, step: 3, node: "add" }],
    dims: [{ source: "L['x'].size()[0]", size: 4, value: "s77", how: "specialized", policy: "DYNAMIC", marks: ["mark_dynamic"] },
      { source: "L['y'].size()[0]", size: 4, value: "4", how: "static", policy: "STATIC", marks: [] }],
    assume_static: true,
  },
};
const pythonIf = {
  steps: steps(12),
  shapes: {
    symbols: [{ name: "s77", sources: ["L['x'].size()[0]"], hint: "10", range: "[9, int_oo]", replacement: null,
      replaced_at: null, step: 2, replaced_step: null, node: null }],
    guards: [{ expr: "s77 > 8", user: "  # <python_if>:3 in f", lineno: 3, function: "f",
      framework: "_dynamo/variables/tensor.py:2606 in evaluate_expr", why: "a Python condition on the size",
      size_oblivious: false, step: 7, node: null }],
    dims: [{ source: "L['x'].size()[0]", size: 10, value: "s77", how: "mark_dynamic", policy: "DYNAMIC", marks: ["mark_dynamic"] }],
    assume_static: true,
  },
};

test("a size's source names its input and dimension; torch's note names the line and the asker", () => {
  assert.deepEqual(sizeSource("L['x'].size()[1]"), { input: "L['x']", dim: 1 });
  assert.deepEqual(sizeSource("L['n']"), { input: "L['n']", dim: null });
  assert.deepEqual(placeOf("x + y  # f.py:3 in f (_subclasses/fake_impls.py:1960 in infer_size)"),
    { line: 3, fn: "f", code: "x + y", framework: "infer_size" });
  assert.deepEqual(placeOf("  # <python_if>:3 in f"), { line: 3, fn: "f", code: null, framework: null });
  assert.equal(placeOf(null), null);
});

test("a symbol exists from the step that made it; before, its dimension says when it comes", () => {
  const before = shapesAt(pythonIf, 1).inputs[0].dims[0];
  assert.equal(before.made, false);
  assert.equal(before.madeAt, 2);
  assert.equal(before.state, "dynamic");
  const at = shapesAt(pythonIf, 2).inputs[0].dims[0];
  assert.equal(at.made, true);
  assert.equal(at.isNew, true);
  assert.equal(at.symbol, "s77");
  assert.equal(shapesAt(pythonIf, 3).inputs[0].dims[0].isNew, false);
  assert.equal(shapesAt(pythonIf, 1).symbols, 0);
  assert.equal(shapesAt(pythonIf, 2).symbols, 1);
});

test("a symbolic guard is listed from its step, new at it", () => {
  assert.equal(shapesAt(pythonIf, 6).guards.length, 0);
  const at = shapesAt(pythonIf, 7);
  assert.deepEqual(at.guards.map((g) => [g.expr, g.isNew, g.line]), [["s77 > 8", true, 3]]);
  assert.equal(at.fresh, 1);
  assert.equal(shapesAt(pythonIf, 11).guards[0].isNew, false);
  // one added after tracing is listed at the last step only
  const after = { ...pythonIf, shapes: { ...pythonIf.shapes, guards: [{ ...pythonIf.shapes.guards[0], step: null }] } };
  assert.equal(shapesAt(after, 10).after.length, 0);
  assert.equal(shapesAt(after, 11).after.length, 1);
});

test("a specialization is said where it happens, with the line and the reason", () => {
  assert.equal(replacementAt(broadcast.shapes, broadcast.shapes.symbols[0], 2), null);
  const here = shapesAt(broadcast, 3);
  assert.equal(here.became.length, 1);
  assert.equal(becameText(here.became[0]), "s77 became 4 here: line 3, a broadcast: the two sizes must match");
  const dim = here.inputs.find((x) => x.input === "L['x']").dims[0];
  assert.equal(dim.state, "specialized");
  const later = shapesAt(broadcast, 4);
  assert.equal(later.became.length, 0);
  assert.equal(becameText(later.inputs[0].dims[0].became), "s77 became 4 at step 3: line 3, a broadcast: the two sizes must match");
  assert.equal(later.inputs.find((x) => x.input === "L['y']").dims[0].state, "static");
});

test("every size static, no shapes, and a recording older than shapes are told apart", () => {
  const allStatic = { steps: steps(2), shapes: { symbols: [], guards: [], assume_static: true,
    dims: [{ source: "L['x'].size()[0]", size: 1, value: "1", how: "0/1 specialization", policy: "DYNAMIC", marks: [] }] } };
  assert.equal(shapesAt(allStatic, 0).state, "static");
  assert.equal(shapesAt({ steps: steps(2), shapes: null }, 0).state, "none");
  assert.equal(shapesAt({ steps: steps(2) }, 0).state, "old");
  assert.equal(shapesAt(pythonIf, 0).state, "shapes");
});

test("a guard's text names the symbols of the sizes it checks", () => {
  assert.deepEqual(symbolsOfText(pythonIf, "9 <= L['x'].size()[0]"), ["s77"]);
  assert.deepEqual(symbolsOfText(pythonIf, "check_tensor(L['x'], size=[None])"), []);
  assert.deepEqual(symbolsOfText({ steps: [] }, "L['x'].size()[0]"), []);
  assert.deepEqual(symbolsIn("[s77, 3, s77, u0]"), ["s77", "u0"]);
  assert.deepEqual(symbolsIn(null), []);
});

test("a symbolic guard's button leads to the step that added it", () => {
  const rec = { compiles: [pythonIf] };
  const button = { closest: () => ({ dataset: { shapeGuard: "0" } }) };
  const to = shapeLink(rec, 0, button);
  assert.equal(to.step, 7);
  assert.deepEqual(to.flash, { shapeGuard: 0 });
  assert.equal(shapeLink(rec, 0, { closest: () => null }), null);
});

test("the guards' button says what a step did to the shapes", () => {
  assert.equal(newAt(broadcast, 3), "made s77, replaced s77, added a symbolic guard");
  assert.equal(newAt(broadcast, 2), null);
  assert.equal(newAt(pythonIf, 7), "added a symbolic guard");
  assert.equal(newAt({ steps: steps(2) }, 0), null);
});

test("a symbol's help says what the shape environment held of it", () => {
  assert.equal(symbolSaid(broadcast, "s77"), "From the recording: s77 stands for L['x'].size()[0] (made at step 3); hint 4; " +
    "range [4, 4] when the compile ended; replaced by 4 at step 3. The shapes pane (the button beside the guards' title) shows it at each step.");
  const unbacked = { steps: steps(2), shapes: { symbols: [{ name: "u0", sources: [], hint: null, range: "[0, 4]", replacement: null,
    replaced_at: null, step: 4, replaced_step: null, node: "nonzero" }], guards: [], dims: [] } };
  assert.match(symbolSaid(unbacked, "u0"), /^From the recording: u0 is the size nonzero made \(made at step 4\); no hint \(unbacked\); range \[0, 4\]/);
  assert.equal(symbolSaid(broadcast, "s9"), null);
  assert.equal(symbolSaid({ steps: [] }, "s77"), null);
});
