"""`%%capture_trace` in a real IPython shell: what it records, shows, and says when misused."""

from __future__ import annotations

import re

import pytest

import capture
import widgets.magic
from capture.textview import step_text
from viewer_data import sent
from widgets import TraceViewer

TWO_FUNCTIONS = '''%%capture_trace{options}
@torch.compile(backend="eager")
def f(x):
    y = torch.sin(x)
    print("between graphs")
    return y + 1

@torch.compile(backend="eager")
def g(x):
    return x.cos() * 2

g(f(torch.ones(3)))
'''

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def run(ipython_shell, capsys, monkeypatch):
    """Run a cell; return (result, stdout, stderr, viewers displayed)."""
    shown = []

    def display(obj):
        shown.append(obj)
        print(f"<display {obj!r}>")

    monkeypatch.setattr(widgets.magic, "display", display)

    def run_cell(cell):
        shown.clear()
        capsys.readouterr()
        result = ipython_shell.run_cell(cell)
        out, err = capsys.readouterr()
        return result, ANSI.sub("", out), ANSI.sub("", err), shown[:]

    yield run_cell
    # Whatever happened, the shell is usable and nothing is left recording.
    assert not capture.active()
    result = ipython_shell.run_cell("_still_works = 40 + 2")
    assert result.success and ipython_shell.user_ns["_still_works"] == 42


def test_records_and_shows_two_compiled_functions_and_a_graph_break(run, ipython_shell):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=""))
    assert result.success, err
    r = ipython_shell.user_ns["_trace"]
    assert isinstance(r, capture.Recording)
    assert [c.compile_id for c in r.compiles] == ["0/0", "0/0_1", "1/0", "2/0"]
    assert [c.code_name for c in r.compiles][::3] == ["f", "g"]
    # Line numbers count the %%capture_trace line, as the notebook shows the cell.
    line = r.compiles[0].graph_break.lineno
    assert TWO_FUNCTIONS.splitlines()[line - 1].strip() == 'print("between graphs")'
    assert r.compiles[0].title() == f"[0/0] f — graph break at line {line}, restarted"
    # The cell's own output first (its print, the value of its last line), then the viewer.
    assert len(shown) == 1 and isinstance(shown[0], TraceViewer)
    assert shown[0].recording is r
    printed = out.index("between graphs")
    value = out.index("tensor([")
    viewer = out.index("<display TraceViewer(4 compile(s): [0/0] f")
    assert printed < value < viewer
    assert err == ""


def test_the_recorded_source_is_the_cell_line_for_line(run, ipython_shell):
    """The source the viewer shows is the cell's, with the step's line where it is."""
    run(TWO_FUNCTIONS.format(options=""))
    c = ipython_shell.user_ns["_trace"].compile("0/0_1")
    s = c.steps[next(n.step for n in c.nodes if n.target == "torch.sin")]
    info = c.codes[s.code]
    assert "y = torch.sin(x)" in info.source_lines[s.lineno - info.firstlineno]


def test_o_stores_the_recording_under_a_name_too(run, ipython_shell):
    result, *_ = run(TWO_FUNCTIONS.format(options=" -o rec"))
    assert result.success
    assert ipython_shell.user_ns["rec"] is ipython_shell.user_ns["_trace"]


def test_text_prints_the_recording_instead_of_a_widget(run, ipython_shell):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --text"))
    assert result.success and shown == []
    assert str(ipython_shell.user_ns["_trace"]) in out


def test_text_with_compile_prints_that_compile(run, ipython_shell):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --text --compile 1/0"))
    c = ipython_shell.user_ns["_trace"].compile("1/0")
    assert str(c) in out and "[0/0] f" not in out


def test_text_with_step_prints_that_step(run, ipython_shell):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --text --compile 0/0_1 --step 3"))
    c = ipython_shell.user_ns["_trace"].compile("0/0_1")
    assert step_text(c, 3) in out


