"""Nested graph breaks (`torch._dynamo.config.nested_graph_breaks`): a break two calls deep,
recorded with the option off (each caller compiled as a frame of its own, with its own
resume function) and on (one compile writes a resume function for every frame of the chain,
and the callers are not compiled as frames). The chain the recording derives is checked
against the resume functions Dynamo installed in this module's globals.
"""

from __future__ import annotations

import inspect

import pytest
import torch

import capture
from capture.explain import explanation, explanation_text


def inner(x):
    y = x + 1
    print("from inner")  # the break
    return y * 2


def middle(x):
    z = inner(x) - 3  # middle's call
    return z.relu()


def outer(x):
    a = x.sin()
    b = middle(a)  # outer's call
    return b.cos()


def _line(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


def _record(nested: bool):
    torch._dynamo.reset()
    # Dynamo removes the globals it installed itself when it resets: only the new ones count
    before = {n for n in globals() if n.startswith("__resume_at_")}
    with torch._dynamo.config.patch(nested_graph_breaks=nested), capture.record() as rec:
        out = torch.compile(outer, backend="eager")(torch.ones(3))
    assert torch.allclose(out, outer(torch.ones(3)))
    installed = {name: fn.__code__.co_name for name, fn in globals().items()
                 if name.startswith("__resume_at_") and name not in before}
    return rec, installed


@pytest.fixture(scope="module")
def off():
    return _record(False)


@pytest.fixture(scope="module")
def on():
    return _record(True)


def _kept(rec):
    return [c for c in rec.compiles if not c.restarted]


def test_off_each_caller_is_a_frame_of_its_own(off):
    rec, installed = off
    names = [c.code_name for c in _kept(rec)]
    assert names == ["outer", "middle", "inner", "torch_dynamo_resume_in_inner_at_%d" % _line(inner, "the break"),
                     "torch_dynamo_resume_in_middle_at_%d" % _line(middle, "middle's call"),
                     "torch_dynamo_resume_in_outer_at_%d" % _line(outer, "outer's call")]
    assert all(not c.resume_chain() for c in rec.compiles)
    assert "nested graph break" not in explanation_text(rec)
    assert len(installed) == 3


def test_on_one_compile_resumes_the_whole_chain(on):
    rec, installed = on
    kept = _kept(rec)
    assert [c.code_name for c in kept] == ["outer", "torch_dynamo_resume_in_outer_at_%d" % _line(outer, "outer's call")]
    first = kept[0]
    chain = first.resume_chain()
    expected = [("inner", _line(inner, "the break")), ("middle", _line(middle, "middle's call")),
                ("outer", _line(outer, "outer's call"))]
    assert [(link["function"], link["line"]) for link in chain] == expected
    # what Dynamo installed: one global per resume function of the chain, by those names
    assert {link["resume_function"]: link["resume_code"] for link in chain} == installed
    for link, rf in zip(chain, first.resume_functions):
        assert link["resumes_at"] == rf.offset and rf.offset is not None
    # inner's resume function is handed inner's live value y and the value on its stack
    assert "y" in chain[0]["carries"]


def test_on_the_chain_is_said_in_the_text_view_and_explain(on):
    rec, _ = on
    first = _kept(rec)[0]
    text = str(first)
    assert "nested graph break: one resume function per frame of the chain" in text
    assert f"inner resumes after line {_line(inner, 'the break')}" in text
    data = explanation(rec)
    [b] = data["graph_breaks"]
    assert b["function"] == "inner" and b["lineno"] == _line(inner, "the break")
    assert [x["function"] for x in b["resume_chain"]] == ["inner", "middle", "outer"]
    assert "resumed as one chain, innermost first: inner line" in explanation_text(rec)
