"""Why a program broke its graphs and recompiled, for people at a terminal (`dynamo-lab explain`).

Read from a recording only: each graph break with its line, the instruction, the stack
it met and Dynamo's explanation and hints (with the graph-break registry's entry for
its id, `torch/_dynamo/graph_break_registry.json` of the installed torch); each
recompile with every guard that failed, expected against seen, and the line that
installed it; each refused recompile (cache limit, `fail_on_recompile`) the same way;
and a one-line suggestion where Dynamo's own hints give one. `explanation(recording)`
is the data (plain dicts and lists, what `--json` prints); `explanation_text` the text.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from . import help, internals
from .recompiles import step_place
from .recording import Compile, EventKind, FailedGuard, Recording
from .text import visible

_GB_ID = re.compile(r"gb/gb(\d{4})\.html|\b(GB\d{4})\b")
# hints that say nothing a learner can act on
_GENERIC = ("Please report", "It may be possible to write Dynamo tracing rules",
            "This graph break may be difficult to debug", "file an issue", "report an issue")


# -- the registry -------------------------------------------------------------------


@functools.cache
def _registry() -> dict[str, list[dict[str, Any]]]:
    return internals.graph_break_registry()   # read once a process: it is the installed torch's


def registry_entry(reason: str, *texts: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """(GB id, the registry's variant) for a graph break: by the id in its message's link
    (`.../gb/gb0059.html`), else by the graph-break type its reason starts with."""
    registry = _registry()
    for text in (*texts, reason):
        m = _GB_ID.search(text or "")
        if m:
            gb_id = m.group(2) or f"GB{m.group(1)}"
            variants = registry.get(gb_id) or []
            match = next((v for v in variants if reason.startswith(v.get("Gb_type", "\0"))),
                         variants[0] if variants else None)
            return gb_id, match
    best = None
    for gb_id, variants in registry.items():
        for v in variants:
            t = v.get("Gb_type", "")
            if t and reason.startswith(t) and (best is None or len(t) > len(best[1]["Gb_type"])):
                best = (gb_id, v)
    return best if best is not None else (None, None)


# -- the data ------------------------------------------------------------------------


def explanation(recording: Recording) -> dict[str, Any]:
    """Every graph break, recompile and refused recompile of a recording, as plain data."""
    breaks: list[dict[str, Any]] = []
    seen: dict[tuple, dict[str, Any]] = {}
    for c in recording.compiles:
        gb = c.graph_break
        if gb is None or c.attempt > 0:
            continue  # an attempt after a restart stops where its first attempt broke
        # One entry per place: the first attempt of a frame meets its break, and every recompile of the frame meets it again.
        key = (c.filename, gb.code_name, gb.lineno, gb.reason)
        if key in seen:
            seen[key]["compiles"].append(c.compile_id)
            continue
        seen[key] = _break(c)
        breaks.append(seen[key])
    # (a recording made before failed guards were kept has Dynamo's reasons only)
    recompiles = [_recompile(recording, c) for c in recording.compiles
                  if (c.replaces is not None or c.recompile_reasons) and c.attempt == 0]
    refusals = [{"kind": e.kind, "compile_id": e.compile_id, "message": e.message,
                 "failed_guards": [_failed(recording, fg) for fg in e.failed_guards],
                 "suggestion": _refusal_suggestion(e.kind, e.failed_guards, recording)}
                for e in recording.events
                if e.kind in (EventKind.CACHE_LIMIT, EventKind.FAIL_ON_RECOMPILE)
                or e.failed_guards]
    return {"torch_version": recording.torch_version, "compiles": len(recording.compiles),
            "graph_breaks": breaks, "recompiles": recompiles, "refusals": refusals}


def _source_line(c: Compile, code: int, lineno: int | None) -> str | None:
    if lineno is None or code >= len(c.codes):
        return None
    info = c.codes[code]
    k = lineno - info.firstlineno
    return info.source_lines[k].strip() if 0 <= k < len(info.source_lines) else None


def _break(c: Compile) -> dict[str, Any]:
    gb = c.graph_break
    step = c.steps[gb.step] if gb.step is not None and gb.step < len(c.steps) else None
    stack: list[str] = []
    if step is not None:
        # the stack the instruction met: what the step before it left, in the same frame
        before = next((s for s in reversed(c.steps[:step.index])
                       if (s.code, s.inline_stack) == (step.code, step.inline_stack)), None)
        stack = [str(v) for v in reversed(before.stack)] if before is not None else []
    hints = list(getattr(gb, "hints", ()) or ())
    link = getattr(gb, "link", None)
    gb_id, entry = (gb.gb_id, gb.registry) if gb.gb_id else \
        registry_entry(gb.reason, link, getattr(gb, "message", None), gb.explanation)  # an older recording
    if not hints and entry:
        hints = [h.strip() for h in entry.get("Hints", []) if h.strip()]
    explanation_ = gb.explanation or (entry or {}).get("Explanation")
    filename = c.codes[step.code].filename if step is not None else c.filename
    return {
        "compile_id": c.compile_id, "compiles": [c.compile_id],
        "function": gb.code_name or c.code_name,
        "file": filename, "lineno": gb.lineno, "line": gb.line,
        "step": gb.step,
        "instruction": f"{step.opname} {step.argrepr}".rstrip() if step is not None else None,
        # what Dynamo's handler does with that opname, in capture/help.json's words
        "instruction_help": (help.opcode(step.opname) or {}).get("dynamo") if step is not None else None,
        "stack": stack, "reason": gb.reason, "explanation": explanation_, "hints": hints,
        "gb_id": gb_id, "gb_type": (entry or {}).get("Gb_type"),
        "registry": entry, "link": link,
        "suggestion": _break_suggestion(hints, gb.code_name != c.code_name, gb.code_name),
    }


def _break_suggestion(hints: list[str], in_helper: bool, function: str | None) -> str:
    for h in hints:
        if not any(g in h for g in _GENERIC):
            return h
    if in_helper and function:
        return (f"if {function} need not be compiled, keep Dynamo out of it: "
                f"wrap it in torch.compiler.disable")
    return "if this code need not be compiled, wrap it in a function under torch.compiler.disable"


def _failed(recording: Recording, fg: FailedGuard, generation: int | None = None) -> dict[str, Any]:
    """A failed guard with its guard's text and installing line. `generation`: that of the
    compile it came with (ids start again after a reset); None: the latest with its id."""
    out = {"compile_id": fg.compile_id, "guard": fg.guard, "detail": fg.detail, "kind": fg.kind,
           "source": fg.source, "what": fg.what, "expected": fg.expected, "seen": fg.seen,
           "step": fg.step, "lineno": fg.lineno, "file": None, "line": None, "text": None}
    same = [c for c in recording.compiles if c.compile_id == fg.compile_id
            and (generation is None or c.generation == generation)]
    if not same:
        return out
    old = same[-1]
    if fg.detail is not None and fg.detail < len(old.guard_details):
        out["text"] = old.guard_details[fg.detail].text
    code, lineno = step_place(old, fg.step)
    if code is not None:
        out["file"] = old.codes[code].filename if code < len(old.codes) else old.filename
        out["line"] = _source_line(old, code, lineno)
    return out


def _recompile(recording: Recording, c: Compile) -> dict[str, Any]:
    return {"compile_id": c.compile_id, "function": c.code_name, "file": c.filename,
            "replaces": c.replaces, "dynamo_reasons": list(c.recompile_reasons),
            "failed_guards": [_failed(recording, fg, c.generation) for fg in c.failed_guards],
            # the replaced entry's failures first: they are why this compile was made
            "suggestion": _guard_suggestion(
                sorted(c.failed_guards, key=lambda fg: fg.compile_id != c.replaces))}


def _python_name(source: str | None) -> str:
    """`x` for `L['x']`, `kwargs['x']` for `L['kwargs']['x']`, `cache.k` for `L['cache'].k`."""
    if not source:
        return "it"
    return re.sub(r"^[LG]\[(['\"])(.*?)\1\]", r"\2", source)


def _guard_suggestion(failed: tuple[FailedGuard, ...] | list[FailedGuard]) -> str | None:
    """One line from what the failing guards compared, in Dynamo's own advice."""
    failed = [fg for fg in failed if not _python_name(fg.source).startswith("___")]
    for fg in failed:
        name = _python_name(fg.source)
        if fg.kind == "TENSOR_MATCH" and fg.what == "size":
            dims = _changed_dims(fg.expected, fg.seen)
            if dims:
                marks = "; ".join(f"torch._dynamo.mark_dynamic({name}, {d})" for d in dims)
                return (f"mark the changing dimension of {name} dynamic before the first call "
                        f"({marks}), or compile with dynamic=True")
        if fg.what == "check" and ".size()" in (fg.expected or ""):
            return ("sizes that were equal share one symbol (duck shaping): set "
                    "torch.fx.experimental._config.use_duck_shape = False to keep them apart")
        if fg.kind == "EQUALS_MATCH" and _is_number(fg.expected):
            return (f"{name} is a Python number, guarded by its value: move it into a tensor "
                    f"(torch.tensor({name.split('.')[-1]})) so a new value needs no new compile")
        if fg.kind == "EQUALS_MATCH" and fg.expected[:1] in "'\"":
            return (f"{name} is a str, guarded by its value: each new string compiles again; "
                    "keep strings that vary out of the compiled function")
    for fg in failed:
        if fg.kind == "TENSOR_MATCH" and fg.what in ("dtype", "requires_grad", "device"):
            return (f"each {fg.what} of {_python_name(fg.source)} gets its own compile: "
                    "expected when it changes rarely, else keep it the same across calls")
    return None


def _refusal_suggestion(kind: str, failed: tuple[FailedGuard, ...],
                        recording: Recording) -> str | None:
    first = _guard_suggestion(failed)
    if kind == EventKind.CACHE_LIMIT:
        _, entry = registry_entry("Dynamo recompile limit exceeded")
        hint = " ".join(h.strip() for h in (entry or {}).get("Hints", [])[1:3])
        hint = hint.replace("{limit_type}", "recompile_limit") or (
            "consider increasing torch._dynamo.config.recompile_limit")
        return f"{first}; or, if recompiling is expected: {hint}" if first else hint
    return first


def _changed_dims(expected: str, seen: str) -> list[int]:
    try:
        want = [None if x.strip() == "None" else int(x)
                for x in expected.strip("[]").split(",") if x.strip()]
        have = [int(x) for x in seen.strip("[]").split(",") if x.strip()]
    except ValueError:
        return []
    if len(want) != len(have):
        return []
    return [d for d, (w, h) in enumerate(zip(want, have)) if w is not None and w != h]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


# -- the text ------------------------------------------------------------------------


def explanation_text(recording: Recording) -> str:
    """The explanation for people at a terminal."""
    return visible(_text(explanation(recording)))


def _where(file: str | None, lineno: int | None) -> str:
    name = (file or "?").rsplit("/", 1)[-1]
    return f"{name}:{lineno}" if lineno is not None else name


def _guard_lines(fgs: list[dict[str, Any]], indent: str = "  ") -> list[str]:
    out = []
    for fg in fgs:
        what = f" {fg['what']}" if fg["what"] else ""
        out.append(f"{indent}- [{fg['compile_id']}] {fg['kind']} {fg['source'] or ''}{what}: "
                   f"expected {fg['expected']}, got {fg['seen']}")
        if fg["lineno"] is not None:
            line = f":  {fg['line']}" if fg["line"] else ""
            out.append(f"{indent}    installed at {_where(fg['file'], fg['lineno'])} "
                       f"(step {fg['step']}){line}")
        elif fg["guard"] is None:
            out.append(f"{indent}    (that compile was made before recording)")
    return out


def _text(data: dict[str, Any]) -> str:
    breaks, recompiles, refusals = data["graph_breaks"], data["recompiles"], data["refusals"]
    out = [f"{data['compiles']} compile(s), {len(breaks)} graph break(s), "
           f"{len(recompiles)} recompile(s), {len(refusals)} refused recompile(s) "
           f"(torch {data['torch_version']})"]
    for n, b in enumerate(breaks, 1):
        out.append("")
        out.append(f"graph break {n} of {len(breaks)}: in {b['function']} at "
                   f"{_where(b['file'], b['lineno'])}, met by "
                   + ", ".join(f"[{i}]" for i in b["compiles"]))
        if b["line"]:
            out.append(f"  {b['lineno']} | {b['line']}")
        if b["instruction"]:
            out.append(f"  instruction: {b['instruction']}  (step {b['step']})")
            if b.get("instruction_help"):
                out.append(f"    {b['instruction'].split()[0]} in Dynamo: {b['instruction_help']}")
        if b["stack"]:
            out.append("  stack it met (top first):")
            out += [f"    {v}" for v in b["stack"]]
        out.append(f"  reason: {b['reason']}")
        if b["explanation"]:
            out.append(f"  explanation: {b['explanation']}")
        if b["hints"]:
            out.append("  hints:")
            out += [f"    - {h}" for h in b["hints"]]
        if b["gb_id"]:
            out.append(f"  registry: {b['gb_id']} ({b['gb_type'] or 'unknown type'})"
                       + (f"  {b['link']}" if b["link"] else ""))
        out.append(f"  suggestion: {b['suggestion']}")
    for r in recompiles:
        out.append("")
        instead = f" instead of [{r['replaces']}]" if r["replaces"] else ""
        count = (f"{len(r['failed_guards'])} guard(s) failed" if r["failed_guards"] else
                 "no failed guards recorded (Dynamo's first reason only)")
        out.append(f"recompile [{r['compile_id']}] of {r['function']}{instead}: {count}")
        out += _guard_lines(r["failed_guards"])
        if r["dynamo_reasons"]:
            out.append(f"  Dynamo's reason (the first failure only): "
                       f"{r['dynamo_reasons'][0].splitlines()[0]}")
        if r["suggestion"]:
            out.append(f"  suggestion: {r['suggestion']}")
    for e in refusals:
        out.append("")
        where = f" [{e['compile_id']}]" if e["compile_id"] else ""
        out.append(f"refused ({e['kind']}){where}: {e['message']}")
        out += _guard_lines(e["failed_guards"])
        if e["suggestion"]:
            out.append(f"  suggestion: {e['suggestion']}")
    if not breaks and not recompiles and not refusals:
        out.append("no graph breaks and no recompiles: every frame compiled once, whole")
    return "\n".join(out)


__all__ = ["explanation", "explanation_text", "registry_entry"]