def test_step_and_compile_open_the_viewer_there(run):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --compile 1/0 --step 4"))
    viewer = shown[0]
    assert viewer.recording.compiles[viewer.compile].compile_id == "1/0" and viewer.step == 4


def test_max_steps_caps_the_recording_and_says_so(run, ipython_shell):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --max-steps 12"))
    r = ipython_shell.user_ns["_trace"]
    assert r.max_steps == 12 and r.truncated and r.step_count == 12
    assert len(err.strip().splitlines()) == 1
    assert "step cap (--max-steps 12)" in err and "--max-steps 48" in err
    assert shown and "truncated" in repr(shown[0])


def test_by_default_dynamo_is_reset_so_the_cell_compiles_again(run, ipython_shell):
    run(TWO_FUNCTIONS.format(options=""))
    again = "%%capture_trace\ng(torch.ones(3))\n"
    result, out, err, shown = run(again)
    assert [c.code_name for c in ipython_shell.user_ns["_trace"].compiles] == ["g"]


def test_no_reset_keeps_dynamo_cache_and_says_why_nothing_was_recorded(run, ipython_shell):
    run(TWO_FUNCTIONS.format(options=""))
    result, out, err, shown = run("%%capture_trace --no-reset\ng(torch.ones(3))\n")
    assert result.success and shown == []
    assert ipython_shell.user_ns["_trace"].compiles == []
    assert len(err.strip().splitlines()) == 1
    assert "nothing was compiled" in err and "without --no-reset" in err


def test_help_describes_every_option(ipython_shell, capsys):
    ipython_shell.run_cell("%capture_trace?")
    out = ANSI.sub("", capsys.readouterr().out)
    for option in ("--max-steps", "--no-reset", "--text", "--step", "--compile", "-o NAME"):
        assert option in out
    assert "Record what torch.compile" in out and "_trace" in out


# -- bad use: one line, the kernel fine ----------------------------------------------------

def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("options, says", [
    (" --bogus", "unrecognized arguments: --bogus"),
    (" --max-steps lots", "invalid int value: 'lots'"),
    (" --max-steps 0", "--max-steps must be at least 1"),
    (" --step -1", "--step must be 0 or more"),
    (" -o 2x", "-o needs a variable name"),
    (' -o "unclosed', "could not read the options"),
])
def test_a_bad_option_is_a_one_line_usage_error(run, options, says):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=options))
    assert not result.success and shown == []
    assert "between graphs" not in out  # the cell did not run
    line = one_line(out + err)
    assert line.startswith("UsageError:") and says in line


def test_the_line_magic_form_explains_the_cell_magic(run):
    result, out, err, shown = run("%capture_trace")
    assert "UsageError:" in one_line(out + err) and "%%capture_trace (two %)" in out + err


def test_an_empty_cell_is_a_usage_error(run):
    result, out, err, shown = run("%%capture_trace\n\n")
    assert "the cell is empty" in one_line(out + err)


def test_a_syntax_error_points_at_the_learners_line(run):
    cell = "%%capture_trace\nx = 1\ny = (2 +\n"
    result, out, err, shown = run(cell)
    text = out + err
    assert "SyntaxError" in text and "Traceback" not in text and shown == []
    assert "line 3" in text and "y = (2 +" in text
    assert len(text.strip().splitlines()) <= 5


@pytest.mark.parametrize("cell, line, text", [
    ("%%capture_trace\nx = 1\ny = (2 +\n", 3, "y = (2 +"),
    ("%%capture_trace\nf = torch.compile(lambda x: x)\nf([1,\n  2\n", 3, "f([1,"),
])
def test_an_unclosed_bracket_is_a_syntax_error_at_its_line_on_every_python(run, cell, line, text):
    # Python 3.13 names it _IncompleteInputError, with no line to point at, when parsed
    # as interactive input; a cell is a whole module.
    result, out, err, shown = run(cell)
    said = out + err
    assert "_IncompleteInputError" not in said and "incomplete input" not in said
    assert "SyntaxError: '(' was never closed" in said or "SyntaxError: '[' was never closed" in said
    assert f"line {line}" in said and text in said and shown == []


