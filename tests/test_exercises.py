"""The lesson exercises: right answers pass in any reasonable spelling, wrong ones get
specific feedback, odd input never raises, and the predict-then-reveal helpers agree
with a real recording."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from widgets.course.exercises import (
    Exercise, Result, predict_break_line, predict_choice, predict_guard, predict_number,
    predict_set, predict_stack, review_predictions,
)

from widgets.course.measured import forget_tries

torch = pytest.importorskip("torch")
capture = pytest.importorskip("capture")


@pytest.fixture(autouse=True)
def fresh_tries():
    """Each test starts with no wrong answers counted (the count lives for a kernel)."""
    forget_tries()
    yield
    forget_tries()


def branchy(x, n):
    y = x.cos()
    if n > 1:
        y = y * n
    print("between")
    return y + 1


def straight(x):
    return x.sin() + 1


@pytest.fixture(scope="module")
def broken():
    """A real recording with a graph break at the print (line 4 of `branchy`)."""
    return capture.trace(branchy, torch.ones(3), 2)


@pytest.fixture(scope="module")
def whole():
    return capture.trace(straight, torch.ones(3))


def branchy_line(text: str) -> int:
    lines, first = __import__("inspect").getsourcelines(branchy)
    return first + next(i for i, line in enumerate(lines) if text in line)


# -- Exercise --------------------------------------------------------------------

def doubling() -> Exercise:
    return Exercise("q1", "What is 2 * 21?", check=lambda a: (a == 42, "2 * 21 is not that"),
                    hint="Multiply.", solution="42", expected_form="an int")


def test_right_answer_prints_correct(capsys):
    doubling().check(42)
    assert capsys.readouterr().out.startswith("q1: Correct!")


def test_wrong_answer_gets_feedback_and_points_to_the_hint(capsys):
    doubling().check(41)
    out = capsys.readouterr().out
    assert "Not quite" in out and "2 * 21 is not that" in out
    assert "q1.hint()" in out and "q1.solution()" in out


def test_placeholder_asks_for_an_answer_without_judging():
    result = doubling().grade(...)
    assert result.ok is None and not result
    assert "replace ..." in result.message and "an int" in result.message


def test_a_checker_that_raises_becomes_a_message_with_the_expected_form():
    ex = Exercise("q", "len?", check=lambda a: (len(a) == 3, ""), expected_form="a list")
    result = ex.grade(None)
    assert result.ok is False
    assert "TypeError" in result.message and "a list" in result.message


def test_a_checker_may_return_a_bare_bool_or_a_result():
    assert Exercise("q", "?", check=lambda a: a is True).grade(True).ok
    assert not Exercise("q", "?", check=lambda a: Result(False, "nope")).grade(1).ok


def test_hint_and_solution_print(capsys):
    ex = doubling()
    ex.hint()
    ex.solution()
    out = capsys.readouterr().out
    assert "Hint (q1): Multiply." in out and "Solution (q1): 42" in out


def test_html_views_escape_user_text():
    ex = Exercise("<q>", "is <script>alert(1)</script> safe?",
                  check=lambda a: (False, f"not {a}"))
    assert "<script>" not in ex._repr_html_()
    assert "&lt;script&gt;" in ex._repr_html_()
    verdict = ex.grade("<b>bold</b>")
    assert "not <b>bold</b>" in verdict.message           # the answer is in the feedback ...
    assert "not &lt;b&gt;bold&lt;/b&gt;" in verdict.html()  # ... and escaped in its HTML
    assert "<b>bold" not in verdict.html()


def test_name_that_is_not_an_identifier_still_points_to_the_hint():
    ex = Exercise("Question 1", "?", check=lambda a: False)
    assert "Call .hint()" in ex.grade(0).message


LESSON_IMPORTS = [
    "from widgets.course.exercises import predict_stack, review_predictions",
    "import widgets.course.exercises",
    "import widgets.cli",
]


@pytest.mark.parametrize("statement", LESSON_IMPORTS)
def test_importing_the_exercises_as_a_lesson_does_loads_no_widget_library_nor_torch(statement):
    code = (f"import sys\n{statement}\n"
            "print(sorted(m for m in ('ipywidgets', 'anywidget', 'IPython', 'torch') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def test_every_lesson_imports_the_exercises_from_the_course():
    import json

    folder = Path(__file__).resolve().parent.parent / "notebooks"
    lines = []
    for path in sorted(folder.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            lines += [(path.name, line) for line in source.splitlines()
                      if "import" in line and "exercises" in line]
    assert lines, "no lesson imports the exercises"
    stale = [(name, line) for name, line in lines if "widgets.course.exercises" not in line]
    assert stale == []
    # The statement the lessons run holds no widget library either (test above).
    assert any(line.startswith("from widgets.course.exercises import") for _, line in lines)


# -- predict_stack ------------------------------------------------------------------

def first_step(recording, opname):
    return next(s for s in recording.compiles[0].steps if s.opname == opname)


def METHOD(step):
    """The step that leaves `x.cos` and its NULL on the stack (LOAD_METHOD on 3.11, LOAD_ATTR
    with the method bit on 3.13, LOAD_ATTR; PUSH_NULL; SWAP on 3.12 with torch 2.14)."""
    return [v.kind for v in step.stack] == METHOD_STACK


# Bottom first, as recorded: the NULL goes under the bound method until 3.13, over it on 3.13.
METHOD_STACK = (["GetAttrVariable", "NullVariable"] if sys.version_info >= (3, 13)
                else ["NullVariable", "GetAttrVariable"])
SPELLINGS = [
    ["NullVariable", "GetAttrVariable"],
    ("nullvariable", " getattrvariable "),
    ["Null", "GetAttr"],
    "NullVariable, GetAttrVariable",
    "[NULL, GetAttr Variable]",
]
if sys.version_info >= (3, 13):
    SPELLINGS = [["GetAttrVariable", "NullVariable"], (" getattrvariable ", "nullvariable"),
                 ["GetAttr", "Null"], "GetAttrVariable, NullVariable", "[GetAttr Variable, NULL]"]


def method_step(recording):
    return next(s for s in recording.compiles[0].steps if METHOD(s))


def test_every_recorded_stack_is_accepted_as_its_own_answer(broken):
    for step in broken.compiles[0].steps:
        kinds = [v.kind for v in step.stack]
        assert predict_stack(broken, step.index).grade(kinds).ok, step


def test_dropping_an_item_from_a_recorded_stack_is_wrong_and_says_how_many(broken):
    step = next(s for s in broken.compiles[0].steps if len(s.stack) >= 2)
    result = predict_stack(broken, step.index).grade([v.kind for v in step.stack][1:])
    assert not result and f"holds {len(step.stack)} items" in result.message


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_sloppy_but_right_spellings_are_accepted(broken, spelling):
    # Loading a tensor's method leaves the bound-method tracker and a NULL.
    step = method_step(broken)
    assert step.index <= 4
    assert predict_stack(broken, METHOD).grade(spelling).ok


def test_recorded_vars_themselves_are_accepted(broken):
    step = method_step(broken)
    assert predict_stack(broken, step.index).grade(list(step.stack)).ok


def test_top_first_order_is_called_out(broken):
    result = predict_stack(broken, METHOD).grade(METHOD_STACK[::-1])
    assert not result and "reverse order" in result.message


def test_predicting_a_realized_tensor_for_a_lazy_input_explains_laziness(broken):
    step = first_step(broken, "LOAD_FAST")
    assert step.stack[0].lazy and not step.stack[0].realized
    result = predict_stack(broken, step.index).grade(["TensorVariable"])
    assert not result and "lazy" in result.message


def test_a_python_type_instead_of_a_tracker_is_called_out(broken):
    step = next(s for s in broken.compiles[0].steps
                if len(s.stack) == 1 and s.stack[0].kind == "TensorVariable")
    result = predict_stack(broken, step.index).grade(["Tensor Variable"])
    assert result.ok
    wrong = predict_stack(broken, step.index).grade(["ConstantVariable"])
    assert not wrong


def test_a_correct_stack_reveals_the_details(broken):
    step = next(s for s in broken.compiles[0].steps if s.nodes_added and s.stack)
    result = predict_stack(broken, step.index).grade([v.kind for v in step.stack])
    assert str(step.stack[-1]) in result.message


def test_empty_stack_is_an_empty_list(broken):
    step = next(s for s in broken.compiles[0].steps if not s.stack)
    assert predict_stack(broken, step.index).grade([]).ok
    assert not predict_stack(broken, step.index).grade(["TensorVariable"]).ok


def test_predict_stack_with_an_answer_checks_at_once(broken, capsys):
    assert predict_stack(broken, METHOD, METHOD_STACK) is None
    assert "Correct" in capsys.readouterr().out


def test_step_selectors(broken):
    c = broken.compiles[0]
    call = next(s for s in c.steps if s.opname == "CALL")
    assert "step #%d" % call.index in predict_stack(broken, lambda s: s.opname == "CALL").question
    assert "step #%d" % call.index in predict_stack(c, {"opname": "CALL"}).question
    with pytest.raises(LookupError):
        predict_stack(broken, {"opname": "NO_SUCH_OP"})
    with pytest.raises(TypeError, match="opname"):
        predict_stack(broken, {"op": "CALL"})


def test_a_recording_read_back_from_json_gives_the_same_verdicts(broken):
    again = capture.Recording.from_json(broken.to_json())
    step = method_step(broken)
    answer = [v.kind for v in step.stack]
    assert predict_stack(again, step.index).grade(answer).ok
    assert predict_break_line(again).grade(branchy_line('print("between")')).ok
    assert predict_guard(again, compile_id="0/0_1", about="x").grade("TENSOR_MATCH").ok


def test_printed_verdicts_are_plain_text_and_html_is_escaped(capsys):
    ex = predict_number("q", "?", 2)
    ex.check("<b>2 or so</b>")
    out = capsys.readouterr().out
    assert "'<b>2 or so</b>'" in out and "&lt;" not in out  # echoed as typed, not as markup
    assert "&lt;b&gt;" in ex.grade("<b>2 or so</b>").html()


# -- predict_guard --------------------------------------------------------------------

def test_every_installed_guard_is_accepted_by_kind_and_source(broken):
    final = broken.compile("0/0_1")
    for g in final.guard_details:
        if g.source and not g.ambient:
            assert predict_guard(final).grade((g.kind, g.source)).ok, g


def test_guard_kind_is_accepted_as_the_tree_prints_it(broken):
    # The int argument is installed as CONSTANT_MATCH and printed as EQUALS_MATCH.
    final = broken.compile("0/0_1")
    ex = predict_guard(final, about="n")
    assert ex.grade("equals_match").ok
    assert ex.grade("EQUALS_MATCH: L['n']").ok
    assert ex.grade(("EQUALS_MATCH", 'L["n"]')).ok
    assert ex.grade({"kind": "CONSTANT_MATCH", "source": "n"}).ok


def test_wrong_guard_kinds_are_rejected_specifically(broken):
    ex = predict_guard(broken, compile_id="0/0_1", about="n")
    result = ex.grade("TENSOR_MATCH")
    assert not result and "no TENSOR_MATCH guard on n" in result.message
    result = predict_guard(broken, compile_id="0/0_1").grade(("TENSOR_MATCH", "n"))
    assert not result and "not on L['n']" in result.message
    result = predict_guard(broken, compile_id="0/0_1").grade(("TYPE_MATCH", "x"))
    assert not result and "L['x'] is guarded, but not by TYPE_MATCH" in result.message
    result = predict_guard(broken, compile_id="0/0_1").grade(("TYPE_MATCH", "nowhere"))
    assert not result and "has that kind or source" in result.message


# -- predict_break_line -----------------------------------------------------------------

def test_break_line_is_found_in_the_recording(broken):
    line = branchy_line('print("between")')
    ex = predict_break_line(broken)
    assert ex.grade(line).ok
    assert ex.grade(str(line)).ok and ex.grade(f"Line {line}").ok
    assert ex.grade('print("between")').ok
    early = ex.grade(branchy_line("x.cos()"))
    assert not early and "later" in early.message and "traced into the graph" in early.message
    assert not ex.grade(None)


def test_a_line_after_the_break_is_never_called_captured(broken):
    ex = predict_break_line(broken)
    after = ex.grade(branchy_line("return y + 1"))
    assert not after and "earlier" in after.message
    assert "never traced" in after.message and "captured fine" not in after.message


def skipped_branch(x, n):
    if n > 5:
        x = x * 3
    y = x.cos()
    print("between")
    return y


def test_a_line_the_attempt_skipped_is_called_untraced_not_captured():
    rec = capture.trace(skipped_branch, torch.ones(3), 1)
    lines, first = __import__("inspect").getsourcelines(skipped_branch)
    skipped = first + next(i for i, text in enumerate(lines) if "x * 3" in text)
    verdict = predict_break_line(rec).grade(skipped)
    assert not verdict and "never traced" in verdict.message and "later" in verdict.message


def test_no_break_means_none_is_right(whole):
    ex = predict_break_line(whole)
    assert ex.grade(None).ok and ex.grade("none").ok
    assert "nothing breaks" in ex.grade(1).message


# -- numbers, sets, choices --------------------------------------------------------------

def test_number_answers_against_a_real_counter(broken):
    ex = predict_number("q", "How many graphs?", broken.counters["unique_graphs"])
    graphs = broken.counters["unique_graphs"]
    assert graphs == 2  # the prefix before the print and the resume function after it
    for spelling in (2, 2.0, "2", " two "):
        assert ex.grade(spelling).ok
    assert "a number" in ex.grade(True).message


def test_a_malformed_number_is_told_the_form_and_no_number():
    """The message for an answer that is not a number names no number: a fixed example
    ("e.g. 2") was the answer to three of the course's questions."""
    for expected in (0, 2, 3, 17):
        ex = predict_number("q", "How many?", expected)
        for garbage in ("zzz", None, [2], True):
            message = ex.grade(garbage).message
            assert "a number" in message
            assert not re.search(r"\d", message.split("; got")[0]), message


