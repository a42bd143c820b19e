// The guards pane: the guards installed so far, newest first, the new ones marked and
// scrolled into view (a badge counts those below the fold). Those added after tracing come
// first at the last step, then the recent ones the code installed; earlier ones are
// counted and the ambient ones folded at the end. A guard links (`data-guard`) to the
// step that installed it.

import { guardGroups, guardsAt, guardStep, lastStep } from "../recording.js";
import { h, pane, part, plural, resetPane, setTitle, sync, textRow } from "../dom.js";
import { belowBadge, scrollIntoPane } from "../scroll.js";

export const RECENT_GUARDS = 40;     // guards listed in full; earlier ones are counted

/** The guards listed at step i, newest first: those added after tracing (at the last
 * step), the recent ones the code installed, how many earlier ones are only counted, and
 * the ambient ones (folded). */
export function guardsView(c, i) {
  const groups = guardGroups(c);
  const n = guardsAt(c, i);
  const atEnd = !c.steps.length || i === lastStep(c);
  const installed = groups.stepped.slice(0, n);
  const shown = installed.slice(-RECENT_GUARDS).reverse();
  // A step that installs more guards than are listed still lists every one of its own.
  let k = installed.length - shown.length - 1;
  while (k >= 0 && c.steps.length > 0 && c.guard_details[installed[k]].step === i) shown.push(installed[k--]);
  return {
    ambient: groups.ambient,
    earlier: k + 1,
    shown: shown.map((g) => ({ k: g, isNew: c.steps.length > 0 && c.guard_details[g].step === i })),
    after: atEnd ? groups.after : [],
    total: groups.ambient.length + n + (atEnd ? groups.after.length : 0),
  };
}

/** One guard as a row: its text, and where and when it was installed. */
function guardItem(c, k, isNew, flashed) {
  const g = c.guard_details[k];
  const step = guardStep(c, k);
  return {
    key: `g${k}`,
    cls: [isNew ? "dl-new" : "", step != null ? "dl-linked" : "", flashed === k ? "dl-flash" : ""].join(" ").trim(),
    make: () => {
      let where;
      if (g.lineno) {
        where = [`line ${g.lineno}`, g.line ? `: ${g.line}` : "", g.code_name ? ` (in ${g.code_name})` : ""];
      } else if (g.ambient) {
        where = ["ambient: installed for every frame"];
      } else {
        where = ["installed after tracing, when the graph was compiled"];
      }
      if (g.step != null) where.push(` · step ${g.step}`);
      // The kind the text names (`TYPE_MATCH: ...`) explains itself (help.js).
      const kind = g.tree_kind || g.kind;
      const text = g.text.startsWith(`${kind}:`) || g.text === kind ?
        [h("span", { class: "dl-guard-kind", "data-help-guard": kind, tabindex: 0 }, kind), g.text.slice(kind.length)] :
        [h("span", { class: "dl-guard-kind", "data-help-guard": g.kind, tabindex: 0 }, g.kind), " ", g.text];
      return h("li", {
        "data-guard": step != null ? k : null, tabindex: step != null ? 0 : null,
        title: step != null ? `installed at step ${step}: click (or Enter) to go there` : null,
      }, text, h("span", { class: "dl-where" }, where));
    },
  };
}

/** The pane. view: {c, k, i, flash ({guard} when a link led here)}. */
export function guardsPane() {
  const p = pane("dl-guards", "Guards");
  const badge = belowBadge(p.el, p.body);
  let fresh = 0;   // how many guards the step shown installed

  function paint({ c, k, i, flash }) {
    const view = guardsView(c, i);
    const flashed = flash && flash.guard != null ? flash.guard : null;
    fresh = view.shown.filter((g) => g.isNew).length;
    setTitle(p, `${k}|${view.total}|${fresh}`, () =>
      ["Guards ", h("span", { class: "dl-dim" }, `· ${view.total} installed so far (${view.ambient.length} ambient)` +
        (fresh ? ` · ${fresh} new` : ""), " · newest first")]);
    let shown = view.shown;
    // A guard reached through a link is shown even when it is older than the recent ones.
    if (flashed != null && !shown.some((g) => g.k === flashed) && guardStep(c, flashed) != null && guardStep(c, flashed) <= i) {
      shown = [{ k: flashed, isNew: c.guard_details[flashed].step === i }, ...shown];
    }
    const list = part(p, "list", () => h("ul", { class: "dl-list" }));
    const after = part(p, "after", () => h("ul", { class: "dl-list" }));
    sync(p.body, [
      view.after.length ? { key: "after-title", make: () => h("div", { class: "dl-subtitle" }, "After tracing") } : null,
      view.after.length ? { key: "after", make: () => after } : null,
      view.after.length && shown.length ? { key: "traced-title", make: () => h("div", { class: "dl-subtitle" }, "Installed while tracing") } : null,
      shown.length ? { key: "list", make: () => list } : null,
      !shown.length && !view.after.length ? textRow("dl-faint", "No guards installed by the traced code yet.") : null,
      view.earlier ? textRow("dl-more dl-faint", `… ${view.earlier} earlier guard(s); all of them are in the guard tree below`) : null,
      view.ambient.length ? {
        key: `ambient:${k}`, make: () => h("details", { class: "dl-ambient" },
          h("summary", null, `${view.ambient.length} ambient guard(s), installed before the first instruction`),
          h("ul", { class: "dl-list" }, view.ambient.map((j) => guardItem(c, j, false, null).make()))),
      } : null,
    ].filter(Boolean));
    sync(list, shown.map((g) => guardItem(c, g.k, g.isNew, flashed)));
    sync(after, view.after.map((j) => guardItem(c, j, false, flashed)));
  }

  /** After every pane has painted: the followed guard, or the new ones, in view; the
   * badge says how many new ones stay below. With nothing new the list stays put. */
  function reveal() {
    const flashed = [...p.body.querySelectorAll("li.dl-flash")];
    const marked = flashed.length ? flashed : [...p.body.querySelectorAll("li.dl-new")];
    if (!marked.length) {
      badge(null);
      return;
    }
    const below = scrollIntoPane(p.body, marked);
    badge(below && !flashed.length ? `${plural(below, "more new guard")} ↓` : null);
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal };
}
