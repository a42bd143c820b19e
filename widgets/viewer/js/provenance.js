// Provenance: where a link leads, and what belongs together. A guard, a graph node, a
// tracker's source, a local found by search and a recompile reason each lead to the step
// that made it; the note says so where the jump lands. And the linked panes: hovering or
// focusing a graph node, a guard or a stack entry marks its counterparts in the other
// panes (the node, the stack and locals entries holding it, the guards on its source, the
// instruction and line that made it), so what the learner points at is found everywhere.

import { breakStep, guardStep, instructionOf, lastStep, memo, nameAt, nodeStep, recompileTarget, whereRead } from "./recording.js";
import { code } from "./dom.js";
import { guardReading } from "./guards.js";
import { walkedOf } from "./bytecode.js";
import { showNodes } from "./scroll.js";

/** The next step after i (else the first from the start) running the code of step i
 * that `matches`, or null: where a click on a source line or a bytecode row leads. */
export function nextRun(c, i, matches) {
  const here = c.steps[i];
  if (!here) return null;
  const runs = (s) => s.code === here.code && matches(s);
  for (let j = i + 1; j < c.steps.length; j++) if (runs(c.steps[j])) return j;
  for (let j = 0; j <= i; j++) if (runs(c.steps[j])) return j;
  return null;
}

/** Where a click on element `t` of compile k, shown at step i, leads: {compile, step,
 * flash, note} (the note as page content; `flash` marks what was followed), or null. */
export function linkTarget(rec, k, t, i = 0) {
  const c = rec.compiles[k];
  const line = t.closest(".dl-source [data-line]");
  const row = t.closest(".dl-bytecode [data-offset]");
  if (line || row) {
    const n = Number(line ? line.dataset.line : row.dataset.offset);
    const to = nextRun(c, i, line ? (s) => s.lineno === n : (s) => s.offset === n);
    const what = line ? `line ${n}` : `the instruction at offset ${n}`;
    if (to == null) return { compile: k, step: i, note: `No step of this code runs ${what}.` };
    return { compile: k, step: to, note: to > i ? `The next step that runs ${what}.` :
      `No later step runs ${what}: this is the first that does.` };
  }
  const graphCall = t.closest("[data-graph-call]");
  const resume = t.closest("[data-resume]");
  if ((graphCall || resume) && c.steps.length) {   // rows of the installed code (panes/details.js)
    const at = breakStep(c);
    if (resume) {
      const r = c.resume_functions[Number(resume.dataset.resume)];
      return { compile: k, step: at ?? lastStep(c), note: at == null ? ["The recording has no step of the graph break that made ", code(r.code_name)] :
        ["The graph break at this step made the resume function ", code(r.code_name), ", which the installed code calls after the graph"] };
    }
    return { compile: k, step: at ?? lastStep(c), note: at == null ?
      `Dynamo stopped tracing at the end of the frame, here, and compiled the graph this row calls (${c.nodes.length} nodes).` :
      `Dynamo stopped tracing at this graph break and compiled the graph the installed code calls (${c.nodes.length} nodes).` };
  }
  const reason = t.closest("[data-reason]");
  const guard = t.closest("[data-guard]");
  const node = t.closest("[data-node]");
  const source = t.closest("[data-source]");
  const local = t.closest("[data-local]");
  if (reason) {
    const target = recompileTarget(rec, k, c.recompile_reasons[Number(reason.dataset.reason)]);
    if (!target) return null;
    const was = rec.compiles[target.compile];
    const g = target.guard != null ? was.guard_details[target.guard] : null;
    return {
      compile: target.compile, step: target.step, flash: { guard: target.guard },
      note: g ? ["This guard failed and caused the recompile: ", code(g.text)] :
        "The recording names no guard of this compile that failed (it was compiled before recording began).",
    };
  }
  if (guard) {
    const g = Number(guard.dataset.guard);
    const detail = c.guard_details[g];
    const to = guardStep(c, g);
    if (to == null) {
      // Installed after tracing (a search result): listed from the last step on.
      if (!detail || !c.steps.length) return null;
      if (detail.ambient) return { compile: k, step: i, flash: { guard: g }, note: ["Dynamo installs ", code(detail.text),
        " on every compile, for the state around the frame: no step installed it"] };
      return { compile: k, step: lastStep(c), flash: { guard: g }, note: ["Dynamo installed the guard ", code(detail.text),
        " after tracing, when it compiled the graph: it is listed from the last step on"] };
    }
    return { compile: k, step: to, flash: { guard: g }, note: ["This step installed the guard ", code(detail.text)] };
  }
  if (node) {
    const n = Number(node.dataset.node);
    const to = nodeStep(c, n);
    return { compile: k, step: to, flash: { node: n }, note: ["This step made the graph node ", code(nameAt(c.nodes[n], to))] };
  }
  if (source) {
    const src = source.dataset.source;
    const to = whereRead(c, src);
    if (to == null) return null;
    const s = c.steps[to];
    return {
      compile: k, step: to, flash: { source: src },
      note: ["The source ", code(src), " was first read here, by ", code(instructionOf(s)),
        s.lineno != null ? ` on line ${s.lineno}` : ""],
    };
  }
  if (local) {
    const to = Number(local.dataset.at);
    const s = c.steps[to];
    if (!s) return null;
    const v = c.vars[s.locals[local.dataset.local]];
    return {
      compile: k, step: to, flash: v && v.source ? { source: v.source } : null,
      note: ["The local ", code(local.dataset.local), ` of ${s.code_name} first holds a value after this step, `,
        code(instructionOf(s)), s.lineno != null ? ` on line ${s.lineno}` : ""],
    };
  }
  return null;
}