def test_a_malformed_set_is_told_the_form_and_no_choice():
    """Nor does a set question's message for a malformed answer name any choice."""
    for expected in (["a", "b"], ["b", "d"], ["TensorVariable", "NullVariable"]):
        ex = predict_set("q", "Which?", expected)
        for garbage in (42, None, [1, 2]):
            message = ex.grade(garbage).message.split("; got")[0]
            assert "answer with" in message
            assert not re.search(r"'[a-z]'|TensorVariable", message), message


def test_a_number_gets_a_direction_only_after_a_first_wrong_try():
    ex = predict_number("q", "How many graphs?", 2)
    first = ex.grade(3).message
    assert "too" not in first and "not what was measured" in first
    assert "too high" in ex.grade(3).message and "too low" in ex.grade(1).message
    # a malformed answer is not an honest try and does not earn a direction
    forget_tries()
    assert "a number" in ex.grade("lots").message
    assert "too" not in ex.grade(5).message


def test_the_try_count_outlives_the_exercise_being_built_again():
    """A check cell builds its exercise anew on every run; the count must not restart."""
    predict_number("q", "How many?", 4).grade(1)
    assert "too low" in predict_number("q", "How many?", 4).grade(1).message
    assert "too" not in predict_number("q", "Another question?", 4).grade(1).message


