"""Questions about a recompile: which guard of the earlier compile failed on the new call.

The answer is read from the recording's failed-guard records (`Compile.failed_guards`),
never from Dynamo's reason text: a learner names the source the failing guard reads
(``"L['cfg']['shift']"``, ``"cfg['shift']"``, ``"G['scale']"``, ``"self.k"``), optionally
with its kind (``("EQUALS_MATCH", "L['n']")``).
"""

from __future__ import annotations

import re
from typing import Any

from .answers import short, squash
from .exercise import Exercise
from .steps import compile_of

_DOTTED = re.compile(r"^([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[[^\]]+\])*)$")


def loose_source(text: str) -> str:
    """A guard source compared loosely: ``L['cfg']['shift']`` == ``cfg['shift']`` ==
    ``L["cfg"]["shift"]``, ``L['self'].k`` == ``self.k``; ``G['scale']`` stays global."""
    text = re.sub(r"\s+", "", str(text)).replace('"', "'")
    m = _DOTTED.match(text)
    if m and m.group(1) not in ("L", "G"):
        return f"L['{m.group(1)}']{m.group(2)}"
    return text


def predict_failed_guard(recording: Any, compile_id: str, *, name: str = "guard",
                         question: str | None = None, hint: str = "",
                         prediction: str | None = None, look: str = "") -> Exercise:
    """Predict the source of a guard that failed, so that `compile_id` was compiled.

    Right if any failed-guard record of that compile reads the named source (and has
    the named kind, when one is given). A wrong answer is told whether the source is
    guarded at all and, if so, that its guard still held: never which one failed.
    """
    c = compile_of(recording, compile_id)
    failed = list(c.failed_guards)
    earlier = [g for k in recording.compiles if k.compile_id == c.replaces
               for g in k.guard_details] if c.replaces else []

    def check(ans: Any) -> tuple[bool, str]:
        parsed = _parse(ans)
        if parsed is None:
            return False, ("answer with the source a guard reads, e.g. \"L['x']\" or "
                           f"\"G['scale']\" (or a (kind, source) pair); got {short(ans)}")
        kind, src = parsed
        on_src = [f for f in failed if f.source and loose_source(f.source) == src]
        if on_src and (kind is None or any(squash(kind) == squash(f.kind) for f in on_src)):
            f = on_src[0]
            return True, f"{f.kind} on {f.source} expected {f.expected}, saw {f.seen}."
        if on_src:
            return False, f"a guard on {src} failed, but not one of kind {kind.upper()}."
        if any(g.source and loose_source(g.source) == src for g in earlier):
            return False, (f"{src} is guarded, and its guard still passed: the value it "
                           "checks did not change in a way that guard sees.")
        return False, (f"no guard of [{c.replaces}] reads {src}: Dynamo guards only what "
                       "the trace read.")

    lines = [f"  [{f.compile_id}] {f.kind} {f.source}: expected {f.expected}, saw {f.seen}"
             + (f" (installed at line {f.lineno})" if f.lineno else "") for f in failed]
    return Exercise(
        name,
        question or f"Which value made Dynamo compile [{c.compile_id}]? Name the source its "
                    "failing guard reads.",
        check, hint=hint or "Which input, global or attribute did the trace read whose value "
                            "is different on the new call?",
        solution="\n".join(["failed guards:", *lines]) if lines else "(no guard failed)",
        expected_form="a guard source such as \"L['x']\", \"G['scale']\" or \"self.k\"",
        prediction=prediction, look=look)


def _parse(ans: Any) -> tuple[str | None, str] | None:
    if isinstance(ans, (list, tuple)) and len(ans) == 2 and all(isinstance(a, str) for a in ans):
        return ans[0].strip(), loose_source(ans[1])
    if isinstance(ans, str) and ans.strip():
        kind, sep, src = ans.partition(":")
        if sep and kind.strip().isupper() and src.strip():
            return kind.strip(), loose_source(src)
        return None, loose_source(ans)
    return None


__all__ = ["predict_failed_guard", "loose_source"]
