// The words' help, the graph break's registry entry and what is said for a step (help.js).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { recording, compileById, source } from "./load.mjs";

const { helpOf, symbolOrigin, breakHelp, stepSpoken } = await source("help.js");
const data = JSON.parse(readFileSync(new URL("../../capture/help.json", import.meta.url), "utf8"));
// The shape capture/help.py for_recording sends, here for every word of the file.
const help = {
  python: "3.12", opcodes: data.opcodes, guards: data.guards, symbols: data.symbols,
  trackers: Object.fromEntries(Object.entries(data.trackers).map(([k, text]) => [k, { text, family: null }])),
};
const rec = recording("viewer");

test("an opcode says what it does, what Dynamo does with it and which Pythons have it", () => {
  const said = helpOf(help, rec, 0, { "data-help-op": "PRECALL" });
  assert.match(said.title, /^PRECALL/);
  assert.equal(said.lines[0], data.opcodes.PRECALL.does);
  assert.ok(said.lines[1].startsWith("Dynamo: "));
  assert.match(said.lines[2], /Python 3\.11 only; this recording: Python 3\.12/);
});

test("a tracker, a guard kind and a symbol say what they are; a missing word says so", () => {
  assert.equal(helpOf(help, rec, 0, { "data-help-tracker": "NullVariable" }).lines[0], data.trackers.NullVariable);
  assert.equal(helpOf(help, rec, 0, { "data-help-guard": "DICT_KEYS_MATCH" }).lines[0], data.guards.DICT_KEYS_MATCH);
  assert.equal(helpOf(help, rec, 0, { "data-help-symbol": "u0" }).lines[0], data.symbols.u);
  assert.match(helpOf(help, rec, 0, { "data-help-op": "NO_SUCH_OP" }).lines[0], /No help/);
  assert.equal(helpOf(null, rec, 0, { "data-help-op": "CALL" }), null);
  assert.equal(helpOf(help, rec, 0, {}), null);
});

test("a symbol's origin is read from the recording: the input dimension it stands for", () => {
  const c = {
    vars: [{ kind: "TensorVariable", source: "L['x']", detail: "f32[s77, 3] node=l_x_" }],
    steps: [{ stack: [0], locals: {} }], nodes: [],
  };
  assert.match(symbolOrigin(c, "s77"), /dimension 0 of L\['x'\] \(f32\[s77, 3\].*step 0/);
  assert.equal(symbolOrigin(c, "s9"), null);
});

test("a graph break gives its GB id, the registry's entry and every compile that met it, once", () => {
  const k = rec.compiles.findIndex((c) => c.graph_break);
  const b = breakHelp(rec, k);
  const gb = rec.compiles[k].graph_break;
  assert.equal(b.id, gb.gb_id);
  assert.match(b.id, /^GB\d{4}$/);
  assert.equal(b.type, gb.registry.Gb_type);
  assert.equal(new Set(b.hints).size, b.hints.length);
  const others = rec.compiles.filter((c, j) => j !== k && c.graph_break).map((c) => c.compile_id);
  assert.deepEqual(b.also, others);
  assert.equal(breakHelp(rec, rec.compiles.findIndex((c) => !c.graph_break)), null);
});

test("a step is said with its place: step i of n, line l", () => {
  const c = compileById(rec, "0/0_1");
  assert.equal(stepSpoken(c, 1), `step 1 of ${c.steps.length - 1}, line ${c.steps[1].lineno}`);
});
