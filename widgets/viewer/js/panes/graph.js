// The FX graph pane: the graph as it grows. The kernel laid out every node the compile
// ever created (widgets/viewer/layout.py); the drawing is made once per compile and nodes
// and edges are revealed as the steps add them, so nothing moves while stepping. Without a
// layout (no `dot`), the nodes made so far are listed as text. A graph dot did not lay out
// in time is drawn in the kernel's own layers, and a quiet note under the drawing says so.
// Nodes link (`data-node`) to the step that made them; so do the names in the graph's
// Python code, below. A button at the title's right shows the nodes by module instead
// (graph-modules.js), where the recording says which module made them.

import { memo, nameAt, nodeOrder, nodesAt, nodeStep } from "../recording.js";
import { commaList, h, pane, svgElement, sync } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";
import { zoomable } from "../zoom.js";
import { culler, renameAt, shortName } from "../cull.js";
import { hasModules, moduleOf, modulesView } from "../graph-modules.js";
import { codeRows } from "../graph-code.js";

/** How much of the graph exists at step i and which nodes this step added. */
export function graphView(c, i) {
  const shown = nodesAt(c, i);
  const before = c.steps.length && i > 0 ? nodesAt(c, i - 1) : 0;
  const fresh = c.steps.length ? nodeOrder(c).order.slice(before, shown) : [];
  return { shown, total: c.nodes.length, fresh, names: fresh.map((k) => nameAt(c.nodes[k], i)) };
}

/** The note under a drawing not made by graphviz's dot: which layout it is and why
 * (layout.py's `engine` and `why`); "" for dot's own. */
export function layoutNote(layout) {
  if (!layout || layout.error || layout.engine !== "layered") return "";
  return `Laid out in layers, not by graphviz's dot${layout.why ? `: ${layout.why}` : ""}.`;
}

/** How many of the compile's nodes the final graph kept (the summary says why it differs). */
function keptOf(c) {
  return memo(c, "keptNodes", () => c.nodes.filter((n) => n.in_graph).length);
}

/** A node's tooltip: what it is, its name before a rename, and the step that made it. */
function nodeTip(c, k) {
  const node = c.nodes[k];
  const renamedAt = node.renamed_at != null && node.created_name && node.created_name !== node.name ?
    ` (named ${node.created_name} until step ${node.renamed_at})` : "";
  return `${node.name} = ${node.op}[${node.target}](${node.args})${renamedAt}` +
    moduleOf(c, k) + (node.in_graph ? "" : " (not in the final graph)") + ` · made at step ${nodeStep(c, k)}: click to go there`;
}

// A larger graph is culled (cull.js): each node's elements are made when it is first near
// the pane's view, and only the nodes and edges near the view are in the page.
const CULL_NODES = 1500;

/** A node's box in graph coordinates, from its outline: [x0, y0, x1, y1]. */
function boxOf(n) {
  const [kind, ...geo] = n.shape;
  if (kind === "ellipse") return [geo[0] - geo[2], geo[1] - geo[3], geo[0] + geo[2], geo[1] + geo[3]];
  const nums = String(geo[0] || "").match(/-?\d+(?:\.\d+)?/g);
  if (!nums || nums.length < 2) {
    const [x, y] = (n.text && n.text[0]) || [0, 0];
    return [x - 20, y - 10, x + 20, y + 10];
  }
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let j = 0; j + 1 < nums.length; j += 2) {
    const x = Number(nums[j]), y = Number(nums[j + 1]);
    if (x < x0) x0 = x; if (x > x1) x1 = x;
    if (y < y0) y0 = y; if (y > y1) y1 = y;
  }
  return [x0, y0, x1, y1];
}

/** The drawing of a compile's graph: every node and edge hidden, made at once for a graph
 * of up to CULL_NODES nodes; a larger one is culled (`cull`). One `<g>` holds it all and
 * carries the zoom and pan as a transform. */
