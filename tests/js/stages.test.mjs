// The after-Dynamo view's reading of a compile's stages (widgets/viewer/js/stages.js): which
// Dynamo nodes and steps a unit came from, what a node became, which lines of a stage's code
// show a unit. On a compile made by hand (always), and on the held-out programs recorded with
// after_dynamo=True, when tests/test_viewer_stages.py wrote them beside the other fixtures.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { recording, source, synthetic } from "./load.mjs";

const S = await source("stages.js");

/** A compile of x -> a = sin(x) (step 3, renamed b at step 4) -> c = a * 2 (step 6), and
 * its stages: a forward graph (one node invented), its output code (one fused kernel). */
function staged() {
  const node = (name, op, step, extra = {}) => ({ name, op, target: op, args: "", step, in_graph: true, ...extra });
  const c = synthetic({ shape: [1, 1, 1, 1, 1, 1, 1, 1].map((l) => [l, 0]) });
  c.codes[0].source_lines = ["def f(x):", "    a = x.sin()", "    return a * 2"];
  c.steps.forEach((s, k) => { s.lineno = k < 5 ? 2 : 3; });
  c.nodes = [node("l_x_", "placeholder", 1), node("a", "call_method", 3, { renamed_at: 4, created_name: "sin" }),
    node("a", "call_function", 5, { in_graph: false }), node("mul", "call_function", 6), node("output", "output", 7)];
  const forward = ["def forward(self, primals_1: \"f32[3]\"):", "    sin = torch.ops.aten.sin.default(primals_1)",
    "    mul = torch.ops.aten.mul.Tensor(sin, 2)", "    empty = torch.ops.aten.empty.memory_format([3])", "    return (mul, primals_1)"];
  const kernel = ["cpp_fused_mul_sin_0 = async_compile.cpp_pybinding(['float*'], r'''", "extern \"C\" void kernel(float* p)", "{", "}", "''')",
    "", "def call(args):", "    cpp_fused_mul_sin_0(buf0)", "    return (buf0, )"];
  const unit = (name, op, dynamo_nodes, lines, extra = {}) => ({ name, op, target: op, dynamo_nodes, invented: !dynamo_nodes.length, via: dynamo_nodes.length ? "from_node" : "", post_grad_nodes: [], lines, ...extra });
  c.stages = [
    { name: "aot_forward", graph: "forward", code: forward.join("\n"), from_cache: false, inputs: ["primals_1"], outputs: ["mul"], saved: ["primals_1", "gone"], recomputed: [],
      units: [unit("primals_1", "placeholder", ["l_x_"], [1]), unit("sin", "call_function", ["a"], [2]), unit("mul", "call_function", ["mul", "a"], [3]),
        unit("empty", "call_function", [], [4])] },
    { name: "inductor_output_code", graph: "forward", code: kernel.join("\n"), from_cache: false, inputs: [], outputs: [], saved: [], recomputed: [],
      units: [unit("cpp_fused_mul_sin_0", "kernel", ["a", "mul"], [1, 8])] },
  ];
  return c;
}

test("a stage is named as the view shows it, grouped by who made it", () => {
  const c = staged();
  assert.deepEqual(c.stages.map(S.stageLabel), ["forward graph", "output code"]);
  assert.deepEqual(S.stageGroups(c), [{ title: "AOTAutograd", stages: [0] }, { title: "Inductor · forward", stages: [1] }]);
  assert.equal(S.firstStage(c), 0);
  assert.equal(S.unitWord(c.stages[1], 1), "1 kernel");
  assert.equal(S.unitWord(c.stages[0], 4), "4 nodes");
  assert.deepEqual(c.stages[1].units.map(S.unitKind), ["kernel"]);
  assert.equal(S.hasStages({ compiles: [synthetic(), c] }), true);
  assert.equal(S.hasStages({ compiles: [synthetic()] }), false);
});

test("a unit leads to its Dynamo nodes, the one in the final graph, earliest step first", () => {
  const c = staged();
  const [, sin, mul, empty] = c.stages[0].units;
  // two nodes were named `a`: the one still in the graph (index 1) is meant
  assert.deepEqual(S.unitOrigins(c, sin), [{ name: "a", k: 1, step: 3 }]);
  assert.deepEqual(S.unitOrigins(c, mul).map((o) => o.k), [1, 3]);
  assert.deepEqual(S.unitSteps(c, mul), [3, 6]);
  assert.deepEqual(S.unitSteps(c, empty), []);
  assert.deepEqual(S.unitOrigins(c, { dynamo_nodes: ["nowhere"] }), [{ name: "nowhere", k: null, step: null }]);
  assert.deepEqual(S.madeWhere(c, 3), { lineno: 2, line: "a = x.sin()", code_name: "f" });
  assert.deepEqual(S.linkCounts(c.stages[0]), { linked: 3, invented: 1 });
});

