"""Why a program broke its graphs and recompiled, for people at a terminal (`dynamo-lab explain`).

Read from a recording only. For each frame: how it came out (`capture.outcomes`:
compiled whole, in graphs split by breaks, skipped, failed, refused at the recompile
limit). For each graph break, once per place: its line, the user's own line that led
there (`capture.usercode`), Dynamo's reason and the fix (`capture.advice`). For
recompiles, one entry per distinct cause (not one per cache entry): what changed, the
values it took, where the guard was installed and the user's line, and the fix. Dynamo's
teaching detail (the instruction, the stack it met, its hints) is behind `teach=True`.

`explanation(recording)` is the data (plain dicts and lists, what `--format json` prints;
its schema is `SCHEMA` below); `explanation_text` the text.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Iterable

from . import advice, help, internals, shapes
from .outcomes import frames as frame_outcomes
from .outcomes import kept, resumed_from, summary
from .recompiles import step_place
from .recording import Compile, EventKind, FailedGuard, Recording
from .records import DdpBucket, DdpSplit
from .textview import ddp_split_lines
from .text import visible
from .usercode import Place, chain, is_user_file, user_place

_GB_ID = re.compile(r"gb/gb(\d{4})\.html|\b(GB\d{4})\b")

FORMAT = "dynamo-lab-explain/2"

# The JSON `explanation` returns, key by key (documented in the README's explain section).
SCHEMA: dict[str, str] = {
    "format": f"'{FORMAT}'",
    "torch_version": "the torch that was recorded",
    "summary": "counts: compiles (kept, not restarted attempts), resumes (of those, compiles "
               "of the code after a graph break, said with the frame they continue), frames, "
               "compiled_whole, with_graph_breaks, skipped, failed, recompiles, refused",
    "compiles": "the number of compiles Dynamo kept (summary.compiles)",
    "frames": "one per function Dynamo met: function, file, lineno, outcome (compiled | "
              "graph_break | skipped | failed | unfinished), compiles, resumes (the compile ids "
              "of its resume functions, the code after its breaks), recompiles, graphs, "
              "graph_breaks, errors, skipped_because, refused, statement, user (its file is "
              "the user's code), advice, failure (a dimension marked dynamic that the "
              "code specialized: name, source, dim, constant, file, lineno, function, line, "
              "shape (the recording's shapes of that dimension, as in causes); None "
              "otherwise or for a recording that kept only the error's first line)",
    "graph_breaks": "one per place: function, file, lineno, line, user (the user's own "
                    "line: function, file, lineno, line), reason, explanation, hints, gb_id, "
                    "gb_type, compiles, skipped (the frame gave up: runs eagerly), advice, "
                    "hint (Dynamo's own first hint where no tested fix is known), note (a "
                    "break the library's own code asks for, outside the user's code; else "
                    "None), resume_chain (a nested graph break, nested_graph_breaks on: the "
                    "frames resumed in one compile, innermost first, each function and line; "
                    "else empty), "
                    "and the teaching detail: instruction, instruction_help, stack",
    "causes": "one per distinct cause of recompiles: function, kind, source, name, what, "
              "mechanism, values (first what the first entry held, then each new call's), "
              "recompiles (compile ids), installed and user (file, lineno, line), "
              "dims (the dimensions that changed), made_dynamic (the compile where automatic "
              "dynamic made it a symbol, or null), own_frame (an argument of the user's own "
              "function), from_break (a value carried across a graph break into a resume "
              "function), expected (bounded by nature), statement, advice, shape (a guard on "
              "a size: source, how, marks, value, symbol, range, sources, specialized_to, "
              "tied_to, guards (each symbolic guard on it: expr, step, lineno, function, "
              "line, why, node), statement; else null)",
    "recompiles": "one per recompile: compile_id, function, replaces, failed_guards (every "
                  "guard that failed, each with its user line), dynamo_reasons",
    "refusals": "one per refused recompile (cache_limit, fail_on_recompile): kind, "
                "compile_id, message, failed_guards, causes (the statements of the causes "
                "above it repeats), guards (where it repeats none: each failed guard once, "
                "with its mechanism and advice), advice",
    "advice": "every distinct fix, in the order of the entries above",
    "ddp_splits": "one per compile whose graph DDPOptimizer split (DDP under torch.compile): "
                  "compile_id, function, file, lineno, bucket_cap and first_bucket_cap (bytes), "
                  "buckets (in graph order: index, the subgraph submod_<index>; size in bytes, "
                  "params, nodes, extended (nodes added past the cap), cap (the cap it was "
                  "filled to))",
}


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


def explanation(recording: Recording, user_code: Iterable[str] = ()) -> dict[str, Any]:
    """Every frame's outcome, graph break, cause of recompiles and refusal, as plain data.
    `user_code`: folders or files that count as the user's own code besides their script."""
    user_code = tuple(user_code)
    found = frame_outcomes(recording)
    breaks: list[dict[str, Any]] = []
    seen: dict[tuple, dict[str, Any]] = {}
    chains: dict[tuple, list[dict[str, Any]]] = {}   # (generation, frame) -> its nested chain
    for a in recording.compiles:
        if a.resume_functions and (a.generation, a.frame_id) not in chains:
            chain = a.resume_chain()
            if chain:
                chains[(a.generation, a.frame_id)] = chain
    for c in recording.compiles:
        gb = c.graph_break
        if gb is None or c.attempt > 0:
            continue  # an attempt after a restart stops where its first attempt broke
        b = _break(c, user_code)
        # a nested graph break: the attempt after the restart resumed the whole chain of
        # frames in one compile, innermost first
        chain = chains.get((c.generation, c.frame_id), [])
        b["resume_chain"] = [{k: link[k] for k in ("function", "line")} for link in chain]
        # one entry per place: every recompile of the frame, and every frame of an inlining
        # chain, meets the same break again
        key = (b["file"], b["lineno"], gb.reason)
        if key in seen:
            seen[key]["compiles"].append(c.compile_id)
            continue
        seen[key] = b
        breaks.append(b)
    recompiles = [_recompile(recording, c, user_code) for c in recording.compiles
                  if (c.replaces is not None or c.recompile_reasons) and kept(c)]
    causes = _causes(recording, user_code)
    refusals = [_refusal(recording, e, causes, user_code) for e in recording.events
                if e.kind in (EventKind.CACHE_LIMIT, EventKind.FAIL_ON_RECOMPILE)
                or e.failed_guards]
    frames_ = []
    for f in found:
        d = f.as_dict()
        d["user"] = is_user_file(f.file, user_code)
        d["failure"] = _failure(f)
        if d["failure"]:
            d["statement"] += _failure_statement(d["failure"])
        fix = next((a for a in map(advice.error_advice, d["errors"]) if a), None)
        d["advice"] = [fix] if fix else []
        frames_.append(d)
    fixes: list[str] = []
    for item in (*frames_, *breaks, *causes, *refusals):
        for a in item["advice"]:
            if a not in fixes:
                fixes.append(a)
    counts = summary(found)
    return {"format": FORMAT, "torch_version": recording.torch_version, "summary": counts,
            "compiles": counts["compiles"], "frames": frames_,
            "graph_breaks": breaks, "causes": causes, "recompiles": recompiles,
            "refusals": refusals, "advice": fixes, "ddp_splits": _ddp_splits(recording)}


