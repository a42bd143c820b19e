// The caption under the controls: what step i is and what it did (the line, the
// instruction, the nodes and guards it added, a node it renamed), a graph break or step
// cap met there, and the note a jump leaves (where it came from, and that return goes back).

import { instructionOf, lastStep, memo, stepLabel } from "../recording.js";
import { code, commaList, h, plural } from "../dom.js";
import { breakCard } from "../break-card.js";
import { lineBefore } from "../navigation.js";
import { placeText } from "../answers.js";

/** For each step, the step of its caller that was last run before it (where an inlined
 * call was made from), or null in the frame itself. */
function callerSteps(c) {
  return memo(c, "callers", () => {
    const last = [];   // per depth, the last step seen at it
    return c.steps.map((s, j) => {
      last[s.depth] = j;
      last.length = s.depth + 1;
      return s.depth > 0 && last[s.depth - 1] != null ? last[s.depth - 1] : null;
    });
  });
}

/** The function step j runs, named as a learner knows it: its code's qualified name from
 * the last `<locals>` on (`PretrainedConfig.__getattribute__`, `times` for a function
 * defined in a function); in a recording without qualified names, a method with the class
 * of its `self` as the recording read it (`Block.forward`); else the code's name. */
export function functionName(c, j) {
  const s = c.steps[j];
  if (!s) return null;
  const qualname = c.codes && c.codes[s.code] && c.codes[s.code].qualname;
  if (qualname) return qualname.split(".<locals>.").at(-1);
  const self = s.locals && s.locals.self != null ? c.vars[s.locals.self] : null;
  const cls = self && self.python_type;
  return cls && /^[A-Za-z_][\w.]*$/.test(cls) && s.code_name !== "<module>" ? `${cls}.${s.code_name}` : s.code_name;
}

/** The caption's facts about step i (null for a compile with no steps). */
export function stepSummary(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const caller = s.depth > 0 ? callerSteps(c)[i] : null;
  return {
    label: stepLabel(c, i),
    lineno: s.lineno,
    before: lineBefore(c, i),
    code_name: functionName(c, i),
    inlinedFrom: s.inline_stack.length ?
      (caller != null ? functionName(c, caller) : s.inline_stack[s.inline_stack.length - 1][0]) : null,
    instruction: instructionOf(s),
    renamed: s.nodes_renamed || [],
    nodes: s.nodes_added,
    guards: s.guards_added.length,
    guardKinds: [...new Set(s.guards_added.map((g) => c.guard_details[g].kind))].sort(),
    breaks: !!c.graph_break && c.graph_break.step === i,
    capped: !!c.truncated && i === lastStep(c),
  };
}

/** What Dynamo does next, in a sentence. */
function afterText(after) {
  if (after.kind === "restart") {
    return ["Dynamo drops this attempt and traces the frame again (the next attempt), stopping before this instruction."];
  }
  if (after.kind === "resume") {
    return ["Dynamo compiles the graph built so far, runs this instruction in plain Python and goes on in a resume function: ",
      commaList(after.functions), "."];
  }
  return [];
}

/** What explain says of the break (its user line where it is not the card's, its fix, its
 * note), as the card's second block; null when explain says none of these. */
function answerPart(card) {
  const a = card.answer;
  if (!a) return null;
  const rows = [];
  const user = a.user && (a.user.file !== a.file || a.user.lineno !== a.lineno) ? placeText(a.user) : null;
  if (user) rows.push(h("div", { class: "dl-card-user" }, "Your line: ", code(user)));
  for (const fix of a.advice) rows.push(h("div", { class: "dl-card-fix" }, h("b", null, "Fix: "), fix));
  if (a.note) rows.push(h("div", { class: "dl-card-note" }, `Note: ${a.note}`));
  return rows.length ? h("div", { class: "dl-card-answer", title: "what dynamo-lab explain says of this break" }, rows) : null;
}

/** The break card (break-card.js `breakCard`) as one block: the reason with its GB id, the
 * user's line, Dynamo's explanation, each hint on its own line, what Dynamo does next, the
 * link and the other compiles that met the same break. Focusable, so the keyboard reaches it. */
