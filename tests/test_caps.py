"""The caps that bound a recording: steps per compile attempt, steps in all, characters of
kept text. Each ends what is stored with a marked event; none cuts a text or moves a break."""

from __future__ import annotations

import re

import pytest
import torch

import capture
from capture import EventKind
from scenarios import SCENARIOS, printing


def _record(name: str, **caps) -> capture.Recording:
    torch._dynamo.reset()
    with capture.record(**caps) as rec:
        for fn, args in SCENARIOS[name]():
            torch.compile(fn, backend="eager")(*args)
    return rec


def test_each_compile_attempt_has_its_own_budget():
    """A restarted attempt cannot spend the steps of the attempt that follows it."""
    whole = _record("print")
    capped = _record("print", max_compile_steps=5)
    assert [c.compile_id for c in capped.compiles] == [c.compile_id for c in whole.compiles]
    assert [c.compile_id for c in whole.compiles] == ["0/0", "0/0_1", "1/0"]
    for c, full in zip(capped.compiles, whole.compiles):
        assert len(c.steps) == min(5, len(full.steps))
        assert c.truncated == (len(full.steps) > 5)
        assert c.steps == full.steps[:5]  # the same steps, only fewer
    caps = [e for e in capped.events if e.kind == EventKind.STEP_CAP]
    assert caps and all("max_compile_steps=5" in e.message for e in caps)
    assert capped.truncated and capped.max_compile_steps == 5


def test_the_total_budget_ends_every_later_compile():
    whole = _record("print")
    capped = _record("print", max_steps=7)
    assert capped.step_count == 7 < whole.step_count
    assert capped.truncated and capped.max_steps == 7
    later = [c for c in capped.compiles if not c.steps]
    assert later and all(c.truncated for c in later)
    assert any("max_steps=7" in e.message for e in capped.events if e.kind == EventKind.STEP_CAP)


def _long_then_break(x):
    a = x + 1
    b = a * 2
    c = b - 3
    d = c / 4
    print("break")
    return d.sin()


def test_a_break_past_the_cap_stays_where_it_happened():
    """The cap fell before the print: the break keeps its line and points at no step
    (not at a step index past the last stored one, which a view would clamp to a step
    a line early)."""
    torch._dynamo.reset()
    with capture.record(max_compile_steps=4) as rec:
        torch.compile(_long_then_break, backend="eager")(torch.ones(3))
    print_line = _long_then_break.__code__.co_firstlineno + 5
    broken = [c for c in rec.compiles if c.graph_break is not None]
    assert [c.compile_id for c in broken] == ["0/0", "0/0_1"]
    for c in broken:
        assert c.truncated and len(c.steps) == 4
        assert c.graph_break.lineno == print_line and c.graph_break.line == 'print("break")'
        assert c.graph_break.step is None
        assert "its step was not stored" in str(c)


def test_a_break_before_the_cap_points_at_its_step():
    torch._dynamo.reset()
    with capture.record(max_compile_steps=1000) as rec:
        torch.compile(_long_then_break, backend="eager")(torch.ones(3))
    c = rec.compiles[0]
    assert not c.truncated
    step = c.steps[c.graph_break.step]
    assert step.lineno == c.graph_break.lineno and step.opname.startswith("CALL")


def test_the_size_cap_ends_the_recording_and_cuts_no_text():
    whole = _record("transformer")
    assert len(whole.compiles[0].graph_code) > 2000
    capped = _record("transformer", max_chars=2000)
    c = capped.compiles[0]
    assert capped.truncated and capped.max_chars == 2000
    events = [e for e in capped.events if e.kind == EventKind.SIZE_CAP]
    assert len(events) == 1 and "max_chars=2,000" in events[0].message
    # the graph code did not fit: it is absent, not cut; nothing was stored after it
    assert c.graph_code is None and c.guard_tree is None and not c.guards
    assert capped.step_count <= whole.step_count
    where = [(s.index, s.offset, s.opname, s.lineno) for s in whole.compiles[0].steps]
    assert [(s.index, s.offset, s.opname, s.lineno) for s in c.steps] == where[:len(c.steps)]
    for s in [e.message for e in capped.events] + [c.restart_reason or ""]:
        assert not re.search(r"more (characters|lines)", s)


@pytest.mark.parametrize("name", ["max_steps", "max_compile_steps", "max_chars"])
def test_caps_must_be_positive_whole_numbers(name):
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match=name):
            with capture.record(**{name: bad}):
                pass
    assert not capture.active()


@pytest.mark.slow
def test_a_12_layer_gpt2_records_whole_at_the_default_caps():
    """Hugging Face's GPT-2 with 12 layers, built from a config with random weights, a
    training forward with labels: about 160 000 steps over ten attempts (transformers 5.24),
    three of them restarted after about 40 000 steps each. The old single cap of 50 000
    spent itself on the first restarted attempt; every attempt now has its own."""
    pytest.importorskip("transformers")
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    config = GPT2Config(n_layer=12, n_embd=64, n_head=4, vocab_size=1000, n_positions=64,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).train()
    ids = torch.randint(0, 1000, (2, 16))
    torch._dynamo.reset()
    with capture.record() as rec:
        torch.compile(model, backend="eager")(ids, labels=ids)
    assert not rec.truncated and not any(c.truncated for c in rec.compiles)
    assert not [e for e in rec.events if e.kind in (EventKind.STEP_CAP, EventKind.SIZE_CAP)]
    assert rec.step_count > 50_000
    assert max(len(c.steps) for c in rec.compiles) <= capture.DEFAULT_MAX_COMPILE_STEPS
    restarted = [c for c in rec.compiles if c.outcome == "restarted"]
    assert restarted and sum(len(c.steps) for c in restarted) > 50_000
    graphs = [c for c in rec.compiles if c.graph_code]
    assert graphs and all(c.steps for c in graphs)
    assert max(len(c.steps) for c in graphs) > 30_000  # the main graph's attempt, whole
