"""What a recording says about the program beside its steps: Dynamo's break messages whole,
the lines of a closure's frame, the two counts of graph breaks, and the compiles it cannot
see (DataLoader worker processes)."""

from __future__ import annotations

import re

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

import capture
from capture import EventKind, hooks
from scenarios import make_closure, printing


def test_a_graph_break_keeps_dynamos_whole_message():
    rec = capture.trace(printing, torch.randn(3))
    gb = rec.compiles[0].graph_break
    # the message exactly as Dynamo logged it, and its parts as Dynamo was given them
    assert gb.message.startswith("Encountered graph break when attempting to trace CALL")
    assert gb.reason == "Failed to trace builtin operator" and gb.reason in gb.message
    assert gb.explanation and f"  Explanation: {gb.explanation}" in gb.message
    assert len(gb.hints) >= 2 and all(f"  Hint: {h}" in gb.message for h in gb.hints)
    assert any("reorderable_logging_functions" in h for h in gb.hints)
    assert re.fullmatch(r"https://\S+/compile-graph-break-site/gb/gb\d{4}\.html", gb.link)
    assert gb.message.rstrip().endswith(gb.link)
    assert "Developer debug context" in gb.message
    text = str(rec)
    assert gb.link in text and all(h in text for h in gb.hints)
    again = capture.Recording.from_json(rec.to_json()).compiles[0].graph_break
    assert again == gb


def test_a_multi_line_explanation_is_kept_whole():
    from torch._dynamo.exc import format_graph_break_message

    from capture import internals

    class Broke(Exception):
        def __init__(self, msg: str) -> None:
            self.msg = msg

    explanation = "first line\nsecond line\n  indented third"
    hints = ["one hint", "a hint\nover two lines"]
    for given in ([], hints):
        message = format_graph_break_message("Some break", "context\nmore", explanation, given)
        parts = internals.break_parts(Broke(message))
        assert parts.explanation == explanation and parts.hints == tuple(given)


def test_a_closures_frame_has_no_line_minus_one():
    """A closure starts with COPY_FREE_VARS before any line: that step has no line (as in
    `dis`), never Dynamo's starting value -1."""
    closure = make_closure(2)
    rec = capture.trace(closure, torch.randn(3))
    c = rec.compiles[0]
    assert c.steps[0].opname == "COPY_FREE_VARS"
    first = closure.__code__.co_firstlineno
    assert all(s.lineno is None or s.lineno >= first for s in c.steps)
    assert c.steps[0].lineno is None
    assert "L-1" not in str(rec)


def test_the_header_says_what_each_count_of_graph_breaks_counts():
    def f(x):
        y = x.sin()
        if y.sum() > 0:  # a branch on a tensor's value: a break Dynamo's counter skips
            y = y + 1
        print("and a call it cannot trace")
        return y.cos()

    rec = capture.trace(f, torch.ones(3))
    events = [e for e in rec.events if e.kind == EventKind.GRAPH_BREAK]
    assert len(events) == rec.graph_break_count == 2
    assert rec.counters["graph_breaks"] == 1
    text = str(rec)
    assert "graph breaks: 2 graph_break event(s)" in text
    assert "graph_breaks counter says 1" in text and "branch on a tensor's value" in text


def _double(x):
    return x * 2


@pytest.mark.parametrize("workers", [0, 2])
def test_compiles_in_dataloader_workers_are_said_to_be_unrecorded(workers):
    original = vars(_MultiProcessingDataLoaderIter)["__init__"]
    data = TensorDataset(torch.arange(8.0).reshape(8, 1))
    torch._dynamo.reset()
    f = torch.compile(_double, backend="eager")
    with capture.record() as rec:
        for _ in range(2):  # two epochs: said once
            for (batch,) in DataLoader(data, batch_size=4, num_workers=workers):
                f(batch)
    notes = [e for e in rec.events if e.kind == EventKind.NOTE]
    if workers:
        assert len(notes) == 1 and f"started {workers} worker process(es)" in notes[0].message
        assert "not recorded" in notes[0].message
    else:
        assert notes == []
    assert rec.compiles  # the loop's own compile is recorded either way
    assert vars(_MultiProcessingDataLoaderIter)["__init__"] is original
    assert hooks.installed() == []

