"""`%%capture_trace`: run a notebook cell under `capture.record()` and show what Dynamo did.

A thin layer: parse the options, compile the cell the way IPython does (so a
SyntaxError points at the learner's line), run it in the user's namespace while
recording, then hand the `Recording` to the viewer or to its text view. Whatever
goes wrong is said in one line, and the kernel stays usable.
"""

from __future__ import annotations

import ast
import os
import sys
import types
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from capture import DEFAULT_MAX_STEPS, targets

PREFIX = "capture_trace:"


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
        try:
            args = parse_argstring(self.capture_trace, line)
        except UsageError as e:
            raise UsageError(f"{e}. Type %capture_trace? for the options.") from None
        except ValueError as e:  # an unclosed quote, from IPython's argument splitter
            raise UsageError(f"could not read the options ({e}). "
                             "Type %capture_trace? for the options.") from None
        if cell is None:
            raise UsageError("capture_trace is a cell magic: write %%capture_trace (two %) "
                             "on the first line of a cell and the code to record below it.")
        _check(args)
        if not cell.strip():
            raise UsageError("the cell is empty: below %%capture_trace, write code that calls "
                             "a torch.compile'd function.")
        compiled = self._compile(cell)
        if compiled is None:
            return  # the SyntaxError has been shown
        source = _source(self.shell, cell)
        coroutines = targets.compiled_coroutines(source, self.shell.user_ns)
        if coroutines:
            print(f"{PREFIX} {targets.coroutine_refusal(coroutines)}", file=sys.stderr)
            return
        refused_before = targets.generators_refused()
        recording, value, error = self._run(compiled, args)

        self.shell.user_ns["_trace"] = recording
        if args.out:
            self.shell.user_ns[args.out] = recording
        if error is None and value is not None and not cell.rstrip().endswith(";"):
            self.shell.displayhook(value)
        if not recording.compiles and error is None:
            generators = targets.compiled_generators(source, self.shell.user_ns)
            if generators or targets.generators_refused() > refused_before:
                print(f"{PREFIX} {targets.generator_refusal(generators)}", file=sys.stderr)
                return
        _show(recording, args, error)
        if args.html and recording.compiles:
            _write_page(recording, args)

    def _compile(self, cell: str) -> tuple[types.CodeType, types.CodeType | None] | None:
        """The cell as code (and its last expression apart, to display its value)."""
        shell = self.shell
        # One blank line in front: the cell's first line is %%capture_trace, so line
        # numbers in errors, titles and the source pane match what the learner sees.
        try:
            text = "\n" + shell.transform_cell(cell)
        except SyntaxError as e:
            # IPython's tokenizer finds some errors (an inconsistent dedent) before the
            # parser does; its line numbers count from the cell's code, one line short.
            filename = shell.compile.cache("\n" + cell, shell.execution_count, raw_code=cell)
            if e.lineno is not None:
                e.lineno += 1
            shell.showsyntaxerror(filename=filename)
            return None
        filename = shell.compile.cache(text, shell.execution_count, raw_code=cell)
        try:
            tree = shell.compile.ast_parse(text, filename=filename)
        except (SyntaxError, OverflowError, ValueError):
            shell.showsyntaxerror(filename=filename)
            return None
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        try:
            body = shell.compile(tree, filename, "exec")
            expr = shell.compile(last, filename, "eval") if last is not None else None
        except SyntaxError:  # e.g. `return` outside a function: found when compiling
            shell.showsyntaxerror(filename=filename)
            return None
        return body, expr

    def _run(self, compiled: tuple[types.CodeType, types.CodeType | None],
             args: Any) -> tuple[Any, Any, BaseException | None]:
        import capture

        try:
            capture.prepare(reset=not args.no_reset)
        except RuntimeError:
            raise UsageError("a recording is already in progress (a `capture.record()` block "
                             "is open): finish it before using %%capture_trace.") from None
        body, expr = compiled
        shell = self.shell
        recording, value, error = None, None, None
        try:
            with capture.record(max_steps=args.max_steps) as recording:
                exec(body, shell.user_global_ns, shell.user_ns)
                if expr is not None:
                    value = eval(expr, shell.user_global_ns, shell.user_ns)
        except (Exception, KeyboardInterrupt) as e:
            if recording is None:  # the recorder could not start; the cell did not run
                raise UsageError(f"could not start recording: {e}") from None
            error = e
            _show_error(shell, e)
        return recording, value, error


def _check(args: Any) -> None:
    """Options that parse but cannot be right: one line saying what to type instead."""
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


