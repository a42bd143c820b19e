"""The viewer's panes as pure functions: (compile, step index) -> an HTML string.

Nothing here touches a kernel or a widget, so each pane can be tested from a
recording alone. Every piece of text that comes from the learner's program
(source, constants, names, guard texts, reasons) goes through `escape`:
`html.escape`, after `visible` has written out the characters a page must not
receive raw (lone surrogates, bidirectional controls). Only the markup written
in this module is trusted.

NOTE (speed): a recording of a real model has thousands of steps and guards.
`CompileIndex` holds what is worth computing once per compile (escaped rows,
links between the steps of one frame, the order guards were installed in), and
the long panes show a window around the current position, so rendering one step
costs time proportional to what is on screen, not to the size of the recording.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # records only: importing them never imports torch
    from capture import Compile, Guard, Recording, Step, Var

BYTECODE_BEFORE = 8      # instructions shown above the current one
BYTECODE_AFTER = 16      # ... and below it
SOURCE_WINDOW = 40       # longer sources show this many lines around the current one
RECENT_GUARDS = 40       # guards listed in full; earlier ones are counted
LINE_LIMIT = 500         # characters of one line of the program's text that a pane shows
MESSAGE_LIMIT = 2000     # ... of one message (a reason, an error)
LISTING_LIMIT = 100_000  # characters of HTML in one listing (bytecode, the guard tree)

# Characters shown as `\uXXXX` escapes instead of being passed on. Lone surrogates
# (from undecodable file names, or any str) cannot be encoded as UTF-8, so the kernel
# could not send them; bidirectional controls would reorder the text around them on
# screen ("Trojan Source"); other C0 controls are invisible.
_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u061c\u200e\u200f"
                         "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """The text with surrogates, bidirectional and control characters written as escapes.

    Everything the viewer sends to the browser goes through this (HTML panes by way of
    `escape`, widget labels directly).
    """
    return _UNSHOWABLE.sub(_escape_char, str(text))


def escape(text: object) -> str:
    """Text as HTML that shows exactly that text (see `visible` for the exceptions)."""
    return html.escape(visible(text), quote=True)


# NOTE (long lines): a recording keeps the program's text whole (the text view and
# JSON show all of it), and a recording read from JSON can hold anything. So every
# line of it that a pane shows is cut here, with the cut marked: one 100 000-character
# constant must not make every step send a megabyte to the browser.

def cut(text: object, limit: int = LINE_LIMIT) -> str:
    """Plain text cut to `limit` characters, the cut marked with "…"."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(text: object, limit: int = LINE_LIMIT) -> str:
    """`escape`d text cut to `limit` characters, followed by how many more there were."""
    text = str(text)
    if len(text) <= limit:
        return escape(text)
    return (escape(text[:limit]) +
            f'<span class="dl-cut">… {len(text) - limit:,} more characters</span>')


def listing(lines: Sequence[str], row: Callable[[str], str], what: str) -> str:
    """The rows of a listing until LISTING_LIMIT characters of HTML, then how many are left."""
    out, size = [], 0
    for k, line in enumerate(lines):
        if size > LISTING_LIMIT:
            out.append(f'<span class="dl-more">… {len(lines) - k:,} more lines '
                       f'(the whole {what} is in the recording)</span>')
            break
        out.append(row(line))
        size += len(out[-1])
    return "".join(out)