def _ddp_splits(recording: Recording) -> list[dict[str, Any]]:
    """Each graph DDPOptimizer split into one subgraph per gradient bucket."""
    out = []
    for c in recording.compiles:
        s = c.ddp_split
        if s is None:
            continue
        out.append({"compile_id": c.compile_id, "function": c.code_name, "file": c.filename,
                    "lineno": c.firstlineno, "bucket_cap": s.bucket_cap,
                    "first_bucket_cap": s.first_bucket_cap,
                    "buckets": [{"index": b.index, "size": b.size, "params": list(b.params),
                                 "nodes": list(b.nodes), "extended": b.extended,
                                 "cap": s.cap_of(b.index)} for b in s.buckets]})
    return out


def _failure(f: Any) -> dict[str, Any] | None:
    """A failed compile's dimension, constant and user line, read from Dynamo's whole message
    (None for an older recording, which kept only its first line, or another error)."""
    for c in f.compiles:
        if c.outcome != "error":
            continue
        cv = advice.constraint_violation(getattr(c, "error_message", None))
        if cv is None:
            continue
        # the recording's own shapes: the symbol, the step and the operation that did it
        cv["shape"] = shapes.size_origin(getattr(c, "shapes", None),
                                         f"{cv['source']}")
        cv["line"] = None   # from the source the recording kept, never read afresh
        for code in c.codes:
            k = (cv["lineno"] or 0) - code.firstlineno
            if code.filename == cv["file"] and 0 <= k < len(code.source_lines):
                cv["line"] = code.source_lines[k].strip() or None
                break
        return cv
    return None


