// The FX graph by module: which group each node falls in, and the rows a group shows by a step.
import test from "node:test";
import assert from "node:assert/strict";
import { source } from "./load.mjs";

const { moduleTree, groupRows, groupChain, moduleLabel, hasModules } = await source("graph-modules.js");

const M = (p) => `L['self'].${p}`;
// Nodes as the engine writes them (only what grouping reads), made at steps 0..7 in this order
// except the last, made after tracing (step null: revealed at the last step).
function compile() {
  const made = [
    ["x", null, 0], ["w", "block", 1], ["a", "block.attn", 2], ["b", "block.attn", 3],
    ["m", "block", 4], ["p", "blocks", 5], ["q", "block.mlp", 6], ["out", null, null],
  ];
  return {
    steps: new Array(8).fill({}),
    nodes: made.map(([name, module, step]) => ({ name, op: "call_function", target: "t", module: module && M(module), step })),
  };
}

test("a group sits in the group whose module path its own extends at a dot, not at any prefix", () => {
  const tree = moduleTree(compile());
  assert.equal(tree.groups.get(M("block.attn")).parent, M("block"));
  assert.equal(tree.groups.get(M("block.mlp")).parent, M("block"));
  assert.equal(tree.groups.get(M("blocks")).parent, null, "`blocks` does not extend `block`");
  assert.deepEqual(tree.top.children.sort(), [M("block"), M("blocks")]);
  assert.deepEqual(tree.top.own, [0, 7], "nodes made in no module are at the top");
  assert.deepEqual(tree.groups.get(M("block")).all, [1, 2, 3, 4, 6], "a group counts its groups' nodes");
  assert.deepEqual(groupChain(tree, M("block.attn")), [M("block.attn"), M("block")]);
  assert.deepEqual(groupChain(tree, null), []);
  assert.equal(moduleLabel(M("block.attn")), "block.attn");
  assert.equal(moduleLabel("G['model'].fc"), "G['model'].fc", "only the compiled module's own source is left out");
});

test("a group's rows come in the order the nodes were made, each group at its first node", () => {
  const tree = moduleTree(compile());
  const block = tree.groups.get(M("block"));
  assert.deepEqual(groupRows(tree, block, 8), [{ at: 1, node: 1 }, { at: 2, group: M("block.attn") },
    { at: 4, node: 4 }, { at: 6, group: M("block.mlp") }]);
  // by the time three nodes are made, the mlp's group does not exist yet
  assert.deepEqual(groupRows(tree, block, 3), [{ at: 1, node: 1 }, { at: 2, group: M("block.attn") }]);
  assert.deepEqual(groupRows(tree, tree.top, 1), [{ at: 0, node: 0 }]);
});

test("a recording without modules (made before they were kept) has nothing to group", () => {
  const c = compile();
  for (const n of c.nodes) n.module = null;
  assert.equal(hasModules(c), false);
  assert.equal(hasModules(compile()), true);
});