class CompileIndex:
    """Lookups over one compile, built once so each step renders quickly."""

    def __init__(self, c: Compile) -> None:
        self.compile = c
        self.frame_prev = _frame_links(c.steps)
        details = c.guard_details
        self.ambient = [k for k, g in enumerate(details) if g.ambient]
        stepped = sorted((g.step, k) for k, g in enumerate(details)
                         if not g.ambient and g.step is not None)
        self.stepped = [k for _, k in stepped]
        self.stepped_at = [s for s, _ in stepped]
        self.after = [k for k, g in enumerate(details) if not g.ambient and g.step is None]
        self._rows: dict[int, tuple[list[str], dict[int, int]]] = {}
        self._vars: dict[Var, str] = {}

    @property
    def last(self) -> int:
        return len(self.compile.steps) - 1

    def guards_installed(self, i: int) -> int:
        """How many non-ambient guards were installed by the end of step i."""
        return bisect_right(self.stepped_at, i)

    def instruction_rows(self, code: int) -> tuple[list[str], dict[int, int]]:
        """Escaped disassembly rows of one code object, and offset -> row."""
        cached = self._rows.get(code)
        if cached is None:
            rows, where = [], {}
            last_line = None
            for k, ins in enumerate(self.compile.codes[code].instructions):
                line = "" if ins.lineno is None or ins.lineno == last_line else str(ins.lineno)
                if ins.lineno is not None:
                    last_line = ins.lineno
                mark = ">>" if ins.is_jump_target else "  "
                text = f"{line:>4} {mark} {ins.offset:>4} {ins.opname:<20} {ins.argrepr}".rstrip()
                rows.append(clip(text))
                where[ins.offset] = k
            cached = self._rows[code] = (rows, where)
        return cached

    def var_html(self, v: Var) -> str:
        text = self._vars.get(v)
        if text is None:
            text = self._vars[v] = _var_html(v)
        return text


def index(c: Compile) -> CompileIndex:
    return CompileIndex(c)


def _frame_links(steps: list[Step]) -> list[int | None]:
    """For each step, the previous step of the same frame (None where a frame begins).

    Inlined calls run at a greater depth; a frame continues only while the code and
    the chain of callers stay the same and no shallower step came in between.
    """
    prev: list[int | None] = [None] * len(steps)
    last_at: dict[int, int] = {}
    for pos, s in enumerate(steps):
        j = last_at.get(s.depth)
        if j is not None and steps[j].code == s.code and steps[j].inline_stack == s.inline_stack:
            prev[pos] = j
        last_at[s.depth] = pos
        for deeper in [d for d in last_at if d > s.depth]:
            del last_at[deeper]  # a later call at that depth is a new frame
    return prev


def _var_html(v: Var) -> str:
    cls = "dl-kind dl-lazy" if v.lazy and not v.realized else "dl-kind"
    out = f'<span class="{cls}">{clip(v.kind)}</span>'
    if v.detail:
        out += " " + clip(v.detail)
    if v.lazy and v.realized:
        out += ' <span class="dl-tag">lazy, realized</span>'
    if v.source:
        out += f' <span class="dl-src">&lt;- {clip(v.source)}</span>'
    return out


def _pane(title: str, body: str) -> str:
    return f'<div class="dl-title">{title}</div><div class="dl-pane-body">{body}</div>'


def _no_steps(c: Compile, what: str) -> str:
    reason = f" ({clip(c.error, MESSAGE_LIMIT)})" if c.error else ""
    return _pane(what, f'<div class="dl-dim">No steps were recorded for this compile: '
                       f'outcome {clip(c.outcome)}{reason}.</div>')


def _crumbs(s: Step) -> str:
    """`f line 7 › helper` inside an inlined call; just the code name otherwise."""
    parts = [f"{clip(name)} line {lineno}" for name, lineno in s.inline_stack]
    parts.append(f"<code>{clip(s.code_name)}</code>")
    return '<span class="dl-crumbs">' + " › ".join(parts) + "</span>"


def _step(c: Compile, i: int) -> Step | None:
    if not c.steps:
        return None
    return c.steps[max(0, min(i, len(c.steps) - 1))]


# -- per step ------------------------------------------------------------------------

def step_label(c: Compile, i: int) -> str:
    """`step i / n`: the index of the step and of the last step, as in the text view's `#i`."""
    return f"step {i} / {max(len(c.steps) - 1, 0)}" if c.steps else "step 0 / 0"


