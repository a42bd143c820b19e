"""`--from-trace`: a TORCH_TRACE log read into the same records, page and answers as a live recording.

The logs are made here, by real torch in subprocesses (`TORCH_TRACE=DIR python prog.py`,
and a real two-rank `torch.distributed.run` with gloo), from the project's own problem
scripts (tests/problems/): a graph break, a recompile, a refused recompile, a program
that raises after compiling, and a backend with AOTAutograd's stages. Each fact the log
holds is checked against a live `capture.record()` of the same script: compile ids,
outcomes, graph-break reasons and lines, recompile reasons, the guard texts of each
compile, the graph's nodes. Then the ways a log can be damaged (cut mid-line, cut inside
a payload, gzip'd) and bad input at the command line.

    .venv/bin/python -m pytest tests/test_fromtrace.py     # -m "not browser" skips the page
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import capture
from capture import fromtrace
from capture.explain import explanation
from capture.recording import EventKind, Outcome
from widgets import cli

pytestmark = [pytest.mark.timeout(300)]

PROBLEMS = Path(__file__).resolve().parent / "problems"
TIME_LIMIT = 240   # seconds for any one program (they run at once, on a shared machine)

CRASHES = f"""
import runpy
runpy.run_path({str(PROBLEMS / "print_in_forward.py")!r}, run_name="__main__")
raise RuntimeError("the run crashed after compiling")
"""

STAGES = """
import torch

def f(x):
    return (x.sin() * 2).sum()

x = torch.randn(4, requires_grad=True)
torch.compile(f, backend="aot_eager")(x).backward()
"""

# A break inside an inlined call: the first attempt breaks in `helper`, the kept one at
# the call in `f`, where its resume function starts.
INLINED = """
import torch

def helper(y):
    print("inside helper")
    return y * 2

def f(x):
    y = x.sin()
    z = helper(y)
    return z + 1

torch.compile(f, backend="eager")(torch.randn(4))
"""

# Two ranks of one job; rank 1 takes a branch with a print in it (a graph break).
RANKS = """
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()

def f(x):
    y = x.sin()
    if rank == 1:
        print("rank 1 only")
    return y + 1

torch.compile(f, backend="eager")(torch.randn(4))
dist.barrier()
dist.destroy_process_group()
"""


def _env(trace_dir: Path) -> dict[str, str]:
    env = dict(os.environ, TORCH_TRACE=str(trace_dir))
    env.pop("TORCH_LOGS", None)
    return env


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """name -> (trace folder, exit code): every log, made at once by real torch."""
    root = tmp_path_factory.mktemp("traces")
    (root / "crashes.py").write_text(CRASHES, encoding="utf-8")
    (root / "stages.py").write_text(STAGES, encoding="utf-8")
    (root / "ranks.py").write_text(RANKS, encoding="utf-8")
    (root / "inlined.py").write_text(INLINED, encoding="utf-8")
    python = sys.executable
    runs = {
        "seq_len": [python, str(PROBLEMS / "seq_len.py")],
        "fullgraph_limit": [python, str(PROBLEMS / "fullgraph_limit.py")],
        "crashes": [python, str(root / "crashes.py")],
        "stages": [python, str(root / "stages.py")],
        "inlined": [python, str(root / "inlined.py")],
        "ranks": [python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                  "2", str(root / "ranks.py")],
    }
    procs = {}
    for name, argv in runs.items():
        procs[name] = subprocess.Popen(argv, cwd=root, env=_env(root / name),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    out = {}
    for name, proc in procs.items():
        try:
            _, err = proc.communicate(timeout=TIME_LIMIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{name} did not finish in {TIME_LIMIT} s")
        out[name] = (root / name, proc.returncode, err.decode(errors="replace"))
    return out


def _log(logs, name: str) -> Path:
    folder, code, err = logs[name]
    assert code == 0, err[-2000:]
    return folder


def _one(path: Path):
    [(log, recording)] = fromtrace.read(path)
    return log, recording


def _live(script: Path):
    """A live recording of the script, run as the subprocess ran it (same path)."""
    torch._dynamo.reset()
    try:
        with contextlib.redirect_stdout(io.StringIO()), capture.record() as rec:
            runpy.run_path(str(script), run_name="__main__")
    finally:
        torch._dynamo.reset()
    return rec


def _norm(text: str) -> str:
    """Object ids and Dynamo's process-wide numbering differ between two processes."""
    text = re.sub(r"\b\d{6,}\b", "<ID>", text)
    return re.sub(r"__builtins_dict___\d+", "__builtins_dict___N", text)


