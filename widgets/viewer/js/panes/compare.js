// Compare mode: two compiles of one frame side by side, in place of the panes. On the left
// what differs between them (the guards of the earlier that failed on the call that made
// the later, calls Dynamo refused, the first divergence, guards and graph nodes changed);
// then each compile at the same point of the alignment: the step shown and the other's
// step beside it, what differs marked. Every guard leads (`data-cmp-go`) to the step that
// installed it; the first divergence is `data-action="divergence"`.

import {
  compareTarget, comparisonsOf, defaultPartner, divergenceSteps, divergenceTarget, failedGuards, guardChanges,
  keptPartner, noFailedGuards, pairOf, partnerStep, refusals, stepBeside, steplessNote,
} from "../compare.js";
import { compileId, compileTitle, lastStep } from "../recording.js";
import { code, h, pane, plural } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";
import { fileLabel } from "../navigation.js";
import { answerLines, answerOf, failedGuardUser } from "../answers.js";

const MAX_ROWS = 60;   // guard and node rows listed per list; the rest are counted

const more = (n) => (n > MAX_ROWS ? h("li", { class: "dl-faint" }, `… ${n - MAX_ROWS} more`) : null);

/** A link to step `step` of compile k (a guard's step, when `guard` is given). */
function goTo(k, step, label, { guard = null, note = "", title = null } = {}) {
  if (step == null) return h("span", { class: "dl-faint" }, label);
  return h("button", {
    class: "dl-link dl-cmp-go", type: "button", "data-cmp-go": `${k}:${step}`,
    "data-cmp-guard": guard, "data-cmp-note": note, title: title || `go to step ${step} of this compile`,
  }, label);
}

function kindOf(kind) {
  return kind ? h("span", { class: "dl-guard-kind", "data-help-guard": kind, tabindex: 0 }, kind) : null;
}

/** What explain says of compile k's recompile, for the pane: the causes (each with its
 * guard and the user's line), refusals, and the fixes for those; its words only. */
function explainSays(rec, k) {
  const a = answerOf(rec, k);
  if (!a || !a.causes.length) return [];
  const fixes = [...new Set([...a.causes, ...a.refusals].flatMap((x) => x.advice))];
  const lines = answerLines(rec, k).filter((x) => x.kind === "cause" || x.kind === "refused")
    .concat(fixes.map((fix) => ({ kind: "fix", text: `fix: ${fix}`, user: null })));
  return [h("div", { class: "dl-subtitle dl-cmp-explain" }, `What dynamo-lab explain says of ${compileId(rec.compiles[k])}`),
    h("ul", { class: "dl-list dl-cmp-answer" }, lines.map((x) => h("li", { class: `dl-answer-${x.kind}` },
      x.text, x.user ? [" · your line: ", code(x.user)] : null)))];
}

/** A guard that failed: what it read, expected and got, and the step and line that installed it;
 * the user's line where explain names one (`later`: the compile whose recompile it caused). */
function failedItem(rec, r, later = null) {
  const user = failedGuardUser(rec, later, { ...r, compile_id: rec.compiles[r.compile].compile_id });
  const where = [r.step != null ? `step ${r.step}` : "after tracing", r.lineno != null ? `, line ${r.lineno}` : ""];
  return h("li", { class: "dl-cmp-failed" }, kindOf(r.kind), " ", code(r.source || ""), r.what ? ` ${r.what}` : "",
    ": expected ", code(r.expected), ", got ", code(r.seen),
    h("span", { class: "dl-where" }, "installed by ",
      goTo(r.compile, r.step, [`[${rec.compiles[r.compile].compile_id}] `, where],
        { guard: r.guard, note: "failed", title: "go to the step that installed this guard" }),
      r.line ? [": ", code(r.line)] : ""),
    user ? h("span", { class: "dl-where dl-cmp-user" }, "your line: ", code(user)) : null);
}

function guardRow(sign, r, cls) {
  return h("div", { class: `dl-cmp-${cls}` }, `${sign} `,
    goTo(r.compile, r.step, r.text, { guard: r.guard, note: "installed", title: r.step != null ?
      `installed at step ${r.step}: go there` : "installed after tracing" }));
}

