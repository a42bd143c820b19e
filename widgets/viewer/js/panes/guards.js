// The guards pane: the guards installed so far, grouped by the value they guard (`L['x']`,
// `L['self'].fc1`, a global, the ambient state), newest first, the new ones marked and
// scrolled into view (a badge counts those below the fold), with a filter. Each guard is
// said as a person reads it: its kind once (the kind Dynamo installed, as the caption and
// a restarted attempt say it too), its check with object ids named as what they identify
// (`builtins.len is builtin len`), module paths as a program writes them; Dynamo's exact
// text is its tooltip and what "as written" shows. A guard links (`data-guard`) to the
// step that installed it; every row carries `data-guard-row` for the linked panes.

import { guardGroups, guardsAt, guardStep, lastStep } from "../recording.js";
import { filterWords, guardMatches, guardReading } from "../guards.js";
import { h, pane, part, plural, resetPane, setTitle, sync, textRow } from "../dom.js";
import { belowBadge, scrollIntoPane } from "../scroll.js";
import { symbolsOfText } from "../shapes.js";

export const RECENT_GUARDS = 40;     // the newest guards, whose groups are open
export const GROUP_ROWS = 40;        // guards listed in one group; older ones counted
export const MAX_GROUPS = 150;       // groups listed; the rest are counted (the filter finds them)

// -- what the pane shows at a step ----------------------------------------------------------

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

/** Guards (newest first) into groups by the value they guard, each group newest first,
 * the groups in order of their newest guard. */
function grouped(c, ks) {
  const byKey = new Map();
  for (const k of ks) {
    const r = guardReading(c, k);
    let grp = byKey.get(r.group.key);
    if (!grp) byKey.set(r.group.key, (grp = { ...r.group, guards: [] }));
    grp.guards.push(k);
  }
  return [...byKey.values()];
}

/** The pane's sections at step i for a filter: {after, traced, ambient} (each a list of
 * groups {key, label, scope, guards (newest first), open}), how many guards there are and
 * match, and how many groups are left out past MAX_GROUPS. `open`: the groups of the
 * recent guards (and of a followed one, `flashed`) are open; with a filter, every one. */
export function guardSections(c, i, filter = "", flashed = null) {
  const view = guardsView(c, i);
  const words = filterWords(filter);
  const groups = guardGroups(c);
  const installed = groups.stepped.slice(0, guardsAt(c, i)).reverse();
  const keep = (ks) => ks.filter((k) => guardMatches(c, k, words));
  const recent = new Set([...view.shown.map((g) => g.k), ...view.after.slice(-RECENT_GUARDS)]);
  if (flashed != null) recent.add(flashed);
  const mark = (list) => list.map((grp) => ({ ...grp, open: words.length > 0 || grp.guards.some((k) => recent.has(k)) }));
  const after = mark(grouped(c, keep([...view.after].reverse())));
  let traced = mark(grouped(c, keep(installed)));
  let left = 0;
  if (traced.length > MAX_GROUPS) {
    const cut = traced.slice(MAX_GROUPS);
    traced = traced.slice(0, MAX_GROUPS);
    // A followed guard's group is listed whatever its age.
    const followed = flashed != null ? cut.find((grp) => grp.guards.includes(flashed)) : null;
    if (followed) traced.push(followed);
    left = cut.length - (followed ? 1 : 0);
  }
  const ambient = keep(view.ambient);
  const matched = after.concat(traced).reduce((n, grp) => n + grp.guards.length, 0) + ambient.length;
  return {
    after, traced, ambient, left, total: view.total, fresh: view.shown.filter((g) => g.isNew).length,
    ambientCount: view.ambient.length, matched, filtering: words.length > 0,
    restarted: c.outcome === "restarted" || (!c.guard_tree && c.guard_details.some((g) => !g.ambient)),
  };
}

// -- painting ----------------------------------------------------------------------------------