def _kept_agree(live, read) -> None:
    """What both hold of each compile Dynamo kept: guard texts and the graph's nodes."""
    assert [c.compile_id for c in read.compiles] == [c.compile_id for c in live.compiles]
    for a, b in zip(live.compiles, read.compiles):
        assert b.code_name == a.code_name and b.filename == a.filename
        if a.outcome == Outcome.RESTARTED:   # thrown away: the log keeps no graph of it
            assert b.outcome == Outcome.RESTARTED and not b.nodes and not b.guards
            continue
        assert [_norm(g) for g in b.guards] == [_norm(g) for g in a.guards], a.compile_id
        live_nodes = sorted(n.name for n in a.nodes if n.in_graph)
        assert sorted(n.name for n in b.nodes) == live_nodes, a.compile_id
        assert len(b.steps) == 0


# -- the log against a live recording ------------------------------------------------------


def _crashed(logs) -> Path:
    """print_in_forward.py run by a script that then raises: a whole log of its compiles."""
    folder, code, err = logs["crashes"]
    assert code == 1 and "the run crashed after compiling" in err
    return folder


def test_a_graph_break_log_agrees_with_a_live_recording(logs):
    log, read = _one(_crashed(logs))
    live = _live(PROBLEMS / "print_in_forward.py")
    assert not log.truncated
    assert [c.compile_id for c in read.compiles] == ["0/0", "0/0_1", "1/0"]
    _kept_agree(live, read)
    for a, b in zip(live.compiles, read.compiles):
        assert b.outcome == a.outcome, a.compile_id
        if a.graph_break is not None:
            ga, gb = a.graph_break, b.graph_break
            assert (gb.reason, gb.lineno, gb.line, gb.code_name, gb.gb_id) == \
                (ga.reason, ga.lineno, ga.line, ga.code_name, ga.gb_id)
            assert gb.hints == ga.hints and gb.explanation == ga.explanation
            assert gb.registry == ga.registry   # the same torch wrote the log: its registry
            assert gb.step is None   # the log has no steps to point at
            # the user stack, as the log holds it
            assert 'line 14, in f\n    print("y computed")' in gb.message
    # the graph's nodes in detail: placeholder renamed, the op and its input
    nodes = {n.name: n for n in read.compile("0/0_1").nodes}
    assert (nodes["l_x_"].op, nodes["l_x_"].target) == ("placeholder", "L_x_")
    assert (nodes["y"].op, nodes["y"].target, nodes["y"].inputs) == ("call_method", "sin", ("l_x_",))
    assert (nodes["y"].dtype, nodes["y"].shape) == ("f32", "[4]")
    # a guard's user line comes from the tree's comment, as the live guard's does
    live_tensor = next(g for g in live.compile("0/0_1").guard_details if g.kind == "TENSOR_MATCH")
    tensor = next(g for g in read.compile("0/0_1").guard_details if g.kind == "TENSOR_MATCH")
    assert (tensor.source, tensor.lineno, tensor.line) == \
        (live_tensor.source, live_tensor.lineno, live_tensor.line)
    # explain gives the same answer where the log holds the facts
    a, b = explanation(live), explanation(read)
    assert b["summary"] == a["summary"]
    assert [f["statement"] for f in b["frames"]] == [f["statement"] for f in a["frames"]]
    keys = ("function", "lineno", "line", "reason", "gb_id", "advice")
    assert [{k: g[k] for k in keys} for g in b["graph_breaks"]] == \
        [{k: g[k] for k in keys} for g in a["graph_breaks"]]
    # said once: what the log lacks, and the command that records this program
    notes = [e for e in read.events if e.kind == EventKind.NOTE]
    assert len(notes) == 1 and read.events[0] is notes[0]
    assert "not Dynamo's steps, stack, locals" in notes[0].message
    # the script that ran (the outermost `<module>` of a logged stack)
    assert f"dynamo-lab record {_crashed(logs).parent / 'crashes.py'} -o trace.html" in \
        notes[0].message
    assert fromtrace.note_of(read) == notes[0].message and fromtrace.note_of(live) is None
    timed = [e for e in read.events if e.compile_id == "0/0_1" and e.kind == EventKind.COMPILE]
    assert re.search(r"compile time \d+\.\d{3} s", timed[0].message)


