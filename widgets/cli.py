"""`dynamo-lab`: record a Python program's compiles, and turn a saved recording into a page.

For people outside Jupyter::

    dynamo-lab record train.py --epochs 1 -o trace.json     # or -o trace.html, or both
    dynamo-lab record -m package.module --epochs 1 -o trace.json
    dynamo-lab html trace.json -o trace.html
    dynamo-lab explain trace.json            # or: dynamo-lab explain train.py --epochs 1
    dynamo-lab html --from-trace DIR -o trace.html   # a TORCH_TRACE log; explain takes it too
    torchrun --standalone --nproc-per-node 2 -m widgets.cli record train.py -o trace.json
    dynamo-lab explain trace.rank0.json trace.rank1.json   # what the ranks compiled differently

`record` runs the script as `python train.py --epochs 1` would (its own `sys.argv`,
`__name__ == "__main__"`, its folder first on `sys.path`), or the module as `python -m`
would, through `capture.run`, and writes whatever Dynamo compiled. The program's
arguments run to the end of the line, or up to the first `-o`/`--out`: what follows
that is dynamo-lab's again. A program that takes an `-o` of its own gets it when
dynamo-lab's options come first: `dynamo-lab record -o trace.json train.py -o model.pt`.

Progress, notes and errors go to stderr, prefixed `dynamo-lab:`; every error is one
line. A program that raises still gets its recording written, up to that point.

Exit codes, for CI: `record` exits with the program's own code (0, its `sys.exit` code,
1 when it raised, 130 when interrupted); 125 (`RECORDING_FAILED`) when recording itself
could not be done; 2 for bad arguments. `explain` exits 0, or 1 with one line saying why
when `--fail-on-graph-break` or `--max-recompiles N` is not met.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from capture.run import environment_problem, python_version_problem

from .files import FileError, out_path, read_recording, write
from .program import Program, ProgramError
from .progress import PROG, Progress, say

HERE = os.path.dirname(os.path.abspath(__file__))
# Options that take a value (needed to find where the program's name is).
_VALUE_OPTIONS = ("-o", "--out", "--max-steps", "--format", "--user-code", "--max-recompiles",
                  "--from-trace", "--only")
# `record`'s exit code when recording itself failed (the program's own codes pass through)
RECORDING_FAILED = 125


class CommandError(Exception):
    """A one-line error for the user; `main` prints it and returns `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# -- arguments ---------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    from capture import DEFAULT_MAX_STEPS

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Record what PyTorch Dynamo does while a script runs, and write it as a "
                    "recording (JSON) or as one self-contained HTML page that steps through "
                    "it in any browser.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    rec = sub.add_parser(
        "record", help="run a Python script (or -m module) and record every compile Dynamo makes",
        usage=f"{PROG} record SCRIPT.py|-m MODULE [ARGS ...] -o OUT.json|OUT.html [options]",
        description="Run SCRIPT.py as `python SCRIPT.py ARGS` would (or MODULE as `python -m "
                    "MODULE ARGS` would), recording every compile Dynamo makes while it runs. "
                    "ARGS run up to the first -o/--out; a program with an -o of its own: give "
                    "dynamo-lab's options first (record -o trace.json SCRIPT.py -o x).")
    # The program and its ARGS are split off by split_record_args before argparse runs.
    rec.add_argument("-o", "--out", action="append", required=True, metavar="FILE",
                     help="where to write: FILE.json (the recording) or FILE.html (a page); "
                          "give -o twice for both")
    rec.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                     help=f"store at most N instructions in all (default {DEFAULT_MAX_STEPS}); "
                          "Dynamo runs on past the cap and the recording says it was cut")
    rec.add_argument("--after-dynamo", action="store_true",
                     help="also record AOTAutograd's graphs and Inductor's code, each node and "
                          "kernel linked to the Dynamo nodes it came from")
    rec.add_argument("--only", action="append", default=None, metavar="FUNCTION",
                     help="record step by step only FUNCTION (a name, Class.name or "
                          "module.Class.name; give --only again for more) and what it inlines; "
                          "every other compile is kept as a summary without steps, so a long "
                          "script records at nearly plain speed")
    rec.add_argument("--traceback", action="store_true",
                     help="when the program raises, also print its traceback")
    rec.add_argument("-q", "--quiet", action="store_true", help="no progress or notes")

    page = sub.add_parser(
        "html", help="turn a saved recording (JSON) into one self-contained HTML page",
        description="Write a recording saved as JSON (dynamo-lab record -o x.json, or "
                    "Recording.to_json()) as one HTML page that opens from file:// with no "
                    "network.")
    page.add_argument("recording", metavar="TRACE.json", nargs="*",
                      help="the recording to read; several, one per rank of a torchrun job "
                           "(trace.rank0.json trace.rank1.json), make one page whose compare "
                           "mode sets a compile beside the same function's on another rank")
    page.add_argument("--from-trace", metavar="DIR_OR_FILE",
                      help="read a TORCH_TRACE log instead (its folder or one file; one page "
                           "per rank): compiles, breaks, recompiles, guards and graphs, no steps")
    page.add_argument("-o", "--out", metavar="PAGE.html",
                      help="the page to write (default: TRACE.html beside the recording)")
    page.add_argument("--compile", metavar="ID",
                      help="open at the compile with this id (0/0, 0/0_1, 1/0)")
    page.add_argument("--step", type=int, default=0, metavar="N", help="open at step N")
    page.add_argument("-q", "--quiet", action="store_true", help="no notes")

    why = sub.add_parser(
        "explain", help="say why a program broke its graphs and recompiled",
        usage=f"{PROG} explain [options] TRACE.json [TRACE.rank1.json ...] | SCRIPT.py|-m "
              "MODULE [ARGS ...]",
        description="Say how each function Dynamo met came out (compiled whole, in graphs "
                    "split by breaks, skipped, failed, refused at the recompile limit), each "
                    "graph break once with your line, and each cause of recompiles once (what "
                    "changed, the values it took, your line), with a fix for each mechanism "
                    "it knows. A script is recorded first; everything after it is its own. "
                    "Several recordings, one per rank of a torchrun job: what each rank "
                    "compiled differently from the first.")
    why.add_argument("--format", choices=("text", "json"), default="text",
                     help="text (default) or json (the schema is in the README)")
    why.add_argument("--json", action="store_true", help="the same as --format json")
    why.add_argument("--teach", action="store_true",
                     help="also show Dynamo's detail: the instruction, the stack it met, its "
                          "explanation and hints")
    why.add_argument("--user-code", action="append", default=[], metavar="PATH",
                     help="count PATH (a folder or file) as your own code, even when installed "
                          "(for a library's developers); may be given more than once")
    why.add_argument("--fail-on-graph-break", action="store_true",
                     help="exit 1 when any function broke its graph, was skipped or failed")
    why.add_argument("--max-recompiles", type=int, default=None, metavar="N",
                     help="exit 1 when any function recompiled more than N times")
    why.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                     help="when recording a script: store at most N instructions")
    why.add_argument("--from-trace", metavar="DIR_OR_FILE",
                     help="explain a TORCH_TRACE log instead (its folder or one file; each "
                          "rank in turn)")
    why.add_argument("-q", "--quiet", action="store_true", help="no progress or notes")
    return parser