test("a Dynamo node lights up every unit it became, and a step marks what its nodes became", () => {
  const c = staged();
  assert.deepEqual(S.became(c, 1), [[0, 1], [0, 2], [1, 0]]);
  assert.deepEqual(S.became(c, 4), []);
  const { made, units } = S.stepMarks(c, 3);
  assert.deepEqual(made, [{ k: 1, name: "a" }]);
  assert.deepEqual([...units.keys()], [0, 1]);
  assert.deepEqual([...units.get(0)], [1, 2]);
  assert.deepEqual(S.stepMarks(c, 2), { made: [], units: new Map() });
  assert.deepEqual([...S.unitsOfNodes(c, [0]).get(0)], [0]);
});

test("a kernel shows its whole definition block and its call; a node, its own line", () => {
  const c = staged();
  const code = c.stages[1];
  assert.deepEqual(S.unitLines(code, code.units[0]), [1, 2, 3, 4, 5, 8]);
  assert.deepEqual(S.unitLines(c.stages[0], c.stages[0].units[1]), [2]);
  assert.deepEqual([...S.lineUnits(code).keys()], [1, 2, 3, 4, 5, 8]);
  assert.deepEqual(S.lineUnits(c.stages[0]).get(3), [2]);
  assert.equal(S.stageLines(code).length, 9);
});

test("the partitioner's choice names units of the stage, or none", () => {
  const p = S.partition(staged().stages[0]);
  assert.deepEqual(p.saved, [{ name: "primals_1", unit: 0 }, { name: "gone", unit: null }]);
  assert.deepEqual(p.outputs, [{ name: "mul", unit: 2 }]);
  assert.deepEqual(p.recomputed, []);
});

test("a stage from a cache says which cache and what turns it off", () => {
  assert.match(S.cacheOf({ name: "aot_forward" }).off, /enable_autograd_cache = False/);
  assert.match(S.cacheOf({ name: "inductor_post_grad" }).cache, /Inductor/);
  assert.deepEqual(S.stagesOf({}), []);
});

// -- the held-out programs, recorded for real ------------------------------------------

const FIXTURES = process.env.DL_FIXTURES;
const held = (name) => existsSync(join(FIXTURES, `stages_${name}.json`));
const real = (name) => recording(`stages_${name}`).compiles[0];

/** Every unit of every stage that is not invented leads to a Dynamo node and a step. */
function assertLinked(c) {
  for (const s of c.stages) {
    assert.ok(s.units.length, `${s.name} has units`);
    for (const u of s.units) {
      if (u.invented) continue;
      const origins = S.unitOrigins(c, u);
      assert.ok(origins.length && origins.every((o) => o.k != null), `${s.name} ${u.name}`);
      assert.ok(S.unitSteps(c, u).length, `${s.name} ${u.name} has a step`);
    }
  }
}

test("the MLP under inductor: every node and kernel leads to a step; h became a unit of every stage", { skip: !held("mlp") }, () => {
  const c = real("mlp");
  assertLinked(c);
  const h = S.nodeIndex(c).get("h");
  assert.deepEqual([...new Set(S.became(c, h).map(([j]) => j))], c.stages.map((_, j) => j));
  const code = c.stages.find((s) => s.name === "inductor_output_code" && s.graph === "forward");
  const relu = code.units.find((u) => u.name === "cpp_fused_relu_0");
  const lines = S.unitLines(code, relu);
  assert.ok(lines.length > relu.lines.length, "the kernel's C++ is shown with it");
  assert.match(S.stageLines(code)[lines.at(-1) - 1], /cpp_fused_relu_0\(/);
  const { units } = S.stepMarks(c, c.nodes[h].step);
  assert.equal(units.size, c.stages.length);
});

test("gelu under aot_eager_decomp_partition: one Dynamo node, several forward units", { skip: !held("gelu_block") }, () => {
  const c = real("gelu_block");
  assertLinked(c);
  const gelu = c.nodes.findIndex((n) => /gelu/.test(n.target));
  const forward = S.became(c, gelu).filter(([j]) => c.stages[j].name === "aot_forward");
  assert.ok(forward.length >= 3);
});

test("a fused pointwise chain: one kernel, made by five steps or more", { skip: !held("pointwise_chain") }, () => {
  const c = real("pointwise_chain");
  assertLinked(c);
  const kernels = c.stages.at(-1).units.filter((u) => u.op === "kernel");
  assert.equal(kernels.length, 1);
  assert.ok(S.unitSteps(c, kernels[0]).length >= 5);
});
