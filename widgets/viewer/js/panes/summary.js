// What stays while stepping: the recording's header (how much it holds, what ended it)
// and the summary of the compile shown (its facts, why it was recompiled, restarted or
// broke). The recompile reason's link carries `data-reason`, the break's `data-action`.

import { breakStep, compileTitle, lastStep, recompileTarget, stepCount } from "../recording.js";
import { fileLabel } from "../navigation.js";
import { code, h } from "../dom.js";
import { restartedByBreak } from "../break-card.js";
import { failedText } from "../compare.js";

/** The recording's header: compiles, steps, graph breaks, torch; what ended or capped it. */
export function recordingHeader(rec) {
  const facts = [`${rec.compiles.length} compile(s)`, `${stepCount(rec)} steps`];
  if (rec.counters && rec.counters.graph_breaks != null) facts.push(`${rec.counters.graph_breaks} graph break(s)`);
  if (rec.torch_version) facts.push(`torch ${rec.torch_version}`);
  const out = [h("div", { class: "dl-head", role: "heading", "aria-level": 2 }, h("b", null, "Recording"), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
  if (rec.ended_by) {
    out.push(h("div", { class: "dl-banner dl-error" }, "Ended by the exception ", code(rec.ended_by),
      ": what was recorded until then is shown."));
  }
  if (rec.truncated) {
    out.push(h("div", { class: "dl-banner" }, `The step cap (max_steps=${rec.max_steps}) was reached: later steps were not stored. Record again with a larger cap to see them.`));
  }
  for (const e of rec.events || []) {
    if (["cache_limit", "error", "recorder_error"].includes(e.kind)) {
      out.push(h("div", { class: "dl-banner dl-error" }, `${e.kind}: `, e.compile_id ? `[${e.compile_id}] ` : "", e.message));
    }
  }
  if (rec.schema > 2) {
    out.push(h("div", { class: "dl-banner" }, `This recording uses schema ${rec.schema}; this viewer knows schemas 1 and 2: some of it may not show. Update dynamo-lab.`));
  }
  return h("div", { class: "dl-header" }, out);
}

/** How many nodes the compile's graph has, and, where the graph pane counts more (it draws
 * every node made while tracing), how many of those the final graph left out. */
export function nodeCount(c) {
  const kept = c.nodes.filter((n) => n.in_graph).length, made = c.nodes.length;
  return kept === made ? `${kept} graph nodes` :
    `${kept} graph nodes (${made} made while tracing: ${made - kept} not in the final graph)`;
}

/** The compile's summary, made once per compile: selectCompile({rec, titles, c, k}). */
export function compileSummary(rec) {
  const el = h("div", { class: "dl-summary" });
  if (!rec.compiles.length) el.append(h("div", { class: "dl-banner" }, "Nothing was compiled while recording."));

  function selectCompile({ titles, c, k }) {
    const name = fileLabel(c.filename);   // steps counted as the controls count them: 0 to the last
    const facts = [`${name}:${c.firstlineno}`, `outcome: ${c.outcome}`, c.steps.length ? `steps 0–${lastStep(c)}` : "no steps",
      nodeCount(c), `${c.guard_details.length} guards`];
    const out = [h("div", { class: "dl-head" }, h("b", null, compileTitle(titles, c, k)), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
    // In the compile menu's words (the failed guard, compare.js `failedText`), Dynamo's after.
    const failed = (c.failed_guards || []).filter((fg) => fg.compile_id === c.replaces);
    c.recompile_reasons.forEach((reason, r) => {
      const target = recompileTarget(rec, k, reason);
      const said = r === 0 && failed.length ? [`Recompiled because a guard of [${c.replaces}] failed: `, failedText(failed[0]),
        failed.length > 1 ? ` (+${failed.length - 1} more)` : "", h("span", { class: "dl-dim" }, ` · Dynamo's words: ${reason} `)] :
        ["Recompiled because a guard failed: ", reason, " "];
      out.push(h("div", { class: "dl-banner" }, said,
        target ? h("button", {
          class: "dl-link dl-recompile", type: "button", "data-reason": r,
          title: `go to the guard that failed, in [${rec.compiles[target.compile].compile_id}]`,
        }, "show the guard that failed") : null));
    });
    const gb = c.graph_break;
    if (gb) {
      const at = breakStep(c);
      // One line: Dynamo's explanation and hints are read whole at the break (the caption's card).
      out.push(h("div", { class: "dl-banner dl-error" }, `Graph break${gb.lineno != null ? ` at line ${gb.lineno}` : ""}`,
        gb.line ? [": ", code(gb.line)] : "", " — ", gb.reason,
        restartedByBreak(c) ? ": Dynamo restarted the frame, to stop before it. " : " ",
        at != null ? h("button", { class: "dl-link dl-break-link", type: "button", "data-action": "break", title: `go to step ${at}, where it broke (B)` }, "go to the break: why and what to do") : null));
    }
    // A restart of another cause: Dynamo's reason as it wrote it, in its lines (viewer.css).
    if (c.restart_reason && !restartedByBreak(c)) out.push(h("div", { class: "dl-banner dl-restart" }, `Restarted: ${c.restart_reason}`));
    if (c.error) out.push(h("div", { class: "dl-banner dl-error" }, `${c.outcome}: ${c.error}`));
    if (c.truncated) {
      out.push(h("div", { class: "dl-banner" }, "Truncated: the step cap was reached during this compile, so its later steps are missing."));
    }
    el.replaceChildren(...out);
  }

  return { el, selectCompile, paint() {} };
}
