// The bytecode pane: the code running at the step as Dynamo walks it, the current
// instruction marked; where Dynamo cleaned it, the original `dis` beside it, row by row.

import { codeListing, walkedOf } from "../bytecode.js";
import { crumbs, h, noSteps, pane, part, resetPane, setTitle, sync, textRow } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";

// The pane scrolls to the current instruction; a long code shows a window around it.
export const BYTECODE_BEFORE = 30;   // instructions shown above the current one
export const BYTECODE_AFTER = 60;    // ... and below it

/** The bytecode of the code running at step i, as Dynamo walks it, the current
 * instruction marked; where Dynamo cleaned it, the original `dis` beside it, aligned. */
export function bytecodeView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const info = c.codes[s.code];
  if (!info) return { missing: true, offset: s.offset };
  const L = codeListing(info);
  const current = L.at.get(s.offset);
  const aligned = L.rows;
  const count = aligned ? aligned.length : L.walked.length;
  let here = current ?? 0;
  if (aligned) here = Math.max(0, aligned.findIndex((r) => r.walked === current));
  const ops = walkedOf(info);   // each row's opname, for its help (help.js)
  const first = Math.max(0, here - BYTECODE_BEFORE);
  const last = Math.min(count, here + BYTECODE_AFTER + 1);
  const rows = [];
  for (let k = first; k < last; k++) {
    if (!aligned) {
      rows.push({ walked: L.walked[k], original: null, current: k === current, change: null, op: ops[k].opname, offset: ops[k].offset });
      continue;
    }
    const r = aligned[k];
    const change = !r.changed ? null : r.walked == null ? "removed" : r.original == null ? "inserted" : "changed";
    rows.push({
      walked: r.walked != null ? L.walked[r.walked] : null,
      original: r.original != null ? L.original[r.original] : null,
      current: current != null && r.walked === current, change,
      op: r.walked != null ? ops[r.walked].opname : null, offset: r.walked != null ? ops[r.walked].offset : null,
      origOp: r.original != null ? info.instructions[r.original].opname : null,
    });
  }
  return { offset: s.offset, aligned: !!aligned, rows, above: first, below: count - last };
}

/** The pane. view: {c, k, i}. */
export function bytecodePane() {
  const p = pane("dl-bytecode", "Bytecode");
  let offsetEl = null;   // the title's `· offset N`, updated in place

  function paint({ c, k, i }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Bytecode");
    const view = bytecodeView(c, i);
    setTitle(p, JSON.stringify([s.code, s.inline_stack]), () =>
      ["Bytecode · ", crumbs(s), (offsetEl = h("span", { class: "dl-dim" }))]);
    const offset = ` · offset ${s.offset}`;
    if (offsetEl.textContent !== offset) offsetEl.textContent = offset;
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, "(unknown code)") }]);
      return;
    }
    const pre = part(p, "pre", () => h("pre", { class: "dl-code" }));
    sync(p.body, [
      view.aligned ? {
        key: "pair-head", make: () => h("div", { class: "dl-pair dl-pair-head dl-dim" },
          h("span", { class: "dl-cell" }, "as Dynamo walks it (cleaned)"),
          h("span", { class: "dl-cell" }, "as Python compiled it (dis)")),
      } : null,
      { key: "pre", make: () => pre },
    ].filter(Boolean));
    const first = view.above;
    sync(pre, [
      view.above ? textRow("dl-more", `… ${view.above} instruction(s) above`) : null,
      ...view.rows.map((r, j) => ({
        key: `${s.code}:${first + j}`,
        cls: `dl-row${r.current ? " dl-current" : ""}${r.change ? ` dl-${r.change}` : ""}${view.aligned ? " dl-pair" : ""}`,
        current: r.current,
        // A row is focusable and explains its opcode (help.js); the original cell its own;
        // `data-offset` (the walked offset) lets the linked panes mark it (provenance.js).
        make: () => (view.aligned ?
          h("span", { tabindex: 0, "data-help-op": r.op ?? r.origOp, "data-offset": r.offset },
            h("span", { class: "dl-cell" }, r.walked ?? ""),
            h("span", { class: "dl-cell dl-orig", "data-help-op": r.origOp !== r.op ? r.origOp : null }, r.original ?? "")) :
          h("span", { tabindex: 0, "data-help-op": r.op, "data-offset": r.offset }, r.walked)),
      })),
      view.below ? textRow("dl-more", `… ${view.below} instruction(s) below`) : null,
    ].filter(Boolean));
  }

  /** After every pane has painted: the current instruction scrolled into the pane's view. */
  function reveal() {
    scrollIntoPane(p.body, [p.body.querySelector(".dl-row.dl-current")], { centre: true });
  }

  /** While predict mode asks about an instruction of this code (question q, at step i of
   * c), its row is marked, so the learner knows which one they are predicting. */
  function asked(q, c, i) {
    for (const el of p.body.querySelectorAll(".dl-row.dl-asked")) el.classList.remove("dl-asked");
    const s = c && c.steps[i];
    if (!q || !s || q.code !== s.code || q.offset == null) return;
    p.body.querySelector(`.dl-row[data-offset="${Number(q.offset)}"]`)?.classList.add("dl-asked");
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal, asked };
}