function makeDrawing(c, g) {
  const { order, rank } = nodeOrder(c);
  const layoutOf = new Array(c.nodes.length);
  for (const n of g.nodes) layoutOf[n.node] = n;
  const culled = order.length > CULL_NODES;
  const boxes = new Array(c.nodes.length);   // made when first asked for: box(k)
  const box = (k) => (boxes[k] === undefined ? (boxes[k] = layoutOf[k] ? boxOf(layoutOf[k]) : null) : boxes[k]);
  const nodeEls = new Array(c.nodes.length);
  const outlines = new Array(c.nodes.length);
  const renamed = [], renamedOf = [];   // the renamed nodes' first label lines; per rank
  const edgesAt = order.map(() => []);   // per rank: the edges revealed with that node
  for (const e of g.edges) edgesAt[Math.max(rank[e.tail], rank[e.head])].push(e);
  const root = svgElement("svg", { class: "dl-graph-svg", role: "group", "aria-label": "the FX graph" });
  const view = svgElement("g", { class: "dl-view" });
  const edges = svgElement("g", { class: "dl-edges" });
  const nodes = svgElement("g", { class: "dl-nodes" });
  // New and linked-to nodes are outlined on a layer of their own, above the drawing:
  // the nodes themselves never change class, so marking them restyles nothing else.
  const marks = svgElement("g", { class: "dl-marks" });
  view.append(edges, nodes, marks);
  root.append(view);
  const made = new Uint8Array(order.length);
  const edgeEls = order.map(() => []);

  function makeNode(k) {
    const n = layoutOf[k];
    const node = c.nodes[k];
    const [kind, ...geo] = n.shape;
    let outline = null;
    if (kind === "ellipse") outline = svgElement("ellipse", { cx: geo[0], cy: geo[1], rx: geo[2], ry: geo[3] });
    else if (kind === "path") outline = svgElement("path", { d: geo[0] });
    else if (kind === "polygon") outline = svgElement("polygon", { points: geo[0] });
    const small = node.op === "placeholder" || node.op === "get_attr";
    const el = svgElement("g", { class: `node dl-op-${node.op}${small ? " dl-small" : ""}${node.in_graph ? "" : " dl-dropped"}`, "data-node": k });
    const tip = svgElement("title");
    tip.textContent = nodeTip(c, k);
    el.append(tip);
    // Reached with ↓ ↑ in the pane (roving.js) and followed with Enter (help.js): keyboard-only
    // provenance. Its name begins with the words drawn in it, then says what the tooltip says.
    // A name the layout cut from the left is cut again where it keeps the layer (cull.js).
    const lines = n.lines[0] && n.lines[0].startsWith("…") && node.renamed_at == null ?
      [shortName(node.name, n.lines[0].length), ...n.lines.slice(1)] : n.lines;
    const label = `${lines.join(" ")} · ${tip.textContent}`;
    for (const [a, v] of [["tabindex", "-1"], ["role", "button"], ["aria-label", label]]) el.setAttribute(a, v);
    if (outline) el.append(outline);
    n.text.forEach(([x, y], line) => {
      const t = svgElement("text", { x, y, "text-anchor": "middle" });
      t.textContent = lines[line] ?? "";
      if (line) el.append(" ");   // the lines read as words, not run together (the name above)
      el.append(t);
      if (line === 0 && node.renamed_at != null && node.created_name && node.created_name !== node.name) {
        renamed.push((renamedOf[rank[k]] = { node, text: t, line: n.lines[0], rest: label.slice(n.lines[0].length) }));
      }
    });
    el.style.display = "none";
    nodeEls[k] = el;
    outlines[k] = outline;
    if (!culled) nodes.append(el);
  }

  /** Make the elements of the node of rank r and of the edges revealed with it. */
  function ensure(r) {
    if (made[r]) return;
    made[r] = 1;
    const k = order[r];
    if (layoutOf[k]) makeNode(k);
    for (const e of edgesAt[r]) {
      const el = svgElement("g", { class: "edge" }, svgElement("path", { d: e.path, fill: "none" }),
        e.arrow ? svgElement("polygon", { points: e.arrow }) : null);
      el.style.display = "none";
      edgeEls[r].push(el);
      if (!culled) edges.append(el);
    }
  }
  if (!culled) for (let r = 0; r < order.length; r++) ensure(r);
  const d = {
    root, view, order, rank, nodeEls, edgeEls, ensure, renamed, renamedOf, outlines, marks, box, shown: 0, step: 0,
    width: g.width, height: g.height, cull: culled ? null : undefined,
  };
  if (culled) d.cull = culler(d, edgesAt, edges, nodes);
  return d;
}