def _failure_statement(cv: dict[str, Any]) -> str:
    said = (f"; dimension {cv['dim']} of {cv['name']} was marked dynamic but the code "
            f"specialized it to the constant {cv['constant']}")
    if cv["lineno"]:
        said += f", at line {cv['lineno']} in {cv['function']}"
        if cv["line"]:
            said += f": {cv['line']}"
    origin = cv.get("shape") or {}
    made = [g for g in origin.get("guards", ()) if g["step"] is not None]
    if origin.get("specialized_to") is not None and made:
        g = made[0]
        said += (f" (its symbol {origin['symbol']} was set to {origin['specialized_to']} at step "
                 f"{g['step']}" + (f", node {g['node']}" if g["node"] else "")
                 + f": {g['expr']}" + (f", {g['why']}" if g["why"] else "") + ")")
    return said


def _place(p: Place | None) -> dict[str, Any] | None:
    return p.as_dict() if p is not None else None


def _break(c: Compile, user_code: tuple[str, ...]) -> dict[str, Any]:
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
    places = chain(c, gb.step)
    here = places[-1] if places else Place(gb.code_name or c.code_name, c.filename, gb.lineno, gb.line)
    mine = user_place(c, gb.step, user_code)
    in_user = is_user_file(here.file, user_code)
    fix = advice.break_advice(gb_id, explanation_, hints, in_user, here.function,
                              getattr(gb, "message", None))
    return {
        "compile_id": c.compile_id, "compiles": [c.compile_id],
        "function": here.function, "file": here.file, "lineno": gb.lineno, "line": gb.line,
        "user": _place(mine), "skipped": c.outcome == "skipped",
        "step": gb.step,
        "instruction": f"{step.opname} {step.argrepr}".rstrip() if step is not None else None,
        # what Dynamo's handler does with that opname, in capture/help.json's words
        "instruction_help": (help.opcode(step.opname) or {}).get("dynamo") if step is not None else None,
        "stack": stack, "reason": gb.reason, "explanation": explanation_, "hints": hints,
        "gb_id": gb_id, "gb_type": (entry or {}).get("Gb_type"),
        "registry": entry, "link": link,
        "advice": [fix] if fix else [],
        "suggestion": fix,
        "resume_chain": [],   # a nested graph break's chain (set by `explanation`)
        "hint": None if fix else advice.useful_hint(hints, in_user),
        # torch._dynamo.graph_break() called by the library itself (torch's optimizers do)
        "note": (f"not in your code: {here.function} in {Path(here.file or '').name} calls "
                 f"torch._dynamo.graph_break() itself, a break its own authors put there"
                 if gb_id == "GB0025" and not in_user else None),
    }


def _failed(recording: Recording, fg: FailedGuard, generation: int | None = None,
            user_code: tuple[str, ...] = ()) -> dict[str, Any]:
    """A failed guard with its guard's text, installing line and the user's line.
    `generation`: that of the compile it came with (ids start again after a reset); None:
    the latest with its id."""
    out = {"compile_id": fg.compile_id, "guard": fg.guard, "detail": fg.detail, "kind": fg.kind,
           "source": fg.source, "what": fg.what, "expected": fg.expected, "seen": fg.seen,
           "step": fg.step, "lineno": fg.lineno, "file": None, "line": None, "text": None,
           "user": None}
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
        k = lineno - old.codes[code].firstlineno if code < len(old.codes) and lineno else -1
        lines = old.codes[code].source_lines if code < len(old.codes) else ()
        out["line"] = lines[k].strip() if 0 <= k < len(lines) else None
    out["user"] = _place(user_place(old, fg.step, user_code))
    return out


def _recompile(recording: Recording, c: Compile, user_code: tuple[str, ...]) -> dict[str, Any]:
    return {"compile_id": c.compile_id, "function": c.code_name, "file": c.filename,
            "replaces": c.replaces, "dynamo_reasons": list(c.recompile_reasons),
            "failed_guards": [_failed(recording, fg, c.generation, user_code)
                              for fg in c.failed_guards]}


# -- causes: one per distinct thing that changed -------------------------------------


