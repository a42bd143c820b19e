"""The supported torch releases, 2.13 and 2.14: what differs between them is read safely on both.

torch 2.14 gives `LOAD_METHOD` on a dict-valued tracker a `CallMethodVariable`
(`ModuleList.__iter__` meets one at `iter(self._modules.values())`). Its
`python_type()` calls `as_python_constant()` on the dict, which realizes every
lazy value in it: guards on values Dynamo never looks at, tensors lifted into
the graph in another order. The oracle for each program below is Dynamo run
without recording. These tests run on both releases (`./lab test` on 2.13.0,
`./lab test-torch2.14` on 2.14.1); on 2.14 they reach a `CallMethodVariable`.

`%load_ext widgets` refuses any other torch in one line; the check is tested on
version strings, and through a real IPython whose torch metadata says 2.12.1.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import widgets
from dynamo_oracle import artifacts_of, realizations, recorded_artifacts

ROOT = Path(__file__).resolve().parents[1]


class Stack(torch.nn.Module):
    """Three layers in a ModuleList, iterated in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


torch.manual_seed(0)
STACK = Stack()
TABLE = {"a": torch.ones(4), "b": torch.zeros(4), "c": torch.full((4,), 2.0)}


def count_keys(x):
    """Loops over a global dict's keys: its tensor values are never looked at."""
    n = 0
    for _ in TABLE.keys():
        n += 1
    return x * n


def add_first(x, d):
    """Uses one value of a dict argument, found by a loop over its keys."""
    for k in d.keys():
        if k == "a":
            return x + d[k]
    return x


PROGRAMS = {
    "module_list": lambda: [(STACK, (torch.ones(2, 4),))],
    "dict_keys": lambda: [(count_keys, (torch.ones(4),))],
    "dict_argument": lambda: [(add_first, (torch.ones(4), {"a": torch.ones(4), "b": torch.zeros(4)}))],
}


def _vars(recordings) -> list:
    return [v for rec in recordings for c in rec.compiles for v in c.vars]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_recording_changes_no_graph_guard_or_realization_on_this_torch(name):
    calls = PROGRAMS[name]
    plain_log = realizations(lambda: artifacts_of(calls))
    plain = artifacts_of(calls)
    recorded_log = realizations(lambda: recorded_artifacts(calls))
    recorded, recordings = recorded_artifacts(calls)

    assert recorded["graphs"] == plain["graphs"]
    assert recorded["guards"] == plain["guards"]
    assert recorded == plain
    assert plain_log and recorded_log == plain_log
    # Where this torch has the trap (2.14), the recording reached it, so the comparison above
    # means something; and it shows the tracker without asking its python_type().
    from torch._dynamo import variables

    if hasattr(variables, "CallMethodVariable"):
        shown = [v for v in _vars(recordings) if v.kind == "CallMethodVariable"]
        assert shown and all(v.python_type is None for v in shown)


# -- %load_ext widgets on a torch outside the range -------------------------------------------

@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.13.1", "2.14.0", "2.14.1",
                                     "2.14.1+cu130", "2.14.0rc1"])
def test_the_supported_releases_load(version):
    assert widgets.torch_version_problem(version) is None


@pytest.mark.parametrize("version", ["2.12.1", "2.12.0+cpu", "2.15.0", "2.15.0.dev20261101+cpu",
                                     "3.13.0", "1.13.1", "2", "garbage", "", None])
def test_any_other_torch_gets_one_line_naming_both(version):
    problem = widgets.torch_version_problem(version)
    assert problem is not None and "\n" not in problem
    assert "2.13" in problem and "2.14" in problem
    assert (f"torch {version}" if version else "no torch") in problem


def test_the_torch_in_this_kernel_is_supported():
    assert widgets.torch_version_problem(torch.__version__) is None
    assert widgets.torch_version_problem(importlib.metadata.version("torch")) is None


def _load_ext_in_ipython(pythonpath: str | None) -> subprocess.CompletedProcess:
    """`%load_ext widgets` in a real IPython, then whether the cell magic exists."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-m", "IPython", "--quick", "--colors=NoColor",
         "--InteractiveShellApp.exec_lines=['%load_ext widgets']",
         "-c", "print('capture_trace' in get_ipython().magics_manager.magics['cell'])"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_load_ext_on_this_torch_registers_the_magic_and_says_nothing():
    run = _load_ext_in_ipython(None)
    assert run.stdout.strip().splitlines()[-1] == "True", run
    assert "UsageError" not in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_load_ext_on_torch_2_12_says_so_in_one_line_and_registers_nothing(tmp_path):
    # Metadata first on the path is what importlib.metadata (and so the check) reads.
    info = tmp_path / "torch-2.12.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.12.1\n")
    run = _load_ext_in_ipython(str(tmp_path))
    assert run.stdout.split() == ["False"], run
    said = [line for line in run.stderr.splitlines() if line.strip()]
    assert said == [f"UsageError: {widgets.torch_version_problem('2.12.1')}"], run.stderr