def test_set_answers_ignore_order_and_case():
    ex = predict_set("q", "Which?", ["sin", "add"])
    assert ex.grade(["ADD", "sin"]).ok and ex.grade("sin, add").ok and ex.grade({"sin", "add"}).ok


def test_a_string_of_option_letters_is_read_letter_by_letter():
    ex = predict_set("q", "Which calls compile again?", ["b", "c", "e"])
    for answer in ("bce", "b c e", "b, c, e", "['b', 'c', 'e']", "b, c and e", "E C B"):
        assert ex.grade(answer).ok, answer
    forget_tries()
    wrong = ex.grade("bc")
    assert not wrong.ok and "not the set" in wrong.message
    names = predict_set("q", "Which functions?", ["model", "double"])
    assert names.grade("model, double").ok and not names.grade("modeldouble").ok
    assert ex.expected_form == "a list of letters, in any order"
    assert names.expected_form == "a list of names, in any order"


def test_a_wrong_set_never_names_which_items_are_wrong():
    ex = predict_set("q", "Which?", ["a", "b", "c"])
    first = ex.grade(["a", "d"]).message
    assert "not the set" in first and "'d'" not in first and "missing" not in first
    second = ex.grade(["a", "d"]).message
    assert "1 of your items does not belong" in second and "2 are missing" in second
    assert "'d'" not in second and "'b'" not in second