def _causes(recording: Recording, user_code: tuple[str, ...]) -> list[dict[str, Any]]:
    """The recompiles grouped by what changed: for each recompile, the guards of the entry
    it replaced that failed (the other entries' failures say the same again)."""
    out: dict[tuple, dict[str, Any]] = {}
    for c in recording.compiles:
        if not kept(c) or not c.failed_guards:
            continue
        primary = [fg for fg in c.failed_guards if fg.compile_id == c.replaces] or list(c.failed_guards)
        for fg in primary:
            name = advice.python_name(fg.source)
            if name.startswith("___") and not name.startswith("___stack"):
                continue  # Dynamo's own bookkeeping
            key = (c.generation, c.frame_id, fg.kind, fg.source, fg.what,
                   fg.expected if fg.what == "check" else None)  # another bound, another cause
            cause = out.get(key)
            if cause is None:
                failed = _failed(recording, fg, c.generation, user_code)
                parent = resumed_from(c.code_name)
                cause = out[key] = {
                    "function": f"{parent} (after its graph break)" if parent else c.code_name, "file": c.filename, "kind": fg.kind,
                    "source": fg.source, "name": advice.python_name(fg.source), "what": fg.what,
                    "values": [_shown(fg)], "recompiles": [],
                    "installed": {"file": failed["file"], "lineno": failed["lineno"],
                                  "line": failed["line"]},
                    "user": failed["user"], "dims": [], "made_dynamic": None,
                    # the guarded value is an argument of the user's own function
                    "own_frame": is_user_file(c.filename, user_code) and not parent,
                    # the replaced compile's shapes: the symbol, and the line that guarded it
                    "shape": _size_origin(recording, fg, c.generation)}
            cause["recompiles"].append(c.compile_id)
            if cause["shape"] is None:   # a later entry's size may be the one specialized
                cause["shape"] = _size_origin(recording, fg, c.generation)
            cause["values"].append(fg.seen)
            if fg.kind == "DICT_LENGTH":
                cause["values"][-1] = fg.seen
            if fg.kind == "TENSOR_MATCH" and fg.what == "size":
                for d in advice.changed_dims(fg.expected, fg.seen):
                    if d not in cause["dims"]:
                        cause["dims"].append(d)
                if cause["made_dynamic"] is None and _made_dynamic(c, fg.source):
                    cause["made_dynamic"] = c.compile_id
            if fg.kind == "EQUALS_MATCH" and cause["made_dynamic"] is None \
                    and _number(fg.expected) and not _guards_value(c, fg.source):
                cause["made_dynamic"] = c.compile_id
            m = re.match(r"^\d+ <= .+\.size\(\)\[(\d+)\]$", fg.expected or "")
            if m and int(m.group(1)) not in cause["dims"]:
                cause["dims"].append(int(m.group(1)))
    causes = list(out.values())
    for cause in causes:
        cause["mechanism"] = advice.mechanism(cause["kind"], cause["source"], cause["what"],
                                              cause["values"])
        if cause["mechanism"] == "size" and (cause["shape"] or {}).get("specialized_to") \
                is not None:
            asked = [g["why"] for g in cause["shape"].get("guards", ()) if g.get("lineno")]
            # the code used the size as a plain int (range, an index): every size specializes;
            # else the code's own comparison with a constant
            cause["mechanism"] = "size_as_int" if shapes.AS_INT in asked else "size_specialized"
        cause["expected"] = cause["mechanism"] in advice.BOUNDED
        # a value Dynamo carried across a graph break (the stack at the break): the
        # resume function's input, not a name the user wrote
        cause["from_break"] = cause["name"].startswith("___stack")
        fix = (advice.from_break_advice(cause) if cause["from_break"] else
               advice.guard_advice(cause))
        cause["advice"] = [fix] if fix else []
        cause["statement"] = _cause_statement(cause)
    # several guards failing on the same recompiles, installed by one line that updates a
    # global dict: moving that bookkeeping out removes them all
    for cause in causes:
        if cause["mechanism"] == "global_dict":
            for other in causes:
                if other is not cause and other["recompiles"] == cause["recompiles"] \
                        and other["installed"] == cause["installed"]:
                    other["advice"] = [f"read by the same line as {cause['name']}: "
                                       f"{cause['advice'][0]}"] if cause["advice"] else []
    return causes


def _size_origin(recording: Recording, fg: FailedGuard, generation: int) -> dict[str, Any] | None:
    """Where a failed size guard came from in the compile that held it (its shapes)."""
    source = fg.source or ""
    old = [c for c in recording.compiles if c.compile_id == fg.compile_id
           and c.generation == generation]
    if fg.kind == "TENSOR_MATCH" and fg.what == "size":
        # a size the tensor's own check holds: static, or made a symbol and then specialized
        # to a constant by the code (the symbolic guard that did it says where)
        dims = [d for d in (old[-1].shapes.dims if old and old[-1].shapes else ())
                if d.source.startswith(source + ".size()[") and d.how == shapes.SPECIALIZED]
        if not dims:
            return None
        source = dims[0].source
    elif not re.search(r"\.size\(\)\[\d+\]$", source):
        return None
    origin = shapes.size_origin(old[-1].shapes, source) if old else None
    if origin is not None:
        origin["statement"] = shapes.origin_statement(origin, fg.compile_id)
    return origin


