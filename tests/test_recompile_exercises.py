"""predict_failed_guard: the learner names the source whose guard failed on a recompile.

Real Dynamo, real recordings: a dict entry, a global and a module attribute changed
between two calls; the verdict never names the failing guard, the evidence does.
"""

from __future__ import annotations

import pytest
import torch

import capture
from widgets.course.exercises import predict_failed_guard
from widgets.course.recompiles import loose_source

SCALE = 2.0


def apply(x, cfg):
    return x * cfg["scale"] + cfg["shift"] * SCALE


class Scale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = 3

    def forward(self, x):
        return x * self.k


@pytest.fixture(scope="module")
def applied():
    torch._dynamo.reset()
    compiled = torch.compile(apply, backend="eager")
    with capture.record() as rec:
        compiled(torch.ones(3), {"scale": 2.0, "shift": 1.0, "name": "a"})
        compiled(torch.ones(3), {"scale": 2.0, "shift": 0.5, "name": "b"})
    return rec


def test_the_failing_source_is_right_in_its_loose_spellings(applied):
    q = predict_failed_guard(applied, "0/1", name="q1")
    for answer in ("L['cfg']['shift']", 'cfg["shift"]', " cfg['shift'] ",
                   ("EQUALS_MATCH", "cfg['shift']"), "EQUALS_MATCH: L['cfg']['shift']"):
        verdict = q.grade(answer)
        assert verdict.ok, (answer, verdict.message)
        assert "expected 1.0, saw 0.5" in verdict.message


def test_a_guarded_source_that_held_is_told_it_held_without_naming_the_answer(applied):
    verdict = predict_failed_guard(applied, "0/1", name="q1").grade("cfg['scale']")
    assert verdict.ok is False
    assert "still passed" in verdict.message and "shift" not in verdict.message


def test_a_source_the_trace_never_read_is_told_so(applied):
    verdict = predict_failed_guard(applied, "0/1", name="q1").grade("cfg['name']")
    assert verdict.ok is False
    assert "no guard of [0/0] reads" in verdict.message and "shift" not in verdict.message


def test_the_right_source_with_the_wrong_kind_is_not_right(applied):
    verdict = predict_failed_guard(applied, "0/1", name="q1").grade(
        ("TENSOR_MATCH", "cfg['shift']"))
    assert verdict.ok is False and "not one of kind TENSOR_MATCH" in verdict.message


def test_odd_answers_say_the_form_expected(applied):
    q = predict_failed_guard(applied, "0/1", name="q1")
    assert q.grade(...).ok is None
    for odd in (3, None, ["a", "b", "c"], ""):
        verdict = q.grade(odd)
        assert verdict.ok is False and "source" in verdict.message


def test_the_solution_lists_every_failed_guard(applied):
    q = predict_failed_guard(applied, "0/1", name="q1")
    assert "L['cfg']['shift']" in q._solution and "expected 1.0, saw 0.5" in q._solution


def test_a_global_and_a_module_attribute():
    global SCALE
    torch._dynamo.reset()
    compiled = torch.compile(apply, backend="eager")
    cfg = {"scale": 2.0, "shift": 1.0}
    try:
        with capture.record() as rec:
            compiled(torch.ones(3), cfg)
            SCALE = 3.0
            compiled(torch.ones(3), cfg)
    finally:
        SCALE = 2.0
    assert predict_failed_guard(rec, "0/1").grade("G['SCALE']").ok

    torch._dynamo.reset()
    model = Scale()
    compiled_model = torch.compile(model, backend="eager")
    with capture.record() as rec:
        compiled_model(torch.ones(2))
        model.k = 4
        compiled_model(torch.ones(2))
    q = predict_failed_guard(rec, "0/1")
    assert q.grade("self.k").ok and q.grade("L['self'].k").ok
    assert not q.grade("L['x']").ok


def test_a_recording_read_back_from_json_gives_the_same_verdicts(applied):
    again = capture.Recording.from_json(applied.to_json())
    for answer in ("cfg['shift']", "cfg['scale']", "cfg['name']"):
        assert (predict_failed_guard(again, "0/1").grade(answer).message
                == predict_failed_guard(applied, "0/1").grade(answer).message)


@pytest.mark.parametrize("text, key", [
    ("x", "L['x']"), ("L['x']", "L['x']"), ("self.k", "L['self'].k"),
    ("G['n']", "G['n']"), ('cfg["a"]["b"]', "L['cfg']['a']['b']"),
])
def test_loose_source(text, key):
    assert loose_source(text) == key