def test_choice_answers_by_letter_or_text_with_per_option_feedback():
    ex = predict_choice("q", "Unit of caching?", {"a": "the function", "b": "the code object"},
                        "b", feedback={"a": "two closures share one entry"})
    assert ex.grade("B").ok and ex.grade("The code object").ok
    assert "two closures" in ex.grade("a").message
    assert "one of 'a', 'b'" in ex.grade("c").message


def test_a_choice_must_say_why_each_wrong_option_is_wrong():
    with pytest.raises(ValueError, match="'c'"):
        predict_choice("q", "?", {"a": "x", "b": "y", "c": "z"}, "a", feedback={"b": "no"})
    # the option that turns out correct needs none; a measured answer may be any of them
    predict_choice("q", "?", {"a": "x", "b": "y"}, "a", feedback={"b": "y is not it"})


# -- nothing raises -------------------------------------------------------------------------

weird = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=10)), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.just(object()), st.just(str), st.just(...),
)


@settings(max_examples=150, deadline=None)
@given(answer=weird)
def test_no_helper_raises_on_any_answer(broken, answer):
    exercises = [
        predict_stack(broken, METHOD),
        predict_guard(broken, compile_id="0/0_1"),
        predict_break_line(broken),
        predict_number("n", "?", 2),
        predict_set("s", "?", ["a"]),
        predict_choice("c", "?", {"a": "x", "b": "y"}, "a", feedback={"b": "not y"}),
    ]
    for ex in exercises:
        result = ex.grade(answer)
        assert isinstance(result, Result) and result.message


