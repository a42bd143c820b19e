"""`explain` on Hugging Face programs: a 2-layer GPT-2 built from a config (random weights,
nothing downloaded), compiled with the real Dynamo (backend "eager"), recorded in-process.

- A causal-LM loss whose config names no `loss_type`: transformers' `loss_function`
  calls `logger.warning_once` inside the compiled region (a graph break in library code,
  https://github.com/huggingface/transformers/issues/36331 and the `loss_type=None`
  warning users meet under torch.compile). A right answer says: a graph break (GB0291) in
  `loss_function` in transformers' modeling_utils.py, reached from the user's own line
  `return model(input_ids, labels=input_ids).loss` in this file; the fix is
  `torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)`, and
  with it applied the loss compiles with no graph break.
- Two sequence lengths: the second recompiles on `input_ids`'s size (automatic dynamic
  then makes dimension 1 a symbol). A right answer says: one recompile, `input_ids`
  size [2, 8] then [2, 12], the guard installed in transformers' GPT-2 code and the
  user's line `return model(input_ids).logits`; the fix `mark_dynamic(input_ids, 1)`
  before the first call, and with it no recompile.
"""

from __future__ import annotations

import inspect
import logging
from pathlib import Path

import pytest
import torch

import capture
from capture.explain import explanation, explanation_text

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.timeout(300)

HERE = Path(__file__).resolve()


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=100, n_positions=32)
    assert getattr(config, "loss_type", None) is None   # what makes transformers warn inside loss_function
    return transformers.GPT2LMHeadModel(config).eval()


def lm_loss(model, input_ids):
    return model(input_ids, labels=input_ids).loss


def lm_logits(model, input_ids):
    return model(input_ids).logits


def recorded(fn, *calls):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    try:
        with torch.no_grad(), capture.record() as rec:
            for args in calls:
                compiled(*args)
    finally:
        torch._dynamo.reset()
    return rec


def own_line(fn, text: str) -> int:
    """The line of this file in `fn` that holds `text`."""
    lines, first = inspect.getsourcelines(fn)
    [k] = [i for i, line in enumerate(lines) if text in line]
    return first + k


def test_transformers_warning_once_in_the_loss_is_a_break_fixed_by_ignore_logging_functions(model):
    ids = torch.randint(0, 100, (2, 8))
    rec = recorded(lm_loss, (model, ids))
    data, text = explanation(rec), explanation_text(rec)
    [b] = [b for b in data["graph_breaks"] if b["gb_id"] == "GB0291"]
    assert b["function"] == "loss_function" and b["file"].endswith("transformers/modeling_utils.py")
    assert "warning_once" in b["line"]
    # the user's line: this file's call of the model, not transformers' code
    assert b["user"]["file"] == str(HERE) and b["user"]["lineno"] == own_line(lm_loss, "labels=input_ids")
    assert b["user"]["line"] == "return model(input_ids, labels=input_ids).loss"
    fix = "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)"
    assert b["advice"] == [f"skip the logger call while compiling: {fix}"]
    assert f"your line: test_problems_hf.py:{b['user']['lineno']}:" in text
    assert "no graph breaks" not in text and "Avoid calling" not in text
    [frame] = [f for f in data["frames"] if f["function"] == "lm_loss"]
    assert frame["outcome"] == "graph_break" and frame["user"]
    # the fix, as said, removes the break: the loss compiles whole
    torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)
    try:
        fixed = explanation(recorded(lm_loss, (model, ids)))
    finally:
        torch._dynamo.config.ignore_logging_functions.discard(logging.Logger.warning_once)
    assert fixed["graph_breaks"] == [] and fixed["summary"]["with_graph_breaks"] == 0
    [frame] = fixed["frames"]
    assert frame["function"] == "lm_loss" and frame["outcome"] == "compiled"


def test_a_second_sequence_length_is_one_recompile_fixed_by_mark_dynamic(model):
    short, long = torch.randint(0, 100, (2, 8)), torch.randint(0, 100, (2, 12))
    rec = recorded(lm_logits, (model, short), (model, long))
    data, text = explanation(rec), explanation_text(rec)
    assert data["summary"]["recompiles"] == 1 and not data["graph_breaks"]
    [cause] = [c for c in data["causes"] if c["name"] == "input_ids"]
    assert cause["values"] == ["[2, 8]", "[2, 12]"] and cause["dims"] == [1]
    assert cause["installed"]["file"].endswith("transformers/models/gpt2/modeling_gpt2.py")
    assert cause["user"]["file"] == str(HERE)
    assert cause["user"]["lineno"] == own_line(lm_logits, "model(input_ids).logits")
    assert cause["made_dynamic"] is not None   # automatic dynamic: no third compile follows
    [fix] = cause["advice"]
    assert "torch._dynamo.mark_dynamic(input_ids, 1) before the first call" in fix
    assert "duck" not in text and "dynamic=True" not in text
    # the fix, as said: mark dimension 1 of the first call's input_ids dynamic
    marked = short.clone()
    torch._dynamo.mark_dynamic(marked, 1)
    fixed = explanation(recorded(lm_logits, (model, marked), (model, long)))
    assert fixed["summary"]["recompiles"] == 0 and fixed["causes"] == []
    assert fixed["summary"]["compiles"] == 1
