// The break card's data (break-card.js), on the viewer's recording (a function with a graph
// break whose first attempt restarts: tests/test_viewer_js.py records it, DL_FIXTURES).
import test from "node:test";
import assert from "node:assert/strict";
import { recording, source } from "./load.mjs";

const { breakCard, afterBreak, restartedByBreak, safeLink } = await source("break-card.js");
const rec = recording("viewer");

test("the card takes Dynamo's message apart: reason, explanation, one hint a line, the line", () => {
  const k = rec.compiles.findIndex((c) => c.graph_break);
  const gb = rec.compiles[k].graph_break;
  const card = breakCard(rec, k);
  assert.equal(card.reason, gb.reason);
  assert.equal(card.id, gb.gb_id);
  assert.equal(card.lineno, gb.lineno);
  assert.equal(card.line, gb.line.trim());
  assert.equal(card.explanation, gb.explanation);
  // each hint once, none holding another: the message's "Hint:" lines apart
  assert.ok(card.hints.length >= 1);
  assert.ok(card.hints.every((x) => !/\bHint:/.test(x) && !/\n/.test(x)), card.hints);
  assert.ok(gb.hints.every((x) => card.hints.includes(x.trim())));
  assert.equal(card.link, gb.link);
  assert.equal(breakCard(rec, rec.compiles.findIndex((c) => !c.graph_break)), null);
});

test("what Dynamo does next: a restarted attempt traces again, a break resumes", () => {
  const restarted = rec.compiles.findIndex((c) => c.graph_break && c.outcome === "restarted");
  const resumed = rec.compiles.findIndex((c) => c.graph_break && c.resume_functions.length);
  assert.ok(restarted >= 0 && resumed >= 0);
  assert.deepEqual(afterBreak(rec.compiles[restarted]), { kind: "restart" });
  assert.deepEqual(afterBreak(rec.compiles[resumed]),
    { kind: "resume", functions: rec.compiles[resumed].resume_functions.map((r) => r.code_name) });
  // the restart was the break's: its reason (Dynamo's whole message) is said once, by the card
  assert.equal(restartedByBreak(rec.compiles[restarted]), true);
  assert.equal(restartedByBreak(rec.compiles[resumed]), false);
});

test("a link opens only over https", () => {
  assert.equal(safeLink("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"),
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html");
  assert.equal(safeLink("javascript:alert(1)"), null);
  assert.equal(safeLink("http://example.com/x"), null);
  assert.equal(safeLink(null), null);
});
