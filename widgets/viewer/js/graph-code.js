// The graph's Python code under the FX graph pane (panes/graph.js): the code Dynamo
// generated for the graph, each node's name a link to the step that made it.

import { nodeStep } from "./recording.js";
import { h } from "./dom.js";

/** The graph's Python code, each node's name a link to the step that made it. */
export function codeRows(c) {
  const byName = new Map(c.nodes.map((n, k) => [n.name, k]));
  return c.graph_code.split("\n").map((line) => {
    const m = /^(\s*)([A-Za-z_]\w*)( = .*)$/.exec(line);
    if (m && byName.has(m[2])) {
      const k = byName.get(m[2]);
      return h("span", { class: "dl-row" }, m[1],
        h("button", { class: "dl-link dl-node-link", type: "button", "data-node": k, title: `go to step ${nodeStep(c, k)}, which made this node` }, m[2]),
        m[3]);
    }
    return h("span", { class: "dl-row" }, line);
  });
}
