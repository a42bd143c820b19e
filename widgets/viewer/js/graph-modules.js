// The FX graph by module (in the graph pane, panes/graph.js): the nodes made so far in nested groups, one per module a node was
// made in (`node.module`, the innermost entry of Dynamo's `nn_module_stack`, such as
// `L['self'].transformer.h.3.attn`), like the layers of Model Explorer. A group sits inside
// the group of the longest module path its own path extends (`transformer.h.3.attn` inside
// `transformer.h.3`), and its rows come in the order the nodes were made: its own nodes and,
// where their first node was made, its groups. The module of the node the step made (or
// of the node followed) is open, the others are one line with a count; a head opens or
// closes its group by hand. Nodes are buttons with `data-node`, so a click or Enter goes to
// the step that made them (provenance.js) and the other panes light them (`dl-peer`).

import { memo, nameAt, nodeOrder } from "./recording.js";
import { h, sync, textRow } from "./dom.js";
import { scrollIntoPane } from "./scroll.js";

/** The root module's source, left out of a group's name: `L['self'].transformer` reads as
 * `transformer`, the path `named_modules()` gives it. */
const ROOT_MODULE = "L['self'].";

/** A module path as a group is named. */
export function moduleLabel(path) {
  return path.startsWith(ROOT_MODULE) ? path.slice(ROOT_MODULE.length) : path;
}

/** Whether the compile's nodes say which module made them (recordings from before the
 * field was kept, and functions that call no module, do not). */
export function hasModules(c) {
  return memo(c, "hasModules", () => c.nodes.some((n) => n.module));
}

/** The groups of a compile's nodes: `groups` (path -> {path, parent, own (ranks of its own
 * nodes), children (paths), all (ranks of its nodes and its groups', sorted)}) and `top`
 * (the paths of the outermost groups and the ranks of nodes made in no module). Ranks are
 * places in `nodeOrder(c).order`, so "made by step i" is "rank < nodesAt(c, i)". */
export function moduleTree(c) {
  return memo(c, "moduleTree", () => {
    const { order } = nodeOrder(c);
    const paths = [...new Set(c.nodes.map((n) => n.module).filter(Boolean))].sort((a, b) => a.length - b.length);
    const groups = new Map();
    for (const path of paths) {
      let parent = null;   // the longest path before it (shorter) that it extends
      for (const q of paths) {
        if (q.length >= path.length) break;
        if (path.startsWith(q) && (path[q.length] === "." || path[q.length] === "[")) parent = q;
      }
      groups.set(path, { path, parent, own: [], children: [], all: [] });
    }
    const top = { own: [], children: [] };
    for (const g of groups.values()) (g.parent ? groups.get(g.parent).children : top.children).push(g.path);
    order.forEach((k, r) => {
      const m = c.nodes[k].module;
      if (!m) { top.own.push(r); return; }
      groups.get(m).own.push(r);
      for (let g = groups.get(m); g; g = g.parent ? groups.get(g.parent) : null) g.all.push(r);
    });
    return { groups, top };
  });
}

/** The paths of module `path`'s group and of every group around it, innermost first. */
export function groupChain(tree, path) {
  const out = [];
  for (let g = path ? tree.groups.get(path) : null; g; g = g.parent ? tree.groups.get(g.parent) : null) out.push(g.path);
  return out;
}

/** How many of a sorted list of ranks are below `shown`. */
function ranksBelow(ranks, shown) {
  let lo = 0, hi = ranks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranks[mid] < shown) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** The rows of a group made by `shown` nodes, in the order they were made: {node: rank}
 * for its own nodes, {group: path} for its groups (at their first node). */
export function groupRows(tree, owner, shown) {
  const rows = owner.own.filter((r) => r < shown).map((r) => ({ at: r, node: r }));
  for (const p of owner.children) {
    const g = tree.groups.get(p);
    if (g.all.length && g.all[0] < shown) rows.push({ at: g.all[0], group: p });
  }
  return rows.sort((a, b) => a.at - b.at);
}

/** A node's one-line reading in a group: its name then, what it does, its dtype and shape. */
function nodeText(n, i) {
  const what = n.op === "placeholder" ? "input" : n.op === "get_attr" ? "attribute" : n.op === "output" ? "output" :
    n.op === "call_method" ? `.${n.target}()` : n.target;
  return `${nameAt(n, i)}  ${what}${n.dtype ? `  ${n.dtype}${n.shape || ""}` : ""}`;
}

/** The view by module inside the graph pane's body. `tip(k)` is a node's tooltip. Returns
 * {el, selectCompile(c), paint({c, i, shown, fresh, flashed}), reveal(), show(nodes)}. */