def _shown(fg: FailedGuard) -> str:
    """What the entry held: a dict's length is `not G['d']` when the dict was empty."""
    if fg.kind == "DICT_LENGTH" and (fg.expected or "").startswith("not "):
        return "0"
    return fg.expected


def _number(text: str | None) -> bool:
    try:
        float(text or "")
    except ValueError:
        return False
    return True


def _guards_value(c: Compile, source: str | None) -> bool:
    """Whether compile `c` still guards `source` by its value (else it made it a symbol)."""
    return any(g.source == source and (g.kind in ("EQUALS_MATCH", "CONSTANT_MATCH")
                                       or g.text.startswith("EQUALS_MATCH"))
               for g in c.guard_details)


def _made_dynamic(c: Compile, source: str | None) -> bool:
    """Whether compile `c` holds `source` with a dynamic dimension (automatic dynamic)."""
    for g in c.guard_details:
        if g.kind == "TENSOR_MATCH" and g.source == source:
            s = advice.sizes(g.text)
            return bool(s) and None in s
    return False


def elide(values: list[str], limit: int = 6) -> str:
    """Values shown around the part where they differ: `'blocks.{0..7}.attn.v.weight'`."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) == 2 and all(len(v) <= 120 for v in distinct):
        return f"{distinct[0]}, then {distinct[1]}"
    pre = _common(distinct)
    post = _common([v[len(pre):][::-1] for v in distinct])[::-1]
    middles = [v[len(pre):len(v) - len(post)] for v in distinct]
    if all(m.isdigit() for m in middles):
        nums = [int(m) for m in middles]
        if nums == list(range(nums[0], nums[0] + len(nums))):
            return f"{pre}{{{nums[0]}..{nums[-1]}}}{post}" if pre or post else f"{nums[0]}..{nums[-1]}"
    shown = ", ".join(middles[:limit]) + (f", … ({len(middles)} in all)" if len(middles) > limit else "")
    return f"{pre}{{{shown}}}{post}" if pre or post else shown


def _common(texts: list[str]) -> str:
    first = min(texts, key=len)
    n = 0
    while n < len(first) and all(t[n] == first[n] for t in texts):
        n += 1
    return first[:n]


def _local_names(text: str) -> str:
    """`x.size()[0]` for `L['x'].size()[0]`: the names as the user's code has them."""
    return re.sub(r"\bL\[(['\"])(\w+)\1\]", r"\2", text)


def _cause_statement(cause: dict[str, Any]) -> str:
    name, what, n = cause["name"], cause["what"], len(cause["recompiles"])
    values = elide(cause["values"])
    times = "once" if n == 1 else f"{n} times"
    if cause.get("from_break") or name.startswith("___stack"):
        name = f"a value carried across the graph break ({cause['source']})"
    subject = f"{name} {what}" if what and what not in ("value", "check") else name
    if cause["kind"] == "GLOBAL_STATE":
        subject = "global state (grad mode)" if cause["mechanism"] == "grad_mode" else "global state"
    if cause["what"] == "check":
        seen = _local_names(elide(cause["values"][1:]))
        check = _local_names(cause["values"][0])
        return f"the check {check} failed ({seen}), recompiling {times}"
    if cause["mechanism"] == "string":
        return f"{subject} (a str) took a new value, recompiling {times}: {values}"
    return f"{subject} changed, recompiling {times}: {values}"


# -- refusals --------------------------------------------------------------------------


def _refusal(recording: Recording, e: Any, causes: list[dict[str, Any]],
             user_code: tuple[str, ...]) -> dict[str, Any]:
    failed = [_failed(recording, fg, user_code=user_code) for fg in e.failed_guards]
    sources = {fg.source for fg in e.failed_guards}
    frame_id = (e.compile_id or "").split("/")[0]
    mine = [c for c in causes if c["source"] in sources
            and str(c["recompiles"][0]).split("/")[0] == frame_id]
    fixes = [a for c in mine for a in c["advice"]]
    guards: list[dict[str, Any]] = []   # what failed on the refused call, one per source
    if not mine:
        seen: set[tuple] = set()
        for fg, d in zip(e.failed_guards, failed):
            key = (fg.kind, fg.source, fg.what)
            if key in seen or advice.python_name(fg.source).startswith("___"):
                continue
            seen.add(key)
            cause = {"name": advice.python_name(fg.source), "source": fg.source,
                     "values": [fg.expected, fg.seen], "dims": advice.changed_dims(fg.expected, fg.seen),
                     "made_dynamic": None, "own_frame": False}
            cause["mechanism"] = advice.mechanism(fg.kind, fg.source, fg.what, cause["values"])
            fix = advice.guard_advice(cause)
            guards.append({**d, "mechanism": cause["mechanism"], "advice": [fix] if fix else []})
            if fix and fix not in fixes:
                fixes.append(fix)
    if e.kind == EventKind.CACHE_LIMIT:
        bounded = all(c["expected"] for c in mine) if mine else False
        fixes.append("raise torch._dynamo.config.recompile_limit only if the values that change "
                     "are few and known" if not bounded else
                     "these values are few: raising torch._dynamo.config.recompile_limit is safe")
    return {"kind": e.kind, "compile_id": e.compile_id, "message": e.message,
            "failed_guards": failed, "causes": [c["statement"] for c in mine],
            "guards": guards,
            "advice": fixes, "suggestion": "; ".join(fixes) or None}