/** What differs between the two compiles: made once per pair. */
function whyBody(rec, d, left, right) {
  const a = rec.compiles[left], b = rec.compiles[right];
  const ia = compileId(a), ib = compileId(b);
  const out = [];
  const failed = failedGuards(rec, left, right);
  if (left !== right) out.push(...explainSays(rec, right));
  out.push(h("div", { class: "dl-subtitle" }, `Guards of ${ia} that failed on the call that made ${ib}`));
  const none = failed.length ? null : noFailedGuards(a, b);   // a log keeps Dynamo's first reason only
  out.push(none ? h("div", { class: "dl-faint" }, none.text) : h("ul", { class: "dl-list" }, failed.map((r) => failedItem(rec, r, right))));
  if (none && none.reasons.length) out.push(h("ul", { class: "dl-list dl-cmp-reasons" }, none.reasons.map((r) => h("li", null, code(r)))));
  for (const r of refusals(rec, [left, right])) {
    out.push(h("div", { class: "dl-subtitle dl-cmp-refused" }, `A later call was refused (${r.kind.replace(/_/g, " ")})`,
      r.compile_id ? ` at [${r.compile_id}]` : "", ": guards that failed"),
    h("ul", { class: "dl-list" }, r.rows.map((x) => failedItem(rec, x))));
  }
  if (!d) return out;
  const dv = d.divergence;
  out.push(h("div", { class: "dl-subtitle" }, "First divergence"));
  const stepless = steplessNote(a, b);
  if (stepless) out.push(h("div", { class: "dl-faint dl-cmp-stepless" }, stepless));
  else if (!dv) out.push(h("div", { class: "dl-faint" }, "None: the same instructions left the same trackers."));
  else {
    const at = divergenceSteps(d);
    out.push(h("div", { class: "dl-cmp-divergence" },
      `line ${dv.lineno ?? "?"} · ${ia} step ${dv.a ?? "—"} / ${ib} step ${dv.b ?? "—"} · `, code(dv.instruction), `: ${dv.why} `,
      at ? h("button", { class: "dl-link", type: "button", "data-cmp-action": "divergence", title: "go to the first divergence (D)" }, "go there") : null,
      h("div", { class: "dl-cmp-removed" }, `− ${ia} `, code(dv.was)),
      h("div", { class: "dl-cmp-added" }, `+ ${ib} `, code(dv.now))));
  }
  const g = guardChanges(rec, d);
  out.push(h("div", { class: "dl-subtitle" }, `Guards: ${g.changed.length} changed, ${g.onlyLeft.length} only in ${ia}, ${g.onlyRight.length} only in ${ib}`));
  if (d.guard_checks_compared === false) {
    out.push(h("div", { class: "dl-faint dl-cmp-unchecked" }, "One of the two is a restarted attempt: it built no guard tree, so its guards are " +
      "a kind and a source each. Guards are paired by those; whether their checks differ is not known (compare the attempt that was kept)."));
  }
  const rows = [
    ...g.changed.map((x) => h("li", null, "~ ", kindOf(x.kind), " ", x.source ? code(x.source) : "",
      guardRow("−", x.was, "removed"), guardRow("+", x.now, "added"))),
    ...g.onlyLeft.map((r) => h("li", null, guardRow("−", r, "removed"))),
    ...g.onlyRight.map((r) => h("li", null, guardRow("+", r, "added"))),
  ];
  if (rows.length) out.push(h("ul", { class: "dl-list dl-cmp-guards" }, rows.slice(0, MAX_ROWS), more(rows.length)));
  const nodes = [
    ...d.nodes_changed.map((n) => h("li", null, `~ ${n.name}: `, code(n.was), " → ", code(n.now), ` (${n.what.join(", ")})`)),
    ...d.nodes_removed.map((n) => h("li", { class: "dl-cmp-removed" }, `− ${n}`)),
    ...d.nodes_added.map((n) => h("li", { class: "dl-cmp-added" }, `+ ${n}`)),
  ];
  out.push(h("div", { class: "dl-subtitle" }, `Graph: ${plural(d.nodes_changed.length, "node")} changed, ${d.nodes_removed.length} only in ${ia}, ${d.nodes_added.length} only in ${ib}`));
  if (nodes.length) out.push(h("ul", { class: "dl-list" }, nodes.slice(0, MAX_ROWS), more(nodes.length)));
  return out;
}

function trackerItem(e, name, flashed) {
  const v = e.v;
  return h("li", { class: e.differs ? "dl-cmp-differs" : null, title: e.differs ? "differs from the other compile here" : null },
    name != null ? [h("b", null, name), " = "] : null,
    h("span", { class: "dl-kind", "data-help-tracker": v.kind, tabindex: 0 }, v.kind),
    v.detail ? ` ${v.detail}` : "", v.source ? h("span", { class: "dl-dim" }, `  <- ${v.source}`) : "");
}