/** One guard as a row: its kind, its check as read, and where and when it was installed. */
function guardItem(c, k, { isNew = false, flashed = null, i = 0, asWritten = false } = {}) {
  const g = c.guard_details[k];
  const r = guardReading(c, k);
  const step = guardStep(c, k);
  const linked = step != null && step !== i;
  return {
    key: `g${k}${asWritten ? "w" : ""}`,
    cls: [isNew ? "dl-new" : "", step != null ? "dl-linked" : "", flashed === k ? "dl-flash" : ""].join(" ").trim(),
    make: () => {
      const where = [];
      if (g.step != null) where.push(`step ${g.step}`);
      if (g.lineno) where.push(`line ${g.lineno}${g.line ? `: ${g.line}` : ""}${g.code_name ? ` (in ${g.code_name})` : ""}`);
      const check = asWritten ? [" ", g.text] :
        r.parts.map((p) => (typeof p === "string" ? p : h("span", { class: "dl-id", title: p.title }, p.chip)));
      // The symbols of the sizes it checks: each links to the shapes pane.
      const syms = symbolsOfText(c, g.text).map((n) => [" ", h("span", { class: "dl-sym", "data-help-symbol": n, tabindex: 0 }, n)]);
      const tip = [step != null ? `installed at step ${step}${linked ? ": click (or Enter) to go there" : ""}` : null,
        `as Dynamo wrote it: ${g.text}`].filter(Boolean).join("\n");
      // The check is cut at a few lines (all of it in the tooltip, and when focused), so a
      // new guard fits a small pane.
      return h("li", { "data-guard": step != null ? k : null, "data-guard-row": k, tabindex: 0, title: tip },
        h("span", { class: "dl-check" }, h("span", { class: "dl-guard-kind", "data-help-guard": r.kind, tabindex: 0 }, r.kind),
          asWritten ? check : [r.parts.length ? " " : "", check], syms.length ? h("span", { class: "dl-guard-syms" }, syms) : null),
        where.length ? h("span", { class: "dl-where" }, where.join(" · ")) : null);
    },
  };
}