// -- what belongs together (pure) -------------------------------------------------------------

/** The guards of compile c by the source they guard (Dynamo's spelling), made once. */
function guardsBySource(c) {
  return memo(c, "guardsBySource", () => {
    const m = new Map();
    c.guard_details.forEach((g, k) => {
      const src = g.source || (g.ambient ? null : guardReading(c, k).group.key);
      if (!src) return;
      if (!m.has(src)) m.set(src, []);
      m.get(src).push(k);
    });
    return m;
  });
}

/** The node of compile c a tracker's `node` name names (either of a renamed node's names). */
function nodeNamed(c, name) {
  const byName = memo(c, "nodeByName", () => {
    const m = new Map();
    c.nodes.forEach((n, k) => {
      if (n.created_name && !m.has(n.created_name)) m.set(n.created_name, k);
      m.set(n.name, k);
    });
    return m;
  });
  return name != null && byName.has(name) ? byName.get(name) : null;
}

/** Every tracker reading of compile c holding node k, or read from a source. */
function varsWhere(c, test) {
  const out = [];
  c.vars.forEach((v, id) => { if (test(v)) out.push(id); });
  return out;
}

/** What belongs with a thing at step i of compile c: `what` is {node: k}, {guard: k} or
 * {var: id}. Returns {nodes, guards, vars (reading ids), groups (guard group keys), step
 * (the step that made it, or null)}: arrays of what to mark. */
export function peersOf(c, i, what) {
  const nodes = new Set(), guards = new Set(), vars = new Set(), groups = new Set();
  let step = null;
  const bySource = guardsBySource(c);
  const addSource = (src) => {
    if (!src) return;
    for (const g of bySource.get(src) || []) guards.add(g);
    groups.add(src);
  };
  if (what.node != null) {
    const k = what.node, n = c.nodes[k];
    nodes.add(k);
    step = nodeStep(c, k);
    for (const id of varsWhere(c, (v) => v.node != null && nodeNamed(c, v.node) === k)) {
      vars.add(id);
      addSource(c.vars[id].source);
    }
    if (!n) return { nodes: [], guards: [], vars: [], groups: [], step: null };
  } else if (what.guard != null) {
    const g = c.guard_details[what.guard];
    if (!g) return { nodes: [], guards: [], vars: [], groups: [], step: null };
    guards.add(what.guard);
    step = guardStep(c, what.guard);
    const src = g.source;
    groups.add(guardReading(c, what.guard).group.key);
    if (src) {
      for (const id of varsWhere(c, (v) => v.source === src)) {
        vars.add(id);
        const k = nodeNamed(c, c.vars[id].node);
        if (k != null) nodes.add(k);
      }
    }
  } else if (what.var != null) {
    const v = c.vars[what.var];
    if (!v) return { nodes: [], guards: [], vars: [], groups: [], step: null };
    vars.add(what.var);
    const k = nodeNamed(c, v.node);
    if (k != null) {
      nodes.add(k);
      step = nodeStep(c, k);
      // The same node held by other readings (a stack entry and the local it was stored in).
      for (const id of varsWhere(c, (w) => w.node != null && nodeNamed(c, w.node) === k)) vars.add(id);
    }
    addSource(v.source);
  }
  return { nodes: [...nodes], guards: [...guards], vars: [...vars], groups: [...groups], step };
}

