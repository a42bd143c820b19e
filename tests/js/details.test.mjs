// The rows below the panes that lead back: the guard tree's leaves to their guards, and the
// installed code's graph call, resume calls and frame locals (panes/details.js).
import test from "node:test";
import assert from "node:assert/strict";
import { recording, compileById, source } from "./load.mjs";

const { treeGuards, installedLink } = await source("panes/details.js");
const rec = recording("viewer");
const LEAF = /^[| ]*\+- ([A-Z][A-Z0-9_]*): (.*)$/;

test("each guard-tree leaf names the guard whose leaf it is, and every such guard has its line", () => {
  let linked = 0;
  for (const c of rec.compiles) {
    const guards = treeGuards(c);
    const lines = (c.guard_tree || "").replace(/^\n+|\n+$/g, "").split("\n");
    assert.equal(guards.length, c.guard_tree ? lines.length : 1);
    const seen = new Set();
    guards.forEach((g, j) => {
      if (g == null) return;
      const m = LEAF.exec(lines[j]);
      assert.ok(m, `line ${j} is a leaf: ${lines[j]}`);
      const leaf = c.guard_details[g].leaf;
      assert.ok(`${m[1]}: ${m[2]}`.startsWith(c.guards[leaf]), `${c.compile_id} line ${j}: ${lines[j]} is not ${c.guards[leaf]}`);
      seen.add(leaf);
      linked++;
    });
    const leaves = new Set(c.guard_details.map((g) => g.leaf).filter((x) => x != null));
    assert.deepEqual([...seen].sort((a, b) => a - b), [...leaves].sort((a, b) => a - b), c.compile_id);
  }
  assert.ok(linked > 0, "some leaf leads to a guard");
});

test("the installed code's graph call, resume call and frame locals lead somewhere; Dynamo's own rows do not", () => {
  const c = compileById(rec, "0/0_1");   // broke at print: a graph, then a resume function
  const rows = c.modified_bytecode.split("\n").slice(1);
  const links = rows.map((line) => installedLink(c, line));
  const graph = rows.findIndex((line) => line.includes("__compiled_fn_"));
  assert.deepEqual(links[graph], { "data-graph-call": "1" });
  assert.equal(c.resume_functions.length, 1);
  const resume = rows.findIndex((line) => line.includes(c.resume_functions[0].global_name));
  assert.ok(resume > graph);
  assert.deepEqual(links[resume], { "data-resume": 0 });
  const x = rows.findIndex((line) => /LOAD_FAST\s+x$/.test(line));
  assert.deepEqual(links[x], { "data-source": "L['x']" });
  const tmp = rows.findIndex((line) => /LOAD_FAST\s+tmp_\d+$/.test(line));
  assert.ok(tmp >= 0 && links[tmp] === null, "a temporary of Dynamo's was never read by a step");
});
