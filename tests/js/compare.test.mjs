// Compare mode's pure functions (widgets/viewer/js/compare.js), on real recompiles that
// tests/test_viewer_compare.py records and names in DL_COMPARE_FIXTURES: `NAME.json` (the
// recording) and `NAME.comparisons.json` (what the kernel ships, state.comparisons).
// Run alone by that test; tests/test_viewer_js.py also runs every file here, without those
// recordings: then these tests are skipped (they run in test_viewer_compare.py).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const cmp = await import(new URL("../../widgets/viewer/js/compare.js", import.meta.url));
const FIXTURES = process.env.DL_COMPARE_FIXTURES;
const skip = FIXTURES ? false : "DL_COMPARE_FIXTURES is not set: tests/test_viewer_compare.py runs these";

function load(name) {
  return {
    rec: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")),
    comparisons: JSON.parse(readFileSync(join(FIXTURES, `${name}.comparisons.json`), "utf8")),
  };
}

test("a recompile says what it replaced and which guard failed", { skip }, () => {
  const { rec } = load("shape");
  assert.equal(cmp.relationOf(rec, 0), "");
  assert.equal(cmp.relationOf(rec, 1), "recompile of [0/0]: L['x'] size: expected [4, 3], got [8, 3]");
  const limit = load("limit").rec;
  assert.match(cmp.relationOf(limit, 1), /^recompile of \[0\/0\]: L\['n'\] value: expected 1, got 2$/);
});

test("a resume function says which compile's graph break it resumes after", { skip }, () => {
  const { rec } = load("resume");
  const k = rec.compiles.findIndex((c) => c.code_name.startsWith("torch_dynamo_resume_in_broken"));
  const parent = rec.compiles.find((c) => (c.resume_functions || []).some((r) => r.code_name === rec.compiles[k].code_name));
  assert.ok(k > 0 && parent);
  const gb = parent.graph_break;
  assert.equal(cmp.relationOf(rec, k), `resume of [${parent.compile_id}]` + (gb && gb.lineno != null ? ` after its graph break at line ${gb.lineno}` : ""));
  assert.equal(cmp.defaultPartner(rec, k), null, "a resume function is a frame of its own");
});

test("the default partner is the compile replaced, else the one that replaces it", { skip }, () => {
  const { rec } = load("shape");
  assert.equal(cmp.defaultPartner(rec, 1), 0);
  assert.equal(cmp.defaultPartner(rec, 0), 1);
  assert.deepEqual(cmp.framePartners(rec, 0), [1]);
  assert.equal(cmp.keptPartner(rec, 0, 1, 0), 1, "the two swap sides");
});

test("the failed guard names its step and line, and the line's text", { skip }, () => {
  const { rec } = load("global");
  const [row] = cmp.failedGuards(rec, 0, 1);
  assert.equal(row.source, "G['FACTOR']");
  assert.equal(cmp.failedText(row), "G['FACTOR'] value: expected 2, got 5");
  const fg = rec.compiles[1].failed_guards.find((x) => x.source === "G['FACTOR']");
  assert.equal(row.step, fg.step);
  assert.equal(row.lineno, rec.compiles[0].steps[fg.step].lineno);
  assert.equal(row.line, "return y * FACTOR  # reads FACTOR");
  assert.equal(row.text, rec.compiles[0].guard_details[fg.detail].text);
});

test("the alignment pairs each step with the other's, both ways", { skip }, () => {
  const { rec, comparisons } = load("branch");
  const pair = cmp.pairOf(comparisons, 1, 0);
  assert.deepEqual([pair.left, pair.right], [0, 1]);
  const al = cmp.alignment(pair.d);
  assert.equal(al.a.length, al.b.length);
  const a = rec.compiles[0], b = rec.compiles[1];
  assert.equal(al.a.filter((i) => i >= 0).length, a.steps.length);
  assert.equal(al.b.filter((i) => i >= 0).length, b.steps.length);
  for (let p = 0; p < al.a.length; p++) {
    if (al.a[p] < 0 || al.b[p] < 0) continue;
    const x = a.steps[al.a[p]], y = b.steps[al.b[p]];
    assert.equal(`${x.opname} ${x.lineno}`, `${y.opname} ${y.lineno}`);
    assert.deepEqual(cmp.partnerStep(pair.d, "a", al.a[p]), { step: al.b[p], exact: true });
  }
  // The other branch: a step only one side ran is set beside the other's step before it.
  const only = al.b.findIndex((j, p) => j >= 0 && al.a[p] < 0);
  assert.ok(only > 0);
  assert.equal(cmp.partnerStep(pair.d, "b", al.b[only]).exact, false);
});