export function modulesView(tip) {
  const list = h("ul", { class: "dl-mod-list", "aria-label": "the FX graph by module" });
  const el = h("div", { class: "dl-modules", hidden: true }, list);
  let c = null, tree = null, last = null, key = "";
  let opened = new Set(), closed = new Set();   // by hand: kept / until the current module changes
  let current = null, peek = [];                 // the step's module; groups a link opened
  let target = [];                               // what reveal() brings into view

  function selectCompile(compile) {
    c = compile;
    tree = moduleTree(c);
    opened = new Set(); closed = new Set(); current = null; peek = []; key = ""; last = null;
    list.replaceChildren();
  }

  const isOpen = (path) => (opened.has(path) || peek.includes(path) ||
    (groupChain(tree, current).includes(path) && !closed.has(path)));

  function paint(view) {
    last = view;
    const { i, shown, fresh, flashed } = view;
    const at = flashed != null ? flashed : fresh.length ? fresh[fresh.length - 1] :
      shown ? nodeOrder(c).order[shown - 1] : null;
    const now = at != null ? c.nodes[at].module || null : current;
    if (now !== current) { current = now; closed = new Set(); peek = []; }   // what a link opened closes too
    target = flashed != null ? [flashed] : fresh;
    draw(i, shown, fresh, flashed);
  }

  function draw(i, shown, fresh, flashed) {
    const renamed = c.nodes.filter((n) => n.renamed_at != null && n.renamed_at <= i).length;
    const k = [shown, renamed, fresh.join(","), flashed, current, [...opened].join("|"),
      [...closed].join("|"), peek.join("|")].join(";");
    if (k === key) return;
    key = k;
    const isNew = new Set(fresh), order = nodeOrder(c).order;
    // Rows are kept from paint to paint (dom.js's `sync`) and brought up to date in place:
    // a row redrawn away would take the focus, and the pointer's link (provenance.js), with it.
    const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
    const setAttr = (el, name, value) => { if (el.getAttribute(name) !== value) el.setAttribute(name, value); };
    const nodeRow = (li, j) => {
      const n = c.nodes[j], b = li.firstChild;
      setAttr(b, "class", `dl-mod-node${isNew.has(j) ? " dl-new" : ""}${j === flashed ? " dl-flash" : ""}${n.in_graph ? "" : " dl-dropped"}`);
      setText(b, nodeText(n, i));
    };
    const groupRow = (li, path) => {
      const g = tree.groups.get(path), open = isOpen(path), made = ranksBelow(g.all, shown);
      const fresher = fresh.some((j) => c.nodes[j].module && groupChain(tree, c.nodes[j].module).includes(path));
      const [head, sub] = li.children, [mark, , count] = head.children;
      setAttr(li, "class", `dl-mod${open ? " dl-mod-open" : ""}${fresher ? " dl-has-new" : ""}${path === current ? " dl-mod-current" : ""}`);
      setAttr(head, "aria-expanded", String(open));
      setAttr(head, "title", `${path}: ${open ? "close" : "open"} the group of the module's nodes`);
      setText(mark, open ? "▾" : "▸");
      setText(count, ` · ${made}${made < g.all.length ? ` of ${g.all.length}` : ""} node${g.all.length === 1 ? "" : "s"}`);
      if (!open) { if (sub) sub.remove(); return; }
      fillList(sub || li.appendChild(h("ul", { class: "dl-mod-list" })), g);
    };
    const fillList = (ul, owner) => {
      const rows = groupRows(tree, owner, shown);
      sync(ul, rows.map((x) => (x.group != null ? { key: `g${x.group}`, make: () => newGroup(x.group) } :
        { key: `n${order[x.node]}`, make: () => newNode(order[x.node]) })));
      rows.forEach((x, r) => (x.group != null ? groupRow(ul.children[r], x.group) : nodeRow(ul.children[r], order[x.node])));
    };
    if (shown) fillList(list, tree.top);
    else sync(list, [textRow("dl-faint", "(no nodes yet)", "li")]);
  }

  const newNode = (j) => h("li", null, h("button", { type: "button", class: "dl-mod-node", "data-node": j, title: tip(j) }));
  const newGroup = (path) => h("li", null, h("button", { type: "button", class: "dl-mod-head", "data-module": path },
    h("span", { class: "dl-mod-mark", "aria-hidden": "true" }), " ", h("span", { class: "dl-mod-name" }, moduleLabel(path)),
    h("span", { class: "dl-dim" })));

  function redraw() {
    if (last) draw(last.i, last.shown, last.fresh, last.flashed);
  }

  // A head opens or closes its group; the focus stays on it.
  list.addEventListener("click", (e) => {
    const head = e.target.closest && e.target.closest(".dl-mod-head");
    if (!head) return;
    e.stopPropagation();
    const path = head.dataset.module;
    if (isOpen(path)) {
      opened.delete(path);
      peek = peek.filter((p) => p !== path);
      if (groupChain(tree, current).includes(path)) closed.add(path);
    } else {
      opened.add(path);
      closed.delete(path);
    }
    redraw();
  });

  /** Bring the rows of `target` (or of `nodes`) into view, opening the groups around them. */
  function reveal(nodes = null) {
    const ks = nodes || target;
    if (!el.offsetParent || !ks.length) return;
    const body = el.closest(".dl-pane-body") || el;
    scrollIntoPane(body, ks.map((j) => list.querySelector(`button[data-node="${j}"]`)).filter(Boolean));
  }

  /** Nodes lit from another pane: their groups opened (until the next link) and in view,
   * where none of them shows already. */
  function show(nodes) {
    if (!c || !last) return;
    const made = nodes.filter((j) => nodeOrder(c).rank[j] < last.shown);
    if (!made.length) return;
    const body = el.closest(".dl-pane-body") || el;
    const box = body.getBoundingClientRect();
    const inView = made.some((j) => {
      const b = list.querySelector(`button[data-node="${j}"]`);
      if (!b) return false;
      const r = b.getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    });
    if (inView) return;
    peek = [...new Set(made.flatMap((j) => groupChain(tree, c.nodes[j].module)))];
    redraw();
    reveal(made);
  }

  return { el, selectCompile, paint, reveal: () => reveal(), show };
}

/** Where a node was made, for a tooltip: its module, or nothing. */
export function moduleOf(c, k) {
  const m = c.nodes[k].module;
  return m ? ` · in ${moduleLabel(m)}` : "";
}