export function breakCardElement(card) {
  const head = h("div", { class: "dl-card-head dl-gb-head" }, h("b", null, "Graph break here: "),
    card.id ? [h("span", { class: "dl-gb-id", title: "the id of this break in torch's graph-break registry" }, card.id), " "] : null,
    h("b", { class: "dl-card-reason" }, card.reason),
    card.lineno != null || card.line ? h("span", { class: "dl-card-line" }, " · ", card.lineno != null ? `line ${card.lineno}` : "",
      card.line ? [": ", code(card.line)] : "") : null);
  const out = [head];
  const said = answerPart(card);
  if (said) out.push(said);
  if (card.explanation) out.push(h("div", { class: "dl-gb-explanation" }, card.explanation));
  if (card.hints.length) {
    out.push(h("div", { class: "dl-card-hints" }, h("span", { class: "dl-gb-hints-title" }, "Dynamo's hints"),
      h("ul", { class: "dl-gb-hints" }, card.hints.map((x) => h("li", null, x)))));
  }
  const then = afterText(card.after);
  if (then.length) out.push(h("div", { class: "dl-card-then" }, then));
  const more = [];
  if (card.link) {
    more.push("More on ", card.id || "this break", ": ",
      // A button, not an <a>: the viewer makes no element that loads anything by itself.
      h("button", {
        class: "dl-link dl-gb-link", type: "button", title: "open this page in a new tab",
        onclick: () => window.open(card.link, "_blank", "noopener,noreferrer"),
      }, card.link));
  }
  if (card.also.length) {
    more.push(more.length ? " · " : "", h("span", { class: "dl-gb-also" },
      `the same break also stopped ${plural(card.also.length, "other compile")}: `,
      card.also.map((id, j) => [j ? ", " : "", `[${id}]`])));
  }
  if (more.length) out.push(h("div", { class: "dl-card-more dl-dim" }, more));
  if (card.general || card.context) {
    out.push(h("details", { class: "dl-gb-registry" }, h("summary", null, `The registry's entry for ${card.id || "this break"}, as torch ships it`),
      card.general ? h("div", null, h("b", null, "Explanation: "), card.general) : null,
      card.context ? h("div", null, h("b", null, "Context: "), card.context) : null));
  }
  return h("div", {
    class: "dl-card dl-gb", role: "note", tabindex: 0,
    "aria-label": `Dynamo on this graph break${card.id ? `, ${card.id}` : ""}`,
  }, out);
}

/** The caption. view: {c, i, note (what a jump said, or null), returnable}. */
export function captionPane() {
  const el = h("div", { class: "dl-caption-bar" });

  function paint({ c, k, i, note, returnable, rec }) {
    const d = stepSummary(c, i);
    const out = [];
    if (!d) {
      out.push(h("div", { class: "dl-caption" }, h("span", { class: "dl-stepno" }, stepLabel(c, i)), " · no steps"));
    } else {
      const did = [];
      if (d.nodes.length) did.push([`added graph node${d.nodes.length > 1 ? "s" : ""} `, commaList(d.nodes)]);
      if (d.guards) did.push(`installed ${plural(d.guards, "guard")} (${d.guardKinds.join(", ")})`);
      for (const [from, to] of d.renamed) {
        did.push(["renamed graph node ", code(from), " to ", code(to), " (Dynamo names a node after the variable it is stored in)"]);
      }
      const where = d.lineno != null ? `line ${d.lineno}` : d.before != null ? `before line ${d.before}` : "before its first line";
      out.push(h("div", { class: "dl-caption" },
        h("span", { class: "dl-stepno" }, d.label),
        ` · ${where} in `, code(d.code_name),
        d.inlinedFrom != null ? ` (inlined from ${d.inlinedFrom})` : "", " · ",
        h("code", { "data-help-op": c.steps[i].opname, tabindex: 0 }, d.instruction),
        did.length ? [" → ", did.map((x, j) => [j ? "; " : "", x])] : ""));
      const card = d.breaks && rec ? breakCard(rec, k) : null;
      if (card) out.push(breakCardElement(card));
      if (d.capped) {
        out.push(h("div", { class: "dl-banner" }, "The step cap was reached here: Dynamo went on, but its later steps were not stored."));
      }
    }
    if (note) {
      out.push(h("div", { class: "dl-note" }, "↪ ", note,
        returnable ? h("span", { class: "dl-dim" }, " · return (Backspace) goes back") : ""));
    }
    el.replaceChildren(...out);
    // The card is read whole: the caption grows to hold it and the panes give it room.
    el.classList.toggle("dl-carded", out.some((x) => x.classList && x.classList.contains("dl-card")));
  }

  return { el, selectCompile() {}, paint };
}