# -- predict, then reveal: the prediction cell above, and what to look at -----------------

LOOK = "the compile ids in the recording"


def every_checker(broken):
    """One exercise of each kind, all told where the prediction lives and what to look at."""
    kw = {"prediction": "q1_answer", "look": LOOK}
    load_method = method_step(broken)
    return {
        "stack": (predict_stack(broken, METHOD, name="q1", **kw),
                  [v.kind for v in load_method.stack], ["TensorVariable"]),
        "guard": (predict_guard(broken, compile_id="0/0_1", about="x", name="q1", **kw),
                  "TENSOR_MATCH", "EQUALS_MATCH"),
        "break_line": (predict_break_line(broken, name="q1", **kw),
                       branchy_line('print("between")'), branchy_line("x.cos()")),
        "number": (predict_number("q1", "How many graphs?", broken.counters["unique_graphs"], **kw),
                   broken.counters["unique_graphs"], broken.counters["unique_graphs"] + 1),
        "set": (predict_set("q1", "Which ids?", [c.compile_id for c in broken.compiles],
                            normalize=str.strip, **kw),
                [c.compile_id for c in broken.compiles], ["0/0"]),
        "choice": (predict_choice("q1", "Restarted?", {"a": "yes", "b": "no"},
                                  "a" if broken.compiles[0].restarted else "b",
                                  feedback={"a": "it did not", "b": "it did"}, **kw),
                   "a" if broken.compiles[0].restarted else "b",
                   "b" if broken.compiles[0].restarted else "a"),
    }


@pytest.mark.parametrize("kind", ["stack", "guard", "break_line", "number", "set", "choice"])
def test_each_checker_passes_the_recorded_truth_and_points_a_wrong_answer_somewhere(broken, kind):
    ex, right, wrong = every_checker(broken)[kind]
    verdict = ex.grade(right)
    assert verdict.ok, verdict.message
    assert "Look at" not in verdict.message
    verdict = ex.grade(wrong)
    assert verdict.ok is False
    assert f"Look at {LOOK}." in verdict.message
    assert "q1.hint()" in verdict.message


