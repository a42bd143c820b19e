// Below the panes, per compile and made on demand when unfolded: the original bytecode
// beside the modified bytecode Dynamo installed (with its resume functions), and the
// guard tree exactly as TORCH_LOGS=guards prints it.

import { codeListing } from "../bytecode.js";
import { code, commaList, fill, h, pane } from "../dom.js";

/** The modified bytecode's listing, Dynamo's own bookkeeping and graph calls marked. */
function listing(text) {
  return h("pre", { class: "dl-code" }, text.split("\n").slice(1).map((line) => {
    let cls = "dl-row";
    if (line.includes("record_pregraph_bytecode")) cls += " dl-runtime";   // Dynamo's own bookkeeping
    else if (line.includes("__compiled_fn_") || line.includes("__resume_at_")) cls += " dl-callgraph";
    return h("span", { class: cls }, line);
  }));
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
  out.push(listing(c.modified_bytecode));
  for (const r of c.resume_functions) {
    out.push(h("details", null, h("summary", null, "resume function ", code(r.code_name), " (global ", code(r.global_name), ")"),
      listing(r.bytecode)));
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
  return c.guard_tree ?
    ["Guard tree", h("pre", { class: "dl-code" },
      c.guard_tree.replace(/^\n+|\n+$/g, "").split("\n").map((line) => h("span", { class: "dl-row" }, line)))] :
    ["Guard tree", h("div", { class: "dl-faint" }, `None: this compile produced no cache entry (outcome ${c.outcome}).`)];
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
