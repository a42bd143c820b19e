// What each pane shows at a step, as data: the module renders exactly these rows.
import test from "node:test";
import assert from "node:assert/strict";
import { viewer, recording, compileById, sinStep, synthetic } from "./load.mjs";

const { stepSummary, sourceView, bytecodeView, stackView, guardsView, graphView, nodesAt, lastStep,
  BYTECODE_BEFORE, BYTECODE_AFTER, RECENT_GUARDS, SOURCE_WINDOW } = viewer;

const rec = recording("viewer");
const broken = compileById(rec, "0/0_1");

test("the caption says the step, the line, the instruction and what it added", () => {
  const i = sinStep(broken);
  const d = stepSummary(broken, i);
  assert.equal(d.label, `step ${i} / ${broken.steps.length - 1}`);
  assert.equal(d.instruction, `CALL ${broken.steps[i].argrepr}`);
  assert.deepEqual(d.nodes, broken.steps[i].nodes_added);
  assert.ok(d.guardKinds.includes("TENSOR_MATCH"));
  assert.equal(stepSummary(broken, broken.graph_break.step).breaks, true);
  assert.equal(stepSummary(broken, 0).breaks, false);
});

test("the source pane marks the line being traced, then the line of the break", () => {
  const i = sinStep(broken);
  const current = sourceView(broken, i).rows.filter((r) => r.current);
  assert.equal(current.length, 1);
  assert.match(current[0].text, /y = torch\.sin\(x\)/);
  assert.equal(current[0].lineno, broken.steps[i].lineno);
  const gb = broken.graph_break;
  assert.deepEqual(sourceView(broken, gb.step - 1).rows.filter((r) => r.broke), []);
  const broke = sourceView(broken, gb.step).rows.filter((r) => r.broke);
  assert.equal(broke.length, 1);
  assert.equal(broke[0].text.trim(), gb.line);
});

test("the bytecode pane marks the instruction at the step's offset, at every step", () => {
  for (const c of rec.compiles) {
    c.steps.forEach((s, i) => {
      const current = bytecodeView(c, i).rows.filter((r) => r.current);
      assert.equal(current.length, 1, `${c.compile_id} step ${i}`);
      assert.match(current[0].walked, new RegExp(`\\b${s.offset}\\s+${s.opname}\\b`));
    });
  }
});

test("a long code shows a window around the current instruction", () => {
  const n = 2 * (BYTECODE_BEFORE + BYTECODE_AFTER) + 20;
  const instructions = Array.from({ length: n }, (_, k) => ({ offset: 2 * k, opname: "NOP", argrepr: "", lineno: 1, is_jump_target: false }));
  const c = synthetic({ shape: Array.from({ length: n }, () => [1, 0]), instructions });
  const at = BYTECODE_BEFORE + 10;
  const view = bytecodeView(c, at);
  assert.equal(view.rows.length, BYTECODE_BEFORE + BYTECODE_AFTER + 1);
  assert.match(view.rows.find((r) => r.current).walked, new RegExp(`\\b${2 * at} NOP`));
  assert.equal(view.above, 10);
  assert.equal(view.below, n - at - BYTECODE_AFTER - 1);
});

test("a long source shows a window of lines around the current one", () => {
  const c = synthetic({ shape: [[80, 0]] });
  c.codes[0].source_lines = Array.from({ length: SOURCE_WINDOW + 100 }, (_, k) => `line ${k + 1}`);
  const view = sourceView(c, 0);
  assert.equal(view.rows.length, SOURCE_WINDOW);
  assert.ok(view.rows.some((r) => r.current && r.lineno === 80));
  assert.equal(view.above + view.rows.length + view.below, SOURCE_WINDOW + 100);
});

test("the stack shows the TensorVariable the call of torch.sin pushed, top first, as new", () => {
  const i = sinStep(broken);
  const view = stackView(broken, i);
  const top = view.stack[0];
  assert.equal(top.v.kind, "TensorVariable");
  assert.ok(top.isNew);
  assert.match(top.v.detail, /node=/);
  assert.equal(view.pushed, 1);
  assert.ok(view.popped > 0);
  assert.ok(stackView(broken, i - 1).stack.every((e) => e.v.kind !== "TensorVariable"));
});

