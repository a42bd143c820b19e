"""A torchrun job of 2 ranks (gloo, CPU), recorded by `dynamo-lab record`: one recording per
rank, DDPOptimizer's bucket split as recorded against what DDPOptimizer gave the program's
own backend, and the rank comparison against the programs' known rank-dependent code.

Each test launches real `torchrun` jobs (tests/data/ranks/*.py), each with a time limit.
The programs print, per rank, what their own Dynamo produced (`RANK r ...` lines): the
graph count from torch._dynamo's counters and the node count of each graph their backend
received, read independently of any recording.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import capture
from capture.ranks import branch, compare_ranks, dims_differ, launch_rank, rank_path
from capture.recompiles import step_line
from widgets import cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "ranks"
TORCHRUN = Path(sys.executable).with_name("torchrun")
JOB_SECONDS = 240


def torchrun(*args: str, cwd: Path = ROOT) -> tuple[str, str]:
    """Run `torchrun --standalone --nproc-per-node 2 ARGS` with a time limit; its stdout
    and stderr. The whole process group is killed when the limit is reached."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([str(TORCHRUN), "--standalone", "--nproc-per-node", "2", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=JOB_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"torchrun {' '.join(args)} did not finish in {JOB_SECONDS} s")
    assert proc.returncode == 0, f"torchrun failed ({proc.returncode}):\n{err[-3000:]}"
    return out, err


def rank_lines(out: str) -> dict[int, dict[str, str]]:
    """The `RANK r key=value ...` lines each rank of a program printed, by rank (the values
    are numbers: two ranks writing to one pipe at once cannot run one line into the next)."""
    found = {}
    for m in re.finditer(r"RANK (\d+)((?: \w+=[\d,]+)+)", out):
        found[int(m.group(1))] = dict(kv.split("=", 1) for kv in m.group(2).split())
    assert sorted(found) == [0, 1], out
    return found


def record_job(program: str, tmp: Path) -> tuple[dict[int, dict[str, str]], list, str]:
    out, err = torchrun("-m", "widgets.cli", "record", str(DATA / program), "-o",
                        str(tmp / "trace.json"))
    recordings = [capture.Recording.from_json((tmp / f"trace.rank{k}.json").read_text())
                  for k in (0, 1)]
    return rank_lines(out), recordings, err


def program_line(program: str, text: str) -> int:
    """The line number of the line of `program` that holds `text`."""
    lines = (DATA / program).read_text().splitlines()
    return next(k for k, line in enumerate(lines, 1) if text in line)


def call_nodes(c: capture.Compile) -> list[str]:
    return [n.name for n in c.nodes if n.in_graph and n.op not in ("placeholder", "output")]


@pytest.fixture(scope="module")
def ddp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ddp")
    return (tmp, *record_job("ddp_buckets.py", tmp))


@pytest.fixture(scope="module")
def branchy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("branch")
    return (tmp, *record_job("rank_branch.py", tmp))


# -- the launch --------------------------------------------------------------------------


def test_a_rank_is_told_by_torchruns_variables_only():
    assert launch_rank({}) is None
    assert launch_rank({"RANK": "1", "WORLD_SIZE": "2"}) is None   # no LOCAL_RANK: not torchrun
    assert launch_rank({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}) == (1, 2, 1)
    assert launch_rank({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}) is None
    assert rank_path(Path("out/trace.json"), 3) == Path("out/trace.rank3.json")
    assert rank_path(Path("trace.html"), 0) == Path("trace.rank0.html")


# -- DDP: the bucket split -----------------------------------------------------------------


def test_each_rank_writes_its_own_recording_and_says_which(ddp):
    tmp, printed, recordings, err = ddp
    assert not (tmp / "trace.json").exists()
    for k, r in enumerate(recordings):
        assert (r.rank, r.world_size) == (k, 2)
        assert f"wrote {tmp / f'trace.rank{k}.json'}: rank {k} of 2," in err
        # the graphs each rank's Dynamo made, as its counters say in the program
        assert r.counters.get("unique_graphs") == int(printed[k]["graphs"]) == 1


def test_the_bucket_split_is_what_ddp_optimizer_gave_the_backend(ddp):
    _, printed, recordings, _ = ddp
    for k, r in enumerate(recordings):
        split = [c for c in r.compiles if c.ddp_split is not None]
        assert len(split) == 1, [c.title() for c in r.compiles]
        c = split[0]
        s = c.ddp_split
        # the program's backend was called once per bucket's subgraph, in order, and
        # counted each one's nodes
        assert len(s.buckets) == int(printed[k]["buckets"])
        assert [len(b.nodes) for b in s.buckets] == [int(n) for n in printed[k]["nodes"].split(",")]
        # every node of Dynamo's graph is in exactly one bucket, in graph order
        assert [n for b in s.buckets for n in b.nodes] == call_nodes(c)
        # six Linear(1024, 1024): 12 parameters, each counted once, f32 bytes
        params = [p for b in s.buckets for p in b.params]
        assert len(params) == len(set(params)) == 12
        assert sum(b.size for b in s.buckets) == 6 * (1024 * 1024 + 1024) * 4
        assert s.bucket_cap == 5 * 2**20   # bucket_cap_mb=5
        # why each bucket ends where it does: filled backwards to the cap (the first
        # bucket filled, the last in the graph, to the first cap)
        assert s.first_bucket_cap <= s.bucket_cap
        for b in s.buckets[1:]:
            assert b.size >= s.cap_of(b.index)


