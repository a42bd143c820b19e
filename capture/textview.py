"""The text view of a recording: what TORCH_LOGS=trace_bytecode,graph_code,guards,bytecode
would print, gathered in one place, for terminals, tests and nbval."""

from __future__ import annotations

from .shapes import shapes_lines
from .recording import TEXT_VIEWS, Compile, DdpSplit, FailedGuard, Recording
from .text import guard_where, visible

RULE = "=" * 78


# A recording's strings were made showable when recorded (capture.text); one read
# back from a JSON file written elsewhere may not be: `visible` once more, for printing.

def recording_text(r: Recording) -> str:
    return visible(_recording_text(r))


def _recording_text(r: Recording) -> str:
    head = (f"Recording: {len(r.compiles)} compile(s), {r.step_count} step(s) "
            f"(torch {r.torch_version}, Python {r.python_version})")
    parts = [head]
    if r.counters:
        parts.append("counters while recording: "
                      + "  ".join(f"{k}={v}" for k, v in r.counters.items()))
    breaks = r.graph_break_count
    if breaks or r.counters.get("graph_breaks"):
        parts.append(_break_counts(breaks, r.counters.get("graph_breaks", 0)))
    if r.truncated:
        caps = [e.message for e in r.events if e.kind in ("step_cap", "size_cap")]
        parts.append("truncated: " + (caps[0] if caps else f"a cap was reached "
                                      f"(max_steps={r.max_steps})"))
    if r.ended_by:
        parts.append(f"ended by: {r.ended_by}")
    if r.events:
        lines = ["timeline:"]
        for e in r.events:
            lines.append(f"  {e}")
            if e.failed_guards:  # a refused recompile: why each earlier compile did not do
                lines.append(f"    guards that failed on the refused call ({len(e.failed_guards)}):")
                lines += [f"      {failed_guard_line(fg)}" for fg in e.failed_guards]
        parts.append("\n".join(lines))
    if not r.compiles:
        parts.append("nothing was compiled while recording")
    for c in r.compiles:
        parts.append(_compile_text(c))
    return "\n\n".join(parts)


def _break_counts(events: int, counter: int) -> str:
    """The two counts of graph breaks, and what each counts."""
    text = (f"graph breaks: {events} graph_break event(s) below, one per graph break Dynamo "
            f"logged; Dynamo's graph_breaks counter says {counter}")
    if events != counter:
        text += (": it counts only breaks at an instruction Dynamo could not trace and "
                 "resumes after (a call, say), not a branch on a tensor's value "
                 "(`if x.sum() > 0`) nor a break it cannot resume from")
    return text


def compile_text(c: Compile) -> str:
    return visible(_compile_text(c))


def _compile_text(c: Compile) -> str:
    out = [RULE, c.title(), RULE, f"{c.code_name} in {c.filename}:{c.firstlineno}"]
    if c.recompile_reasons:
        out.append("recompiled because:")
        for reason in c.recompile_reasons:
            lines = reason.splitlines() or [""]
            out.append(f"  - {lines[0]}")
            out += [f"    {line}" for line in lines[1:]]
    if c.replaces is not None or c.failed_guards:
        where = f"[{c.replaces}]" if c.replaces is not None else "an earlier compile"
        out.append(f"compiled instead of {where}; guards that failed on the call "
                   f"({len(c.failed_guards)}):")
        out += [f"  {failed_guard_line(fg)}" for fg in c.failed_guards] or [
            "  (none recorded: the compile it replaces was made before recording)"]
    if c.source_lines:
        out.append("\nsource:")
        out += [f"  {c.firstlineno + i:4d} | {line}" for i, line in enumerate(c.source_lines)]
    out.append(f"\nsteps ({len(c.steps)}{', truncated' if c.truncated else ''}):")
    previous_locals: dict[int, tuple[dict, dict]] = {}  # code -> (indices, readings)
    for s in c.steps:
        out.append("  " + str(s))
        last = previous_locals.get(s.code)
        if last is None or last[0] is not s.locals_ids:  # steps share unchanged locals
            now = s.locals
            if last is None or last[1] != now:
                shown = ", ".join(f"{k}={v}" for k, v in now.items())
                out.append(f"        locals: {{{shown}}}")
            previous_locals[s.code] = (s.locals_ids, now)
    if c.graph_break is not None:
        gb = c.graph_break
        out.append(f"\ngraph break at line {gb.lineno} in {gb.code_name}: {gb.reason}")
        if gb.line:
            out.append(f"  {gb.line}")
        if gb.message:  # Dynamo's whole message: explanation, hints, debug context, link
            out += [f"  | {line}".rstrip() for line in gb.message.splitlines()]
        elif gb.explanation:
            out.append(f"  {gb.explanation}")
        if gb.step is None and c.truncated:
            out.append("  (its step was not stored: a cap came first)")
    if c.restart_reason:
        out.append(f"restarted: {c.restart_reason}")
    if c.error:
        out.append(f"{c.outcome}: {c.error}")
    out.append("\ngraph (the GraphModule handed to the backend):")
    out.append(_indent(c.graph_code) if c.graph_code else "  (no graph)")
    out.append("\nguards:")
    if c.guard_details:
        for g in c.guard_details:
            step = guard_where(None, None, ambient=g.ambient, step=g.step)
            where = f"    # {g.where}" if g.lineno else ""
            out.append(f"  [{step}] {g.text}{where}")
    else:
        out.append("  (none)")
    out += shapes_lines(c.shapes)
    out += ddp_split_lines(c.ddp_split)
    out.append("\nmodified bytecode:")
    out.append(_indent(c.modified_bytecode) if c.modified_bytecode else "  (none: attempt abandoned)")
    chain = c.resume_chain()
    if chain:
        out.append("\nnested graph break: one resume function per frame of the chain, "
                   "innermost first (nested_graph_breaks):")
        for link in chain:
            carries = f", carrying {', '.join(link['carries'])}" if link["carries"] else ""
            out.append(f"  {link['function']} resumes after line {link['line']} "
                       f"(offset {link['resumes_at']}, {link['resume_function']}){carries}")
    for rf in c.resume_functions:
        out.append(f"\nresume function {rf.global_name} ({rf.code_name}):")
        out.append(_indent(rf.bytecode))
    if c.stages:
        from .stages import stages_text

        out.append(stages_text(c))
    return "\n".join(out)