/** The pane. view: {c, k, i, flash ({guard} when a link led here)}. */
export function guardsPane() {
  const p = pane("dl-guards", "Guards");
  const badge = belowBadge(p.el, p.body);
  const input = h("input", {
    class: "dl-guard-filter", type: "search", placeholder: "filter guards: source, kind or check",
    "aria-label": "filter the guards by source, kind or check", spellcheck: "false",
  });
  const count = h("span", { class: "dl-dim dl-guard-count", role: "status" });
  const written = h("input", { type: "checkbox", class: "dl-as-written" });
  // Why a restarted attempt's guards read otherwise than the kept attempt's, said in one line.
  const why = h("span", {
    class: "dl-tag dl-guard-why", hidden: true, tabindex: 0,
    title: "Dynamo restarted this attempt and never compiled it, so it built no guard tree: each guard here is " +
      "its kind and the source it guards. The attempt that was kept shows each as the check it runs.",
  }, "restarted: kind and source only");
  const bar = h("div", { class: "dl-guard-bar" }, input, why, count,
    h("label", { class: "dl-dim", title: "show each guard exactly as Dynamo wrote it" }, written, " as written"));
  p.el.insertBefore(bar, p.body);
  let last = null;          // the view painted last, to paint again when the filter changes
  let groupEls = new Map(); // group key -> its element, kept per compile
  const chosen = new Map(); // group key -> open or closed, as the learner chose
  let filterTimer = null;

  input.addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => { if (last) { paint(last); reveal(); } }, 80);
  });
  input.addEventListener("keydown", (e) => {
    e.stopPropagation();   // typing is the filter's, not the viewer's keys (nor JupyterLab's)
    if (e.key === "Escape") {
      if (input.value) { input.value = ""; if (last) paint(last); } else p.el.closest(".dl-viewer")?.focus({ preventScroll: true });
    }
  });
  written.addEventListener("change", () => { if (last) paint(last); });   // rows are keyed by the form they show

  function groupEl(name, grp) {
    let el = groupEls.get(`${name}:${grp.key}`);
    if (!el) {
      const head = h("summary", { class: "dl-group-head", title: grp.key },
        h("code", { class: "dl-group-label" }, grp.label),
        grp.scope === "global" ? h("span", { class: "dl-tag" }, "global") : null,
        " ", h("span", { class: "dl-dim dl-group-count" }));
      const list = h("ul", { class: "dl-list" });
      el = h("details", { class: "dl-group", "data-guard-group": grp.key }, head, list);
      el.__dl = { list, count: head.lastChild, wanted: null };
      el.addEventListener("toggle", () => {
        if (el.open !== el.__dl.wanted) { chosen.set(grp.key, el.open); if (last) paint(last); }
      });
      groupEls.set(`${name}:${grp.key}`, el);
    }
    return el;
  }

  function paintGroup(el, grp, c, i, flashed, asWritten) {
    const d = el.__dl;
    const fresh = grp.guards.filter((k) => c.guard_details[k].step === i && c.steps.length > 0).length;
    const n = `· ${plural(grp.guards.length, "guard")}${fresh ? `, ${fresh} new` : ""}`;
    if (d.count.textContent !== n) d.count.textContent = n;
    el.classList.toggle("dl-has-new", fresh > 0);
    const open = chosen.has(grp.key) ? chosen.get(grp.key) : grp.open;
    d.wanted = open;
    if (el.open !== open) el.open = open;
    if (!open) return sync(d.list, []);
    let ks = grp.guards.slice(0, GROUP_ROWS);
    if (flashed != null && grp.guards.includes(flashed) && !ks.includes(flashed)) ks = [flashed, ...ks];
    const rows = ks.map((k) => guardItem(c, k, { isNew: c.steps.length > 0 && c.guard_details[k].step === i, flashed, i, asWritten }));
    const more = grp.guards.length - ks.length;
    if (more > 0) rows.push(textRow("dl-more dl-faint", `… ${plural(more, "earlier guard")} on this value`, "li"));
    sync(d.list, rows);
  }

  function paint(view) {
    last = view;
    const { c, k, i, flash } = view;
    const flashed = flash && flash.guard != null ? flash.guard : null;
    const asWritten = written.checked;
    const s = guardSections(c, i, input.value, flashed);
    setTitle(p, `${k}|${s.total}|${s.fresh}`, () =>
      ["Guards ", h("span", { class: "dl-dim" }, `· ${s.total} so far (${s.ambientCount} ambient)` +
        (s.fresh ? ` · ${s.fresh} new` : ""), " · by value, newest first")]);
    why.hidden = !s.restarted;
    const said = s.filtering ? `${s.matched} of ${s.total} match` : "";
    if (count.textContent !== said) count.textContent = said;
    const section = (name, groups) => groups.map((grp) => ({
      key: `${name}:${grp.key}`,
      make: () => groupEl(name, grp),
    }));
    const ambient = part(p, "ambient", () => h("details", { class: "dl-ambient" }, h("summary"), h("ul", { class: "dl-list" })));
    sync(p.body, [
      s.after.length ? textRow("dl-subtitle", "Installed after tracing, when the graph was compiled") : null,
      ...section("after", s.after),
      s.after.length && s.traced.length ? textRow("dl-subtitle", "Installed while tracing") : null,
      ...section("traced", s.traced),
      !s.after.length && !s.traced.length ? textRow("dl-faint", s.filtering ? "No guard installed so far matches the filter." :
        "No guards installed by the traced code yet.") : null,
      s.left ? textRow("dl-more dl-faint", `… ${plural(s.left, "more value")} with older guards: the filter finds them, the guard tree below lists them all`) : null,
      s.ambient.length ? { key: "ambient", make: () => ambient } : null,
    ].filter(Boolean));
    for (const [name, groups] of [["after", s.after], ["traced", s.traced]]) {
      for (const grp of groups) paintGroup(groupEl(name, grp), grp, c, i, flashed, asWritten);
    }
    if (s.ambient.length) {
      const summary = `${plural(s.ambient.length, "ambient guard")}: the global state every frame checks, installed before the first instruction`;
      if (ambient.firstChild.textContent !== summary) ambient.firstChild.textContent = summary;
      if (flashed != null && s.ambient.includes(flashed)) ambient.open = true;   // a guard-tree leaf led here
      sync(ambient.lastChild, ambient.open ? s.ambient.map((j) => guardItem(c, j, { i, asWritten, flashed })) : []);
      if (!ambient.__dlToggle) {
        ambient.__dlToggle = true;
        ambient.addEventListener("toggle", () => { if (last) paint(last); });
      }
    }
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
    // The first one's group heading comes into view with them where all of them fit.
    const head = marked[0].closest("details.dl-group");
    let below = head ? scrollIntoPane(p.body, [head.firstElementChild, ...marked]) : 1;
    if (below) below = scrollIntoPane(p.body, marked);
    badge(below && !flashed.length ? `${plural(below, "more new guard")} ↓` : null);
  }

  function selectCompile() {
    resetPane(p);
    groupEls = new Map();
    chosen.clear();
    last = null;
  }

  return { el: p.el, selectCompile, paint, reveal, filter: input };
}
