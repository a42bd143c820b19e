"""Programs the engine tests compile, and an oracle that reads what Dynamo made of them.

Each scenario is a function `() -> list of (callable, args)` calls; `artifacts()`
compiles and runs them and returns what Dynamo produced, normalised so two runs
in different processes compare equal: the graphs handed to the backend, the
guard trees of every cache entry, the rewritten bytecode and the results.

A test imports it in a fresh interpreter that never imported `capture` and
prints a scenario's artifacts as JSON: the oracle for "as if never imported".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

# Process-wide counters and addresses that differ between runs (see RECIPES.md).
_VOLATILE = [
    (re.compile(r"__compiled_fn_\d+(_[0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12})?"),
     "__compiled_fn_N"),
    (re.compile(r"__resume_at_(\d+)_\d+"), r"__resume_at_\1_N"),
    (re.compile(r"__builtins_dict___\d+"), "__builtins_dict___N"),
    (re.compile(r"(___check_(?:type|obj)_id\([^()]+?), \d+\)"), r"\1, ID)"),
    (re.compile(r"0x[0-9a-fA-F]{6,16}"), "0xADDR"),
    (re.compile(r"Guard eval latency = [\d.]+ us"), "Guard eval latency = N us"),
    (re.compile(r"#[^\n]*"), "#"),  # comments carry file paths and line numbers
]


def normalise(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


def helper(x):
    return x.cos() * 2


def plain(x):
    return torch.sin(x) + 1


def inlined(x):
    return helper(x) + helper(x + 1)


def make_closure(k):
    def closure(x):
        return x * k + 1
    return closure


def list_loop(xs):
    total = xs[0]
    for t in xs[1:]:
        total = total + t.relu()
    return total


def branch(x):
    y = x.sin()
    if y.sum() > 0:
        return y + 1
    return y - 1


def printing(x):
    y = x * 2
    print("between graphs")
    return y.exp()


def item(x):
    s = x.sum().item()
    return x * s


class Stack(nn.Module):
    """A ModuleList loop, a shape test and a Python float attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.scale = 0.5

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        if x.shape[0] > 2:
            x = x * self.scale
        return x


def _seeded(fn: Callable[[], Any]) -> Callable[[], Any]:
    def wrapper():
        torch.manual_seed(0)
        return fn()
    wrapper.__name__ = fn.__name__
    return wrapper


@_seeded
def s_plain():
    return [(plain, (torch.randn(4),))]


@_seeded
def s_inlined():
    return [(inlined, (torch.randn(4),))]


@_seeded
def s_closures():
    return [(make_closure(2), (torch.randn(3),)), (make_closure(3), (torch.randn(3),))]


@_seeded
def s_list_loop():
    return [(list_loop, ([torch.randn(3) for _ in range(4)],))]


@_seeded
def s_module():
    m = Stack()
    return [(m, (torch.randn(4, 8),)), (m, (torch.randn(2, 8),))]


@_seeded
def s_branch():
    return [(branch, (torch.ones(3),)), (branch, (-torch.ones(3),))]


@_seeded
def s_print():
    return [(printing, (torch.randn(3),))]


@_seeded
def s_recompile():
    return [(plain, (torch.randn(4),)), (plain, (torch.randn(5),)), (plain, (torch.randn(6),))]


@_seeded
def s_mark_dynamic():
    x = torch.randn(5, 3)
    torch._dynamo.mark_dynamic(x, 0)
    return [(plain, (x,)), (plain, (torch.randn(7, 3),))]


@_seeded
def s_item():
    return [(item, (torch.randn(3),))]


@_seeded
def s_transformer():
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True).eval()
    return [(layer, (torch.randn(2, 5, 16),))]


SCENARIOS: dict[str, Callable[[], list[tuple[Any, tuple]]]] = {
    f.__name__.removeprefix("s_"): f
    for f in [s_plain, s_inlined, s_closures, s_list_loop, s_module, s_branch, s_print,
              s_recompile, s_mark_dynamic, s_item, s_transformer]
}


def artifacts(name: str, run: Callable[[Callable[[], Any]], Any] = lambda f: f()) -> dict[str, Any]:
    """Reset Dynamo, compile and call the scenario's calls (through `run`), read the results."""
    from dynamo_oracle import artifacts_of  # it imports this module: imported when called

    return artifacts_of(SCENARIOS[name], run)
