// Search, the guards as read and grouped, and what the linked panes mark, as data: on the
// recordings pytest wrote with the real Dynamo (tests/test_viewer_js.py) and on hand-made
// sources for the grouping rules.
import test from "node:test";
import assert from "node:assert/strict";
import { recording, compileById, source } from "./load.mjs";

const { searchCompile, searchIndex, SEARCH_RESULTS } = await source("search.js");
const { guardReading, sourceGroup, readableSource } = await source("guards.js");
const { guardSections, MAX_GROUPS } = await source("panes/guards.js");
const { peersOf } = await source("provenance.js");
const { guardStep, lastStep, nodeStep } = await source("recording.js");

const rec = recording("viewer");
const broken = compileById(rec, "0/0_1");
const restarted = compileById(rec, "0/0");
const tour = recording("tour").compiles[0];

test("a guard is found by the source it guards and leads to the step that installed it", () => {
  const k = broken.guard_details.findIndex((g) => g.kind === "TENSOR_MATCH" && g.source === "L['x']");
  assert.ok(k >= 0, "the tensor argument is guarded");
  const { results } = searchCompile(broken, "L['x']");
  const hit = results.find((e) => e.type === "guard" && e.k === k);
  assert.ok(hit, "searching the source finds its TENSOR_MATCH");
  assert.equal(hit.step, guardStep(broken, k) ?? lastStep(broken));
  assert.ok(results.filter((e) => e.type === "guard").every((e) => broken.guard_details[e.k].source === "L['x']" ||
    guardReading(broken, e.k).group.key.includes("L['x']")), "every guard found is on that source");
  // case and spacing do not matter
  assert.deepEqual(searchCompile(broken, "  l['X'] ").results.map((e) => e.k), results.map((e) => e.k));
});

test("every graph node is found by its name, itself first, at the step that made it", () => {
  for (const c of [broken, tour]) {
    c.nodes.forEach((n, k) => {
      const first = searchCompile(c, n.name).results[0];
      assert.equal(first.type, "node", `${n.name} in ${c.compile_id}`);
      assert.equal(c.nodes[first.k].name, n.name);
      assert.equal(first.step, nodeStep(c, k));
    });
  }
  // a renamed node is found by the name it had first, too
  const renamed = tour.nodes.find((n) => n.created_name && n.created_name !== n.name);
  assert.ok(renamed, "y = x.sin() renames the node sin to y");
  assert.ok(searchCompile(tour, renamed.created_name).results.some((e) => e.type === "node" && tour.nodes[e.k] === renamed));
});

test("a local is found by its name, at the first step that holds it", () => {
  const { results } = searchCompile(tour, "y");
  const hit = results.find((e) => e.type === "local" && e.k === "y");
  assert.ok(hit, "the local y");
  const first = tour.steps.findIndex((s) => "y" in s.locals);
  assert.equal(hit.step, first);
  assert.ok(!("y" in tour.steps[first - 1].locals));
});

test("nothing typed finds nothing; results are bounded and counted; exact matches come first", () => {
  assert.deepEqual(searchCompile(broken, ""), { results: [], total: 0 });
  assert.equal(searchCompile(broken, "no such thing anywhere").total, 0);
  const all = searchIndex(broken).length;
  const { results, total } = searchCompile(broken, "_");
  assert.ok(results.length <= SEARCH_RESULTS && total <= all);
  const x = searchCompile(tour, "x").results;
  const exact = x.map((e) => e.keys.includes("x"));
  assert.ok(exact[0], "an exact match comes first");
  assert.deepEqual(exact, [...exact].sort((a, b) => b - a), "exact matches before the others");
});

test("a source is grouped with the value it belongs to and read as a program writes it", () => {
  const cases = [
    ["L['x']", "L['x']"],
    ["L['self']._modules['fc1']._parameters['weight']", "L['self'].fc1.weight"],
    ["L['self']._modules['fc1']._forward_hooks", "L['self'].fc1"],
    ["L['self']._modules['layers']._modules['0'].training", "L['self'].layers[0]"],
    ["type(L['self'].config).__mro__[4].__getattribute__", "L['self'].config"],
    ["dict(type(L['self'].config).__dict__)['attribute_map']", "L['self'].config"],
    ["L['func'].__closure__[1].cell_contents", "L['func']"],
    ["L['args'][0]", "L['args'][0]"],
    ["G['__builtins_dict___3']['len']", "builtins.len"],
    ["G['__import_torch_dot_nn_dot_modules_dot_module']._global_forward_hooks", "torch.nn.modules.module"],
    ["G['__import_torch'].compiler.is_compiling.__code__", "torch.compiler"],
  ];
  for (const [src, label] of cases) assert.equal(sourceGroup(src).label, label, src);
  assert.equal(sourceGroup("utils_device.CURRENT_DEVICE == None"), null);
  assert.equal(sourceGroup("G['fields']").scope, "global");
  assert.equal(readableSource("check(L['m']._modules['0']._buffers['running_mean'])"), "check(L['m'][0].running_mean)");
});