test("the first divergence is a step of the shown side, or of the side that ran it", { skip }, () => {
  const { rec, comparisons } = load("shape");
  const pair = cmp.pairOf(comparisons, 0, 1);
  const dv = pair.d.divergence;
  assert.equal(dv.why, "shape");
  assert.deepEqual(cmp.divergenceTarget(rec, comparisons, 1, 0).step, dv.b);
  assert.deepEqual(cmp.divergenceTarget(rec, comparisons, 0, 1).compile, 0);
  const beside = cmp.stepBeside(rec.compiles[1], dv.b, rec.compiles[0], dv.a);
  assert.ok([...beside.stack, ...beside.locals].some((e) => e.differs));
  const branch = load("branch");
  const t = cmp.divergenceTarget(branch.rec, branch.comparisons, 1, 0);
  assert.equal(branch.comparisons[0].divergence.why, "value");   // `s == "Hello"` is False now, then the branch
  assert.ok(t && t.step >= 0);
});

test("guard changes pair the two texts; a refusal lists the guards of each compile", { skip }, () => {
  const { rec, comparisons } = load("shape");
  const g = cmp.guardChanges(rec, cmp.pairOf(comparisons, 0, 1).d);
  const x = g.changed.find((c) => c.source === "L['x']");
  assert.match(x.was.text, /size=\[4, 3\]/);
  assert.match(x.now.text, /size=\[None, 3\]/);   // automatic dynamic shapes: the size is a symbol now
  const limit = load("limit").rec;
  const [r] = cmp.refusals(limit, [0, 1]);
  assert.equal(r.kind, "cache_limit");
  const n = r.rows.filter((row) => row.source === "L['n']").map((row) => [limit.compiles[row.compile].compile_id, row.expected, row.seen]);
  assert.deepEqual(n.sort(), [["0/0", "1", "3"], ["0/1", "2", "3"]]);
});

test("a compare link leads to the step that installed the guard", { skip }, () => {
  const { rec } = load("shape");
  const fg = rec.compiles[1].failed_guards[0];
  const to = cmp.compareTarget(rec, { cmpGo: `0:${fg.step}`, cmpGuard: String(fg.detail), cmpNote: "failed" });
  assert.deepEqual([to.compile, to.step, to.flash.guard], [0, fg.step, fg.detail]);
  assert.match(to.note.join(""), /installed the guard that failed/);
  assert.equal(cmp.compareTarget(rec, { cmpGo: "nonsense" }), null);
});

// A pair as the kernel ships it at a model's size (two compiles of a 12-layer GPT-2 run
// 41,407 steps each): the alignment is a few runs, unpacked once and read in constant time.
test("a pair of 80,000-step compiles, shipped as runs, lines up both ways at once", () => {
  const n = 80_000;
  // the same 50,000 steps, then 10 steps only the left ran, 12 only the right, the rest together
  const d = {
    ka: 0, kb: 1,
    runs: [[0, 0, 50_000], [50_000, null, 10], [null, 50_000, 12], [50_010, 50_012, n - 50_010]],
    divergence: { a: 50_000, b: null, lineno: 7, instruction: "CALL 1", why: "branch taken", was: "", now: "" },
  };
  const start = performance.now();
  const al = cmp.alignment(d);
  assert.equal(al.a.length, n + 12);
  assert.deepEqual(cmp.partnerStep(d, "a", 123), { step: 123, exact: true });
  assert.deepEqual(cmp.partnerStep(d, "b", 60_000), { step: 59_998, exact: true });
  // a step only one side ran: the other's step before it, not exact
  assert.deepEqual(cmp.partnerStep(d, "a", 50_005), { step: 49_999, exact: false });
  assert.deepEqual(cmp.partnerStep(d, "b", 50_003), { step: 50_009, exact: false });
  // the first divergence: the left ran it; the right is shown at its step beside it
  assert.deepEqual(cmp.divergenceSteps(d), { left: 50_000, right: 49_999, exactLeft: true, exactRight: false });
  for (let i = 0; i < n; i += 997) cmp.partnerStep(d, "a", i);
  assert.ok(performance.now() - start < 1000, `took ${performance.now() - start} ms`);
});
