// What every test here needs: the viewer's modules and the recordings pytest wrote.
//
// The modules are the sources under widgets/viewer/js/ (ES modules: their package.json
// says so), imported directly; `viewer` holds everything they export, as the joined
// widgets/viewer/viewer.js does (tests/test_viewer_module.py checks that it is fresh).
import { readFileSync } from "node:fs";
import { join } from "node:path";

const SOURCES = new URL("../../widgets/viewer/js/", import.meta.url);
const MODULES = ["decode.js", "recording.js", "bytecode.js", "predict.js", "provenance.js", "controls.js",
  "panes/caption.js", "panes/source.js", "panes/bytecode.js", "panes/stack.js", "panes/graph.js",
  "panes/guards.js"];
export const viewer = Object.assign({}, ...await Promise.all(MODULES.map((m) => import(new URL(m, SOURCES)))));

/** One source module, e.g. "page-host.js". */
export function source(name) {
  return import(new URL(name, SOURCES));
}

const FIXTURES = process.env.DL_FIXTURES;
if (!FIXTURES) throw new Error("DL_FIXTURES is not set: run these through tests/test_viewer_js.py");

/** The recording `name` as the engine wrote it (Recording.to_json()). */
export function recording(name) {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8"));
}

/** The bytes the widget sends for it: `data` and `graphs` of viewer_state(). */
export function bytes(name, what = "data") {
  return new Uint8Array(readFileSync(join(FIXTURES, `${name}.${what}.gz`)));
}

export function compileById(rec, id) {
  const c = rec.compiles.find((x) => x.compile_id === id);
  if (!c) throw new Error(`no compile ${id}`);
  return c;
}

/** The step whose CALL made the torch.sin node (read from the recording's own nodes). */
export function sinStep(c) {
  return c.nodes.find((n) => n.target === "torch.sin" || n.target === "sin").step;
}

/** A compile made by hand: `steps` [lineno, depth] pairs, NOP instructions. */
export function synthetic({ shape = [[1, 0]], guards = [], nodes = [], instructions = null } = {}) {
  const steps = shape.map(([lineno, depth], k) => ({
    index: k, offset: 2 * k, opname: "NOP", argrepr: "", lineno, depth, code: depth,
    code_name: depth ? "callee" : "f", stack: [], locals: {}, graph_size: 0,
    nodes_added: [], guards_added: guards.filter((g) => g.step === k).map((g) => guards.indexOf(g)),
    inline_stack: depth ? [["f", 1]] : [], nodes_renamed: [],
  }));
  const instrs = instructions ?? shape.map((_, k) => ({ offset: 2 * k, opname: "NOP", argrepr: "", lineno: 1, is_jump_target: false }));
  return {
    compile_id: "0/0", code_name: "f", filename: "f.py", firstlineno: 1, source_lines: ["pass"],
    codes: [{ name: "f", filename: "f.py", firstlineno: 1, source_lines: ["pass"], instructions: instrs },
      { name: "callee", filename: "f.py", firstlineno: 5, source_lines: ["def callee():", "    pass"], instructions: instrs }],
    vars: [], steps, nodes, guard_details: guards, graph_break: null, recompile_reasons: [],
    resume_functions: [], outcome: "compiled", truncated: false, generation: 0,
  };
}
