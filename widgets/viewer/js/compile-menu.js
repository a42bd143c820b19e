// The compile selector: every compile with how it relates to those before it (a recompile
// of [0/0] and the guard that failed, a resume of [0/0_1] after its graph break), and
// compare mode's button and second selector (the compile set beside the one shown).
// Beside the selector, what `dynamo-lab explain` says about the compile shown (its
// function's outcome, the causes of its recompile with the guard and the user's line, the
// fixes): the kernel's words (widgets/viewer/state.py `answers`), never the viewer's own.
// Part of the controls (controls.js puts these in the bar and paints them).

import { compileTitle } from "./recording.js";
import { code, h } from "./dom.js";
import { framePartners, refusals, relationOf } from "./compare.js";
import { answerLineText, answerLines } from "./answers.js";

/** The text of compile k's option: its title and its relation. */
export function compileOption(rec, titles, k) {
  const relation = relationOf(rec, k);
  return compileTitle(titles, rec.compiles[k], k) + (relation ? ` · ${relation}` : "");
}

/** Explain's answer for compile k, put into `el` (text only: program text is data); `el`
 * is hidden when explain says nothing of it. */
export function fillAnswer(el, rec, k) {
  const lines = answerLines(rec, k);
  el.hidden = !lines.length;
  el.replaceChildren(...lines.map((x, j) => h("div", { class: `dl-answer-line dl-answer-${x.kind}` },
    j ? null : h("b", { class: "dl-answer-title" }, "dynamo-lab explain: "),
    x.text, x.user ? [" · your line: ", code(x.user)] : null)));
  return el;
}

/** {selector, compare, partner, els, selectCompile(c, k), paint(view), disable()}; `mode` is
 * compare mode (panes/compare.js CompareMode): its button and second selector act on it. */
export function compileMenu(rec, titles, mode) {
  const selector = h("select", { class: "dl-compile", title: "the compile shown" },
    rec.compiles.map((c, k) => h("option", {
      value: k, title: answerLines(rec, k).map(answerLineText).join("\n") || null,
    }, compileOption(rec, titles, k))));
  const answer = h("div", {   // explain's words on the compile shown
    class: "dl-answer", hidden: true, role: "note", "aria-label": "what dynamo-lab explain says about this compile",
  });
  const compare = h("button", {
    class: "dl-button dl-compare-toggle", type: "button", "data-cmp-action": "compare", "aria-pressed": "false",
    title: "compare mode: this compile beside another compile of its frame, what differs and why it recompiled (C)",
  }, "compare");
  const partner = h("select", { class: "dl-partner", title: "the compile set beside the one shown", "aria-label": "compare with", hidden: true });
  let listed = null;   // the compile whose partners `partner` lists
  if (mode) partner.addEventListener("change", () => mode.choose(partner.value === "" ? null : Number(partner.value)));

  function selectCompile(c, k) {
    selector.value = String(k);
    fillAnswer(answer, rec, k);
    compare.disabled = !framePartners(rec, k).length && !refusals(rec, [k]).length;
  }

  function paint(view) {
    const on = !!(mode && mode.on);
    if (compare.getAttribute("aria-pressed") !== String(on)) compare.setAttribute("aria-pressed", String(on));
    compare.classList.toggle("dl-on", on);
    partner.hidden = !on;
    if (!on) return;
    if (listed !== view.k) {
      listed = view.k;
      const ks = framePartners(rec, view.k);
      partner.replaceChildren(...(ks.length ?
        ks.map((j) => h("option", { value: j }, `beside ${compileTitle(titles, rec.compiles[j], j)}`)) :
        [h("option", { value: "" }, "no other compile of this frame")]));
      partner.disabled = !ks.length;
    }
    const value = mode.partner == null ? "" : String(mode.partner);
    if (partner.value !== value) partner.value = value;
  }

  function disable() {
    selector.disabled = compare.disabled = partner.disabled = true;
  }

  return { selector, compare, partner, answer, els: [selector, compare, partner, answer], selectCompile, paint, disable };
}
