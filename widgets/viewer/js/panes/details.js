// Below the panes, per compile and made on demand when unfolded: the original bytecode
// beside the modified bytecode Dynamo installed (with its resume functions), and the
// guard tree exactly as TORCH_LOGS=guards prints it. Rows lead back where the recording
// says they came from (provenance.js follows them): the graph call to the step where
// Dynamo stopped tracing and compiled that graph, a resume function's call to the graph
// break that made it, a frame local the installed code loads to the step that first read
// it, a guard-tree leaf to its guard (in the guards pane, and the step that installed it).
// The recording keeps no origin for the other installed rows (`Instr.original` is set for
// the listing Dynamo walks, not for the code it installs), so they lead nowhere.

import { codeListing } from "../bytecode.js";
import { code, commaList, fill, h, pane } from "../dom.js";
import { whereRead } from "../recording.js";

// `| | +- KIND: check  # comment`: a leaf of the guard tree (capture/internals.py reads them alike)
const LEAF = /^[| ]*\+- [A-Z][A-Z0-9_]*: /;

/** Where a row of an installed listing leads: data-* attributes, or null. */
export function installedLink(c, line) {
  if (line.includes("__compiled_fn_")) return { "data-graph-call": "1" };
  const r = c.resume_functions.findIndex((f) => f.global_name && line.includes(f.global_name));
  if (r >= 0) return { "data-resume": r };
  const local = /\b(?:LOAD_FAST|LOAD_DEREF|LOAD_CLOSURE)\s+(\w+)\s*$/.exec(line);
  const source = local && `L['${local[1]}']`;
  return source && whereRead(c, source) != null ? { "data-source": source } : null;
}

/** The modified bytecode's listing, Dynamo's own bookkeeping and graph calls marked. */
function listing(c, text) {
  return h("pre", { class: "dl-code" }, text.split("\n").slice(1).map((line) => {
    let cls = "dl-row";
    if (line.includes("record_pregraph_bytecode")) cls += " dl-runtime";   // Dynamo's own bookkeeping
    else if (line.includes("__compiled_fn_") || line.includes("__resume_at_")) cls += " dl-callgraph";
    const link = cls.includes("dl-runtime") ? null : installedLink(c, line);
    return h("span", link ? { class: `${cls} dl-linked`, tabindex: 0, ...link } : { class: cls }, line);
  }));
}

/** For each line of the guard tree, the guard (index in guard_details) of its leaf, or null:
 * leaves count in order (`Compile.guards`), and a guard's `leaf` names its line. */
export function treeGuards(c) {
  const byLeaf = new Map();
  c.guard_details.forEach((g, k) => { if (g.leaf != null && !byLeaf.has(g.leaf)) byLeaf.set(g.leaf, k); });
  let leaf = 0;
  return (c.guard_tree || "").replace(/^\n+|\n+$/g, "").split("\n").map((line) => {
    if (!LEAF.test(line)) return null;
    const g = byLeaf.get(leaf++);
    return g === undefined ? null : g;
  });
}

function modifiedBody(c) {
  if (!c.modified_bytecode) {
    const why = c.outcome === "restarted" ? "this attempt was abandoned and restarted" : `outcome ${c.outcome}`;
    return ["Modified bytecode", h("div", { class: "dl-faint" }, `None: ${why}.`)];
  }
  const out = [];
  if (c.resume_functions.length) {
    out.push(h("div", { class: "dl-dim" }, "Resume functions: ", commaList(c.resume_functions.map((r) => r.code_name))));
  }
  out.push(listing(c, c.modified_bytecode));
  for (const r of c.resume_functions) {
    out.push(h("details", null, h("summary", null, "resume function ", code(r.code_name), " (global ", code(r.global_name), ")"),
      listing(c, r.bytecode)));
  }
  return ["Modified bytecode", out];
}

function originalBody(c) {
  const first = c.codes[0];
  return first ?
    [["Original bytecode · ", code(first.name)], h("pre", { class: "dl-code" },
      codeListing(first).original.map((line) => h("span", { class: "dl-row" }, line)))] :
    ["Original bytecode", h("div", { class: "dl-faint" }, "(unknown)")];
}

function treeBody(c) {
  if (c.guard_tree) {
    const guards = treeGuards(c);
    return ["Guard tree", h("pre", { class: "dl-code" },
      c.guard_tree.replace(/^\n+|\n+$/g, "").split("\n").map((line, j) => guards[j] == null ?
        h("span", { class: "dl-row" }, line) :
        h("span", { class: "dl-row dl-linked", tabindex: 0, "data-guard": guards[j], "data-guard-row": guards[j] }, line)))];
  }
  return ["Guard tree", h("div", { class: "dl-faint" }, `None: this compile produced no cache entry (outcome ${c.outcome}).`)];
}

/** A folded section of panes, filled for the compile shown whenever it is open. */
function folded(cls, summary, panes, bodies) {
  const el = h("details", { class: cls }, h("summary", null, summary),
    panes.length > 1 ? h("div", { class: "dl-grid" }, panes.map((p) => p.el)) : panes[0].el);
  let c = null, k = -1;
  const paintOpen = () => {
    if (!c || !el.open) return;
    panes.forEach((p, j) => fill(p, `${k}`, () => bodies[j](c)));
  };
  el.addEventListener("toggle", paintOpen);
  return { el, selectCompile(compile) { ({ c, k } = compile); paintOpen(); }, paint() {} };
}

/** The original and the modified bytecode, side by side. */
export function bytecodeDetails() {
  return folded("dl-details dl-compare", "Bytecode: original and modified",
    [pane("dl-original", "Original bytecode"), pane("dl-rewritten", "Modified bytecode")], [originalBody, modifiedBody]);
}

/** The guard tree. */
export function guardTreeDetails() {
  return folded("dl-details", "Guard tree", [pane("dl-guard-tree", "Guard tree")], [treeBody]);
}