def split_program_args(tokens: list[str], *, resume: bool = True
                       ) -> tuple[list[str], str | None, bool, list[str]]:
    """A command's tokens as (dynamo-lab's options, the program, whether it is a module
    (-m), the program's arguments).

    Everything after the program is its own, except (with `resume`, for `record`) when
    no -o came before it: then its arguments end at the first -o/--out, and the rest of
    the line is dynamo-lab's options again.
    """
    before: list[str] = []
    i, module = 0, False
    while i < len(tokens) and tokens[i].startswith("-") and tokens[i] != "-":
        token = tokens[i]
        if token == "--":
            i += 1
            break
        if token == "-m":
            module, i = True, i + 1
            break
        before.append(token)
        if token in _VALUE_OPTIONS and i + 1 < len(tokens):
            before.append(tokens[i + 1])
            i += 1
        i += 1
    if i >= len(tokens):
        return before, None, module, []
    program, rest = tokens[i], tokens[i + 1:]
    after: list[str] = []
    if resume and not any(t in ("-o", "--out") or t.startswith("--out=") for t in before):
        for j, token in enumerate(rest):
            if token in ("-o", "--out") or token.startswith("--out="):
                rest, after = rest[:j], rest[j:]
                break
    return [*before, *after], program, module, rest


# -- recording a program ---------------------------------------------------------------