/** One side at one point of the alignment: a pane's title and body. */
function sideBody(rec, k, c, i, o, j, { shown, exact, flashed }) {
  const title = [h("span", { class: "dl-cmp-id" }, compileTitle(null, c, k)), " ",
    h("span", { class: "dl-dim" }, shown ? "· shown" : "· beside it")];
  const stepless = [title, h("div", { class: "dl-faint" }, "This compile was kept without steps: its guards and graph are compared below.")];
  if (!c.steps.length) return stepless;   // a TORCH_TRACE log, record(only=...)
  if (i == null) return [title, h("div", { class: "dl-faint" }, "No step of this compile lines up here.")];
  const s = stepBeside(c, i, o, j);
  if (!s) return stepless;
  const head = h("div", { class: s.sameInstruction || j == null ? "dl-cmp-step" : "dl-cmp-step dl-cmp-differs" },
    shown ? `step ${i} / ${lastStep(c)} ` : goTo(k, i, `step ${i} / ${lastStep(c)}`, { title: "show this compile at this step" }), " ",
    code(s.instruction), s.lineno != null ? ` · line ${s.lineno}` : "", s.depth ? ` · in ${s.code_name}` : "");
  const out = [title, head];
  if (!exact) out.push(h("div", { class: "dl-cmp-note" }, "This compile ran nothing beside the other's step: its step before is shown."));
  if (s.line) out.push(h("div", { class: "dl-cmp-line" }, code(s.line)));
  out.push(h("div", { class: "dl-subtitle" }, `Stack (top first) · ${s.stack.length}`),
    s.stack.length ? h("ol", { class: "dl-list" }, s.stack.map((e) => trackerItem(e, null))) : h("div", { class: "dl-faint" }, "(empty)"),
    h("div", { class: "dl-subtitle" }, "Symbolic locals"),
    s.locals.length ? h("ul", { class: "dl-list" }, s.locals.map((e) => trackerItem(e, e.name))) : h("div", { class: "dl-faint" }, "(none)"));
  if (s.guards.length) {
    out.push(h("div", { class: "dl-subtitle" }, `Guards installed here · ${s.guards.length}`),
      h("ul", { class: "dl-list" }, s.guards.map((g) => h("li", { class: g === flashed ? "dl-flash" : null },
        c.guard_details[g] ? c.guard_details[g].text : `guard ${g}`))));
  }
  return out;
}

/** The pane, for compare mode `mode` (its `on`, `partner`, `comparisons`). view: {rec, c, k, i, flash}. */
function comparePane(mode) {
  const el = h("div", { class: "dl-cmp", hidden: true, role: "region", "aria-label": "compare two compiles" });
  const head = h("div", { class: "dl-cmp-head" });
  const why = pane("dl-cmp-why", "Why they differ");
  const sides = [pane("dl-cmp-side dl-cmp-left", ""), pane("dl-cmp-side dl-cmp-right", "")];
  el.append(head, h("div", { class: "dl-cmp-grid" }, why.el, sides[0].el, sides[1].el));
  let pairKey = null, stepKey = null;

  function fillPane(p, [title, ...body]) {
    p.head.replaceChildren(...[title].flat(Infinity).filter((x) => x != null));
    p.body.replaceChildren(...body.flat(Infinity).filter((x) => x != null));
  }

  function paint({ rec, k, i, flash }) {
    el.hidden = !mode.on;
    if (!mode.on) return;
    const { comparisons, partner: other } = mode;
    const pair = other == null ? null : pairOf(comparisons, k, other);
    const left = pair ? pair.left : Math.min(k, other ?? k), right = pair ? pair.right : Math.max(k, other ?? k);
    const key = `${left}|${right}|${comparisons.length}`;   // the pairs may arrive after the first paint
    if (key !== pairKey) {
      pairKey = key;
      stepKey = null;
      const c = rec.compiles[k];
      if (other == null) {
        head.replaceChildren(`Compare: [${c.compile_id}] ${c.code_name} is the only compile of its frame in this recording.`);
      } else {
        const a = rec.compiles[left], b = rec.compiles[right];
        head.replaceChildren(h("b", null, "Compare "), code(compileId(a)), " with ", code(compileId(b)),
          ` · ${a.code_name} (${fileLabel(a.filename)}:${a.firstlineno})`,
          h("span", { class: "dl-dim" }, " · stepping moves both along the alignment (D: first divergence, C: leave)"));
      }
      const d = pair ? pair.d : null;
      const body = other == null ? whyBody(rec, null, k, k).slice(2) : whyBody(rec, d, left, right);
      if (other != null && !d) {
        body.push(h("div", { class: "dl-faint" },
          `These two were not compared when the viewer was made: capture.compare(recording, "${rec.compiles[left].compile_id}", "${rec.compiles[right].compile_id}") prints the comparison.`));
      }
      fillPane(why, ["Why they differ", body]);
    }
    const d = pair ? pair.d : null;
    const flashed = flash && flash.guard != null ? flash.guard : null;
    const side = k === left ? "a" : "b";
    const beside = d && other != null ? partnerStep(d, side, i) : null;
    const j = beside ? beside.step : null;
    const skey = `${k}|${i}|${j}|${flashed}`;
    if (skey === stepKey) return;
    stepKey = skey;
    const c = rec.compiles[k];
    const mine = sideBody(rec, k, c, i, other != null ? rec.compiles[other] : null, j, { shown: true, exact: true, flashed });
    const theirs = other == null ? ["", h("div", { class: "dl-faint" }, "No other compile of this frame to set beside it.")] :
      sideBody(rec, other, rec.compiles[other], j, c, i, { shown: false, exact: !beside || beside.exact, flashed: null });
    const [l, r] = side === "a" ? [mine, theirs] : [theirs, mine];
    fillPane(sides[0], l);
    fillPane(sides[1], r);
  }

  function reveal() {
    if (el.hidden) return;
    // The step's instruction and the first reading that differs (or the guard followed), together.
    for (const p of sides) {
      const marked = p.body.querySelector(".dl-flash") || p.body.querySelector("li.dl-cmp-differs");
      scrollIntoPane(p.body, [p.body.querySelector(".dl-cmp-step"), marked].filter(Boolean));
    }
  }

  function selectCompile({ rec, k }) {
    mode.moved(rec, k);
    stepKey = null;
  }

  return { el, selectCompile, paint, reveal };
}