def caption_html(c: Compile, i: int) -> str:
    """One line on what step i did, and a banner where the compile breaks or stops."""
    s = _step(c, i)
    if s is None:
        return f'<div class="dl-caption"><span class="dl-stepno">{step_label(c, i)}</span> · no steps</div>'
    i = s.index
    where = f"line {s.lineno}" if s.lineno is not None else "line ?"
    inlined = f" (inlined from {clip(s.inline_stack[-1][0])})" if s.inline_stack else ""
    did = []
    if s.nodes_added:
        names = ", ".join(f"<code>{clip(n)}</code>" for n in s.nodes_added)
        did.append(f"added graph node{'s' if len(s.nodes_added) > 1 else ''} {names}")
    if s.guards_added:
        kinds = sorted({c.guard_details[k].kind for k in s.guards_added})
        n = len(s.guards_added)
        did.append(f"installed {n} guard{'s' if n > 1 else ''} ({clip(', '.join(kinds))})")
    text = (f'<span class="dl-stepno">{step_label(c, i)}</span> · {where} in '
            f'<code>{clip(s.code_name)}</code>{inlined} · '
            f'<code>{clip(s.opname)} {clip(s.argrepr)}</code>')
    if did:
        text += " → " + "; ".join(did)
    out = f'<div class="dl-caption">{text}</div>'
    gb = c.graph_break
    if gb is not None and gb.step == i:
        out += _break_banner(c)
    if c.truncated and i == len(c.steps) - 1:
        out += ('<div class="dl-banner">The step cap was reached here: Dynamo went on, '
                'but its later steps were not stored.</div>')
    return out


def _break_banner(c: Compile) -> str:
    gb = c.graph_break
    assert gb is not None
    text = f"<b>Graph break here:</b> {clip(gb.reason, MESSAGE_LIMIT)}"
    if gb.explanation:
        text += f" — {clip(gb.explanation, MESSAGE_LIMIT)}"
    if c.outcome == "restarted":
        text += (" Dynamo abandons this attempt and traces the frame again"
                 " (the next attempt), this time stopping before this instruction.")
    elif c.resume_functions:
        names = ", ".join(f"<code>{clip(r.code_name)}</code>" for r in c.resume_functions)
        text += (" Dynamo compiles the graph built so far, runs this instruction in plain"
                 f" Python and continues in a resume function: {names}.")
    return f'<div class="dl-banner dl-error">{text}</div>'


