// The after-Dynamo view: for the compile shown, AOTAutograd's graphs (joint, forward,
// backward, with what the partitioner saved and recomputed) and Inductor's post-grad graphs
// and output code, one stage at a time, each unit (a node, a kernel) linked back to the
// Dynamo nodes it came from. Hovering or focusing a unit lights those nodes in the FX graph
// and says the steps that made them; a click or Enter (`data-node`) goes to the step of the
// first; a Dynamo node hovered anywhere else lights what it became; at each step, what the
// step's new nodes became is marked. Absent for a compile without stages.

import {
  cacheOf, firstStage, lineUnits, linkCounts, madeWhere, partition, stageGroups, stageLabel,
  stageLines, stagesOf, stepMarks, unitKind, unitLines, unitOrigins, unitsOfNodes, unitWord,
} from "../stages.js";
import { nameAt } from "../recording.js";
import { code, commaList, h, plural } from "../dom.js";
import { scrollIntoPane, showNodes } from "../scroll.js";

/** One unit as a row: name, kind, the Dynamo nodes it came from (each a link to the step
 * that made it) and the steps; invented units say so. */
function unitRow(c, stage, u, v, chosen) {
  const origins = unitOrigins(c, u);
  const linked = origins.filter((o) => o.k != null);
  const badges = [];
  if (chosen.saved.has(u.name)) badges.push(h("span", { class: "dl-tag dl-saved", title: "the partitioner keeps this value for the backward" }, "saved"));
  if (chosen.recomputed.has(u.name)) badges.push(h("span", { class: "dl-tag dl-recomputed", title: "a forward op the backward computes again rather than saving it" }, "recomputed"));
  let from;
  if (u.invented || !linked.length) {
    from = h("span", { class: "dl-faint" }, " · invented: no Dynamo node (made by ",
      stage.name.startsWith("aot_") ? "AOTAutograd" : "Inductor", ")");
  } else {
    const steps = [...new Set(linked.map((o) => o.step))];
    from = [" ← ", linked.length === 1 ? code(linked[0].name) : commaList(linked, (o) =>
      h("button", { class: "dl-link", type: "button", "data-node": o.k, title: `go to step ${o.step}, which made ${o.name}` }, o.name)),
    h("span", { class: "dl-dim" }, ` · ${steps.length === 1 ? "step" : "steps"} ${steps.join(", ")}`)];
  }
  const first = linked[0];
  return h("li", {
    class: `dl-unit${u.invented ? " dl-invented" : " dl-linked"}`, "data-unit": v, tabindex: 0, "data-node": first ? first.k : null,
    title: first ? `made from ${linked.map((o) => o.name).join(", ")}: click (or Enter) to go to step ${first.step}` :
      "invented: no Dynamo node to go back to",
  }, code(u.name), " ", h("span", { class: "dl-tag" }, unitKind(u)), badges.length ? [" ", badges] : "", from);
}

/** The partitioner's choice and the stage's inputs and outputs, each name a hoverable chip. */
function facts(stage) {
  if (stage.from_cache) {
    const { cache, off } = cacheOf(stage);
    return [h("div", { class: "dl-banner" }, `Links unavailable: this stage came from ${cache}. `,
      "Torch replayed the text it had stored and built no graph while recording, so nothing here can be " +
      "traced back to Dynamo's nodes or steps. Record it again: a recording made with after_dynamo=True " +
      "now compiles past this cache while it records (in effect ", code(off), ").")];
  }
  const parts = partition(stage);
  const chips = (list) => list.map((x, j) => [j ? " " : "", h("span", {
    class: "dl-chip dl-stage-chip", "data-unit": x.unit, tabindex: x.unit == null ? null : 0,
  }, x.name)]);
  const out = [];
  for (const [key, words, why] of [
    ["inputs", "inputs", null], ["outputs", "outputs", null],
    ["saved", "saved for the backward", "the partitioner keeps these forward values for the backward"],
    ["recomputed", "recomputed in the backward", "forward ops the backward computes again (cheaper than saving them)"],
  ]) {
    if (parts[key].length) out.push(h("span", { class: `dl-stage-fact dl-${key}`, title: why }, h("span", { class: "dl-dim" }, `${words}: `), chips(parts[key])));
  }
  const { invented } = linkCounts(stage);
  if (invented) out.push(h("div", { class: "dl-faint" }, `${plural(invented, "unit")} invented: AOTAutograd or Inductor made them, no Dynamo node to link.`));
  return out;
}