def test_the_split_is_shown_in_the_text_view_and_explain(ddp):
    tmp, _, recordings, _ = ddp
    c = next(c for c in recordings[0].compiles if c.ddp_split is not None)
    text = str(c)
    n = len(c.ddp_split.buckets)
    assert f"DDP split (DDPOptimizer): {n} bucket(s)" in text
    for b in c.ddp_split.buckets:
        assert f"bucket {b.index} (submod_{b.index}): {len(b.nodes)} node(s) {', '.join(b.nodes)};" in text
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["explain", str(tmp / "trace.rank0.json")]) == 0
    assert f"one graph from Dynamo, split by DDP into {n} subgraph(s)" in out.getvalue()


def test_ranks_that_ran_the_same_code_compare_the_same(ddp):
    _, _, (r0, r1), _ = ddp
    cmp = compare_ranks(r0, r1)
    assert cmp.frames and not cmp.differs, str(cmp)
    assert "no difference" in str(cmp)


def test_recording_leaves_ddps_split_as_it_was(ddp):
    """Fidelity: the same job unrecorded prints the same buckets and graphs."""
    _, printed, _, _ = ddp
    out, _ = torchrun(str(DATA / "ddp_buckets.py"))
    assert rank_lines(out) == printed


# -- a rank-dependent branch and shape ----------------------------------------------------


def test_the_comparison_finds_the_branch_rank_1_took(branchy):
    _, printed, (r0, r1), _ = branchy
    cmp = compare_ranks(r0, r1)
    assert cmp.differs and not cmp.only_a and not cmp.only_b
    frame = next(f for f in cmp.frames if f.function == "branchy")
    (pair,) = frame.pairs
    test = program_line("rank_branch.py", "if dist.get_rank() == 1:")
    # the first step that differs: the rank itself, a constant to Dynamo
    assert pair.divergence.lineno == test and pair.divergence.why == "value"
    # the branch: the jump at that line, after which rank 1 ran `y = y * 2`
    x, y, k = branch(pair)
    assert step_line(pair.a, x) == test == step_line(pair.b, y)
    assert "JUMP" in pair.a.steps[x].opname
    only_1 = [j for i, j in pair.aligned if i is None]
    assert {step_line(pair.b, j) for j in only_1} == {program_line("rank_branch.py", "y = y * 2")}
    # the graph rank 1 made has the node its branch added, and each rank's graphs are
    # what its own backend received
    assert len(pair.nodes_added) == 1 and not pair.nodes_removed
    for r, k in ((r0, 0), (r1, 1)):
        assert [len(call_nodes(c)) for c in r.compiles] == \
            [int(n) for n in printed[k]["nodes"].split(",")]
        assert r.counters.get("unique_graphs") == int(printed[k]["graphs"])
    text = str(cmp)
    assert f"a branch taken differently at line {test} (if dist.get_rank() == 1:)" in text
    assert f"rank 1 at line {program_line('rank_branch.py', 'y = y * 2')}" in text


def test_the_comparison_names_the_input_dimension_that_differs(branchy):
    _, _, (r0, r1), _ = branchy
    cmp = compare_ranks(r0, r1)
    (pair,) = next(f for f in cmp.frames if f.function == "sized").pairs
    assert dims_differ(pair) == [("L['x'].size()[0]", "4", "6")]
    assert [g.source for g in pair.guards_changed] == ["L['x']"]
    assert "input dimension L['x'].size()[0] is 4 on rank 0 and 6 on rank 1" in str(cmp)


def test_the_comparison_names_the_recompile_only_rank_1_made(branchy):
    _, printed, (r0, r1), _ = branchy
    cmp = compare_ranks(r0, r1)
    frame = next(f for f in cmp.frames if f.function == "sized")
    assert (len(frame.a), len(frame.b)) == (1, 2)
    again = frame.b[1]
    assert again.replaces == frame.b[0].compile_id
    (fg,) = again.failed_guards
    assert (fg.source, fg.expected, fg.seen) == ("L['x']", "[6, 3]", "[8, 3]")
    # rank 1's Dynamo made one graph more, as its counters say
    assert int(printed[1]["graphs"]) == int(printed[0]["graphs"]) + 1
    assert (f"rank 1's [{again.compile_id}] replaces its [{again.replaces}]; guards that "
            "failed on the call (1):") in str(cmp)