def source_html(c: Compile, i: int, ix: CompileIndex | None = None) -> str:
    """The source of the code being traced at step i, its current line marked."""
    s = _step(c, i)
    if s is None:
        return _no_steps(c, "Source")
    info = c.codes[s.code] if s.code < len(c.codes) else None
    title = f"Source · {_crumbs(s)}"
    if info is None or not info.source_lines:
        where = clip(info.filename) if info is not None else "unknown file"
        return _pane(title, f'<div class="dl-dim">Source not available ({where}).</div>')
    gb = c.graph_break
    break_line = (gb.lineno if gb is not None and gb.step is not None and s.index >= gb.step
                  and gb.code_name == info.name else None)
    lines = info.source_lines
    first, last = 0, len(lines)
    if len(lines) > SOURCE_WINDOW and s.lineno is not None:
        centre = s.lineno - info.firstlineno
        first = max(0, min(centre - SOURCE_WINDOW // 3, len(lines) - SOURCE_WINDOW))
        last = first + SOURCE_WINDOW
    rows = []
    if first:
        rows.append(f'<span class="dl-more">… {first} line(s) above</span>')
    for k in range(first, last):
        lineno = info.firstlineno + k
        cls = "dl-row"
        mark = " "
        if lineno == break_line:
            cls += " dl-break"
            mark = "✖"
        if lineno == s.lineno:
            cls += " dl-current"
            mark = "▶"
        rows.append(f'<span class="{cls}">{lineno:>4} {mark} {clip(lines[k])}</span>')
    if last < len(lines):
        rows.append(f'<span class="dl-more">… {len(lines) - last} line(s) below</span>')
    return _pane(title, '<pre class="dl-code">' + "".join(rows) + "</pre>")


def bytecode_html(c: Compile, i: int, ix: CompileIndex | None = None) -> str:
    """The original bytecode of the code being traced, the current instruction marked."""
    s = _step(c, i)
    if s is None:
        return _no_steps(c, "Bytecode")
    ix = ix or CompileIndex(c)
    rows, where = ix.instruction_rows(s.code)
    current = where.get(s.offset)
    title = f"Bytecode · {_crumbs(s)} <span class=\"dl-dim\">· offset {s.offset}</span>"
    centre = current if current is not None else 0
    first = max(0, centre - BYTECODE_BEFORE)
    last = min(len(rows), centre + BYTECODE_AFTER + 1)
    out = []
    if first:
        out.append(f'<span class="dl-more">… {first} instruction(s) above</span>')
    for k in range(first, last):
        if k == current:
            out.append(f'<span class="dl-row dl-current">{rows[k]}</span>')
        else:
            out.append(f'<span class="dl-row">{rows[k]}</span>')
    if last < len(rows):
        out.append(f'<span class="dl-more">… {len(rows) - last} instruction(s) below</span>')
    return _pane(title, '<pre class="dl-code">' + "".join(out) + "</pre>")


def stack_html(c: Compile, i: int, ix: CompileIndex | None = None) -> str:
    """The VariableTracker stack (top first) and symbolic locals after step i, changes marked."""
    s = _step(c, i)
    if s is None:
        return _no_steps(c, "Stack and locals")
    ix = ix or CompileIndex(c)
    j = ix.frame_prev[s.index] if s.index < len(ix.frame_prev) else None
    prev = c.steps[j] if j is not None else None

    here, before = s.stack, (prev.stack if prev is not None else [])
    kept = 0
    if prev is not None:
        for a, b in zip(before, here):
            if a != b:
                break
            kept += 1
    popped = len(before) - kept if prev is not None else 0
    pushed = len(here) - kept if prev is not None else 0
    change = f" · popped {popped}, pushed {pushed}" if prev is not None else ""
    items = []
    for pos in range(len(here) - 1, -1, -1):
        new = prev is not None and pos >= kept
        cls = ' class="dl-new"' if new else ""
        items.append(f"<li{cls}>{ix.var_html(here[pos])}</li>")
    stack = ('<ol class="dl-list">' + "".join(items) + "</ol>" if items
             else '<div class="dl-faint">(empty)</div>')

    rows = []
    same = prev is not None and prev.locals_ids is s.locals_ids  # shared while unchanged
    now, then = s.locals, (prev.locals if prev is not None and not same else {})
    for name, v in now.items():
        changed = prev is not None and not same and then.get(name) != v
        cls = ' class="dl-new"' if changed else ""
        rows.append(f"<li{cls}><b>{clip(name)}</b> = {ix.var_html(v)}</li>")
    if prev is not None and not same:
        for name in then:
            if name not in now:
                rows.append(f'<li class="dl-gone"><b>{clip(name)}</b> (deleted)</li>')
    local_list = ('<ul class="dl-list">' + "".join(rows) + "</ul>" if rows
                  else '<div class="dl-faint">(none)</div>')

    title = (f"Stack <span class=\"dl-dim\">(top first) · {len(here)} item(s){change}</span>"
             f" · {_crumbs(s)}")
    body = stack + '<div class="dl-subtitle">Symbolic locals</div>' + local_list
    return _pane(title, body)


def _guard_li(g: Guard, new: bool) -> str:
    cls = ' class="dl-new"' if new else ""
    if g.lineno:
        where = f"line {g.lineno}" + (f": {clip(g.line)}" if g.line else "")
        if g.code_name:
            where += f" (in {clip(g.code_name)})"
    elif g.ambient:
        where = "ambient: installed for every frame"
    else:
        where = "installed after tracing, when the graph was compiled"
    if g.step is not None:
        where += f" · step {g.step}"
    return f'<li{cls}>{clip(g.text)}<span class="dl-where">{where}</span></li>'


def guards_html(c: Compile, i: int, ix: CompileIndex | None = None) -> str:
    """The guards installed by the end of step i, with the line that installed each."""
    ix = ix or CompileIndex(c)
    details = c.guard_details
    if c.steps:
        i = max(0, min(i, len(c.steps) - 1))
    n = ix.guards_installed(i) if c.steps else len(ix.stepped)
    at_end = not c.steps or i == ix.last
    shown = ix.stepped[:n]
    total = len(ix.ambient) + n + (len(ix.after) if at_end else 0)
    parts = []
    if ix.ambient:
        items = "".join(_guard_li(details[k], False) for k in ix.ambient)
        parts.append(f"<details><summary>{len(ix.ambient)} ambient guard(s), installed before "
                     f"the first instruction</summary><ul class=\"dl-list\">{items}</ul></details>")
    if len(shown) > RECENT_GUARDS:
        parts.append(f'<div class="dl-more dl-faint">… {len(shown) - RECENT_GUARDS} earlier '
                     "guard(s); all of them are in the guard tree below</div>")
        shown = shown[-RECENT_GUARDS:]
    if shown:
        items = "".join(_guard_li(details[k], details[k].step == i) for k in shown)
        parts.append(f'<ul class="dl-list">{items}</ul>')
    elif not (at_end and ix.after):
        parts.append('<div class="dl-faint">No guards installed by the traced code yet.</div>')
    if at_end and ix.after:
        items = "".join(_guard_li(details[k], False) for k in ix.after)
        parts.append(f'<div class="dl-subtitle">After tracing</div><ul class="dl-list">{items}</ul>')
    title = f"Guards <span class=\"dl-dim\">· {total} installed so far ({len(ix.ambient)} ambient)</span>"
    return _pane(title, "".join(parts))


# -- per compile ------------------------------------------------------------------------

def compile_html(c: Compile) -> str:
    """What this compile was and how it ended."""
    name = c.filename.rsplit("/", 1)[-1]
    facts = [f"{clip(name)}:{c.firstlineno}", f"outcome: {clip(c.outcome)}",
             f"{len(c.steps)} steps", f"{sum(n.in_graph for n in c.nodes)} graph nodes",
             f"{len(c.guard_details)} guards"]
    out = (f'<div class="dl-head"><b>{clip(c.title())}</b> '
           f'<span class="dl-dim">· {" · ".join(facts)}</span></div>')
    for reason in c.recompile_reasons:
        out += (f'<div class="dl-banner">Recompiled because a guard failed: '
                f'{clip(reason, MESSAGE_LIMIT)}</div>')
    if c.graph_break is not None:
        gb = c.graph_break
        where = f" at line {gb.lineno}" if gb.lineno is not None else ""
        line = f": <code>{clip(gb.line)}</code>" if gb.line else ""
        out += (f'<div class="dl-banner dl-error">Graph break{where}{line} — '
                f'{clip(gb.reason, MESSAGE_LIMIT)}</div>')
    if c.restart_reason:
        out += f'<div class="dl-banner">Restarted: {clip(c.restart_reason, MESSAGE_LIMIT)}</div>'
    if c.error:
        out += (f'<div class="dl-banner dl-error">{clip(c.outcome)}: '
                f'{clip(c.error, MESSAGE_LIMIT)}</div>')
    if c.truncated:
        out += ('<div class="dl-banner">Truncated: the step cap was reached during this '
                'compile, so its later steps are missing.</div>')
    return out


def _bytecode_row(line: str) -> str:
    cls = "dl-row"
    if "record_pregraph_bytecode" in line:
        cls += " dl-runtime"   # Dynamo's own runtime-overhead bookkeeping: real, but not the point
    elif "__compiled_fn_" in line or "__resume_at_" in line:
        cls += " dl-callgraph"
    return f'<span class="{cls}">{clip(line)}</span>'


def original_bytecode_html(c: Compile, ix: CompileIndex | None = None) -> str:
    """The frame's bytecode as Python compiled it."""
    if not c.codes:
        return _pane("Original bytecode", '<div class="dl-faint">(unknown)</div>')
    ix = ix or CompileIndex(c)
    rows, _ = ix.instruction_rows(0)
    body = listing(rows, lambda r: f'<span class="dl-row">{r}</span>', "bytecode")
    return _pane(f"Original bytecode · <code>{clip(c.codes[0].name)}</code>",
                 f'<pre class="dl-code">{body}</pre>')


def rewritten_bytecode_html(c: Compile) -> str:
    """The bytecode Dynamo put in its place, and the resume functions it generated."""
    if not c.modified_bytecode:
        why = ("this attempt was abandoned and restarted" if c.outcome == "restarted"
               else f"outcome {c.outcome}")
        return _pane("Rewritten bytecode", f'<div class="dl-faint">None: {clip(why)}.</div>')
    lines = c.modified_bytecode.splitlines()[1:]  # the first line repeats name and file
    body = f'<pre class="dl-code">{listing(lines, _bytecode_row, "bytecode")}</pre>'
    for rf in c.resume_functions:
        rlines = rf.bytecode.splitlines()[1:]
        body += (f'<details><summary>resume function <code>{clip(rf.code_name)}</code> '
                 f'(global <code>{clip(rf.global_name)}</code>)</summary>'
                 f'<pre class="dl-code">{listing(rlines, _bytecode_row, "bytecode")}</pre>'
                 '</details>')
    if c.resume_functions:
        names = ", ".join(f"<code>{clip(r.code_name)}</code>" for r in c.resume_functions)
        body = f'<div class="dl-dim">Resume functions: {names}</div>' + body
    return _pane("Rewritten bytecode", body)


def guard_tree_html(c: Compile) -> str:
    """The final guard tree, exactly as TORCH_LOGS=guards prints it."""
    if not c.guard_tree:
        return _pane("Guard tree", f'<div class="dl-faint">None: this compile produced no '
                                   f'cache entry (outcome {clip(c.outcome)}).</div>')
    lines = c.guard_tree.strip("\n").split("\n")
    rows = listing(lines, lambda line: f'<span class="dl-row">{clip(line)}</span>', "guard tree")
    return _pane("Guard tree", f'<pre class="dl-code">{rows}</pre>')


def recording_html(r: Recording) -> str:
    """The recording in one line, with banners for how it ended."""
    breaks = r.counters.get("graph_breaks")
    facts = [f"{len(r.compiles)} compile(s)", f"{r.steps} steps"]
    if breaks is not None:
        facts.append(f"{breaks} graph break(s)")
    if r.torch_version:
        facts.append(f"torch {clip(r.torch_version)}")
    out = f'<div class="dl-head"><b>Recording</b> <span class="dl-dim">· {" · ".join(facts)}</span></div>'
    if r.ended_by:
        out += (f'<div class="dl-banner dl-error">Ended by the exception '
                f'<code>{clip(r.ended_by, MESSAGE_LIMIT)}</code>: what was recorded until then '
                'is shown.</div>')
    if r.truncated:
        out += (f'<div class="dl-banner">The step cap (max_steps={r.max_steps}) was reached: '
                'later steps were not stored. Record again with a larger cap to see them.</div>')
    for e in r.events:
        if e.kind in ("cache_limit", "error", "recorder_error"):
            where = f"[{clip(e.compile_id)}] " if e.compile_id else ""
            out += (f'<div class="dl-banner dl-error">{clip(e.kind)}: {where}'
                    f'{clip(e.message, MESSAGE_LIMIT)}</div>')
    return out


# -- text, for terminals and screen readers ----------------------------------------------

def step_text(c: Compile, i: int) -> str:
    """What the panes show at step i, as plain text."""
    s = _step(c, i)
    if s is None:
        return f"{c.title()}\n  no steps were recorded (outcome {c.outcome})"
    i = s.index
    out = [f"{c.title()}  {step_label(c, i)}", "  " + str(s).rstrip()]
    if s.inline_stack:
        chain = " > ".join(f"{name} line {line}" for name, line in s.inline_stack)
        out.append(f"  inlined from: {chain} > {s.code_name}")
    info = c.codes[s.code] if s.code < len(c.codes) else None
    if info is not None and s.lineno is not None and info.source_lines:
        k = s.lineno - info.firstlineno
        if 0 <= k < len(info.source_lines):
            out.append(f"  line {s.lineno}: {info.source_lines[k].strip()}")
    out.append("  stack (top first):")
    out += [f"    {v}" for v in reversed(s.stack)] or ["    (empty)"]
    out.append("  locals:")
    out += [f"    {k} = {v}" for k, v in s.locals.items()] or ["    (none)"]
    made = [n.name for n in c.nodes if n.step is not None and n.step <= i]
    out.append(f"  graph nodes so far: {', '.join(made) or '(none)'}")
    guards = [g for g in c.guard_details if not g.ambient and g.step is not None and g.step <= i]
    out.append(f"  guards installed so far by the code ({len(guards)}):")
    for g in guards:
        where = f"line {g.lineno}" + (f": {g.line}" if g.line else "") if g.lineno else ""
        out.append(f"    [step {g.step}] {g.text}" + (f"    # {where}" if where else ""))
    if c.graph_break is not None and c.graph_break.step == i:
        out.append(f"  graph break here: {c.graph_break.reason}")
    return "\n".join(out)