def test_a_recompile_log_agrees_with_a_live_recording(logs):
    _, read = _one(_log(logs, "seq_len"))
    live = _live(PROBLEMS / "seq_len.py")
    _kept_agree(live, read)
    a, b = live.compile("0/1"), read.compile("0/1")
    assert b.replaces == a.replaces == "0/0"
    assert b.recompile_reasons == a.recompile_reasons
    assert "size mismatch at index 1. expected 64, actual 68" in b.recompile_reasons[0]
    # automatic dynamic: the recompile's graph takes the size as a symbol
    assert any(n.op == "placeholder" and n.name.startswith("s") for n in b.nodes)
    data_a, data_b = explanation(live), explanation(read)
    assert data_b["summary"] == data_a["summary"]
    assert [r["compile_id"] for r in data_b["recompiles"]] == ["0/1"]
    assert data_b["recompiles"][0]["dynamo_reasons"] == data_a["recompiles"][0]["dynamo_reasons"]
    # the log has Dynamo's reason, not the failed guards a live recording finds: no cause
    # is claimed from it
    assert data_b["causes"] == [] and data_b["recompiles"][0]["failed_guards"] == []


def test_a_break_in_an_inlined_call_agrees_attempt_by_attempt(logs):
    folder = _log(logs, "inlined")
    _, read = _one(folder)
    live = _live(folder.parent / "inlined.py")
    _kept_agree(live, read)
    said = [(c.compile_id, c.outcome, c.graph_break and (
        c.graph_break.reason, c.graph_break.code_name, c.graph_break.lineno, c.graph_break.line))
        for c in read.compiles]
    assert said == [(c.compile_id, c.outcome, c.graph_break and (
        c.graph_break.reason, c.graph_break.code_name, c.graph_break.lineno, c.graph_break.line))
        for c in live.compiles]
    # the first attempt broke inside helper; the kept one stops at the call in f
    assert said[0][2][1:3] == ("helper", 5) and said[1][2][1:3] == ("f", 10)
    assert explanation(read)["graph_breaks"][0]["lineno"] == \
        explanation(live)["graph_breaks"][0]["lineno"]


def test_a_refused_recompile_is_an_event_as_in_a_live_recording(logs):
    _, read = _one(_log(logs, "fullgraph_limit"))
    live = _live(PROBLEMS / "fullgraph_limit.py")
    _kept_agree(live, read)
    refused = [(e.kind, e.compile_id) for e in read.events if e.kind == EventKind.CACHE_LIMIT]
    assert refused == [(e.kind, e.compile_id) for e in live.events
                       if e.kind == EventKind.CACHE_LIMIT] == [(EventKind.CACHE_LIMIT, "0/3")]
    data = explanation(read)
    assert data["summary"]["refused"] == explanation(live)["summary"]["refused"] == 1


def test_the_stages_after_dynamo_are_read_without_links(logs):
    _, read = _one(_log(logs, "stages"))
    c = read.compile("0/0")
    assert [(s.name, s.graph) for s in c.stages] == [
        ("aot_joint", "joint"), ("aot_forward", "forward"), ("aot_backward", "backward")]
    forward = c.stages[1]
    assert "def forward(" in forward.code and "aten.sin" in forward.code
    assert forward.units == () and not forward.from_cache   # no live graph: nothing linked


# -- damaged logs -----------------------------------------------------------------------------


