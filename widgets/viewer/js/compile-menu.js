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

/** Explain's answer for compile k, put into the fold `el` (text only: program text is
 * data): its summary says the line that matters most (the cause of a recompile, else the
 * outcome) and how many fixes; opened, every line. Hidden when explain says nothing of it;
 * open or closed as the learner left it. */
export function fillAnswer(el, rec, k) {
  const lines = answerLines(rec, k);
  el.hidden = !lines.length;
  const first = lines.find((x) => x.kind === "cause") || lines[0];
  const fixes = lines.filter((x) => x.kind === "fix").length;
  const line = (x) => h("div", { class: `dl-answer-line dl-answer-${x.kind}` },
    x.text, x.user ? [" · your line: ", code(x.user)] : null);
  el.replaceChildren(...(first ? [
    h("summary", { class: "dl-answer-summary", title: `what dynamo-lab explain says about this compile: ${first.text} (open for every line)` },
      h("b", { class: "dl-answer-title" }, "explain"), fixes ? ` (${fixes} fix${fixes > 1 ? "es" : ""})` : "", ": ",
      h("span", { class: "dl-answer-first" }, first.text)),
    h("div", { class: "dl-answer-lines" }, lines.map(line))] : []));
  return el;
}

/** {selector, compare, partner, els, selectCompile(c, k), paint(view), disable()}; `mode` is
 * compare mode (panes/compare.js CompareMode): its button and second selector act on it. */
export function compileMenu(rec, titles, mode) {
  const selector = h("select", { class: "dl-compile", title: "the compile shown" },
    rec.compiles.map((c, k) => h("option", {
      value: k, title: answerLines(rec, k).map(answerLineText).join("\n") || null,
    }, compileOption(rec, titles, k))));
  const answer = h("details", { class: "dl-answer", hidden: true });   // explain's words on the compile shown
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
