"""predict_fix: an answer written as code is compiled with fullgraph=True and compared.

Real Dynamo, no mocks: each answer below is compiled, so a break, a wrong value or a
recompile is what Dynamo itself reports.
"""

import torch

from widgets.course.exercises import predict_fix


def broken(x):
    if x.sum().item() > 0:
        return x * 2
    return x - 1


def fixed(x):
    return torch.where(x.sum() > 0, x * 2, x - 1)


def off_by_one(x):
    return torch.where(x.sum() > 0, x * 2, x + 1)


def still_breaking(x):
    y = x * 2
    print("halfway")
    return torch.where(x.sum() > 0, y, x - 1)


CALLS = [(torch.ones(3),), (-torch.ones(3),)]


def exercise(**kw):
    return predict_fix("q", "Rewrite broken as one graph", broken, calls=CALLS, **kw)


def test_a_rewrite_that_compiles_to_one_graph_and_agrees_is_correct():
    result = exercise(explanation="torch.where keeps the choice in the graph.").grade(fixed)
    assert result.ok and "torch.where keeps" in result.message


def test_a_rewrite_that_still_breaks_names_dynamos_reason_and_the_learners_line():
    result = exercise().grade(still_breaking)
    assert not result.ok
    assert "Failed to trace builtin operator" in result.message
    assert "line 3 of your function" in result.message and 'print("halfway")' in result.message


def test_a_rewrite_that_returns_something_else_says_which_call():
    result = exercise().grade(off_by_one)
    assert not result.ok and "call 2 returns" in result.message


def test_a_rewrite_that_recompiles_is_wrong_and_says_so():
    calls = [(torch.ones(3),), (torch.ones(5),), (torch.ones(7),)]

    def per_size(x):
        return torch.where(x.sum() > 0, x * 2, x - 1) if x.shape[0] < 100 else x

    q = predict_fix("q", "one graph", lambda x: torch.where(x.sum() > 0, x * 2, x - 1),
                    calls=calls)
    with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        result = q.grade(per_size)
    assert not result.ok and "compiled 3 graphs for the 3 calls" in result.message


def test_the_original_itself_and_odd_answers_are_told_apart():
    q = exercise(prediction="q_answer")
    assert "original function" in q.grade(broken).message
    assert "answer with a function" in q.grade(3).message
    assert q.grade(...).ok is None and "q_answer" in q.grade(...).message


def test_an_answer_that_raises_gets_the_exception_not_a_crash():
    def bad(x):
        return x @ torch.ones(4)

    result = exercise().grade(bad)
    assert not result.ok and "call 1 raised" in result.message and "RuntimeError" in result.message


def test_the_checker_leaves_dynamo_reset():
    exercise().grade(fixed)
    assert torch._dynamo.eval_frame._debug_get_cache_entry_list(fixed.__code__) == []


def test_a_branch_on_a_captured_item_is_reported_as_not_one_graph():
    def branchy(x):
        n = x.sum().item()  # captured under fullgraph=True; the branch on it is not
        return x * 2 if n > 0 else x - 1

    result = exercise().grade(branchy)
    assert not result.ok and "cannot capture it in one graph" in result.message


def test_a_wrong_value_shows_both_values_when_they_are_small():
    result = exercise().grade(off_by_one)
    assert "[0.0, 0.0, 0.0] where the original returns [-2.0, -2.0, -2.0]" in result.message