// -- the linked panes (DOM) ------------------------------------------------------------------

const POINTABLE = "[data-node], [data-guard-row], [data-var], .dl-source [data-line]";

/** What a pointed-at element is: {node}, {guard} or {var}, or null. */
function pointed(el) {
  const t = el && el.closest ? el.closest(POINTABLE) : null;
  if (!t) return null;
  if (t.dataset.guardRow != null) return { el: t, what: { guard: Number(t.dataset.guardRow) } };
  if (t.dataset.var != null) return { el: t, what: { var: Number(t.dataset.var) } };
  if (t.dataset.line != null) return { el: t, what: { line: Number(t.dataset.line) } };
  return { el: t, what: { node: Number(t.dataset.node) } };
}

/** The linked panes of a viewer's root, painted like a pane (last): hovering or focusing a
 * node, guard or stack entry marks (`dl-peer`) every counterpart on the page, and the step
 * that made it where the bytecode and source panes show its code. */
export function linkedPanes(root) {
  let view = null, target = null, marked = [];

  function clear() {
    for (const el of marked) el.classList.remove("dl-peer");
    marked = [];
  }

  function mark() {
    clear();
    if (!target || !view || !view.c || !target.el.isConnected) { target = null; return; }
    const c = view.c;
    const add = (el) => {   // not what is pointed at, nor the graph's own marks of new and followed nodes
      if (el === target.el || el.closest(".dl-marks")) return;
      el.classList.add("dl-peer");
      marked.push(el);
    };
    if (target.what.line != null) {   // a source line: the instructions Dynamo walks for it
      const info = c.steps[view.i] && c.codes[c.steps[view.i].code];
      for (const ins of info ? walkedOf(info) : []) {
        if (ins.lineno === target.what.line) root.querySelectorAll(`.dl-bytecode [data-offset="${ins.offset}"]`).forEach(add);
      }
      return;
    }
    const p = peersOf(c, view.i, target.what);
    // the graph first: shown by module, it may draw the nodes' rows again to open their groups
    if (p.nodes.length && !target.el.closest(".dl-graph")) showNodes(root, p.nodes);
    for (const k of p.nodes) root.querySelectorAll(`[data-node="${k}"]`).forEach(add);
    for (const g of p.guards) root.querySelectorAll(`[data-guard-row="${g}"]`).forEach(add);
    for (const id of p.vars) root.querySelectorAll(`[data-var="${id}"]`).forEach(add);
    if (p.groups.length) {
      const keys = new Set(p.groups);
      root.querySelectorAll("[data-guard-group]").forEach((el) => { if (keys.has(el.dataset.guardGroup)) add(el.firstElementChild); });
    }
    const s = p.step != null ? c.steps[p.step] : null, here = c.steps[view.i];
    if (s && here && s.code === here.code) {
      root.querySelectorAll(`.dl-bytecode [data-offset="${s.offset}"]`).forEach(add);
      if (s.lineno != null) root.querySelectorAll(`.dl-source [data-line="${s.lineno}"]`).forEach(add);
    }
  }

  function point(e) {
    const t = pointed(e.target);
    if (!t || (target && t.el === target.el)) return;
    target = t;
    mark();
  }
  function leave(e) {
    if (!target) return;
    const to = pointed(e.relatedTarget);
    if (to && to.el === target.el) return;
    if (e.type === "mouseout" && root.contains(document.activeElement) && pointed(document.activeElement)) {
      target = pointed(document.activeElement);   // the pointer went; the keyboard's focus stays
    } else target = null;
    mark();
  }
  root.addEventListener("mouseover", point);
  root.addEventListener("focusin", point);
  root.addEventListener("mouseout", leave);
  root.addEventListener("focusout", leave);

  return {
    selectCompile() { target = null; clear(); },
    paint(v) { view = v; },
    reveal() { if (target) mark(); else if (marked.length) clear(); },   // after the panes redrew
    peers: () => marked.slice(),
  };
}