def test_explain_of_two_rank_recordings(branchy):
    tmp, _, _, _ = branchy
    files = [str(tmp / f"trace.rank{k}.json") for k in (0, 1)]
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["explain", *files]) == 0
    text = out.getvalue()
    assert text.startswith("2 recordings: rank 0 trace.rank0.json, rank 1 trace.rank1.json")
    assert "branchy (rank_branch.py:" in text and "sized (rank_branch.py:" in text
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["explain", "--format", "json", *files]) == 0
    data = json.loads(out.getvalue())
    (functions,) = [c["functions"] for c in data["comparisons"]]
    assert [f["function"] for f in functions] == ["branchy", "sized"]
    assert functions[0]["pairs"][0]["branch"]["lineno"] == program_line(
        "rank_branch.py", "if dist.get_rank() == 1:")


def test_explain_of_a_recording_and_a_script_says_what_to_give(branchy):
    tmp, _, _, _ = branchy
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["explain", str(tmp / "trace.rank0.json"), "prog.py"]) == 2
    assert "prog.py is not a .json recording" in err.getvalue()
    assert err.getvalue().count("\n") == 1


# -- one page of several ranks ------------------------------------------------------------


def test_several_ranks_make_one_recording_whose_ids_stay_apart(branchy):
    from capture.ranks import merged, rank_pairs

    _, _, (r0, r1), _ = branchy
    m, titles = merged([r0, r1], [0, 1])
    assert [c.rank for c in m.compiles] == [0] * len(r0.compiles) + [1] * len(r1.compiles)
    assert titles == [f"rank 0 · {c.title()}" for c in r0.compiles] + \
        [f"rank 1 · {c.title()}" for c in r1.compiles]
    # ids repeat from rank to rank; each rank's generation keeps them apart, so a recompile
    # still names its own rank's compile
    again = m.compiles[-1]
    assert again.rank == 1 and m.compile(again.replaces, again.generation).rank == 1
    pairs = {(x, y): cmp for x, y, cmp in rank_pairs(m)}
    n0 = len(r0.compiles)
    cross = pairs[(0, n0)]   # branchy on rank 0 beside branchy on rank 1
    assert cross.divergence is not None and not cross.failed_guards
    assert pairs[(n0 + 1, n0 + 2)].failed_guards   # rank 1's recompile, beside what it replaced


@pytest.mark.browser
def test_the_page_of_two_ranks_compares_rank_0_beside_rank_1(branchy, tmp_path):
    from bench import lab_server

    tmp, _, (r0, r1), _ = branchy
    page = tmp_path / "ranks.html"
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["html", str(tmp / "trace.rank0.json"), str(tmp / "trace.rank1.json"),
                         "-o", str(page)]) == 0
    assert f"wrote {page}: {len(r0.compiles) + len(r1.compiles)} compile(s) of 2 ranks" in err.getvalue()
    with lab_server.chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        p = context.new_page()
        errors: list[str] = []
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.goto(page.resolve().as_uri())
        p.wait_for_selector(".dl-viewer[data-ready='1']", timeout=20_000)
        root = p.locator(".dl-viewer").first
        options = root.locator(".dl-compile option").all_text_contents()
        assert options[0] == "rank 0 · [0/0] branchy"
        assert options[len(r0.compiles)] == "rank 1 · [0/0] branchy"
        assert options[-1].startswith("rank 1 · [1/1] sized · recompile of [1/0]: L['x'] size")
        root.get_by_role("button", name="compare", exact=True).click()
        partner = root.locator(".dl-partner")
        assert partner.input_value() == str(len(r0.compiles))   # rank 1's branchy beside it
        assert partner.locator("option").all_text_contents() == ["beside rank 1 · [0/0] branchy"]
        head = root.locator(".dl-cmp-head").text_content()
        assert "Compare rank 0 [0/0] with rank 1 [0/0]" in head
        why = root.locator(".dl-cmp-why").text_content()
        assert "ConstantVariable" in why   # the first divergence: the rank, a constant
        # rank 0's sized: beside rank 1's sized by default, not beside rank 1's recompile,
        # whose failed guards are of rank 1's own [1/0], never of rank 0's
        n0 = len(r0.compiles)
        root.locator(".dl-compile").select_option("1")
        assert partner.input_value() == str(n0 + 1)
        partner.select_option(str(n0 + 2))
        head = root.locator(".dl-cmp-head").text_content()
        assert "Compare rank 0 [1/0] with rank 1 [1/1]" in head
        why = root.locator(".dl-cmp-why").text_content()
        assert "got [8, 3]" not in why and "None recorded: rank 1 [1/1] was compiled instead of [1/0]" in why
        context.close()
        assert errors == []
