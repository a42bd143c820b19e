// The path over the Source, Bytecode and Stack panes (widgets/viewer/js/dom.js `crumbParts`):
// at any depth it starts from the compiled frame, the user's function, and ends at the
// innermost caller; what is left out between is counted.
import test from "node:test";
import assert from "node:assert/strict";
import { source } from "./load.mjs";

const { crumbParts } = await source("dom.js");

test("a shallow path is shown whole", () => {
  assert.deepEqual(crumbParts([]), []);
  assert.deepEqual(crumbParts([["wrapper", 7], ["forward", 1227]]), ["wrapper line 7", "forward line 1227"]);
  assert.deepEqual(crumbParts([["a", 1], ["b", 2], ["c", 3]]), ["a line 1", "b line 2", "c line 3"]);
});

test("a deep path keeps the user's function and the innermost caller", () => {
  const stack = [["wrapper", 7], ["_call_impl", 1784], ["forward", 1227], ["forward", 930],
    ["__getattr__", 1962], ["__init__", 2062], ["__getattribute__", 659]];
  assert.deepEqual(crumbParts(stack), ["wrapper line 7", "… 5 more", "__getattribute__ line 659"]);
  assert.deepEqual(crumbParts(stack, 2), ["wrapper line 7", "… 4 more", "__init__ line 2062", "__getattribute__ line 659"]);
});
