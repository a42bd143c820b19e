// The recording reaches the page once, as gzip-compressed JSON: what the module decodes is
// exactly what Recording.to_json() wrote, whatever kind of bytes the host hands over.
import test from "node:test";
import assert from "node:assert/strict";
import { viewer, recording, bytes, source } from "./load.mjs";

const NAMES = ["viewer", "tour", "recompiled", "cleaned"];

for (const name of NAMES) {
  test(`the ${name} recording decodes to exactly the engine's JSON`, async () => {
    const decoded = await viewer.decode(bytes(name));
    assert.deepEqual(decoded, recording(name));
    assert.equal(decoded.schema, 2);
  });
}

test("a DataView, an ArrayBuffer and a Uint8Array all decode the same", async () => {
  const u8 = bytes("tour");
  const buffer = u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength);
  // A DataView over a window of a larger buffer, as anywidget hands buffers over.
  const padded = new Uint8Array(u8.byteLength + 16);
  padded.set(u8, 8);
  const view = new DataView(padded.buffer, 8, u8.byteLength);
  const expected = recording("tour");
  for (const data of [u8, buffer, view]) assert.deepEqual(await viewer.decode(data), expected);
});

test("anything else is refused with a clear error", async () => {
  await assert.rejects(viewer.decode("not bytes"), /expected bytes/);
  await assert.rejects(viewer.decode(new Uint8Array([1, 2, 3])));
});

test("every compile has a graph layout naming each of its nodes once, edges between them", async () => {
  for (const name of NAMES) {
    const rec = recording(name);
    const layouts = await viewer.decode(bytes(name, "graphs"));
    assert.equal(layouts.length, rec.compiles.length);
    rec.compiles.forEach((c, k) => {
      const g = layouts[k];
      assert.ok(!g.error, g.error);
      assert.deepEqual(g.nodes.map((n) => n.node).sort((a, b) => a - b), c.nodes.map((_, j) => j));
      for (const n of g.nodes) {
        assert.equal(n.lines[0], c.nodes[n.node].name);
        assert.equal(n.text.length, n.lines.length, "one text position per label line");
      }
      for (const e of g.edges) {
        assert.ok(c.nodes[e.head].inputs.includes(c.nodes[e.tail].name), `${e.tail} -> ${e.head}`);
        assert.match(e.path, /^M[\d., C-]+$/);
      }
    });
  }
});

test("steps as columns become step objects; an index column is read where it is sent", () => {
  const cols = {
    length: 2, strings: ["LOAD_FAST", "x", "f"], offset: [0, 2], opname: [0, 0], argrepr: [1, 1],
    lineno: [1, null], depth: [0, 0], code: [0, 0], code_name: [2, 2], graph_size: [0, 1],
    stack: [[], [0]], locals: [0, 0], locals_table: [{ x: 0 }], inline_stack: [0, 0],
    inline_stacks: [[]], nodes_added: [[1, ["sin"]]], nodes_renamed: [], guards_added: [[0, [3]]],
  };
  const rows = viewer.stepRows(cols);
  assert.deepEqual(rows.map((s) => s.index), [0, 1]);
  assert.deepEqual(rows[1], { index: 1, offset: 2, opname: "LOAD_FAST", argrepr: "x", lineno: null,
    depth: 0, code: 0, code_name: "f", graph_size: 1, nodes_added: ["sin"], nodes_renamed: [],
    guards_added: [], inline_stack: [], stack: [0], locals: { x: 0 } });
  assert.deepEqual(rows[0].guards_added, [3]);
  assert.deepEqual(viewer.stepRows({ ...cols, index: [5, 9] }).map((s) => s.index), [5, 9]);
  const rowsIn = [{ index: 0 }];
  assert.equal(viewer.stepRows(rowsIn), rowsIn, "rows pass through");
});

test("steps read each field as its declared column; a column a recording lacks reads as its default", async () => {
  const { STEP_FIELDS } = await source("stepfields.js");
  const cols = {
    length: 1, strings: ["NOP"], offset: [0], opname: [0], argrepr: [0], lineno: [1], depth: [0],
    code: [0], stack: [[]], locals: [0], locals_table: [{}], inline_stack: [0], inline_stacks: [[]],
    nodes_added: [], nodes_renamed: [], guards_added: [],
  };   // no code_name, no graph_size: columns added after this recording was made
  const [step] = viewer.stepRows(cols);
  assert.deepEqual(Object.keys(step), STEP_FIELDS.map((f) => f.name));
  assert.equal(step.code_name, "");
  assert.equal(step.graph_size, 0);
  const { opname, ...noOpname } = cols;
  assert.throws(() => viewer.stepRows(noOpname), /no opname/);
});
