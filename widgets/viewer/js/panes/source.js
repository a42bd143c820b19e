// The source pane: the code running at the step, the current line marked, and the line of
// the graph break once the break has happened; a long source shows a window around it.
// A step with no line of its own (MAKE_CELL, COPY_FREE_VARS before a function's first
// line) marks no line as current: the line it comes before is outlined instead.

import { crumbs, h, noSteps, pane, part, resetPane, setTitle, sync, textRow } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";
import { fileLabel, lineBefore } from "../navigation.js";

export const SOURCE_WINDOW = 40;     // longer sources show this many lines around the current one

/** The source of the code running at step i: a window of rows around the current line,
 * the line of the graph break marked once the break has happened. */
export function sourceView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const info = c.codes[s.code];
  if (!info || !info.source_lines.length) return { missing: info ? fileLabel(info.filename) : "unknown file" };
  const gb = c.graph_break;
  const breakLine = gb && gb.step != null && i >= gb.step && gb.code_name === info.name ? gb.lineno : null;
  const lines = info.source_lines;
  const before = lineBefore(c, i);
  const at = s.lineno ?? before;
  let first = 0, last = lines.length;
  if (lines.length > SOURCE_WINDOW && at != null) {
    const centre = at - info.firstlineno;
    first = Math.max(0, Math.min(centre - Math.floor(SOURCE_WINDOW / 3), lines.length - SOURCE_WINDOW));
    last = first + SOURCE_WINDOW;
  }
  const rows = [];
  for (let k = first; k < last; k++) {
    const lineno = info.firstlineno + k;
    rows.push({ lineno, text: lines[k], current: lineno === s.lineno, before: lineno === before, broke: lineno === breakLine });
  }
  return { rows, above: first, below: lines.length - last };
}

/** The pane. view: {c, k, i}. */
export function sourcePane() {
  const p = pane("dl-source", "Source");

  function paint({ c, k, i }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Source");
    const view = sourceView(c, i);
    setTitle(p, JSON.stringify([s.code, s.inline_stack]), () => ["Source · ", crumbs(s)]);
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, `Source not available (${view.missing}).`) }]);
      return;
    }
    const pre = part(p, "pre", () => h("pre", { class: "dl-code" }));
    sync(p.body, [{ key: "pre", make: () => pre }]);
    sync(pre, [
      view.above ? textRow("dl-more", `… ${view.above} line(s) above`) : null,
      ...view.rows.map((r) => ({
        key: `${s.code}:${r.lineno}`,
        cls: `dl-row${r.broke ? " dl-break" : ""}${r.current ? " dl-current" : ""}${r.before ? " dl-before" : ""}`,
        current: r.current,
        make: () => h("span", { "data-line": r.lineno },
          `${String(r.lineno).padStart(4)} `, h("span", { class: "dl-mark" }), " ", r.text),
      })),
      view.below ? textRow("dl-more", `… ${view.below} line(s) below`) : null,
    ].filter(Boolean));
  }

  /** After every pane has painted: the current line scrolled into the pane's view. */
  function reveal() {
    scrollIntoPane(p.body, [p.body.querySelector(".dl-row.dl-current, .dl-row.dl-before")], { centre: true });
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal };
}
