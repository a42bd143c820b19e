"""What the project does to the process around it: threads, imports, torch settings.

Recording from two threads at once is either correct or refused with a clear error;
another thread compiling while one records gets exactly what Dynamo gives it without
us; importing the packages and loading the extension change no torch setting; and
`record()` leaves every Dynamo, Inductor and functorch setting, torch's global state,
torch's loggers and the SIGINT handler as it found them, however it ends, while the
learner's own changes made inside the block stay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

import capture
from capture import hooks
from dynamo_oracle import ROOT, artifacts_of, force_restore, normalise, seams

JOIN_TIMEOUT = 120


@pytest.fixture(autouse=True)
def restored():
    before = seams()
    yield before
    if seams() != before or capture.active():
        force_restore(before)


def joined(threads):
    """Join every thread; a test never leaves one running."""
    for t in threads:
        t.join(JOIN_TIMEOUT)
    alive = [t.name for t in threads if t.is_alive()]
    assert alive == [], f"threads still running: {alive}"


def mine(x):
    return x.sin() + 1


def theirs(x):
    y = x.cos()
    if y.sum() > 0:
        return y * 2
    return y - 1


def graphs_of(recording):
    return [normalise(c.graph_code).strip("\n") for c in recording.compiles if c.graph_code]


# -- two threads ----------------------------------------------------------------------------

def compile_theirs_in_a_thread(while_main_thread=None):
    """Compile and call `theirs` in another thread; return what Dynamo made of it there.

    `while_main_thread(go, done)` runs in this thread meanwhile: it sets `go` when the
    other thread may start and waits for `done` if it wants the compile to happen inside.
    """
    torch._dynamo.reset()
    graphs, results, errors = [], [], []
    go, done = threading.Event(), threading.Event()

    def backend(gm, example_inputs):
        graphs.append(normalise(gm.code))
        return gm.forward

    def other():
        try:
            go.wait(JOIN_TIMEOUT)
            f = torch.compile(theirs, backend=backend)
            results.extend([f(torch.ones(3)).tolist(), f(-torch.ones(3)).tolist()])
        except BaseException as e:  # reported below, never lost in the thread
            errors.append(e)
        finally:
            done.set()

    worker = threading.Thread(target=other, name="compiles-theirs")
    worker.start()
    try:
        if while_main_thread is None:
            go.set()
        else:
            while_main_thread(go, done)
    finally:
        go.set()
        joined([worker])
    assert errors == []
    trees = [normalise(f"{e.compile_id}\n{e.guard_manager}")
             for e in _debug_get_cache_entry_list(theirs.__code__)]
    return {"graphs": graphs, "guards": trees, "results": results}


def test_a_thread_compiling_while_another_records_gets_what_dynamo_gives_it_unrecorded():
    plain = compile_theirs_in_a_thread()
    plain_mine = artifacts_of(lambda: [(mine, (torch.ones(3),))])
    held = {}

    def record_meanwhile(go, done):
        with capture.record() as held["rec"]:
            go.set()
            done.wait(JOIN_TIMEOUT)  # the other thread compiles under our hooks
            held["out"] = torch.compile(mine, backend="eager")(torch.ones(3))

    during = compile_theirs_in_a_thread(record_meanwhile)
    assert during == plain and len(plain["graphs"]) == 2
    # the recording holds this thread's compile only, exactly as Dynamo made it
    rec = held["rec"]
    assert [c.code_name for c in rec.compiles] == ["mine"]
    assert graphs_of(rec) == [g.strip("\n") for g in plain_mine["graphs"]]
    assert torch.equal(held["out"], torch.ones(3).sin() + 1)
    assert hooks.installed() == []


def test_two_threads_starting_to_record_at_once_one_records_and_the_other_is_told_why():
    torch._dynamo.reset()
    start, attempted = threading.Barrier(2, timeout=JOIN_TIMEOUT), threading.Barrier(
        2, timeout=JOIN_TIMEOUT)
    recordings, refusals, errors = {}, {}, []

    def worker(name, fn, x):
        try:
            start.wait()
            try:
                with capture.record() as rec:
                    attempted.wait()  # the other thread tries while this one records
                    torch.compile(fn, backend="eager")(x)
                recordings[name] = rec
            except RuntimeError as e:
                refusals[name] = str(e)
                attempted.wait()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=("mine", mine, torch.ones(3)), name="a"),
               threading.Thread(target=worker, args=("theirs", theirs, torch.ones(3)), name="b")]
    for t in threads:
        t.start()
    joined(threads)
    assert errors == []
    assert len(recordings) == 1 and len(refusals) == 1
    (winner, rec), (loser, message) = *recordings.items(), *refusals.items()
    assert "another thread" in message and "one thing at a time" in message
    assert message.count("\n") == 0
    assert rec.compiles and all(winner in c.code_name for c in rec.compiles)  # and resumes
    assert all(c.steps for c in rec.compiles)
    assert hooks.installed() == [] and not capture.active()


def test_the_magic_is_refused_while_another_thread_records_and_nothing_is_reset(ipython_shell,
                                                                               capsys):
    torch._dynamo.reset()
    compiled = torch.compile(mine, backend="eager")
    recording, release = threading.Event(), threading.Event()

    def holder():
        with capture.record():
            compiled(torch.ones(3))
            recording.set()
            release.wait(JOIN_TIMEOUT)

    t = threading.Thread(target=holder, name="holds-a-recording")
    t.start()
    try:
        recording.wait(JOIN_TIMEOUT)
        entries = len(_debug_get_cache_entry_list(mine.__code__))
        capsys.readouterr()
        result = ipython_shell.run_cell("%%capture_trace\ntorch.ones(2) + 1\n")
        out, err = capsys.readouterr()
    finally:
        release.set()
        joined([t])
    assert not result.success and "already in progress" in out + err
    assert "Traceback" not in out + err
    assert entries == 1 and len(_debug_get_cache_entry_list(mine.__code__)) == 1  # not reset
    assert hooks.installed() == []


def test_a_refused_trace_changes_nothing():
    torch._dynamo.reset()
    compiled = torch.compile(mine, backend="eager")
    with capture.record() as rec:
        compiled(torch.ones(3))
        with pytest.raises(RuntimeError, match="a recording is active"):
            capture.trace(theirs, torch.ones(3))
        assert len(_debug_get_cache_entry_list(mine.__code__)) == 1
    assert [c.code_name for c in rec.compiles] == ["mine"]


# -- what importing and recording leave alone -------------------------------------------------

SNAPSHOT = r'''
import json, logging, signal, sys, warnings
import torch, torch._dynamo, torch._functorch.config, torch._inductor.config
import torch._logging._internal as torch_logging
from torch._dynamo import convert_frame
from torch._C._dynamo import eval_frame


def snapshot():
    """Every setting of torch a project could touch by accident, as plain text."""
    state = {}
    for name, config in [("dynamo", torch._dynamo.config), ("inductor", torch._inductor.config),
                         ("functorch", torch._functorch.config)]:
        for key, value in config.get_config_copy().items():
            state[f"{name}.{key}"] = repr(value)
    state.update({
        "grad": torch.is_grad_enabled(), "inference": torch.is_inference_mode_enabled(),
        "default_dtype": str(torch.get_default_dtype()),
        "default_device": str(torch.get_default_device()),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "threads": torch.get_num_threads(),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "anomaly": torch.is_anomaly_enabled(),
        "autocast_cpu": torch.is_autocast_enabled("cpu"),
        "eval_frame_callback": repr(eval_frame.get_eval_frame_callback()),
        "bytecode_hooks": len(convert_frame._bytecode_hooks),
        "log_state": repr(sorted(torch_logging.log_state.log_qname_to_level.items()))
                     + repr(sorted(torch_logging.log_state.artifact_names)),
        "trace": repr(sys.gettrace()), "profile": repr(sys.getprofile()),
        "sigint": repr(signal.getsignal(signal.SIGINT)),
        "warnings_filters": repr(warnings.filters),
    })
    for name in sorted(logging.root.manager.loggerDict):
        if name == "torch" or name.startswith("torch."):
            logger = logging.getLogger(name)
            state[f"logger {name}"] = (logger.level, logger.propagate, logger.disabled,
                                       [type(h).__name__ for h in logger.handlers])
    return json.loads(json.dumps(state, default=str))
'''

IMPORTS = SNAPSHOT + r'''
steps = {"torch": snapshot()}
import capture
steps["capture"] = snapshot()
import widgets
steps["widgets"] = snapshot()
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
steps["shell"] = snapshot()
shell.run_line_magic("load_ext", "widgets")
steps["load_ext"] = snapshot()
print(json.dumps(steps))
'''


FRESH_LOGGER = [0, True, False, []]  # level NOTSET, propagating, enabled, no handler


def changed(before, after):
    """Settings that differ; a logger torch created on a lazy import, untouched, is no change."""
    keys = set(before) | set(after)
    return {k: (before.get(k), after.get(k)) for k in sorted(keys)
            if before.get(k) != after.get(k)
            and not (k.startswith("logger ") and k not in before and after[k] == FRESH_LOGGER)}


@pytest.mark.timeout(180)
def test_importing_the_packages_and_loading_the_extension_change_no_torch_setting():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", IMPORTS], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=170)
    assert out.returncode == 0, out.stderr[-2000:]
    steps = json.loads(out.stdout.splitlines()[-1])
    assert len(steps["torch"]) > 600  # the snapshot does see the configs
    assert changed(steps["torch"], steps["capture"]) == {}
    assert changed(steps["capture"], steps["widgets"]) == {}
    # creating a shell is IPython's business; %load_ext widgets must add nothing to it
    assert changed(steps["shell"], steps["load_ext"]) == {}


namespace = {}
exec(SNAPSHOT, namespace)
snapshot = namespace["snapshot"]


def fullgraph_break(x):
    print("not under fullgraph")
    return x


def user_error(x):
    raise ValueError("the learner's bug")


def endings():
    """Ways a recording ends, each a function that runs one."""
    def normal():
        with capture.record():
            torch.compile(mine, backend="eager")(torch.ones(3))

    def user_exception():
        with pytest.raises(ValueError):
            with capture.record():
                torch.compile(user_error, backend="eager")(torch.ones(3))

    def dynamo_error():
        with pytest.raises(torch._dynamo.exc.Unsupported):
            with capture.record():
                torch.compile(fullgraph_break, backend="eager", fullgraph=True)(torch.ones(3))

    def keyboard_interrupt():
        with pytest.raises(KeyboardInterrupt):
            with capture.record():
                torch.compile(mine, backend="eager")(torch.ones(3))
                raise KeyboardInterrupt

    def step_cap():
        with capture.record(max_steps=2):
            torch.compile(theirs, backend="eager")(torch.ones(3))

    def recompile_limit():
        with torch._dynamo.config.patch(recompile_limit=1):
            with capture.record():
                f = torch.compile(lambda x, n: x * len(n), backend="eager")
                for n in range(3):
                    f(torch.ones(2), "n" * (n + 1))

    def trace():
        capture.trace(theirs, torch.ones(3), compile_options={"fullgraph": False})

    return {f.__name__: f for f in [normal, user_exception, dynamo_error, keyboard_interrupt,
                                    step_cap, recompile_limit, trace]}


@pytest.mark.parametrize("ending", list(endings()))
def test_record_leaves_every_torch_setting_as_it_found_it(ending):
    torch._dynamo.reset()
    before = snapshot()
    endings()[ending]()
    after = snapshot()
    assert changed(before, after) == {}
    assert hooks.installed() == [] and not capture.active()


def test_settings_the_learner_changes_inside_the_block_stay_changed():
    before = snapshot()
    old = (torch._dynamo.config.recompile_limit, torch._dynamo.config.verbose)
    try:
        with capture.record():
            torch._dynamo.config.recompile_limit = old[0] + 3
            torch._dynamo.config.verbose = not old[1]
            torch.set_num_threads(1)
            torch.compile(mine, backend="eager")(torch.ones(3))
        assert torch._dynamo.config.recompile_limit == old[0] + 3
        assert torch._dynamo.config.verbose is (not old[1])
        assert torch.get_num_threads() == 1
    finally:
        torch._dynamo.config.recompile_limit, torch._dynamo.config.verbose = old
        torch.set_num_threads(before["threads"])
    assert changed(before, snapshot()) == {}


def test_record_inside_a_config_patch_keeps_the_patch_until_it_ends():
    default = torch._dynamo.config.cache_size_limit
    with torch._dynamo.config.patch(cache_size_limit=default + 5, capture_scalar_outputs=True):
        with capture.record():
            torch.compile(mine, backend="eager")(torch.ones(3))
        assert torch._dynamo.config.cache_size_limit == default + 5
        assert torch._dynamo.config.capture_scalar_outputs is True
    assert torch._dynamo.config.cache_size_limit == default


def test_recording_does_not_change_dynamos_counters_or_logging():
    """The recorder reads Dynamo's counters and listens to its log; it resets and silences none."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    torch.compile(mine, backend="eager")(torch.ones(3))
    graphs = counters["stats"]["unique_graphs"]
    with capture.record() as rec:
        torch.compile(theirs, backend="eager")(torch.ones(3))
    assert counters["stats"]["unique_graphs"] == graphs + 2  # ours are added, none lost
    assert rec.counters["unique_graphs"] == 2