def _run(opts: argparse.Namespace, *, output: Any = None) -> tuple[Program, Any]:
    """Run the program through `capture.run` (its stdout to `output` if given); say its notes."""
    import capture

    if opts.max_steps < 1:
        raise CommandError(f"--max-steps must be at least 1 (got {opts.max_steps})", 2)
    if any(not name.strip() for name in getattr(opts, "only", None) or ()):
        raise CommandError("--only needs a function's name: forward, Model.forward or "
                           "mymodule.Model.forward", 2)
    program = (Program.module if opts.module else Program.script)(opts.program, opts.args)
    namespace: dict[str, Any] = {}  # its globals once it has run, to name what it compiled
    try:
        with contextlib.redirect_stdout(output) if output else contextlib.nullcontext():
            result = capture.run(
                lambda: namespace.update(program.run()), max_steps=opts.max_steps,
                source=program.source(), namespace=namespace, name=program.name, hide=(HERE,),
                during=None if opts.quiet else (lambda r: Progress(r, program.name)),
                after_dynamo=getattr(opts, "after_dynamo", False),
                only=getattr(opts, "only", None))
    except capture.NotStarted as e:
        raise CommandError(str(e), RECORDING_FAILED) from None
    if result.refused:
        raise CommandError(result.notes[0].text, RECORDING_FAILED)
    for note in [] if opts.quiet else result.notes:
        say(f"note: {note.text}")
    return program, result


def _record(opts: argparse.Namespace) -> int:
    from capture.ranks import launch_rank, rank_path

    outs = [out_path(o) for o in opts.out]
    rank = launch_rank()  # one rank of a torchrun job: a recording of its own
    if rank is not None:
        outs = [rank_path(o, rank.rank) for o in outs]
    for out in outs:
        if not out.parent.is_dir():
            raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    program, result = _run(opts)
    recording, error = result.recording, result.error
    title = f"{program.path.name} · Dynamo Lab"
    if rank is not None:
        recording.rank, recording.world_size = rank.rank, rank.world_size
        title = f"{program.path.name}, rank {rank.rank} · Dynamo Lab"
    written = write(recording, outs, quiet=opts.quiet, title=title)
    summary = f"{len(recording.compiles)} compile(s), {recording.step_count:,} step(s)"
    if rank is not None:
        summary = f"rank {rank.rank} of {rank.world_size}, " + summary
    if error is None:
        if not opts.quiet:
            say(f"wrote {written}: {summary}")
        return 0
    if opts.traceback:
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    if isinstance(error, SystemExit):
        what = f"exited with status {error.code}"
        status = error.code if isinstance(error.code, int) else 1
    elif isinstance(error, KeyboardInterrupt):
        what, status = "was interrupted (KeyboardInterrupt)", 130
    else:
        what, status = f"raised {result.error_line}{program.where(error)}", 1
    hint = "" if opts.traceback else "; --traceback shows the program's traceback"
    raise CommandError(f"error: {program.name} {what}; the recording up to that point "
                       f"({summary}) is in {written}{hint}", status)


# -- a page from a saved recording ------------------------------------------------------