/** Compare mode: on or off, the compile set beside the one shown (`partner`), and the pairs
 * shipped (`comparisons`, decoded from the model). The Viewer owns one and asks it about
 * links (`link`); what compare mode does by itself (its button, its keys C and D, the
 * second selector) ends in `go(target)`: the Viewer's jump to a step, or with no target a
 * paint. */
export class CompareMode {
  constructor(model, go) {
    this.on = false;
    this.partner = null;
    this.shown = 0;
    this.go = go;
    this.comparisons = [];
    this.ready = comparisonsOf(model).then((x) => { this.comparisons = x; }, () => {});
    this.pane = comparePane(this);
    this.keys = null;
  }

  /** The viewer moved to compile k: the partner follows (see keptPartner). */
  moved(rec, k) {
    this.rec = rec;
    if (this.on && k !== this.shown) this.partner = keptPartner(rec, this.partner, this.shown, k);
    this.shown = k;
    this.listen();
  }

  listen() {   // the keys C and D, on the viewer's root once the pane is in it
    const root = this.keys || !this.pane.el.closest ? null : this.pane.el.closest(".dl-viewer");
    if (!root) return;
    this.keys = root;
    root.addEventListener("keydown", (e) => {
      const tag = e.target && e.target.tagName;
      if (e.ctrlKey || e.metaKey || e.altKey || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      const action = { c: "compare", d: "divergence" }[e.key.toLowerCase()];
      if (!action) return;
      e.preventDefault();
      e.stopPropagation();
      this.act(action);
    });
  }

  /** "compare" turns compare mode on or off; "divergence" goes to the first divergence. */
  act(action) {
    if (!this.rec) return;
    if (action === "compare") {
      this.on = !this.on;
      this.partner = this.on ? defaultPartner(this.rec, this.shown) : null;
      return this.go(null);
    }
    if (action === "divergence" && this.on) {
      const to = divergenceTarget(this.rec, this.comparisons, this.shown, this.partner);
      if (to) this.go(to);
    }
  }

  /** The second selector chose compile j. */
  choose(j) {
    this.partner = Number.isInteger(j) ? j : null;
    this.go(null);
  }

  /** Where a click on `t` leads when it is one of compare mode's links (null otherwise);
   * its buttons act at once. */
  link(rec, t) {
    this.rec = rec;
    const act = t.closest("[data-cmp-action]");
    if (act) return this.act(act.dataset.cmpAction) ?? null;
    const go = t.closest("[data-cmp-go]");
    return go ? compareTarget(rec, go.dataset) : null;
  }
}