def failed_guard_line(fg: FailedGuard) -> str:
    """`[0/0] TENSOR_MATCH L['x'] size: expected [4], got [8]  (installed at step 2, line 6)`."""
    where = []
    if fg.step is not None:
        where.append(f"step {fg.step}")
    if fg.lineno is not None:
        where.append(f"line {fg.lineno}")
    what = f" {fg.what}" if fg.what else ""
    text = f"[{fg.compile_id}] {fg.kind} {fg.source or ''}{what}: expected {fg.expected}, got {fg.seen}"
    return text + (f"  (installed at {', '.join(where)})" if where else "")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def ddp_split_lines(split: DdpSplit | None, indent: str = "") -> list[str]:
    """The text of DDPOptimizer's split of a graph (`Compile.ddp_split`): each bucket's
    subgraph, its nodes and parameters, and why it ends where it does."""
    if split is None:
        return []
    n = len(split.buckets)
    out = ["", f"{indent}DDP split (DDPOptimizer): {n} bucket(s), so {n} subgraph(s) "
               f"compiled one by one; bucket cap {_mib(split.bucket_cap)} "
               f"({split.bucket_cap:,} bytes), first bucket {_mib(split.first_bucket_cap)}; "
               "filled walking the graph backwards (the order gradients are ready)"]
    for b in split.buckets:
        cap = split.cap_of(b.index)
        if b.size >= cap:
            why = (f"reached the {'first bucket' if b.index == n - 1 and n > 1 else 'bucket'} "
                   f"cap of {_mib(cap)}")
        else:
            why = f"under the cap of {_mib(cap)}: the rest of the graph"
        if b.extended:
            why += f"; {b.extended} node(s) added past the cap so its subgraph has an output"
        out.append(f"{indent}  bucket {b.index} (submod_{b.index}): {len(b.nodes)} node(s) "
                   f"{', '.join(b.nodes) or '-'}; {len(b.params)} parameter(s), "
                   f"{_mib(b.size)} ({b.size:,} bytes), {why}")
        if b.params:
            out.append(f"{indent}    parameters: {', '.join(b.params)}")
    return out


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def step_text(c: Compile, i: int) -> str:
    """What the viewer shows at step i of a compile, as plain text (`--text --step i`)."""
    return visible(_step_text(c, i))


def _step_text(c: Compile, i: int) -> str:
    if not c.steps:
        return f"{c.title()}\n  no steps were recorded (outcome {c.outcome})"
    s = c.steps[max(0, min(i, len(c.steps) - 1))]
    i = s.index
    out = [f"{c.title()}  step {i} / {len(c.steps) - 1}", "  " + str(s).rstrip()]
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
    made = [n.name_at(i) for n in c.nodes if n.step is not None and n.step <= i]
    out.append(f"  graph nodes so far: {', '.join(made) or '(none)'}")
    guards = [g for g in c.guard_details if not g.ambient and g.step is not None and g.step <= i]
    out.append(f"  guards installed so far by the code ({len(guards)}):")
    for g in guards:
        where = f"    # {g.where}" if g.lineno else ""
        out.append(f"    [step {g.step}] {g.text}{where}")
    if c.graph_break is not None and c.graph_break.step == i:
        out.append(f"  graph break here: {c.graph_break.reason}")
    return "\n".join(out)


TEXT_VIEWS.update(recording=recording_text, compile=compile_text)  # str() of each