def _file(folder: Path) -> Path:
    [path] = fromtrace.trace_files(folder)
    return path


def test_a_log_cut_inside_a_payload_keeps_what_came_before(logs, tmp_path):
    whole_log, whole = _one(_crashed(logs))
    text = _file(whole_log.path.parent).read_bytes()
    # cut in the middle of the resume function's guard tree, mid-line
    head = text.index(b'"dynamo_cpp_guards_str": {}, "frame_id": 1')
    cut_at = text.index(b"TENSOR_MATCH", head) + 7
    (tmp_path / "cut.log").write_bytes(text[:cut_at])
    log, read = _one(tmp_path / "cut.log")
    assert log.truncated and read.truncated
    assert [c.compile_id for c in read.compiles] == ["0/0", "0/0_1", "1/0"]
    assert read.compile("0/0_1").guards == whole.compile("0/0_1").guards
    resumed = read.compile("1/0")
    assert resumed.guards == [] and resumed.guard_tree is None   # never half a tree
    assert resumed.nodes == whole.compile("1/0").nodes           # logged before the cut
    assert resumed.outcome == Outcome.UNFINISHED
    assert any(e.kind == EventKind.ENDED for e in read.events)
    # cut mid-line in a record's header: that record is dropped, the rest kept
    (tmp_path / "header.log").write_bytes(text[:head + 20])
    log, read = _one(tmp_path / "header.log")
    assert log.truncated and read.compile("1/0").outcome == Outcome.UNFINISHED
    explained = explanation(read)
    assert explained["frames"][0]["outcome"] == "graph_break"
    # cut before any compile: the records before it (torch's version, timing events) make
    # no compile
    first = text.index(b'"dynamo_start"')
    (tmp_path / "start.log").write_bytes(text[:text.rindex(b"\n", 0, first) + 1])
    _, read = _one(tmp_path / "start.log")
    assert read.compiles == [] and read.torch_version.startswith("2.")


