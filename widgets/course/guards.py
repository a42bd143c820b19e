"""Questions about the guards Dynamo installs: a kind, optionally on a source."""

from __future__ import annotations

from typing import Any

from .answers import source_key, squash
from .exercise import Exercise
from .steps import compile_of

def predict_guard(recording: Any, answer: Any = ..., *, compile_id: str | None = None,
                  about: str | None = None, name: str = "guard", question: str | None = None,
                  hint: str | None = None, prediction: str | None = None,
                  look: str = "") -> Exercise | None:
    """Predict a guard Dynamo installs: its kind (``TENSOR_MATCH``), optionally with a source.

    Right if the compile has such a guard. `about` restricts the question to guards
    on one source (``"L['y']"`` or just ``"y"``). Answers: ``"EQUALS_MATCH"``,
    ``("EQUALS_MATCH", "L['y']")``, ``"EQUALS_MATCH: L['y']"``.
    """
    compile_ = compile_of(recording, compile_id)
    guards = [g for g in compile_.guard_details
              if about is None or (g.source and source_key(g.source) == source_key(about))]

    def check(ans: Any) -> tuple[bool, str]:
        parsed = _parse_guard_answer(ans)
        if parsed is None:
            return False, ("answer with a guard kind such as 'TENSOR_MATCH', or a kind and a "
                           "source such as ('EQUALS_MATCH', \"L['n']\"); got "
                           f"{type(ans).__name__}")
        kind, src = parsed
        same_kind = [g for g in guards if squash(kind) in _guard_kinds(g)]
        if src is not None:
            exact = [g for g in same_kind if g.source and source_key(g.source) == src]
            if exact:
                return True, _reveal_guard(exact[0])
            if same_kind:
                return False, f"there is a guard of kind {kind.upper()}, but not on {src}."
            on_src = [g for g in guards if g.source and source_key(g.source) == src]
            if on_src:
                return False, f"{src} is guarded, but not by {kind.upper()}."
            return False, f"no guard of compile {compile_.compile_id} has that kind or source."
        if same_kind:
            return True, _reveal_guard(same_kind[0])
        scope = f" on {about}" if about else ""
        return False, f"compile {compile_.compile_id} has no {kind.upper()} guard{scope}."

    on = f" on {about}" if about else ""
    q = question or f"Name a guard{on} that Dynamo installs for [{compile_.compile_id}] " \
                    f"{compile_.code_name} (its kind, e.g. TENSOR_MATCH)."
    shown = [g for g in guards if not g.ambient] or guards
    solution = "\n".join(f"  {_guard_kind_text(g)}: {g.source or ''}" + (f"   # line {g.lineno}: {g.line}"
                                                             if g.lineno else "")
                         for g in shown) or "  (no guards)"
    ex = Exercise(name, q, check,
                  hint=hint or ("Ask what Dynamo assumed about each input while tracing: its "
                                "type, its shape and dtype, or its exact value."),
                  solution=f"guards{on}:\n{solution}",
                  expected_form="a guard kind like 'TENSOR_MATCH', or (kind, source) like "
                                "('EQUALS_MATCH', \"L['n']\")",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _parse_guard_answer(ans: Any) -> tuple[str, str | None] | None:
    if hasattr(ans, "kind") and hasattr(ans, "source"):  # a capture.Guard
        return str(ans.kind), source_key(ans.source) if ans.source else None
    if isinstance(ans, dict):
        kind = ans.get("kind")
        src = ans.get("source")
        if not isinstance(kind, str):
            return None
        return kind.strip(), source_key(src) if isinstance(src, str) else None
    if isinstance(ans, (list, tuple)) and len(ans) == 2 and all(isinstance(a, str) for a in ans):
        return ans[0].strip(), source_key(ans[1])
    if isinstance(ans, (list, tuple)) and len(ans) == 1 and isinstance(ans[0], str):
        ans = ans[0]
    if isinstance(ans, str) and ans.strip():
        kind, sep, src = ans.partition(":")
        return kind.strip(), source_key(src) if sep and src.strip() else None
    return None


def rendered_kind(guard: Any) -> str:
    """The kind as the guard tree prints it (`EQUALS_MATCH`), which may differ from
    the kind Dynamo installed it as (`CONSTANT_MATCH`)."""
    return guard.tree_kind or guard.kind


def _guard_kinds(guard: Any) -> set[str]:
    return {squash(guard.kind), squash(rendered_kind(guard))}


def _guard_kind_text(guard: Any) -> str:
    shown = rendered_kind(guard)
    return shown if shown == guard.kind else f"{shown} (installed as {guard.kind})"


def _reveal_guard(guard: Any) -> str:
    where = f" (installed at line {guard.lineno}: {guard.line})" if guard.lineno else ""
    return f"{_guard_kind_text(guard)} on {guard.source or 'global state'}{where}"
