"""`%%capture_trace`: run a notebook cell under `capture.run` and show what Dynamo did.

A thin layer: parse the options, compile the cell the way IPython does (cell.py, so a
SyntaxError points at the learner's line), hand it to `capture.run`, then print its
notes and show the `Recording` in the viewer or as text. What the magic and the
`dynamo-lab` command both say (a refusal, a step cap, nothing compiled) is said there.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

import capture
from capture import DEFAULT_MAX_STEPS
from capture.text import visible

from .cell import cell_source, compile_cell

PREFIX = "capture_trace:"
HERE = os.path.dirname(os.path.abspath(__file__))


@magics_class
class CaptureTraceMagics(Magics):
    """The `%%capture_trace` cell magic."""

    @magic_arguments()
    @argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
              help=f"the recording's step cap: store at most N instructions in all "
                   f"(default {DEFAULT_MAX_STEPS}). Dynamo itself runs on past the cap; "
                   "the recording is marked as truncated.")
    @argument("--no-reset", action="store_true",
              help="do not call torch._dynamo.reset() first. By default Dynamo's caches "
                   "are cleared so the cell's compiles happen (and are recorded) instead "
                   "of being served from an earlier cell's cache.")
    @argument("--text", action="store_true",
              help="print the text view instead of showing the widget (for terminals, "
                   "nbval and screen readers). With --compile, only that compile; with "
                   "--step, only that step.")
    @argument("--step", type=int, metavar="N",
              help="open at step N (the index shown as #N and 'step N / last').")
    @argument("--compile", metavar="ID",
              help="open at the compile with this id, as Dynamo prints it: 0/0, 0/0_1, 1/0.")
    @argument("-o", "--out", metavar="NAME",
              help="also store the Recording in the variable NAME (it is always in _trace).")
    @argument("--after-dynamo", action="store_true",
              help="also record what AOTAutograd and Inductor make of each graph (joint, "
                   "forward and backward graphs, post-grad graph, output code), each node "
                   "and kernel linked to the Dynamo nodes it came from. For backends built "
                   "on AOTAutograd (aot_eager, inductor); changes nothing they produce.")
    @argument("--html", metavar="PATH",
              help="also write the recording as one self-contained HTML page at PATH (a .html "
                   "file that steps through it in any browser, with no kernel and no network).")
    @line_cell_magic
    def capture_trace(self, line: str, cell: str | None = None) -> None:
        """Record what torch.compile's front end (Dynamo) does while this cell runs.

        Put it on the first line of a cell whose code calls `torch.compile`d
        functions or modules (any backend)::

            %%capture_trace
            @torch.compile(backend="eager")
            def f(x):
                return x.sin() + 1
            f(torch.randn(4))

        The cell runs in your namespace as usual (its prints and the value of
        its last line appear first), while every instruction Dynamo's
        InstructionTranslator executes is recorded: the VariableTracker stack,
        the symbolic locals, the FX graph as it grows, the guards, the graph
        breaks and the rewritten bytecode. Then a viewer lets you step through
        it, one compile at a time. The recording is kept in `_trace` (a
        `capture.Recording`; `print(_trace)` shows it as text).

        Examples::

            %%capture_trace --text                 print the text view instead
            %%capture_trace --compile 1/0 --step 5 open at a compile and a step
            %%capture_trace -o rec --max-steps 2000
            %%capture_trace --html trace.html      also write a page for any browser
        """
        args = _options(self.capture_trace, line)
        if cell is None:
            raise UsageError("capture_trace is a cell magic: write %%capture_trace (two %) "
                             "on the first line of a cell and the code to record below it.")
        if not cell.strip():
            raise UsageError("the cell is empty: below %%capture_trace, write code that calls "
                             "a torch.compile'd function.")
        compiled = compile_cell(self.shell, cell)
        if compiled is None:
            return  # the SyntaxError has been shown
        shell, (body, expr) = self.shell, compiled

        def cell_code() -> Any:
            exec(body, shell.user_global_ns, shell.user_ns)
            return eval(expr, shell.user_global_ns, shell.user_ns) if expr is not None else None

        try:
            result = capture.run(cell_code, max_steps=args.max_steps, reset=not args.no_reset,
                                 source=cell_source(shell, cell), namespace=shell.user_ns,
                                 name="the cell", hide=(HERE,), after_dynamo=args.after_dynamo)
        except capture.NotStarted as e:
            raise UsageError(str(e)) from None
        recording, error = result.recording, result.error
        if recording is not None:
            shell.user_ns["_trace"] = recording
            if args.out:
                shell.user_ns[args.out] = recording
        if error is not None:
            shell.showtraceback((type(error), error, error.__traceback__), tb_offset=0)
        elif result.value is not None and not cell.rstrip().endswith(";"):
            shell.displayhook(result.value)
        for note in result.notes:
            _say(note.text)
        if recording is not None and recording.compiles:
            _show(recording, args)


def _options(magic: Any, line: str) -> Any:
    """The options, or a one-line UsageError saying what to type instead."""
    try:
        args = parse_argstring(magic, line)
    except UsageError as e:
        raise UsageError(f"{e}. Type %capture_trace? for the options.") from None
    except ValueError as e:  # an unclosed quote, from IPython's argument splitter
        raise UsageError(f"could not read the options ({e}). "
                         "Type %capture_trace? for the options.") from None
    if args.max_steps < 1:
        raise UsageError(f"--max-steps must be at least 1 (got {args.max_steps}); "
                         f"for example --max-steps {DEFAULT_MAX_STEPS}.")
    if args.step is not None and args.step < 0:
        raise UsageError(f"--step must be 0 or more (got {args.step}); steps count from 0.")
    if args.out is not None and (not args.out.isidentifier() or args.out.startswith("__")):
        raise UsageError(f"-o needs a variable name, like -o rec (got {args.out!r}).")
    if args.html is not None:
        # IPython's option splitter keeps the quotes around a path with spaces.
        if len(args.html) > 1 and args.html[0] == args.html[-1] and args.html[0] in "\"'":
            args.html = args.html[1:-1]
        path = os.path.expanduser(args.html)
        if not path.lower().endswith((".html", ".htm")):
            raise UsageError(f"--html needs a file name ending in .html, like --html trace.html "
                             f"(got {args.html!r}).")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"--html {args.html}: the folder {folder} does not exist.")
    return args


def _say(text: str) -> None:
    print(f"{PREFIX} {visible(text)}", file=sys.stderr)


def _show(recording: Any, args: Any) -> None:
    """The viewer (or the text view), opened where the options asked; the page if asked."""
    from capture.textview import step_text

    from .viewer import compile_number

    k, chosen = 0, False
    if args.compile is not None:
        try:
            k, chosen = compile_number(recording, args.compile), True
        except KeyError as e:
            _say(f"{e.args[0]}; showing [{recording.compiles[0].compile_id}] instead.")
    c, step = recording.compiles[k], args.step
    if step is not None and step > len(c.steps) - 1:
        last = max(len(c.steps) - 1, 0)
        _say(f"--step {step} is past the last step of [{c.compile_id}] (it has steps 0 to "
             f"{last}); showing step {last}.")
        step = last
    if args.text:
        if step is not None:
            print(step_text(c, step))
        else:
            print(c if chosen else recording)
    else:
        from .viewer import TraceViewer

        display(TraceViewer(recording, compile=k, step=step or 0))
    if args.html:
        _write_page(recording, os.path.abspath(os.path.expanduser(args.html)), k, step or 0)


def _write_page(recording: Any, path: str, k: int, step: int) -> None:
    """--html: the recording as a standalone page, opened where the viewer was; say where."""
    from .viewer.page import write_html

    try:
        write_html(recording, path, compile=k, step=step)
    except OSError as e:
        _say(f"could not write the page {path}: {e.strerror or e}.")
        return
    print(f"{PREFIX} wrote {path}: open it in any browser (it needs no kernel and loads "
          "nothing from the network).")