def test_a_gzipped_log_reads_as_the_plain_one(logs, tmp_path):
    plain = _file(_crashed(logs))
    zipped = tmp_path / (plain.name + ".gz")
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    (tmp_path / "other.txt").write_text("not a log")
    _, a = _one(plain)
    _, b = _one(tmp_path)   # the folder: its .gz file is found
    assert b.to_dict() == a.to_dict()
    cut = tmp_path / "cut" / "dedicated_log_torch_trace_x.log.gz"
    cut.parent.mkdir()
    cut.write_bytes(zipped.read_bytes()[: len(zipped.read_bytes()) // 2])
    log, read = _one(cut.parent)
    assert log.truncated and [c.compile_id for c in read.compiles][:1] == ["0/0"]


def test_a_run_that_crashed_after_compiling_reads_whole(logs, capsys):
    folder = _crashed(logs)
    log, read = _one(folder)
    assert not log.truncated and not read.truncated
    assert [(c.compile_id, c.outcome) for c in read.compiles] == [
        ("0/0", Outcome.RESTARTED), ("0/0_1", Outcome.GRAPH_BREAK), ("1/0", Outcome.COMPILED)]
    assert cli.main(["explain", "--from-trace", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "graph break: in f at print_in_forward.py:14" in out
    assert "dynamo-lab record" in out and "crashes.py" in out   # the script that ran
    assert set(log.compile_times) == {"0/0", "1/0"} and all(t > 0 for t in log.compile_times.values())
    assert "compile time, from Dynamo's metrics in the log: [0/0] " in out


# -- ranks, and the command line ------------------------------------------------------------


def test_two_ranks_make_a_page_each_and_one_explanation(logs, tmp_path, capsys):
    folder = _log(logs, "ranks")
    read = fromtrace.read(folder)
    assert [log.rank for log, _ in read] == [0, 1]
    (_, rank0), (_, rank1) = read
    assert rank0.compile("0/0").outcome == Outcome.COMPILED and rank0.compile("0/0").graph_break is None
    assert rank1.compile("0/0_1").graph_break.reason == "Failed to trace builtin operator"
    assert cli.main(["html", "--from-trace", str(folder), "-o", str(tmp_path / "job.html"), "-q"]) == 0
    pages = sorted(p.name for p in tmp_path.glob("job.*.html"))
    assert pages == ["job.rank0.html", "job.rank1.html"]
    assert cli.main(["explain", "--from-trace", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count("note: read from a TORCH_TRACE log") == 1
    assert "(rank 0)" in out and "(rank 1)" in out
    assert out.index("graph break: in f") > out.index("(rank 1)")   # rank 1's only
    assert cli.main(["explain", "--from-trace", str(folder), "--fail-on-graph-break"]) == 1


@pytest.mark.parametrize("make", ["missing", "empty", "empty_file", "not_a_trace", "a_recording",
                                  "both"])
def test_bad_input_gets_one_line_and_exit_2(make, tmp_path, capsys, logs):
    argv = ["html", "--from-trace"]
    if make == "missing":
        argv.append(str(tmp_path / "nowhere"))
    elif make == "empty":
        (tmp_path / "empty").mkdir()
        argv.append(str(tmp_path / "empty"))
    elif make == "empty_file":
        (tmp_path / "dedicated_log_torch_trace_x.log").write_text("")
        argv.append(str(tmp_path))
    elif make == "not_a_trace":
        argv.append(str(PROBLEMS / "seq_len.py"))
    elif make == "a_recording":
        (tmp_path / "r.json").write_text(capture.Recording().to_json())
        argv = ["explain", "--from-trace", str(tmp_path / "r.json")]
    else:
        argv = ["explain", str(tmp_path / "r.json"), "--from-trace", str(_log(logs, "seq_len"))]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynamo-lab: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_the_command_runs_as_installed(logs, tmp_path):
    exe = Path(sys.executable).with_name("dynamo-lab")
    folder = _crashed(logs)
    done = subprocess.run([str(exe), "html", "--from-trace", str(folder), "-o",
                           str(tmp_path / "p.html")], capture_output=True, text=True,
                          timeout=TIME_LIMIT)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "p.html").read_text()
    assert "read from a TORCH_TRACE log" in page and "dedicated_log_torch_trace" in page
    done = subprocess.run([str(exe), "explain", "--from-trace", str(tmp_path / "no")],
                          capture_output=True, text=True, timeout=TIME_LIMIT)
    assert done.returncode == 2 and "Traceback" not in done.stderr


# -- the page in a browser ----------------------------------------------------------------------


@pytest.mark.browser
def test_the_page_shows_a_compile_with_no_steps(logs, tmp_path):
    from bench import lab_server

    out = tmp_path / "trace.html"
    assert cli.main(["html", "--from-trace", str(_crashed(logs)), "-o", str(out),
                     "--compile", "0/0_1", "-q"]) == 0
    with lab_server.chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=20_000)
        text = page.inner_text("body")
        if os.environ.get("DYNAMO_LAB_SCREENSHOT"):
            page.screenshot(path=os.environ["DYNAMO_LAB_SCREENSHOT"])
        page.close()
    assert errors == []
    assert "read from a TORCH_TRACE log" in text and "dynamo-lab record" in text
    assert "[0/0_1] f — graph break at line 14" in text
    assert "3 graph nodes" in text and "11 guards" in text
    assert "no steps" in text


def test_graph_nodes_reads_fx_printed_stores_and_long_signatures():
    """Two forms FX prints that a one-line reading would miss (as in mask_rows.py's and
    AOTAutograd's graphs): an in-place store, whose node is named on the same line after
    the store, and a signature with one parameter a line, each with a comment."""
    code = '\n'.join([
        'class GraphModule(torch.nn.Module):',
        '    def forward(',
        '        self,',
        '        L_m_: "b8[6, 4][4, 1]cpu",  # a comment',
        '        L_i_: "i64[0][1]cpu",',
        '    ):',
        '        l_m_ = L_m_',
        '        l_i_ = L_i_',
        '        l_m_[(l_i_,)] = True;  setitem = l_m_;  l_i_ = setitem = None',
        '        any_1: "b8[][]cpu" = l_m_.any();  l_m_ = None',
        '        return (any_1,)',
    ])
    nodes = fromtrace.graph_nodes(code)
    assert [(n.name, n.op) for n in nodes] == [
        ("l_m_", "placeholder"), ("l_i_", "placeholder"), ("setitem", "call_function"),
        ("any_1", "call_method"), ("output", "output")]
    assert nodes[2].inputs == ("l_m_", "l_i_") and nodes[3].inputs == ("l_m_",)
    assert (nodes[0].dtype, nodes[0].shape) == ("b8", "[6, 4]")


def test_tlparse_finds_the_same_compiles_graphs_and_guard_trees(logs, tmp_path):
    """torch's own parser as the oracle: the compile ids tlparse files artifacts under, and
    the output graph and guard tree it writes for each, are what the recording holds."""
    import json

    tlparse = Path(sys.executable).with_name("tlparse")
    if not tlparse.exists():
        pytest.skip("tlparse is not installed in this venv (pip install tlparse)")
    for name in ("crashes", "seq_len"):
        folder = _crashed(logs) if name == "crashes" else _log(logs, name)
        out = tmp_path / name
        done = subprocess.run([str(tlparse), str(_file(folder)), "-o", str(out), "--no-browser",
                               "--overwrite", "--plain-text"], capture_output=True, text=True,
                              timeout=TIME_LIMIT)
        assert done.returncode == 0, done.stderr
        directory = json.loads((out / "compile_directory.json").read_text())
        _, read = _one(folder)
        ids = [k.strip("[]") for k in directory if k != "[-/-]"]
        assert ids == [c.compile_id for c in read.compiles]
        for c in read.compiles:
            files = {a["name"].rsplit("_", 1)[0]: out / a["url"]
                     for a in directory[f"[{c.compile_id}]"]["artifacts"]}
            if c.graph_code is None:
                assert "dynamo_output_graph" not in files
                continue
            assert files["dynamo_output_graph"].read_text().rstrip("\n") == c.graph_code
            tree = files["dynamo_cpp_guards_str"].read_text()
            assert tree.split("\nGuard latency")[0].rstrip("\n") == c.guard_tree


@pytest.mark.browser
def test_compare_on_a_log_sets_a_recompile_beside_its_compile_without_steps(logs, tmp_path):
    """C on a recompile read from a log: both sides say they were kept without steps, the
    failed guard and the guards that differ are listed, and nothing raises in the page."""
    from bench import lab_server

    _, rec = _one(_log(logs, "seq_len"))
    recompiles = [k for k, c in enumerate(rec.compiles) if c.replaces]
    assert recompiles, "the seq_len log holds a recompile"
    k = recompiles[0]
    out = tmp_path / "seq_len.html"
    assert cli.main(["html", "--from-trace", str(_log(logs, "seq_len")), "-o", str(out),
                     "--compile", rec.compiles[k].compile_id, "-q"]) == 0
    with lab_server.chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.resolve().as_uri())
        page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=20_000)
        root = page.locator(".dl-viewer").first
        root.focus()
        page.keyboard.press("c")
        cmp = root.locator(".dl-cmp")
        cmp.wait_for(state="visible", timeout=5_000)
        sides = [cmp.locator(f".dl-cmp-{side}").inner_text() for side in ("left", "right")]
        reasons = cmp.locator(".dl-cmp-reasons li").all_text_contents()
        divergence = cmp.locator(".dl-cmp-stepless").inner_text()
        guards = cmp.locator(".dl-cmp-guards li").count()
        page.close()
    assert errors == [], errors
    assert all("kept without steps" in s for s in sides), sides
    # the log's reason, not a claim that no guard failed; no divergence claimed either
    assert reasons == rec.compiles[k].recompile_reasons and "size mismatch" in reasons[0]
    assert divergence.startswith("Not known: [0/0] and [0/1] were kept without steps")
    assert guards >= 1
    text = str(capture.compare(rec, rec.compiles[k].replaces, rec.compiles[k].compile_id))
    assert "not known, [0/0] and [0/1] kept without steps" in text
    assert "no divergence" not in text