test("a local is marked when a store changes it, and not at the next step", () => {
  const store = broken.steps.findIndex((s) => s.opname === "STORE_FAST" && s.argrepr === "y");
  const y = stackView(broken, store).locals.find((e) => e.name === "y");
  assert.ok(y.isNew && y.v.kind === "TensorVariable");
  assert.ok(!stackView(broken, store + 1).locals.find((e) => e.name === "y").isNew);
});

test("inside an inlined call the panes show the callee and whom it was inlined from", () => {
  const c = compileById(rec, "1/0");
  const i = c.steps.findIndex((s) => s.code_name === "_helper" && s.opname === "BINARY_OP");
  const d = stepSummary(c, i);
  assert.equal(d.code_name, "_helper");
  assert.equal(d.inlinedFrom, c.steps[i].inline_stack.at(-1)[0]);
  assert.match(sourceView(c, i).rows.find((r) => r.current).text, /return a \* 2/);
  assert.match(bytecodeView(c, i).rows.find((r) => r.current).walked, /BINARY_OP/);
});

test("a guard is listed from the step that installed it on, new at that step only", () => {
  const k = broken.guard_details.findIndex((g) => g.kind === "TENSOR_MATCH");
  const g = broken.guard_details[k];
  const listed = (i) => guardsView(broken, i).shown;
  assert.ok(!listed(g.step - 1).some((e) => e.k === k));
  assert.ok(listed(g.step).some((e) => e.k === k && e.isNew));
  assert.ok(listed(g.step + 1).some((e) => e.k === k && !e.isNew));
  const ambient = guardsView(broken, 0).ambient;
  assert.ok(ambient.length > 0 && ambient.every((j) => broken.guard_details[j].ambient));
});

test("guards installed after tracing appear at the last step only", () => {
  const late = broken.guard_details.map((g, k) => [g, k]).filter(([g]) => !g.ambient && g.step == null);
  assert.ok(late.length > 0, "Dynamo adds guards when it compiles the graph");
  assert.deepEqual(guardsView(broken, lastStep(broken) - 1).after, []);
  assert.deepEqual(guardsView(broken, lastStep(broken)).after, late.map(([, k]) => k));
});

test("thousands of guards: the recent ones are listed, the earlier ones counted", () => {
  const guards = Array.from({ length: 100 }, (_, k) => ({ text: `TENSOR_MATCH: L['x${k}']`, kind: "TENSOR_MATCH", step: k, lineno: 1, line: "x", ambient: false }));
  const c = synthetic({ shape: Array.from({ length: 100 }, () => [1, 0]), guards });
  const view = guardsView(c, 99);
  assert.equal(view.shown.length, RECENT_GUARDS);
  assert.equal(view.earlier, 100 - RECENT_GUARDS);
  assert.deepEqual(view.shown[0], { k: 99, isNew: true });   // newest first
});

test("the graph shows exactly the nodes made so far at every step, the new ones named", () => {
  for (const c of rec.compiles) {
    const last = lastStep(c);
    c.steps.forEach((_, i) => {
      const made = c.nodes.filter((n) => (n.step ?? last) <= i).length;
      assert.equal(nodesAt(c, i), made, `${c.compile_id} step ${i}`);
      assert.equal(graphView(c, i).shown, made);
    });
  }
  const i = sinStep(broken);
  assert.ok(graphView(broken, i).fresh.length > 0);
  assert.deepEqual(graphView(broken, i + 1).fresh, []);
});

test("a node is named as Dynamo held it: after its op until STORE_FAST renames it", () => {
  const c = recording("tour").compiles[0];
  const node = c.nodes.find((n) => n.renamed_at != null);
  assert.ok(node, "x.sin() stored in y is renamed");
  assert.equal(node.name, "y");
  assert.equal(node.created_name, "sin");
  const made = node.step;
  assert.ok(graphView(c, made).names.includes("sin"));
  assert.equal(viewer.nameAt(node, node.renamed_at - 1), "sin");
  assert.equal(viewer.nameAt(node, node.renamed_at), "y");
  assert.deepEqual(c.steps[node.renamed_at].nodes_renamed, [["sin", "y"]]);
  assert.equal(c.steps[node.renamed_at].opname, "STORE_FAST");
});