@pytest.mark.parametrize("kind", ["stack", "guard", "break_line", "number", "set", "choice"])
def test_an_empty_prediction_says_which_cell_to_fill(broken, kind):
    ex, _, _ = every_checker(broken)[kind]
    verdict = ex.grade(...)
    assert verdict.ok is None
    assert "`q1_answer = ...` in the cell above" in verdict.message
    assert "Expected:" in verdict.message


def test_without_a_prediction_variable_the_placeholder_text_is_the_plain_one():
    verdict = predict_number("q", "?", 2).grade(...)
    assert verdict.ok is None and "replace ... with your answer" in verdict.message


def test_look_is_not_shown_twice_when_it_ends_with_punctuation():
    ex = predict_number("q", "?", 2, look="the events (rec.events)")
    assert "Look at the events (rec.events)\n" in ex.grade(3).message


def test_predicting_the_realized_tracker_for_a_lazy_one_explains_laziness(broken):
    # `if n > 1` loads the int argument: a LazyConstantVariable, not yet a ConstantVariable.
    step = next(s for s in broken.compiles[0].steps
                if s.opname == "LOAD_FAST" and s.argrepr == "n")
    lazy = step.stack[-1]
    assert lazy.kind == "LazyConstantVariable" and not lazy.realized
    said = [v.kind for v in step.stack[:-1]] + ["ConstantVariable"]
    verdict = predict_stack(broken, step.index).grade(said)
    assert not verdict and "lazy" in verdict.message
    assert "LazyConstantVariable" in verdict.message


def test_the_general_lazy_tracker_for_an_int_names_the_constant_one(broken):
    step = next(s for s in broken.compiles[0].steps
                if s.opname == "LOAD_FAST" and s.argrepr == "n")
    said = [v.kind for v in step.stack[:-1]] + ["LazyVariableTracker"]
    verdict = predict_stack(broken, step.index).grade(said)
    assert not verdict and "LazyConstantVariable" in verdict.message
    assert "int" in verdict.message


def announce(x, tag):
    y = x + 1
    print("tag is", tag)
    return y * 2