test("each guard says one kind, the one Dynamo installed, and names the objects its ids stand for", () => {
  for (const c of rec.compiles) {
    c.guard_details.forEach((g, k) => {
      const r = guardReading(c, k);
      assert.equal(r.kind, g.kind);
      for (const name of [g.tree_kind, g.kind]) if (name) assert.ok(!r.text.startsWith(`${name}: `), `a second kind name: ${r.text}`);
      if (/___check_obj_id\(/.test(g.text)) {
        assert.ok(!/\b\d{9,}\b/.test(r.text), `an id left as a number: ${r.text}`);
        assert.ok(r.parts.some((p) => typeof p !== "string" && /\d{9,}/.test(p.title)), "the id is kept in the tooltip");
      }
    });
  }
  // `print` is looked up in the builtins: its ID_MATCH says it is the builtin print
  const print = broken.guard_details.findIndex((g) => /\['print'\]/.test(g.source || ""));
  assert.ok(print >= 0);
  assert.match(guardReading(broken, print).text, /builtins\.print is builtin print/);
  // the restarted attempt's guard has the same kind as the kept attempt's
  const again = restarted.guard_details.findIndex((g) => /\['print'\]/.test(g.source || ""));
  assert.equal(guardReading(restarted, again).kind, guardReading(broken, print).kind);
});

test("the pane's groups: every guard installed so far once, newest group first, new ones open", () => {
  for (const c of [broken, restarted, tour]) {
    const last = lastStep(c);
    for (const i of [0, Math.floor(last / 2), last]) {
      const s = guardSections(c, i);
      const listed = [...s.after, ...s.traced].flatMap((grp) => grp.guards).concat(s.ambient);
      assert.equal(new Set(listed).size, listed.length, "no guard twice");
      assert.equal(listed.length, s.total, `${c.compile_id} step ${i}`);
      for (const k of listed) {
        const st = c.guard_details[k].step;
        assert.ok(c.guard_details[k].ambient || st == null ? true : st <= i, "nothing from the future");
      }
      const newest = s.traced.map((grp) => Math.max(...grp.guards.map((k) => c.guard_details[k].step)));
      assert.deepEqual(newest, [...newest].sort((a, b) => b - a), "groups newest first");
      for (const grp of s.traced) {
        if (grp.guards.some((k) => c.guard_details[k].step === i)) assert.ok(grp.open, "a group with a new guard is open");
      }
    }
  }
  assert.ok(MAX_GROUPS >= 50);
  assert.equal(guardSections(restarted, lastStep(restarted)).restarted, true, "a restarted attempt says why its guards read differently");
  assert.equal(guardSections(broken, lastStep(broken)).restarted, false);
});

test("the filter keeps the guards whose kind, source or check has every word", () => {
  const c = broken, i = lastStep(c);
  const s = guardSections(c, i, "tensor_match");
  const kept = [...s.after, ...s.traced].flatMap((grp) => grp.guards);
  assert.ok(kept.length > 0 && kept.every((k) => c.guard_details[k].kind === "TENSOR_MATCH" || /TENSOR_MATCH/.test(c.guard_details[k].text)));
  assert.ok(s.filtering && s.matched === kept.length + s.ambient.length);
  assert.ok([...s.after, ...s.traced].every((grp) => grp.open), "a filter opens what it finds");
  assert.equal(guardSections(c, i, "tensor_match zzzz").matched, 0);
});

test("the linked panes: a node, the readings holding it, the guards on its source and the step that made it", () => {
  const c = tour;
  const input = c.nodes.findIndex((n) => n.op === "placeholder");
  assert.ok(input >= 0, "the graph has an input");
  const p = peersOf(c, lastStep(c), { node: input });
  assert.ok(p.vars.length > 0, "a reading holds the input's node");
  assert.ok(p.vars.every((id) => c.vars[id].node != null));
  const src = c.vars[p.vars[0]].source;
  assert.ok(src, "the input was read from a source");
  assert.ok(p.guards.length > 0 && p.guards.every((g) => c.guard_details[g].source === src || guardReading(c, g).group.key === src));
  assert.equal(p.step, nodeStep(c, input));
  // from a guard back to the node, and from a reading to both
  const back = peersOf(c, lastStep(c), { guard: p.guards[0] });
  assert.ok(back.nodes.includes(input) && back.vars.some((id) => p.vars.includes(id)));
  const reading = peersOf(c, lastStep(c), { var: p.vars[0] });
  assert.ok(reading.nodes.includes(input) && reading.guards.includes(p.guards[0]));
  assert.deepEqual(peersOf(c, 0, { guard: 10_000 }).guards, []);
});