def _base(compile_id: str | None) -> str:
    """`0/0` for `0/0_1`: a compile id without its attempt."""
    return (compile_id or "").split("_")[0]


def answer_of(data: dict[str, Any], compile_id: str) -> dict[str, Any]:
    """What `explanation` data says about one compile: its function's entry (outcome,
    statement, failure, errors; a resume function's is the frame it continues), the graph
    breaks it met, the recompile it is (its failed guards with their user lines), the causes
    that name it, the refused recompiles it stands for, and their advice, each fix once. An
    attempt Dynamo restarted (`0/0`) is answered as the compile it was restarted into (`0/0_1`)."""
    base = _base(compile_id)
    mine = lambda ids: any(_base(i) == base for i in ids)   # noqa: E731
    frame = next((f for f in data["frames"] if mine(f["compiles"]) or mine(f.get("resumes", ()))), None)
    breaks = [b for b in data["graph_breaks"] if mine(b["compiles"])]
    recompile = next((r for r in data["recompiles"] if _base(r["compile_id"]) == base), None)
    causes = [c for c in data["causes"] if mine(c["recompiles"])]
    refusals = [r for r in data["refusals"] if _base(r["compile_id"]) == base]
    fixes: list[str] = []
    for item in ([frame] if frame else []) + breaks + causes + refusals:
        for a in item["advice"]:
            if a not in fixes:
                fixes.append(a)
    return {"compile_id": compile_id, "frame": frame, "graph_breaks": breaks,
            "recompile": recompile, "causes": causes, "refusals": refusals,
            "statements": ([frame["statement"]] if frame else [])
            + [c["statement"] for c in causes],
            "advice": fixes}


def compile_answers(recording: Recording, user_code: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """`compile_answer` for every compile and refused call of the recording, by compile id,
    from one `explanation` (each view of a recording shows explain's own words)."""
    data = explanation(recording, user_code)
    ids = [c.compile_id for c in recording.compiles] + [
        e.compile_id for e in recording.events if e.compile_id]
    return {i: answer_of(data, i) for i in dict.fromkeys(ids)}


def compile_answer(recording: Recording, compile_id: str,
                   user_code: Iterable[str] = ()) -> dict[str, Any]:
    """What explain says about one compile, as plain data (`answer_of`). Raises KeyError
    for an id the recording does not hold. After a torch._dynamo.reset() ids repeat: the
    entries of every compile with that id are given. For many compiles, `compile_answers`
    reads the recording once."""
    if not any(c.compile_id == compile_id for c in recording.compiles) and not any(
            e.compile_id == compile_id for e in recording.events):
        raise KeyError(compile_id)
    return answer_of(explanation(recording, user_code), compile_id)


def _shipped_place(p: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if p is None else {k: p.get(k) for k in ("function", "file", "lineno", "line")}


def viewer_answers(recording: Recording, user_code: Iterable[str] = ()) -> list[dict[str, Any]]:
    """What the viewer shows of explain's answer, one entry per compile in recording order
    (`recording.compiles[k]`'s is entry k): `compile_answer`'s statements, user lines,
    failed guards and advice, without the teaching detail (instruction, stack, registry),
    so the compile menu, the break card and the compare view say what explain says, and
    nothing else. Made from one `explanation` of the whole recording."""
    data = explanation(recording, user_code)
    out = []
    for c in recording.compiles:
        a = answer_of(data, c.compile_id)
        f = a["frame"]
        r = a["recompile"]
        out.append({
            "compile_id": c.compile_id,
            "frame": None if f is None else {k: f[k] for k in (
                "function", "file", "lineno", "outcome", "statement", "advice")},
            "statements": a["statements"],
            "graph_breaks": [{**{k: b[k] for k in (
                "function", "file", "lineno", "line", "reason", "gb_id", "skipped", "advice",
                "hint", "note")}, "user": _shipped_place(b["user"])} for b in a["graph_breaks"]],
            "causes": [{**{k: x[k] for k in ("function", "kind", "source", "statement",
                                              "expected", "advice")},
                        "installed": x["installed"], "user": _shipped_place(x["user"])}
                       for x in a["causes"]],
            "failed_guards": [] if r is None else [
                {**{k: g[k] for k in ("compile_id", "kind", "source", "what", "expected", "seen",
                                      "file", "lineno", "line")},
                 "user": _shipped_place(g["user"])} for g in r["failed_guards"]],
            "refusals": [{k: e[k] for k in ("kind", "compile_id", "message", "causes", "advice")}
                         for e in a["refusals"]],
            "advice": a["advice"],
        })
    return out


# -- the text ------------------------------------------------------------------------


def explanation_text(recording: Recording, *, teach: bool = False,
                     user_code: Iterable[str] = ()) -> str:
    """The explanation for people at a terminal; `teach` adds Dynamo's detail (the
    instruction, the stack it met, its explanation and hints)."""
    return visible(text_of(explanation(recording, user_code), teach=teach))


def _where(file: str | None, lineno: int | None) -> str:
    name = (file or "?").rsplit("/", 1)[-1]
    return f"{name}:{lineno}" if lineno is not None else name


def _library_path(file: str | None) -> str:
    """`torch/_dynamo/external_utils.py` for a file under site-packages."""
    parts = (file or "?").split("/")
    for anchor in ("site-packages", "dist-packages"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) + 1:])
    return parts[-1]