def _library_dirs() -> tuple[str, ...]:
    """Where frames that are not the learner's code live: torch, IPython and this project."""
    import IPython
    import torch

    import capture

    dirs = [os.path.dirname(m.__file__) for m in (torch, IPython, capture)
            if getattr(m, "__file__", None)]
    dirs.append(os.path.dirname(__file__))
    return tuple(d + os.sep for d in dirs)


def _user_frames(tb: types.TracebackType | None, skip: tuple[str, ...]) -> types.TracebackType | None:
    """The traceback with the frames of torch, IPython and this magic taken out."""
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(skip):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for frame in reversed(kept):
        out = types.TracebackType(out, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return out


def _show_error(shell: Any, error: BaseException) -> None:
    """Show the learner's exception with their own frames only, never Dynamo's internals."""
    skip = _library_dirs()
    seen = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:  # chained exceptions too
        seen.add(id(e))
        e.__traceback__ = _user_frames(e.__traceback__, skip)
        e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    shell.showtraceback((type(error), error, error.__traceback__), tb_offset=0)


def _nothing_compiled(recording: Any, args: Any, error: BaseException | None) -> str:
    if error is not None:
        return (f"{PREFIX} the cell raised {type(error).__name__} before Dynamo compiled "
                "anything, so there is nothing to step through; fix the error and run it again.")
    why = ""
    problems = [e for e in recording.events if e.kind in ("error", "cache_limit")]
    if problems:
        why = f" Dynamo reported: {problems[0].kind}: {problems[0].message}."
    hint = (" With --no-reset, calls Dynamo had compiled in an earlier cell are served from "
            "its cache: run the cell without --no-reset." if args.no_reset else "")
    return (f"{PREFIX} nothing was compiled while the cell ran: Dynamo traces a function only "
            "when a torch.compile'd function or module is called. Call one in the cell, e.g. "
            "torch.compile(f, backend=\"eager\")(x)." + hint + why)


def _source(shell: Any, cell: str) -> str:
    """The cell as Python source (IPython's own syntax, e.g. `%time`, transformed away)."""
    try:
        return shell.transform_cell(cell)
    except (SyntaxError, ValueError):
        return ""


def _write_page(recording: Any, args: Any) -> None:
    """--html: the recording as a standalone page, opened where the viewer was; say where."""
    from .viewer.page import write_html

    path = os.path.abspath(os.path.expanduser(args.html))
    k = 0
    if args.compile is not None:
        try:
            k = recording.compiles.index(recording.compile(args.compile))
        except KeyError:
            pass   # _show has said so, and opened the first compile
    try:
        write_html(recording, path, compile=k, step=args.step or 0)
    except OSError as e:
        print(f"{PREFIX} could not write the page {path}: {e.strerror or e}.", file=sys.stderr)
        return
    print(f"{PREFIX} wrote {path}: open it in any browser (it needs no kernel and loads "
          "nothing from the network).")


def _show(recording: Any, args: Any, error: BaseException | None) -> None:
    """The viewer (or the text view), opened where the options asked."""
    from capture.text import visible
    from capture.textview import step_text

    from .viewer import TraceViewer

    if not recording.compiles:
        print(visible(_nothing_compiled(recording, args, error)), file=sys.stderr)
        return
    if recording.truncated:
        print(f"{PREFIX} the recording reached its step cap (--max-steps {recording.max_steps}) "
              "and stopped storing steps; the compiles marked 'truncated' are incomplete. "
              f"Record again with a larger cap, e.g. --max-steps {recording.max_steps * 4}.",
              file=sys.stderr)
    compile_ = None
    if args.compile is not None:
        try:
            compile_ = recording.compile(args.compile)
        except KeyError as e:
            print(f"{PREFIX} {visible(e.args[0])}; "
                  f"showing [{recording.compiles[0].compile_id}] instead.", file=sys.stderr)
    c = compile_ or recording.compiles[0]
    step = args.step
    if step is not None and step > len(c.steps) - 1:
        last = max(len(c.steps) - 1, 0)
        print(f"{PREFIX} --step {step} is past the last step of [{c.compile_id}] "
              f"(it has steps 0 to {last}); showing step {last}.", file=sys.stderr)
        step = last
    if args.text:
        if step is not None:
            text = step_text(c, step)
        elif compile_ is not None:
            text = str(compile_)
        else:
            text = str(recording)
        print(text)
        return
    display(TraceViewer(recording, compile=recording.compiles.index(c), step=step or 0))
