// The break card: what the viewer says at a graph break, as one block to read. Dynamo's
// message runs its explanation and hints together ("… Explanation: … Hint: … Hint: …");
// the card takes them apart: the reason with its GB id and link, the user's line, the
// explanation, each hint on its own line, and what Dynamo does next (restarts the frame,
// or compiles what it has and resumes after the line), and what `dynamo-lab explain` says
// of that break (the user's own line, the fix): the kernel's words, not the card's. Pure
// functions of the recording (no DOM): node imports this file and tests it;
// panes/caption.js paints the card.

import { breakHelp } from "./help.js";
import { answerOf } from "./answers.js";

/** A link the card may open: an https address, else null (the recording's text is data). */
export function safeLink(link) {
  return typeof link === "string" && /^https:\/\/[^\s"'<>]+$/.test(link) ? link : null;
}

/** What Dynamo does after compile k's break: {kind: "restart"} (this attempt is dropped and
 * the frame traced again, stopping before the break), {kind: "resume", functions} (the graph
 * so far is compiled, the instruction runs in Python, a resume function goes on), or
 * {kind: "stop"} (neither is recorded). */
export function afterBreak(c) {
  if (c.outcome === "restarted") return { kind: "restart" };
  if (c.resume_functions && c.resume_functions.length) {
    return { kind: "resume", functions: c.resume_functions.map((r) => r.code_name) };
  }
  return { kind: "stop" };
}

/** What explain says of compile k's graph break (capture/explain.py `viewer_answers`): its
 * entry for the break at the same line with the same reason, else the one with the same
 * reason (an attempt restarted before the break stops at its caller's line), else null. */
export function breakAnswer(rec, k) {
  const c = rec.compiles[k], a = answerOf(rec, k);
  const gb = c && c.graph_break;
  if (!gb || !a) return null;
  const same = a.graph_breaks.filter((b) => b.reason === gb.reason);
  return same.find((b) => b.lineno === gb.lineno) || same[0] || null;
}

/** The card for compile k's graph break, or null when it has none: {lineno, line, reason,
 * id, type, link, explanation, hints, general, context, also, after, answer (explain's
 * entry for it, see breakAnswer, or null)}. */
export function breakCard(rec, k) {
  const c = rec.compiles[k];
  const gb = c && c.graph_break;
  if (!gb) return null;
  const help = breakHelp(rec, k);
  return {
    lineno: gb.lineno ?? null,
    line: gb.line ? String(gb.line).trim() : null,
    reason: gb.reason || help.type,
    id: help.id,
    type: help.type,
    link: safeLink(help.link),
    explanation: help.explanation,
    hints: help.hints,
    // the registry's general form, where it says more than the message's own explanation
    general: help.general,
    context: help.context,
    also: help.also,
    after: afterBreak(c),
    answer: breakAnswer(rec, k),
  };
}

/** Whether compile c was restarted at its own graph break: then its restart reason is
 * Dynamo's message about that break, said once, by the card. Read from the outcome and
 * the break, never from the reason's words. */
export function restartedByBreak(c) {
  return !!c && c.outcome === "restarted" && !!c.restart_reason && !!c.graph_break;
}
