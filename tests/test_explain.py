"""`dynamo-lab explain`: why a program broke its graphs and recompiled, for a terminal.

A real script with two graph breaks and three recompiles is explained as a user runs
it (the console script, in a subprocess): recorded first, and from a saved recording.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

COMMAND = Path(sys.executable).parent / "dynamo-lab"

PROGRAM = '''\
import torch


def helper(y):
    print("between graphs")  # break 1
    return y * 2


def f(x, n):
    y = x.sin() * n  # reads x and n
    return helper(y).cos()


def g(x):
    s = x.sum().item()  # break 2
    return x + s


cf = torch.compile(f, backend="eager")
cg = torch.compile(g, backend="eager")
cf(torch.randn(4), 2)
cf(torch.randn(8), 2)                       # recompile 1: a size
cf(torch.randn(8), 3)                       # recompile 2: an int
cf(torch.randn(8, dtype=torch.float64), 3)  # recompile 3: a dtype
cg(torch.randn(3))
print("done")
'''

LINES = PROGRAM.splitlines()


def line(marker: str) -> int:
    [hit] = [i + 1 for i, text in enumerate(LINES) if f"# {marker}" in text]
    return hit


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    if not COMMAND.exists():
        pytest.fail(f"{COMMAND} is not installed: run ./lab setup (pip install -e .)")
    return subprocess.run([str(COMMAND), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("explain")
    (folder / "prog.py").write_text(PROGRAM, encoding="utf-8")
    return folder


def test_explain_records_a_script_and_says_why_it_broke_and_recompiled(program):
    out = run("explain", "prog.py", cwd=program)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "done" not in text and "done" in out.stderr  # the program's own output: stderr
    # f breaks in helper (inlined); helper, then run as a frame of its own, breaks again;
    # f recompiles 3 times, and so do the resume functions of f and of helper (2 each)
    assert "3 functions with graph breaks, 7 recompiles" in text.splitlines()[0]
    # each break, once: its line, Dynamo's reason and registry id, the fix
    assert f"graph break 1 of 2: in helper at prog.py:{line('break 1')}" in text
    assert f"graph break 2 of 2: in g at prog.py:{line('break 2')}" in text
    assert "why: Failed to trace builtin operator (GB0059)" in text
    assert "reorderable_logging_functions.add(print)" in text
    assert "capture_scalar_outputs" in text  # .item()'s fix
    # the teaching detail waits for --teach
    assert "instruction: CALL" not in text and "stack it met" not in text
    # each cause of f's recompiles, once: what changed, its values, where installed
    where = f"installed at prog.py:{line('reads x and n')}"
    assert "x size changed, recompiling once: [4], then [8]" in text
    assert "n changed, recompiling once: 2, then 3" in text
    assert "x dtype changed, recompiling once: float32, then float64" in text
    assert text.count(where) == 3
    assert "torch._dynamo.mark_dynamic(x, 0)" in text
    assert "automatic dynamic made n a symbol in [0/2_1]" in text  # an int argument


def test_explain_teach_shows_dynamos_detail(program):
    out = run("explain", "--teach", "prog.py", cwd=program)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "instruction: CALL" in text and "stack it met (top first):" in text
    assert "ConstantVariable 'between graphs'" in text
    assert "registry: GB0059 (Failed to trace builtin operator)" in text


def test_explain_exits_non_zero_for_ci_with_one_line_saying_why(program):
    out = run("explain", "--fail-on-graph-break", "--max-recompiles", "5", "prog.py", cwd=program)
    assert out.returncode == 1
    [last] = out.stderr.strip().splitlines()[-1:]
    assert "broke its graph" in last and "--fail-on-graph-break" in last
    out = run("explain", "--max-recompiles", "2", "-q", "prog.py", cwd=program)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        "dynamo-lab: error: f (prog.py:9) recompiled 5 times (its resume functions included), "
        "more than --max-recompiles 2")
    out = run("explain", "--max-recompiles", "5", "-q", "prog.py", cwd=program)
    assert out.returncode == 0, out.stderr


def test_explain_json_is_for_machines_and_matches_a_saved_recording(program):
    recorded = run("record", "prog.py", "-o", "trace.json", "-q", cwd=program)
    assert recorded.returncode == 0, recorded.stderr
    live = run("explain", "--format", "json", "prog.py", cwd=program)
    saved = run("explain", "--json", "trace.json", cwd=program)   # --json: the same
    assert live.returncode == saved.returncode == 0, (live.stderr, saved.stderr)
    a, b = json.loads(live.stdout), json.loads(saved.stdout)
    from capture.explain import FORMAT, SCHEMA
    for data in (a, b):
        assert data["format"] == FORMAT and set(data) == set(SCHEMA)
        assert data["summary"]["with_graph_breaks"] == 3 and data["summary"]["recompiles"] == 7
        assert [(f["function"], f["outcome"]) for f in data["frames"]] == [
            ("f", "graph_break"), ("helper", "graph_break"), ("g", "graph_break")]
        assert [x["lineno"] for x in data["graph_breaks"]] == [line("break 1"), line("break 2")]
        assert [x["gb_id"] for x in data["graph_breaks"]] == ["GB0059", "GB0124"]
        f_recompiles = [r for r in data["recompiles"] if r["function"] == "f"]
        assert len(f_recompiles) == 3
        whats = [{(fg["source"], fg["what"]) for fg in r["failed_guards"]
                  if fg["compile_id"] == r["replaces"]} for r in f_recompiles]
        assert whats == [{("L['x']", "size")}, {("L['n']", "value")}, {("L['x']", "dtype")}]
        for r in f_recompiles:
            for fg in r["failed_guards"]:
                assert fg["lineno"] == line("reads x and n")
                assert fg["line"] == LINES[line("reads x and n") - 1].strip()
    strip = lambda d: [(r["compile_id"], r["replaces"], len(r["failed_guards"])) for r in d["recompiles"]]
    assert strip(a) == strip(b)


def test_explain_refuses_a_missing_recording_in_one_line(program):
    out = run("explain", "missing.json", cwd=program)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no such file" in out.stderr


def counted(x, n):
    return x + n


def test_a_refused_recompile_is_explained_with_its_failing_guards():
    import torch

    import capture
    from capture.explain import explanation, explanation_text

    torch._dynamo.reset()
    compiled = torch.compile(counted, backend="eager")
    with torch._dynamo.config.patch(recompile_limit=1, automatic_dynamic_shapes=False):
        with capture.record() as rec:
            compiled(torch.randn(3), 1)
            compiled(torch.randn(3), 2)
    torch._dynamo.reset()
    [refusal] = explanation(rec)["refusals"]
    assert refusal["kind"] == "cache_limit"
    [fg] = [fg for fg in refusal["failed_guards"] if fg["source"] == "L['n']"]
    assert (fg["expected"], fg["seen"], fg["line"]) == ("1", "2", "return x + n")
    assert "recompile_limit" in refusal["suggestion"]
    text = explanation_text(rec)
    assert "refused (cache_limit)" in text and "EQUALS_MATCH L['n'] value: expected 1, got 2" in text


def test_a_recording_made_before_failed_guards_were_kept_still_explains_its_recompiles():
    import torch

    import capture
    from capture.explain import explanation_text

    torch._dynamo.reset()
    compiled = torch.compile(counted, backend="eager")
    with capture.record() as rec:
        compiled(torch.randn(3), 1)
        compiled(torch.randn(3), 2)
    torch._dynamo.reset()
    data = json.loads(rec.to_json())
    for c in data["compiles"]:
        del c["failed_guards"], c["replaces"]
        for g in c["guard_details"]:
            del g["leaf"]
    for e in data["events"]:
        del e["failed_guards"]
    old = capture.Recording.from_json(json.dumps(data))
    assert old.compiles[1].failed_guards == () and old.compiles[1].replaces is None
    text = explanation_text(old)
    assert "recompile [0/1] of counted: no failed guards recorded" in text
    assert "Dynamo's reason (the first failure only): 0/0: n == 1" in text


def maybe_prints(x, verbose):
    if verbose:
        print("verbose")
    return x + 1


def test_a_frame_whose_entries_differ_says_how_many_came_out_each_way():
    import torch

    import capture
    from capture.explain import explanation

    torch._dynamo.reset()
    compiled = torch.compile(maybe_prints, backend="eager")
    with capture.record() as rec:
        compiled(torch.randn(3), False)
        compiled(torch.randn(3), True)   # a new entry, and this one breaks at the print
    torch._dynamo.reset()
    [frame] = [f for f in explanation(rec)["frames"] if f["function"] == "maybe_prints"]
    assert frame["statement"].startswith("2 compiles (1 recompile), 1 whole, 1 ending at a graph break")


def breaks_on_purpose(x):
    import torch

    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


def test_a_break_with_no_tested_fix_gets_dynamos_hint_marked_as_such():
    import torch

    import capture
    from capture.explain import explanation, explanation_text

    torch._dynamo.reset()
    with capture.record() as rec:
        torch.compile(breaks_on_purpose, backend="eager")(torch.randn(3))
    torch._dynamo.reset()
    [b] = explanation(rec)["graph_breaks"]
    assert b["gb_id"] == "GB0025" and b["advice"] == []
    assert b["hint"] == "Remove the `torch._dynamo.graph_break()` call."  # the user's own call
    text = explanation_text(rec)
    assert "fix:" not in text
    assert f"Dynamo's hint (not a tested fix): {b['hint']}" in text


def breaks_then_returns(x):
    import torch

    y = x.sin()
    torch._dynamo.graph_break()
    return y   # the code after the break has no tensor operation


def test_the_code_after_a_break_is_counted_as_a_compile_and_said_with_its_function():
    import torch

    import capture
    from capture.explain import explanation, explanation_text

    torch._dynamo.reset()
    with capture.record() as rec:
        torch.compile(breaks_then_returns, backend="eager")(torch.randn(3))
    torch._dynamo.reset()
    data, text = explanation(rec), explanation_text(rec)
    kept = [c for c in rec.compiles if c.outcome not in ("restarted", "abandoned")]
    resume = next(c for c in kept if c.code_name.startswith("torch_dynamo_resume_in_breaks_then"))
    assert resume.outcome == "skipped" and "No ops traced" in resume.error
    # two compiles, one function: the count says which compile is not listed as a function
    assert data["summary"]["compiles"] == len(kept) == 2 and data["summary"]["resumes"] == 1
    [frame] = data["frames"]
    assert frame["resumes"] == [resume.compile_id] and frame["compiles"] != [resume.compile_id]
    assert text.splitlines()[0].startswith(
        "2 compiles (1 of them the code after a graph break, said with the function it continues)")
    assert (f"as a function of its own: [{resume.compile_id}], which had no tensor operations "
            "and runs as plain Python") in frame["statement"]


def prints_its_shape(x):
    y = x * 2
    print("shape", tuple(y.shape))   # a graph break
    return y.sum()


def test_the_viewer_is_shipped_explains_statements_for_every_compile():
    import torch

    import capture
    from capture.explain import compile_answer, explanation
    from widgets.viewer import viewer_state

    torch._dynamo.reset()
    compiled = torch.compile(prints_its_shape, backend="eager")
    with capture.record() as rec:
        compiled(torch.ones(3))
        compiled(torch.ones(5))   # a recompile: the size changed
    torch._dynamo.reset()
    shipped = viewer_state(rec)["answers"]
    data = explanation(rec)
    assert len(shipped) == len(rec.compiles)
    assert any(a["causes"] for a in shipped) and any(a["graph_breaks"] for a in shipped)
    for c, a in zip(rec.compiles, shipped):
        said = compile_answer(rec, c.compile_id)
        assert a["compile_id"] == c.compile_id
        assert a["statements"] == said["statements"] and a["advice"] == said["advice"]
        assert [x["statement"] for x in a["causes"]] == [x["statement"] for x in said["causes"]]
        assert [(b["lineno"], b["reason"], b["advice"], b["user"]) for b in a["graph_breaks"]] == \
            [(b["lineno"], b["reason"], b["advice"], b["user"]) for b in said["graph_breaks"]]
        fgs = (said["recompile"] or {}).get("failed_guards", [])
        assert [(g["source"], g["expected"], g["seen"], g["user"]) for g in a["failed_guards"]] == \
            [(g["source"], g["expected"], g["seen"], g["user"]) for g in fgs]
        # every statement shipped is one explain makes of the whole recording
        assert set(a["statements"]) <= {f["statement"] for f in data["frames"]} | {
            x["statement"] for x in data["causes"]}
        assert set(a["advice"]) <= set(data["advice"])