def _html(opts: argparse.Namespace) -> int:
    several = list(opts.recording or ())
    opts.recording = several[0] if several else None
    if opts.from_trace is not None:
        return _html_from_trace(opts)
    if len(several) > 1:
        return _html_ranks(opts, [Path(p) for p in several])
    if opts.recording is None:
        raise CommandError(f"html needs a recording: {PROG} html TRACE.json, or "
                           f"{PROG} html --from-trace DIR", 2)
    source = Path(opts.recording)
    out = Path(opts.out) if opts.out else source.with_suffix(".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CommandError(f"the page must be named .html (got {str(out)!r})", 2)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    if opts.step < 0:
        raise CommandError(f"--step must be 0 or more (got {opts.step})", 2)
    recording = read_recording(source)
    if opts.compile is not None:
        try:
            recording.compile(opts.compile)
        except KeyError as e:
            raise CommandError(str(e.args[0]), 2) from None
    write(recording, [out], quiet=opts.quiet, title=f"{source.name} · Dynamo Lab",
           compile=opts.compile, step=opts.step)
    if not opts.quiet:
        say(f"wrote {out}: {len(recording.compiles)} compile(s), {recording.step_count:,} step(s)")
    return 0


def _html_ranks(opts: argparse.Namespace, paths: list[Path]) -> int:
    """One page of several ranks' recordings (capture.ranks.merged): the compile menu names
    each compile's rank, and compare mode sets a compile beside the same function's compile
    on another rank (or on its own), as capture.ranks.rank_pairs compared them."""
    import gzip

    from capture.ranks import merged, rank_of, rank_pairs

    from .viewer import page, viewer_state
    from .viewer.state import _runs

    out = Path(opts.out) if opts.out else paths[0].with_name(
        _RANK_SUFFIX.sub("", paths[0].stem) + ".ranks.html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CommandError(f"the page must be named .html (got {str(out)!r})", 2)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    if opts.compile is not None or opts.step != 0:
        raise CommandError("--compile and --step pick in one recording: a page of several "
                           "opens at rank 0's first compile; pick from its compile menu", 2)
    recordings = [read_recording(p) for p in paths]
    ranks = [rank_of(r, str(p)) for r, p in zip(recordings, paths)]
    if None in ranks or len(set(ranks)) != len(ranks):
        ranks = list(range(len(recordings)))  # not told apart by rank: by position
    recording, titles = merged(recordings, ranks)
    state = viewer_state(recording, 0, 0)
    state["titles"] = titles
    entries = []
    for ka, kb, cmp in rank_pairs(recording):
        d = cmp.to_dict()
        d["runs"] = _runs([tuple(p) for p in d.pop("aligned")])
        entries.append({"ka": ka, "kb": kb, **d})
    state["comparisons"] = gzip.compress(json.dumps(entries, separators=(",", ":")).encode(),
                                         compresslevel=6, mtime=0)
    note = "; ".join(f"rank {k}: {len(r.compiles)} compile(s) from {p.name}"
                     for k, r, p in zip(ranks, recordings, paths))
    note += (". Compare mode sets a compile beside the same function's compile on another "
             "rank: dynamo-lab explain " + " ".join(p.name for p in paths) + " says the "
             "differences in words.")
    out.write_text(page.html_of(state, f"{', '.join(p.name for p in paths)} · Dynamo Lab", note),
                   encoding="utf-8")
    if not opts.quiet:
        say(f"wrote {out}: {len(recording.compiles)} compile(s) of {len(paths)} ranks")
    return 0


_RANK_SUFFIX = re.compile(r"\.rank\d+$")


# -- a TORCH_TRACE log ---------------------------------------------------------------------

def _traces(path: str) -> list[tuple[Any, Any]]:
    """Every log of a TORCH_TRACE folder or file, read (capture.fromtrace), or exit 2."""
    from capture import fromtrace

    try:
        return fromtrace.read(path)
    except fromtrace.TraceError as e:
        raise CommandError(str(e), 2) from None


def _html_from_trace(opts: argparse.Namespace) -> int:
    """One page per log (per rank), each saying once what the log does not hold."""
    from capture.fromtrace import note_of

    from .viewer import page, viewer_state

    if opts.recording is not None:
        raise CommandError("give a recording or --from-trace, not both", 2)
    source = Path(opts.from_trace)
    out = Path(opts.out) if opts.out else source.with_suffix(".html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CommandError(f"the page must be named .html (got {str(out)!r})", 2)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: the folder {out.parent} does not exist", 2)
    if opts.step != 0:
        raise CommandError("a TORCH_TRACE log holds no steps: --step does not apply", 2)
    logs = _traces(opts.from_trace)
    for k, (log, recording) in enumerate(logs):
        target = out
        if len(logs) > 1:
            part = f"rank{log.rank}" if log.rank is not None else str(k)
            target = out.with_name(f"{out.stem}.{part}{out.suffix}")
        compile_ = 0
        if opts.compile is not None:
            try:
                compile_ = recording.compile_index(opts.compile)
            except KeyError as e:
                raise CommandError(f"{log.path.name}: {e.args[0]}", 2) from None
        state = viewer_state(recording, compile_, 0)
        rank = f", rank {log.rank}" if log.rank is not None else ""
        head = (f"{len(recording.compiles)} compile(s) from {log.path.name}{rank}, torch "
                f"{recording.torch_version or '?'}"
                + (f", compile time {sum(log.compile_times.values()):.3f} s" if log.compile_times
                   else "") + ". ")
        target.write_text(page.html_of(state, f"{log.path.name} · Dynamo Lab",
                                       head + (note_of(recording) or "")), encoding="utf-8")
        if not opts.quiet:
            cut = "; the log ends mid-record" if log.truncated else ""
            say(f"wrote {target}: {len(recording.compiles)} compile(s) from {log.path.name}{cut}")
    return 0


def _explain_from_trace(opts: argparse.Namespace) -> int:
    """explain over each log of a TORCH_TRACE folder (one per rank), the note said once."""
    from capture.explain import explanation, text_of
    from capture.fromtrace import note_of
    from capture.text import visible

    logs = _traces(opts.from_trace)
    datas, status = [], 0
    for log, recording in logs:
        data = explanation(recording, list(opts.user_code))
        data["trace"] = {"file": str(log.path), "rank": log.rank, "truncated": log.truncated,
                         "note": note_of(recording), "compile_time_s": dict(log.compile_times)}
        datas.append(data)
    if opts.json or opts.format == "json":
        print(json.dumps(datas[0] if len(datas) == 1 else datas, indent=2))
    else:
        out = [f"note: {datas[0]['trace']['note']}"]
        for data in datas:
            t = data["trace"]
            if len(datas) > 1:
                out.append("")
                out.append(f"== {Path(t['file']).name}" + (f" (rank {t['rank']})" if t["rank"] is not None else ""))
            if t["truncated"]:
                out.append("(the log ends mid-record: what follows is what it holds up to there)")
            out.append(text_of(data, teach=opts.teach))
            times = t["compile_time_s"]
            if times:
                each = ", ".join(f"[{k}] {v:.3f} s" for k, v in times.items())
                out.append(f"\ncompile time, from Dynamo's metrics in the log: {each}"
                           + (f"; {sum(times.values()):.3f} s in all" if len(times) > 1 else ""))
        print(visible("\n".join(out)))
    for data in datas:
        status = max(status, _verdict(data, opts))
    return status


# -- why it broke and recompiled ---------------------------------------------------------

def _explain(opts: argparse.Namespace) -> int:
    """Print the engine's explanation of a saved recording, or of a program recorded now
    (its own output goes to stderr, so stdout is the explanation alone)."""
    from capture.explain import explanation, text_of

    if opts.max_recompiles is not None and opts.max_recompiles < 0:
        raise CommandError(f"--max-recompiles must be 0 or more (got {opts.max_recompiles})", 2)
    if opts.from_trace is not None:
        if opts.program is not None:
            raise CommandError("give a recording, a script or --from-trace, not two of them", 2)
        return _explain_from_trace(opts)
    user_code = list(opts.user_code)
    if opts.program.lower().endswith(".json") and not opts.module and opts.args:
        return _explain_ranks(opts)
    if opts.program.lower().endswith(".json") and not opts.module:
        recording = read_recording(Path(opts.program))
    else:
        program, result = _run(opts, output=sys.stderr)
        recording = result.recording
        if result.error is not None and not opts.quiet:
            say(f"note: {program.name} raised {result.error_line}; explaining what it "
                "compiled up to then")
    data = explanation(recording, user_code)
    if opts.json or opts.format == "json":
        print(json.dumps(data, indent=2))
    else:
        from capture.text import visible
        print(visible(text_of(data, teach=opts.teach)))
    return _verdict(data, opts)


def _explain_ranks(opts: argparse.Namespace) -> int:
    """Several recordings, one per rank of a torchrun job: what each rank beside the first
    compiled differently (capture.ranks), then each rank's DDP split, if any."""
    from capture.explain import explanation
    from capture.ranks import compare_ranks, rank_of
    from capture.text import visible
    from capture.textview import ddp_split_lines

    paths = [Path(p) for p in (opts.program, *opts.args)]
    bad = [str(p) for p in paths if p.suffix.lower() != ".json"]
    if bad:
        raise CommandError(f"explain reads one recording, or one per rank to compare them: "
                           f"{bad[0]} is not a .json recording ({PROG} explain "
                           "trace.rank0.json trace.rank1.json)", 2)
    recordings = [read_recording(p) for p in paths]
    ranks = [rank_of(r, str(p)) for r, p in zip(recordings, paths)]
    if None in ranks or len(set(ranks)) != len(ranks):
        ranks = list(range(len(recordings)))  # not told apart by rank: by position
    comparisons = [compare_ranks(recordings[0], r, (ranks[0], k))
                   for r, k in zip(recordings[1:], ranks[1:])]
    datas = [explanation(r, list(opts.user_code)) for r in recordings]
    if opts.json or opts.format == "json":
        print(json.dumps({"format": "dynamo-lab-ranks/1",
                          "files": [str(p) for p in paths], "ranks": ranks,
                          "comparisons": [c.to_dict() for c in comparisons],
                          "ddp_splits": {str(k): d["ddp_splits"] for k, d in zip(ranks, datas)}},
                         indent=2))
    else:
        out = [f"{len(paths)} recordings: " + ", ".join(
            f"rank {k} {p.name}" for k, p in zip(ranks, paths))]
        out += ["", *"\n\n".join(str(c) for c in comparisons).splitlines()]
        for k, r in zip(ranks, recordings):
            for c in r.compiles:
                if c.ddp_split is not None:
                    out.append("")
                    out.append(f"rank {k}, {c.code_name} [{c.compile_id}]: one graph from "
                               f"Dynamo, split by DDP into {len(c.ddp_split.buckets)} subgraph(s)")
                    out += ddp_split_lines(c.ddp_split, "  ")[1:]
        out.append("")
        out.append(f"each rank on its own: {PROG} explain {paths[0]}")
        print(visible("\n".join(out)))
    return max(_verdict(d, opts) for d in datas)


def _verdict(data: dict[str, Any], opts: argparse.Namespace) -> int:
    """0, or 1 with one line on stderr saying which CI condition failed."""
    if opts.fail_on_graph_break:
        bad = [f for f in data["frames"] if f["outcome"] in ("graph_break", "skipped", "failed")]
        if bad:
            f = bad[0]
            say(f"error: {f['function']} ({Path(f['file']).name}:{f['lineno']}) {f['outcome']}"
                .replace("graph_break", "broke its graph")
                + (f"; and {len(bad) - 1} more" if len(bad) > 1 else "")
                + " (--fail-on-graph-break)")
            return 1
    if opts.max_recompiles is not None:
        over = [f for f in data["frames"] if f["recompiles"] > opts.max_recompiles]
        if over:
            f = over[0]
            say(f"error: {f['function']} ({Path(f['file']).name}:{f['lineno']}) recompiled "
                f"{f['recompiles']} times (its resume functions included), more than --max-recompiles {opts.max_recompiles}")
            return 1
    return 0


# -- entry point -----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """The `dynamo-lab` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    program, module, program_args = None, False, []
    if argv and argv[0] == "record":
        options, program, module, program_args = split_program_args(argv[1:])
        argv = ["record", *options]
    elif argv and argv[0] == "explain":
        options, program, module, program_args = split_program_args(argv[1:], resume=False)
        argv = ["explain", *options]
    parser = _parser()
    opts = parser.parse_args(argv)
    if opts.command == "record" and program is None:
        parser.exit(2, f"{PROG}: error: record needs a script or -m MODULE: {PROG} record "
                       "SCRIPT.py [ARGS ...] -o OUT.json\n")
    if opts.command == "explain" and program is None and opts.from_trace is None:
        parser.exit(2, f"{PROG}: error: explain needs a recording or a script: {PROG} explain "
                       "TRACE.json, or SCRIPT.py [ARGS ...], or --from-trace DIR\n")
    records = opts.command == "record" or (
        opts.command == "explain" and program is not None
        and (module or not program.lower().endswith(".json")))
    problem = environment_problem() if records else python_version_problem()
    if problem:
        say(f"error: {problem}")
        return 2
    opts.program, opts.module, opts.args = program, module, program_args
    try:
        return {"record": _record, "html": _html, "explain": _explain}[opts.command](opts)
    except (CommandError, FileError, ProgramError) as e:
        message = str(e)
        say(message if message.startswith("error:") else f"error: {message}")
        return e.status
    except OSError as e:  # a file that cannot be written, a full disk
        say(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
        return 1


if __name__ == "__main__":
    sys.exit(main())
