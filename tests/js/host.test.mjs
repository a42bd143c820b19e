// The hosts' side: one decoding of the recording for every view of a widget (index.js),
// and the standalone page's stand-in for anywidget's model (page-host.js).
import test from "node:test";
import assert from "node:assert/strict";
import { bytes, recording, source } from "./load.mjs";

const { recordingOf } = await source("index.js");
const { PageModel, bytesOf64 } = await source("page-host.js");

/** A model as a host hands it over: only get() is read when decoding. */
const modelOf = (state) => ({ get: (name) => state[name] });

test("every view of a widget shares one decoded recording", async () => {
  const u8 = bytes("tour");
  const state = { data: new DataView(u8.buffer, u8.byteOffset, u8.byteLength), graphs: bytes("tour", "graphs") };
  // anywidget hands initialize and each view a proxy of its own around the same values
  const first = recordingOf(modelOf(state)), second = recordingOf(modelOf(state));
  assert.equal(first, second);
  const { rec, graphs } = await first;
  assert.deepEqual(rec, recording("tour"));
  assert.equal(graphs.length, rec.compiles.length);
  const other = recordingOf(modelOf({ ...state, data: bytes("tour") }));
  assert.notEqual(other, first, "another widget's bytes are decoded for it");
});

test("a recording that cannot be read is refused to every view", async () => {
  await assert.rejects(recordingOf(modelOf({ data: new Uint8Array([1, 2, 3]) })));
  await assert.rejects(recordingOf(modelOf({ data: "not bytes" })), /expected bytes/);
});

test("the page's model fires change:NAME once per real change, as Backbone does", () => {
  const m = new PageModel({ step: 0, predictions: [] });
  const seen = [];
  const onStep = (model, value) => seen.push(["step", value]);
  m.on("change:step", onStep);
  m.on("change", () => seen.push(["change"]));
  m.set("step", 3);
  m.set("step", 3);                      // the same value: nothing fires
  m.set("predictions", []);              // equal by value: nothing fires
  m.set({ step: 4, predictions: [1] });
  assert.deepEqual(seen, [["step", 3], ["change"], ["step", 4], ["change"]]);
  m.off("change:step", onStep);
  m.set("step", 5);
  assert.deepEqual(seen.at(-1), ["change"]);
  assert.equal(m.get("step"), 5);
});

test("the page's binary values are read back from base64 exactly", () => {
  const u8 = bytes("tour");
  assert.deepEqual(bytesOf64(Buffer.from(u8).toString("base64").replace(/(.{76})/g, "$1\n")), new Uint8Array(u8));
});