def test_a_builtin_predicted_realized_before_its_call_gets_its_own_line():
    """Lesson 13 q3: `print`, loaded from the globals, is still a lazy stand-in before the
    CALL; a learner who says BuiltinVariable is told what that is and why not yet."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        rec = capture.trace(announce, torch.ones(3), "cold")
    kept = rec.compile("0/0_1")
    step = kept.steps[kept.graph_break.step - 1]
    kinds = [v.kind for v in step.stack]
    assert kinds[1] == "LazyVariableTracker"
    assert step.stack[1].python_type == "builtin_function_or_method"
    said = [kinds[0], "BuiltinVariable", *kinds[2:]]
    verdict = predict_stack(rec, step.index, compile_id="0/0_1").grade(said)
    assert not verdict.ok
    assert "BuiltinVariable is what Dynamo makes of a builtin" in verdict.message
    assert "LazyVariableTracker" in verdict.message
    assert predict_stack(rec, step.index, compile_id="0/0_1").grade(kinds).ok


# -- review_predictions: the viewer's predict mode read back in Python ------------------------

NODE = __import__("shutil").which("node")
VIEWER_JS = Path(__file__).resolve().parent.parent / "widgets" / "viewer" / "viewer.js"

# The answers the browser would keep: for each step, viewer.js's own question() and grade(),
# recorded the way its reveal() records them. Even steps are answered right, odd steps with
# "pushes nothing, does nothing".
ANSWER_EVERY_STEP = """
import { readFileSync } from "node:fs";
const source = readFileSync(process.argv[2], "utf8");
const viewer = await import("data:text/javascript;base64," + Buffer.from(source).toString("base64"));
const rec = JSON.parse(readFileSync(process.argv[3], "utf8"));
const out = [];
for (const c of rec.compiles) {
  for (let i = 0; i < c.steps.length - 1; i++) {
    const q = viewer.question(c, i);
    const answer = q.step % 2 === 0 ? { pushes: q.truth.pushes, does: [...q.truth.does] }
                                    : { pushes: null, does: [] };
    out.push({ compile: c.compile_id, step: q.step, instruction: q.instruction, lineno: q.lineno,
               answer, truth: q.truth, correct: viewer.grade(q, answer) });
  }
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def answered(broken, tmp_path_factory):
    """Every step of the broken recording answered through viewer.js, as the browser would."""
    if NODE is None:
        pytest.fail("node is not installed: ./lab test installs it (apt-get install nodejs)")
    folder = tmp_path_factory.mktemp("predict")
    (folder / "answer.mjs").write_text(ANSWER_EVERY_STEP, encoding="utf-8")
    (folder / "rec.json").write_text(broken.to_json(), encoding="utf-8")
    run = subprocess.run([NODE, str(folder / "answer.mjs"), str(VIEWER_JS), str(folder / "rec.json")],
                         capture_output=True, text=True, timeout=120, check=True)
    return __import__("json").loads(run.stdout)


def test_review_scores_what_the_viewer_graded(broken, answered):
    right = sum(p["correct"] for p in answered)
    assert 0 < right < len(answered)
    result = review_predictions(answered, broken, limit=len(answered))
    assert result.ok is False
    assert result.message.startswith(f"Predict mode: {right} of {len(answered)} right.")
    assert result.message.count("you said:") == len(answered) - right


def test_each_wrong_answer_names_what_the_step_did_from_the_recording(broken, answered):
    result = review_predictions(answered, broken, limit=len(answered)).message
    blocks = result.split("\n  step ")[1:]
    wrong = [p for p in answered if not p["correct"]]
    assert len(blocks) == len(wrong)
    for p, block in zip(wrong, blocks):
        c = broken.compile(p["compile"])
        step = c.steps[p["step"]]
        assert block.startswith(f"{p['step']} of [{p['compile']}]"), block
        if p["truth"]["pushes"]:
            assert f"pushed {p['truth']['pushes']}" in block and "the stack pane" in block
        for name in step.nodes_added if "node" in p["truth"]["does"] else ():
            assert name in block
        for i in step.guards_added if "guard" in p["truth"]["does"] else ():
            assert c.guard_details[i].source in block
        if "break" in p["truth"]["does"]:
            assert c.graph_break.reason in block


def test_a_predicted_effect_the_step_did_not_have_is_called_out(broken, answered):
    p = next(p for p in answered if p["correct"] and "node" not in p["truth"]["does"])
    wrong = {**p, "answer": {"pushes": p["truth"]["pushes"], "does": ["node"]}, "correct": False}
    result = review_predictions([wrong], broken)
    assert "adds a node to the FX graph" in result.message
    assert "no node is added at this step" in result.message
    assert "the stack pane" not in result.message   # the kind was right


def test_all_right_is_ok_and_the_list_can_be_read_without_a_recording(answered):
    right = [p for p in answered if p["correct"]]
    assert review_predictions(right).ok is True
    result = review_predictions([p for p in answered if not p["correct"]][:1])
    assert result.ok is False and "look at:" in result.message


def test_no_predictions_say_how_to_make_some(broken):
    from widgets.viewer import TraceViewer

    viewer = TraceViewer(broken)
    assert review_predictions(viewer).ok is None
    assert "turn on predict mode" in review_predictions(viewer).message
    viewer.predict = True
    result = review_predictions(viewer)
    assert result.ok is None and "no predictions yet" in result.message
    assert "step through the viewer above in predict mode" in result.message


def test_a_viewers_predictions_are_read_with_its_recording(broken, answered):
    from widgets.viewer import TraceViewer

    viewer = TraceViewer(broken)
    viewer.set_state({"predict": True, "predictions": answered})   # as the browser sends them
    assert review_predictions(viewer, limit=99).message == \
        review_predictions(answered, broken, limit=99).message


@pytest.mark.parametrize("junk", [None, "text", [1, 2], [{"correct": "yes"}],
                                  [{"correct": True, "step": "4", "answer": {}, "truth": {}}]])
def test_odd_predictions_never_raise(junk):
    assert review_predictions(junk).ok is None