/** The pane. `root` is the viewer's root: a Dynamo node hovered in another pane lights what
 * it became here, and what a unit came from is lit there. */
export function stagesPane(root) {
  const toggle = h("button", { class: "dl-stages-toggle", type: "button", "aria-expanded": "false",
    title: "show or hide AOTAutograd's graphs and Inductor's code" }, "After Dynamo");
  const summary = h("span", { class: "dl-stages-summary" });
  const tabs = h("div", { class: "dl-stage-tabs", role: "tablist", "aria-label": "stages after Dynamo" });
  const factsEl = h("div", { class: "dl-stage-facts" });
  const units = h("ul", { class: "dl-list dl-stage-units", "aria-label": "units and the Dynamo nodes they came from" });
  const codeEl = h("pre", { class: "dl-code dl-stage-code" });
  const info = h("div", { class: "dl-stage-info dl-dim", "aria-live": "off" });
  const box = h("div", { class: "dl-stage-box", role: "tabpanel" },
    h("div", { class: "dl-stage-split" }, h("div", { class: "dl-stage-side" }, factsEl, units), h("div", { class: "dl-stage-side" }, codeEl)), info);
  // Folded at first, like the sections above it; open, the viewer grows by its height (viewer.css).
  const el = h("div", { class: "dl-stages", role: "region", "aria-label": "after Dynamo" },
    h("div", { class: "dl-stages-head", role: "heading", "aria-level": 3 }, toggle, summary), tabs, box);
  let c = null, k = -1, j = -1, view = null, rows = [], lines = [], marked = "", lit = [], litFrom = null, pending = false, fresh = false;
  const chosen = new Map();   // compile index -> the stage the learner chose there

  const stage = () => stagesOf(c)[j];
  const say = (...parts) => info.replaceChildren(...parts.flat(Infinity).filter((x) => x != null && x !== false && x !== ""));

  function selectCompile(compile) {
    ({ c, k } = compile);
    unlight();
    el.hidden = !stagesOf(c).length;
    j = -1; marked = "";
    tabs.replaceChildren(...stageGroups(c).map((g) => h("span", { class: "dl-stage-group" },
      h("span", { class: "dl-dim" }, `${g.title}: `),
      g.stages.map((s) => {
        const st = stagesOf(c)[s];
        return h("button", {
          class: "dl-chip dl-stage-tab", type: "button", role: "tab", "data-stage": s, "aria-selected": "false",
          title: `${st.name} (${st.graph}): ${st.from_cache ? "from the cache, no links" : unitWord(st, st.units.length)}`,
        }, stageLabel(st), st.from_cache ? " (cache)" : "");
      }))));
    if (!el.hidden) show(chosen.has(k) ? chosen.get(k) : firstStage(c));
  }

  /** Show stage s of the compile: its facts, units and code (made once per choice). */
  function show(s) {
    j = s;
    chosen.set(k, s);
    unlight(); marked = "";
    for (const t of tabs.querySelectorAll("[data-stage]")) t.setAttribute("aria-selected", String(Number(t.dataset.stage) === s));
    const st = stage();
    factsEl.replaceChildren(...facts(st));
    const choice = { saved: new Set(st.saved || []), recomputed: new Set(st.recomputed || []) };
    rows = st.units.map((u, v) => unitRow(c, st, u, v, choice));
    units.replaceChildren(...(rows.length ? rows : [h("li", { class: "dl-faint" },
      st.from_cache ? "No units: nothing was built to link." : "No units.")]));
    const at = lineUnits(st);
    const width = String(stageLines(st).length).length;
    // A line shows its unit (`data-unit`: hovered, it lights what the unit came from); only the
    // unit's row links to a step, so the linked panes never take a line for the node itself.
    lines = stageLines(st).map((text, n) => h("span", { class: `dl-row${at.has(n + 1) ? " dl-unit-line" : ""}`, "data-unit": at.has(n + 1) ? at.get(n + 1)[0] : null },
      h("span", { class: "dl-lineno" }, String(n + 1).padStart(width)), " ", text));
    codeEl.replaceChildren(...lines);
    codeEl.parentElement.scrollTop = units.parentElement.scrollTop = 0;
    say(hint());
    fresh = true;
    if (view) paint(view);
  }

  const hint = () => (stage().from_cache ? "This stage has no links: it came from the cache." :
    "Hover or focus a unit: the Dynamo nodes it came from light up in the FX graph. Click or Enter: go to the step that made it.");

  function paint(v) {
    view = v;
    if (el.hidden) return;
    const { made, units: now } = stepMarks(c, v.i);
    const flashed = v.flash && v.flash.node != null ? unitsOfNodes(c, [v.flash.node]) : new Map();
    const all = stagesOf(c);
    const kernels = all.filter((s) => s.name === "inductor_output_code").reduce((n, s) => n + s.units.length, 0);
    summary.replaceChildren(` · ${plural(all.length, "stage")}` + (kernels ? ` · ${plural(kernels, "kernel")}` : ""),
      made.length && now.size ? h("span", { class: "dl-stages-now" }, " · this step made ", commaList(made.map((m) => nameAt(c.nodes[m.k], v.i))),
        `: what it became is marked in ${plural(now.size, "stage")}`) : "");
    for (const t of tabs.querySelectorAll("[data-stage]")) t.classList.toggle("dl-now", now.has(Number(t.dataset.stage)));
    const nowHere = now.get(j) || new Set(), flashHere = flashed.get(j) || new Set();
    const key = `${j}|${[...nowHere]}|${[...flashHere]}`;
    if (key === marked) return relight();
    marked = key;
    const st = stage();
    rows.forEach((row, u) => {
      row.classList.toggle("dl-new", nowHere.has(u));
      row.classList.toggle("dl-flash", flashHere.has(u));
    });
    const newLines = new Set(), flashLines = new Set();
    for (const u of nowHere) for (const n of unitLines(st, st.units[u])) newLines.add(n);
    for (const u of flashHere) for (const n of unitLines(st, st.units[u])) flashLines.add(n);
    lines.forEach((line, n) => {
      line.classList.toggle("dl-new", newLines.has(n + 1));
      line.classList.toggle("dl-flash", flashLines.has(n + 1));
    });
    pending = true;
    relight();
  }

  /** After every pane has painted: the units this step (or the link followed) marked, in view. */
  function reveal() {
    if (!(pending || fresh) || el.hidden || !el.classList.contains("dl-open")) return;
    pending = false;
    const rowsMarked = rows.filter((r) => r.classList.contains("dl-flash"));
    const target = rowsMarked.length ? rowsMarked : rows.filter((r) => r.classList.contains("dl-new"));
    const cls = rowsMarked.length ? "dl-flash" : "dl-new";
    const first = stage().units.find((u) => u.op === "kernel" && u.lines.length);   // output code opens on its first kernel
    if (target.length) scrollIntoPane(units.parentElement, target);
    if (target.length) scrollIntoPane(codeEl.parentElement, lines.filter((l) => l.classList.contains(cls)).slice(0, 40));
    else if (fresh && first) scrollIntoPane(codeEl.parentElement, [lines[first.lines[0] - 1]]);
    fresh = false;
  }

  /** The lit lines of the code (and rows of the list) in view, when what was hovered is elsewhere. */
  function showLit(list) {
    if (list) scrollIntoPane(units.parentElement, rows.filter((r) => r.classList.contains("dl-lit")));
    scrollIntoPane(codeEl.parentElement, lines.filter((l) => l.classList.contains("dl-lit")).slice(0, 40));
  }

  // -- lighting, both ways ------------------------------------------------------------------

  function unlight() {
    for (const x of lit) x.classList.remove("dl-lit");
    lit = [];
    litFrom = null;
  }

  function lightEls(els) {
    for (const x of els) if (x && !x.classList.contains("dl-lit")) { x.classList.add("dl-lit"); lit.push(x); }
  }

  /** Unit u of the stage shown: its row and lines, its Dynamo nodes (and the source lines
   * that made them, when the source pane shows that code) elsewhere; the info says the steps. */
  function lightUnit(u) {
    unlight();
    litFrom = { unit: u };
    const st = stage(), unit = st.units[u];
    if (!unit) return;
    lightEls([rows[u], ...unitLines(st, unit).map((n) => lines[n - 1])]);
    const origins = unitOrigins(c, unit).filter((o) => o.k != null);
    const here = view && c.steps[view.i];
    for (const o of origins) {
      lightEls(outside(`[data-node="${o.k}"]`));
      const made = c.steps[o.step];
      if (here && made && made.code === here.code && made.lineno != null) lightEls(outside(`.dl-source [data-line="${made.lineno}"]`));
    }
    if (origins.length) showNodes(root, origins.map((o) => o.k));   // into the graph pane's view
    if (!origins.length) {
      say(code(unit.name), ` (${unitKind(unit)}) is invented: no Dynamo node made it; `,
        st.name.startsWith("aot_") ? "AOTAutograd" : "Inductor", " added it, so it has no step to go back to.");
      return;
    }
    say(code(unit.name), ` (${unitKind(unit)}) came from `, origins.map((o, n) => {
      const where = madeWhere(c, o.step);
      return [n ? "; " : "", code(o.name), `, made at step ${o.step}`, where ? [` on line ${where.lineno}`, where.line ? [": ", code(where.line)] : ""] : "",
        view && view.i < o.step ? " (not made yet at this step)" : ""];
    }), ` · click or Enter: go to step ${origins[0].step}`);
  }

  /** Dynamo node k, hovered in another pane: every unit it became, here and in the tabs. */
  function lightNode(n) {
    unlight();
    litFrom = { node: n };
    const into = unitsOfNodes(c, [n]);
    const here = into.get(j) || new Set();
    const st = stage();
    for (const u of here) lightEls([rows[u], ...unitLines(st, st.units[u]).map((m) => lines[m - 1])]);
    lightEls([...tabs.querySelectorAll("[data-stage]")].filter((t) => into.has(Number(t.dataset.stage))));
    const name = c.nodes[n] ? c.nodes[n].name : String(n);
    say("Dynamo node ", code(name), into.size ?
      [` became ${plural([...into.values()].reduce((m, s) => m + s.size, 0), "unit")} in ${plural(into.size, "stage")}`,
        here.size ? [", here: ", commaList([...here].map((u) => st.units[u].name))] : " (none in this one; the lit tabs have them)"] :
      ": no unit of the stages names it as where it came from");
  }

  function relight() {
    if (!litFrom) return;
    if (litFrom.unit != null) lightUnit(litFrom.unit); else lightNode(litFrom.node);
  }

  const outside = (sel) => [...root.querySelectorAll(sel)].filter((x) => !el.contains(x) && !x.closest(".dl-marks"));

  function unitOf(t) {
    const x = t && t.closest ? t.closest("[data-unit]") : null;
    return x && el.contains(x) ? Number(x.dataset.unit) : null;
  }

  function enter(e) {
    if (el.hidden || !c) return;
    if (el.contains(e.target)) {
      const u = unitOf(e.target);
      if (u != null && !(litFrom && litFrom.unit === u)) {
        lightUnit(u);
        if (!e.target.closest(".dl-stage-code")) showLit(false);   // never scroll what is under the pointer
      }
      return;
    }
    const node = e.target.closest ? e.target.closest("[data-node]") : null;
    if (node && !node.closest(".dl-marks")) {
      const n = Number(node.dataset.node);
      if (!(litFrom && litFrom.node === n)) { lightNode(n); showLit(true); }
    }
  }

  function leave(e) {
    if (!litFrom) return;
    const to = e.relatedTarget;
    if (to && to.closest && (el.contains(to) ? unitOf(to) === litFrom.unit : to.closest("[data-node]"))) return;
    unlight();
    say(hint());
  }

  for (const [name, f] of [["mouseover", enter], ["focusin", enter], ["mouseout", leave], ["focusout", leave]]) root.addEventListener(name, f);
  tabs.addEventListener("click", (e) => {
    const t = e.target.closest("[data-stage]");
    if (t) { show(Number(t.dataset.stage)); reveal(); }
  });
  toggle.addEventListener("click", () => {
    const open = !el.classList.contains("dl-open");
    el.classList.toggle("dl-open", open);
    toggle.setAttribute("aria-expanded", String(open));
    if (!open) return;
    pending = true;
    reveal();
    el.scrollIntoView({ block: "nearest" });   // what the learner opened, in view
  });

  return { el, selectCompile, paint, reveal };
}