def _user_lines(installed: dict[str, Any], user: dict[str, Any] | None, indent: str) -> list[str]:
    out = []
    if installed.get("lineno") is not None:
        line = f":  {installed['line']}" if installed.get("line") else ""
        out.append(f"{indent}installed at {_where(installed['file'], installed['lineno'])}{line}")
    if user and (user["file"], user["lineno"]) != (installed.get("file"), installed.get("lineno")):
        line = f":  {user['line']}" if user.get("line") else ""
        out.append(f"{indent}your line: {_where(user['file'], user['lineno'])}{line}")
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def text_of(data: dict[str, Any], *, teach: bool = False) -> str:
    """The text of an `explanation`."""
    s = data["summary"]
    parts = [_plural(s["compiles"], "compile")]
    if s.get("resumes"):
        # a resume function is a compile of its own but not a function the user wrote: it
        # is said with the frame it continues, so the functions listed number fewer
        parts[0] += (f" ({s['resumes']} of {'it' if s['compiles'] == 1 else 'them'} the code after a "
                     f"graph break, said with the function it continues)")
    for key, word in (("compiled_whole", "compiled whole"),
                      ("with_graph_breaks", "with graph breaks"), ("skipped", "skipped"),
                      ("failed", "failed")):
        if s[key]:
            parts.append(f"{s[key]} {'function' if s[key] == 1 else 'functions'} {word}")
    parts.append(_plural(s["recompiles"], "recompile"))
    if s["refused"]:
        parts.append(f"{s['refused']} recompile{'s' if s['refused'] != 1 else ''} refused")
    out = [", ".join(parts) + f" (torch {data['torch_version']})", ""]
    for f in data["frames"]:
        where = _where(f["file"], f["lineno"]) if f.get("user", True) else \
            f"{_library_path(f['file'])}:{f['lineno']}, library code"
        out.append(f"{f['function']} ({where}): {f['statement']}")
        for a in f.get("advice", []):
            out.append(f"  fix: {a}")
    breaks, causes, refusals = data["graph_breaks"], data["causes"], data["refusals"]
    for n, b in enumerate(breaks, 1):
        out.append("")
        head = "graph break" + (f" {n} of {len(breaks)}" if len(breaks) > 1 else "")
        out.append(f"{head}: in {b['function']} at {_where(b['file'], b['lineno'])}"
                   + (" (the frame was skipped: it runs eagerly)" if b["skipped"] else ""))
        if b["line"]:
            out.append(f"  {b['lineno']} | {b['line']}")
        u = b["user"]
        if u and (u["file"], u["lineno"]) != (b["file"], b["lineno"]):
            out.append(f"  your line: {_where(u['file'], u['lineno'])}:  {u['line'] or ''}".rstrip())
        out.append(f"  why: {b['reason']}" + (f" ({b['gb_id']})" if b["gb_id"] else ""))
        if b.get("resume_chain"):
            frames_ = " -> ".join(f"{x['function']} line {x['line']}" for x in b["resume_chain"])
            out.append(f"  nested graph break (nested_graph_breaks): resumed as one chain, "
                       f"innermost first: {frames_}; the callers were not compiled as frames "
                       f"of their own")
        if teach:
            if b["explanation"]:
                out.append(f"  explanation: {b['explanation'].strip()}")
            if b["instruction"]:
                out.append(f"  instruction: {b['instruction']}  (step {b['step']})")
                if b.get("instruction_help"):
                    out.append(f"    {b['instruction'].split()[0]} in Dynamo: {b['instruction_help']}")
            if b["stack"]:
                out.append("  stack it met (top first):")
                out += [f"    {v}" for v in b["stack"]]
            if b["hints"]:
                out.append("  Dynamo's hints:")
                out += [f"    - {h}" for h in b["hints"]]
            if b["link"]:
                out.append(f"  registry: {b['gb_id']} ({b['gb_type'] or 'unknown type'})  {b['link']}")
        for a in b["advice"]:
            out.append(f"  fix: {a}")
        if b.get("hint") and not teach:
            out.append(f"  Dynamo's hint (not a tested fix): {b['hint']}")
        if b.get("note"):
            out.append(f"  note: {b['note']}")
    for cause in causes:
        out.append("")
        expected = " (expected)" if cause["expected"] else ""
        out.append(f"recompiles of {cause['function']}{expected}: {cause['statement']}  "
                   f"[{', '.join(cause['recompiles'])}]")
        out.append(f"  guard: {cause['kind']} {cause['source'] or ''}".rstrip())
        out += _user_lines(cause["installed"], cause["user"], "  ")
        if (cause.get("shape") or {}).get("statement"):
            out.append(f"  shape: {cause['shape']['statement']}")
        if cause["user"] is None and cause["installed"].get("lineno") is not None:
            out.append("  (no line of yours in the chain: this frame is library code that "
                       "Dynamo compiled as a frame of its own)")
        for a in cause["advice"]:
            out.append(f"  fix: {a}")
    for r in data["recompiles"]:
        if not r["failed_guards"] and r["dynamo_reasons"]:
            out.append("")
            out.append(f"recompile [{r['compile_id']}] of {r['function']}: no failed guards "
                       "recorded (Dynamo's first reason only)")
            out.append(f"  Dynamo's reason (the first failure only): "
                       f"{r['dynamo_reasons'][0].splitlines()[0]}")
    for e in refusals:
        out.append("")
        where = f" [{e['compile_id']}]" if e["compile_id"] else ""
        out.append(f"refused ({e['kind']}){where}: {e['message']}")
        for statement in e["causes"]:
            out.append(f"  because: {statement} (see above)")
        for fg in e.get("guards") or ([] if e["causes"] else e["failed_guards"][:4]):
            what = f" {fg['what']}" if fg["what"] else ""
            out.append(f"  - [{fg['compile_id']}] {fg['kind']} {fg['source'] or ''}{what}: "
                       f"expected {fg['expected']}, got {fg['seen']}")
            out += _user_lines({"file": fg["file"], "lineno": fg["lineno"], "line": fg["line"]},
                               fg.get("user"), "      ")
        said = {a for c in causes for a in c["advice"]}
        for a in e["advice"]:
            if a not in said:   # a cause's fix is said once, with the cause
                out.append(f"  fix: {a}")
    for split in data.get("ddp_splits", ()):
        out.append("")
        out.append(f"{split['function']} [{split['compile_id']}] "
                   f"({_where(split['file'], split['lineno'])}): one graph from Dynamo, split "
                   f"by DDP into {len(split['buckets'])} subgraph(s)")
        record = DdpSplit(split["bucket_cap"], split["first_bucket_cap"], tuple(
            DdpBucket(b["index"], b["size"], tuple(b["params"]), tuple(b["nodes"]),
                      b["extended"]) for b in split["buckets"]))
        out += ddp_split_lines(record, "  ")[1:]
    if not breaks and not causes and not refusals and not data["recompiles"] and s["compiles"] \
            and not s["failed"] and not s["skipped"]:
        out.append("")
        out.append("no graph breaks and no recompiles")
    return "\n".join(out).rstrip()


__all__ = ["FORMAT", "SCHEMA", "answer_of", "compile_answer", "compile_answers", "elide", "explanation", "explanation_text", "registry_entry",
           "text_of", "viewer_answers"]