/** The pane. selectCompile({c, k, layout}); paint(view) with view {c, k, i, flash, fit};
 * reveal() after every pane painted (the new or followed node centred, zoom.js); zoom(how)
 * zooms or pans the drawing. */
export function graphPane() {
  const p = pane("dl-graph", "FX graph");
  const drawing = h("div", { class: "dl-drawing", title: "wheel: zoom · drag: pan · keys: + − 0, Shift+arrows" });
  const camera = zoomable(drawing);
  const note = h("div", { class: "dl-graph-note dl-faint" });
  const listing = h("div", { class: "dl-graph-text" });
  const graphCode = h("details", { class: "dl-graph-code" });
  const mods = modulesView((j) => nodeTip(c, j));
  const byModule = h("button", { type: "button", class: "dl-pane-switch", "aria-pressed": "false", hidden: true,
    title: "show the nodes in groups, one per module that made them" }, "by module");
  p.el.append(byModule);
  p.el.classList.add("dl-has-switch");
  p.body.replaceChildren(drawing, camera.overview, note, listing, mods.el, graphCode);
  let c = null, k = -1, layout = {}, drawn = null, codeOf = -1, fit = false, target = null, last = null;
  let grouped = false;   // the nodes shown by module, not drawn
  let lastShown = -1;   // how many nodes had been made when the pane last revealed

  function paintCode() {   // on demand: when the details are open
    if (!graphCode.open || !c.graph_code || codeOf === k) return;
    codeOf = k;
    graphCode.replaceChildren(h("summary", null, "the graph's Python code"), h("pre", { class: "dl-code" }, codeRows(c)));
  }
  graphCode.addEventListener("toggle", () => { if (c) paintCode(); });
  // Nodes lit from another pane (provenance.js's showNodes): brought into view when none shows.
  p.el.addEventListener("dl-show-nodes", (e) => {
    const ks = drawn ? e.detail.nodes.filter((j) => drawn.rank[j] < drawn.shown && drawn.box(j)) : [];
    if (grouped) mods.show(e.detail.nodes);
    else if (ks.length && !fit && !camera.holds(ks)) camera.reveal(ks, false);
  });
  byModule.addEventListener("click", () => {
    grouped = !grouped;
    byModule.setAttribute("aria-pressed", String(grouped));
    if (last) { paint(last); reveal(); }
  });

  function selectCompile(compile) {
    ({ c, k } = compile);
    layout = compile.layout || {};
    drawn = null;
    lastShown = -1;
    drawing.replaceChildren();
    drawing.hidden = !!layout.error || !layout.nodes || !c.nodes.length;
    listing.hidden = !drawing.hidden;
    note.textContent = drawing.hidden ? "" : layoutNote(layout);
    note.hidden = !note.textContent;
    if (!drawing.hidden) {
      drawn = makeDrawing(c, layout);
      drawing.append(drawn.root);
    }
    camera.show(drawn);
    mods.selectCompile(c);
    byModule.hidden = !hasModules(c);
    graphCode.replaceChildren(h("summary", null, "the graph's Python code"));
    graphCode.hidden = !c.graph_code;
    codeOf = -1;
    paintCode();
  }

  function paint(view) {
    const { i, flash, fit: fitOn } = (last = view);
    const { shown, total, fresh, names } = graphView(c, i);
    const kept = keptOf(c);
    fit = !!fitOn;
    drawing.classList.toggle("dl-fit", fit);
    p.head.replaceChildren("FX graph ", h("span", { class: "dl-dim" },
      ` · ${shown} of ${total} node(s)`, kept !== total ? ` (${kept} in the final graph)` : "", names.length ? [" · new: ", commaList(names)] : ""));
    const flashed = flash && flash.node != null ? flash.node : null;
    target = flashed != null ? [flashed] : fresh;
    const modules = grouped && !byModule.hidden;
    mods.el.hidden = !modules; p.el.classList.toggle("dl-grouped", modules);
    drawing.hidden = modules || !drawn;
    listing.hidden = modules || !!drawn;
    if (modules) mods.paint({ c, i, shown, fresh, flashed });
    else if (drawn) paintDrawing(drawn, c, i, shown, fresh, flashed);
    else paintListing(shown, fresh, i);
  }

  /** After every pane has painted: the new or followed node in view. */
  function reveal() {
    if (!mods.el.hidden) mods.reveal();
    else if (drawn) {
      camera.reveal(target, fit);
      // A jump to a step that added no node but changed the nodes made so far: the latest
      // one in view. A step that changes nothing leaves the view where the learner put it.
      const changed = drawn.shown !== lastShown;
      lastShown = drawn.shown;
      if (changed && drawn.shown && !fit && !(target && target.length)) {
        const latest = drawn.order[drawn.shown - 1];
        if (!camera.holds([latest])) camera.reveal([latest], fit);
      }
    } else if (!listing.hidden) {
      scrollIntoPane(p.body, [...listing.querySelectorAll("li.dl-new")]);
    }
  }

  function paintListing(shown, fresh, i) {
    // names change at renames, not only when nodes appear
    const renamed = c.nodes.filter((n) => n.renamed_at != null && n.renamed_at <= i).length;
    const key = `${k}|${shown}|${fresh.length}|${renamed}`;
    if (listing.dataset.key === key) return;
    listing.dataset.key = key;
    const items = nodeOrder(c).order.slice(0, shown).map((j) => {
      const n = c.nodes[j];
      const meta = n.dtype ? ` ${n.dtype}${n.shape || ""}` : "";
      const when = n.step == null ? "after tracing" : `step ${n.step}`;
      return h("li", { class: fresh.includes(j) ? "dl-new" : null, "data-node": j },
        `${nameAt(n, i)} = ${n.op}[${n.target}](${n.args})${meta}   # ${when}${n.in_graph ? "" : "   (not in the final graph)"}`);
    });
    listing.replaceChildren(
      layout.error ? h("div", { class: "dl-faint" }, `No drawing: ${layout.error}.`) : "",
      items.length ? h("ul", { class: "dl-list" }, items) : h("div", { class: "dl-faint" }, "(no nodes yet)"));
  }

  return { el: p.el, selectCompile, paint, reveal, zoom: camera.zoom };
}

/** Reveal the nodes and edges that exist at step i, outline the new and the linked-to ones,
 * and name each renamed node as it was then. */
function paintDrawing(d, c, i, shown, fresh, flashed) {
  const lo = Math.min(d.shown, shown), hi = Math.max(d.shown, shown);
  d.step = i;
  for (let r = lo; r < hi && !d.cull; r++) {   // a culled drawing is put in the page by cull()
    const display = r < shown ? "" : "none";
    if (r < shown) d.ensure(r);
    const el = d.nodeEls[d.order[r]];
    if (el) el.style.display = display;
    for (const e of d.edgeEls[r]) e.style.display = display;
  }
  d.shown = shown;
  const mark = (k, cls) => ({
    key: `${cls}${k}`,
    make: () => {
      if (d.cull) d.ensure(d.rank[k]);
      const el = d.outlines[k] ? d.outlines[k].cloneNode(false) : svgElement("g");
      el.setAttribute("class", cls);
      el.setAttribute("data-node", k);
      return el;
    },
  });
  sync(d.marks, [...fresh.map((k) => mark(k, "dl-new")), ...(flashed != null ? [mark(flashed, "dl-flash")] : [])]);
  if (!d.cull) for (const r of d.renamed) renameAt(r, i);
}
