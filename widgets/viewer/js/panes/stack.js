// The stack pane: the VariableTracker stack (top first) and the symbolic locals after the
// step, what the step pushed or stored marked. A tracker's source links (`data-source`)
// to the step that first read it.

import { frameBefore, stackChange } from "../recording.js";
import { crumbs, h, noSteps, pane, part, resetPane, setTitle, sync, textRow } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";
import { withSymbols } from "../help.js";

/** The stack (top first) and the symbolic locals after step i, what changed marked. */
export function stackView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const ch = stackChange(c, i);
  const stack = [];
  for (let pos = s.stack.length - 1; pos >= 0; pos--) {
    stack.push({ v: c.vars[s.stack[pos]], isNew: !ch.first && pos >= ch.kept });
  }
  const j = frameBefore(c, i);
  const then = j == null ? null : c.steps[j].locals;
  const locals = Object.entries(s.locals).map(([name, id]) =>
    ({ name, v: c.vars[id], isNew: !!then && then[name] !== id }));
  if (then) {
    for (const name of Object.keys(then)) if (!(name in s.locals)) locals.push({ name, gone: true });
  }
  return { stack, locals, ...ch };
}

/** One tracker as a row: its kind, its detail, its source as a link. */
function varItem(v, key, name, isNew, flashed, id) {
  const flash = flashed != null && v.source === flashed;
  return {
    key, cls: `${isNew ? "dl-new" : ""}${flash ? " dl-flash" : ""}`.trim(),
    make: () => {
      const parts = [h("span", {
        class: v.lazy && !v.realized ? "dl-kind dl-lazy" : "dl-kind", tabindex: 0, "data-help-tracker": v.kind,
      }, v.kind)];
      if (v.detail) parts.push(" ", withSymbols(v.detail));
      if (v.lazy && v.realized) parts.push(" ", h("span", { class: "dl-tag" }, "lazy, realized"));
      if (v.source) {
        parts.push(" ", h("button", {
          class: "dl-src dl-link", type: "button", "data-source": v.source,
          title: "go to the step that first read this source",
        }, `<-\u00a0${v.source}`));   // no break after the arrow: a long source wraps inside itself
      }
      return h("li", { title: v.python_type ? `models a ${v.python_type}` : null, "data-var": id },   // data-var: the linked panes
        name != null ? [h("b", null, name), " = "] : null, parts);
    },
  };
}

/** The pane. view: {c, k, i, flash ({source} when a link led here)}. */
export function stackPane() {
  const p = pane("dl-stack", "Stack");

  function paint({ c, k, i, flash }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Stack and locals");
    const view = stackView(c, i);
    const flashed = flash ? flash.source : null;
    const change = view.first ? "" : ` · popped ${view.popped}, pushed ${view.pushed}`;
    setTitle(p, JSON.stringify([s.stack.length, change, s.code, s.inline_stack]), () =>
      ["Stack ", h("span", { class: "dl-dim" }, `(top first) · ${s.stack.length} item(s)${change}`), " · ", crumbs(s)]);
    const stack = part(p, "stack", () => h("ol", { class: "dl-list" }));
    const locals = part(p, "locals", () => h("ul", { class: "dl-list" }));
    sync(p.body, [
      view.stack.length ? { key: "stack", make: () => stack } : textRow("dl-faint", "(empty)"),
      { key: "subtitle", make: () => h("div", { class: "dl-subtitle" }, "Symbolic locals") },
      view.locals.length ? { key: "locals", make: () => locals } : textRow("dl-faint", "(none)"),
    ]);
    const depth = s.stack.length;
    sync(stack, view.stack.map((e, j) => varItem(e.v, `${depth - 1 - j}:${s.stack[depth - 1 - j]}`, null, e.isNew, flashed, s.stack[depth - 1 - j])));
    sync(locals, view.locals.map((e) => (e.gone ?
      { key: `gone:${e.name}`, cls: "dl-gone", make: () => h("li", null, h("b", null, e.name), " (deleted)") } :
      varItem(e.v, `${e.name}=${s.locals[e.name]}`, e.name, e.isNew, flashed, s.locals[e.name]))));
  }

  /** After every pane has painted: what the step pushed or stored (or a followed source)
   * scrolled into the pane's view. */
  function reveal() {
    const marked = [...p.body.querySelectorAll("li.dl-flash")];
    scrollIntoPane(p.body, marked.length ? marked : [...p.body.querySelectorAll("li.dl-new")]);
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal };
}