def test_an_exception_in_user_code_shows_its_frames_and_the_partial_recording(
        run, ipython_shell):
    cell = '''%%capture_trace
@torch.compile(backend="eager")
def h(x):
    return x.sin() + 1
h(torch.ones(2))
1 / 0
'''
    result, out, err, shown = run(cell)
    text = out + err
    assert "ZeroDivisionError" in text and "----> 6 1 / 0" in text
    assert "torch/_dynamo" not in text and "widgets/magic.py" not in text
    r = ipython_shell.user_ns["_trace"]
    assert r.ended_by == "ZeroDivisionError: division by zero"
    assert [c.compile_id for c in r.compiles] == ["0/0"]
    assert sent(shown[0])["ended_by"] == "ZeroDivisionError: division by zero"


def test_a_dynamo_error_shows_no_internal_traceback(run, ipython_shell):
    cell = '''%%capture_trace
@torch.compile(backend="eager", fullgraph=True)
def k(x):
    print("cannot be traced with fullgraph=True")
    return x
k(torch.ones(2))
'''
    result, out, err, shown = run(cell)
    text = out + err
    assert "Unsupported" in text
    assert not re.search(r"File .*torch/_dynamo/.*line \d+", text)
    assert "site-packages/torch" not in text.split("from user code:")[0]
    r = ipython_shell.user_ns["_trace"]
    assert r.ended_by.startswith("Unsupported") and shown


def test_a_cell_that_compiles_nothing_says_why_and_what_to_do(run):
    result, out, err, shown = run("%%capture_trace\nz = [1, 2, 3]\nsum(z)\n")
    assert shown == [] and "6" in out
    line = one_line(err)
    assert line.startswith("capture_trace: nothing was compiled")
    assert "torch.compile" in line


def test_an_unknown_compile_or_step_still_shows_the_recording(run):
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=" --compile 9/9 --step 999"))
    assert shown and shown[0].compile == 0 and shown[0].recording.compiles[0].compile_id == "0/0"
    lines = err.strip().splitlines()
    assert "no compile '9/9'" in lines[0] and "0/0, 0/0_1, 1/0, 2/0" in lines[0]
    assert "--step 999 is past the last step" in lines[1]
    assert shown[0].step == len(shown[0].recording.compiles[0].steps) - 1


def test_unload_removes_the_magic(ipython_shell):
    ipython_shell.run_line_magic("unload_ext", "widgets")
    try:
        assert "capture_trace" not in ipython_shell.magics_manager.magics["cell"]
    finally:
        ipython_shell.run_line_magic("load_ext", "widgets")
    assert "capture_trace" in ipython_shell.magics_manager.magics["cell"]


def test_an_interrupt_ends_the_recording_and_leaves_the_shell_usable(run, ipython_shell):
    cell = '''%%capture_trace
torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
raise KeyboardInterrupt
'''
    result, out, err, shown = run(cell)
    assert "KeyboardInterrupt" in out + err
    assert ipython_shell.user_ns["_trace"].ended_by == "KeyboardInterrupt"
    assert shown and sent(shown[0])["ended_by"] == "KeyboardInterrupt"


def test_a_recorder_that_cannot_start_is_a_one_line_error(run, monkeypatch):
    import contextlib

    @contextlib.contextmanager
    def refuses(**options):
        raise RuntimeError("Dynamo is still wrapped by an old recording: restart the kernel")
        yield

    monkeypatch.setattr(capture.recorder, "record", refuses)
    result, out, err, shown = run(TWO_FUNCTIONS.format(options=""))
    line = one_line(out + err)
    assert line.startswith("UsageError: could not start recording") and "restart the kernel" in line
    assert "between graphs" not in out
