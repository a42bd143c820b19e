"""The viewer's predict mode read back in Python: the score, and what to look at."""

from __future__ import annotations

from typing import Any

from capture.text import shorten

from .exercise import Result
from .guards import rendered_kind
from .steps import var_text

# What predict mode asks an instruction may do besides pushing (viewer.js, EFFECTS): as a
# prediction says it, as the step did it, the pane that shows it, and what that pane shows
# when the step did not do it.
_EFFECTS = {
    "node": ("adds a node to the FX graph", "added a node to the FX graph",
             "the FX graph pane", "no node is added at this step"),
    "guard": ("installs a guard", "installed a guard",
              "the guards pane", "no guard is installed at this step"),
    "break": ("breaks the graph", "broke the graph",
              "the graph break button", "it jumps to the step that breaks, not this one"),
    "inline": ("inlines a call", "inlined a call",
               "the depth and code name above the stack", "no callee starts here"),
    "return": ("returns from its frame", "returned from its frame",
               "the bytecode pane", "the frame does not end here"),
}


def review_predictions(source: Any, recording: Any = None, *, limit: int = 8) -> Result:
    """The learner's answers in the viewer's predict mode: the score, and for each wrong one
    what the step did and where to look.

    `source` is a `TraceViewer` (its `predictions` and its recording) or the list of
    prediction dicts the viewer keeps (``{"compile": "0/0", "step": 4, "instruction":
    "CALL 0", "lineno": 3, "answer": {"pushes": ..., "does": [...]}, "truth": {...},
    "correct": bool}``); `recording`, when given, names the nodes, guards and trackers.
    No predictions gives ok=None and says how to make some; never raises on odd entries.
    """
    if recording is None:
        recording = getattr(source, "recording", None)
    raw = getattr(source, "predictions", source)
    entries = list(raw) if isinstance(raw, (list, tuple)) else []
    readable = [p for p in entries if _readable_prediction(p)]
    if not readable:
        if getattr(source, "predict", True):
            how = ("step through the viewer above in predict mode: press forward (→), say "
                   "what the instruction pushes and does, then reveal")
        else:
            how = ("turn on predict mode in the viewer above (the predict button, or P), "
                   "then step forward and answer before each reveal")
        return Result(None, f"Predict mode: no predictions yet — {how}. Then run this cell "
                            "again.")
    right = sum(1 for p in readable if p["correct"])
    text = f"Predict mode: {right} of {len(readable)} right."
    if len(readable) < len(entries):
        text += f" ({len(entries) - len(readable)} unreadable entries left out.)"
    wrong = [p for p in readable if not p["correct"]]
    if not wrong:
        return Result(True, text + " Every prediction matched what Dynamo did.")
    lines = [text, "Wrong answers, and what to look at:"]
    lines += [_prediction_feedback(p, recording) for p in wrong[:limit]]
    if len(wrong) > limit:
        lines.append(f"  … and {len(wrong) - limit} more.")
    return Result(False, "\n".join(lines))


def _readable_prediction(p: Any) -> bool:
    if not isinstance(p, dict) or not isinstance(p.get("correct"), bool):
        return False
    said, truth, step = p.get("answer"), p.get("truth"), p.get("step")
    return (isinstance(said, dict) and isinstance(truth, dict)
            and isinstance(said.get("does", []), list) and isinstance(truth.get("does", []), list)
            and isinstance(step, int) and not isinstance(step, bool))


def _effects_text(pushes: Any, does: list[str], form: int) -> str:
    verb = ("pushes", "pushed")[form]
    parts = [f"{verb} {shorten(pushes)}" if pushes else f"{verb} nothing"]
    return ", ".join(parts + [_EFFECTS[d][form] for d in _EFFECTS if d in does])


def _recorded_step(recording: Any, p: dict[str, Any]) -> tuple[Any, Any]:
    """The compile and step a prediction is about, or (None, None) when not at hand."""
    try:
        c = recording.compile(str(p.get("compile")))
    except (KeyError, AttributeError, TypeError):  # another recording, or not one
        return None, None
    return (c, c.steps[p["step"]]) if 0 <= p["step"] < len(c.steps) else (None, None)


def _effect_detail(effect: str, c: Any, step: Any) -> str:
    """What the recording says the step did, for the pane that shows `effect`."""
    if effect == "node" and step.nodes_added:
        return f" (new: {', '.join(step.nodes_added)})"
    if effect == "guard" and step.guards_added:
        guards = [c.guard_details[i] for i in step.guards_added]
        return " (" + "; ".join(f"{rendered_kind(g)} on {g.source or 'global state'}"
                                for g in guards[:3]) + ")"
    if effect == "break" and c.graph_break is not None:
        return f" ({c.graph_break.reason})"
    if effect == "inline":
        return f" (into {step.code_name})"
    return ""


def _prediction_feedback(p: dict[str, Any], recording: Any) -> str:
    said, truth = p["answer"], p["truth"]
    said_does = [d for d in said.get("does", []) if d in _EFFECTS]
    true_does = [d for d in truth.get("does", []) if d in _EFFECTS]
    where = f"step {p['step']}"
    if p.get("compile"):
        where += f" of [{p['compile']}]"
    if p.get("instruction"):
        where += f", {shorten(p['instruction'])}"
    if isinstance(p.get("lineno"), int):
        where += f" on line {p['lineno']}"
    c, step = _recorded_step(recording, p) if recording is not None else (None, None)
    look = []
    if said.get("pushes") != truth.get("pushes"):
        top = f" (its top: {var_text(step.stack[-1])})" if step is not None and step.stack else ""
        look.append(f"the stack pane at step {p['step']}{top}")
    for d, (_, _, pane, absent) in _EFFECTS.items():
        if (d in said_does) == (d in true_does):
            continue
        if d in true_does:
            look.append(pane + (_effect_detail(d, c, step) if step is not None else ""))
        else:
            look.append(f"{pane}: {absent}")
    return (f"  {where}\n"
            f"      you said: {_effects_text(said.get('pushes'), said_does, 0)}\n"
            f"      it:       {_effects_text(truth.get('pushes'), true_does, 1)}\n"
            f"      look at:  {'; '.join(look) or 'the step itself'}")
