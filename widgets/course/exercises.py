"""Exercises for the lessons: ask, check the learner's answer, hint, reveal.

The pattern of Kaggle's learntools: a lesson builds an `Exercise`, the learner
replaces ``...`` with an answer and runs ``q1.check(answer)``::

    q1 = Exercise("q1", "How many graphs did Dynamo compile?",
                  check=lambda a: (a == 2, "count the [n/m] headers"),
                  hint="One graph per compiled attempt.", solution="2")
    q1.check(...)     # -> asks for an answer, counts nothing
    q1.check(3)       # -> Not quite ... call q1.hint()
    q1.hint(); q1.solution()

Predict, then reveal: the lessons ask first and measure after. One cell states
the question and holds the learner's prediction; the next cell runs the trace
and checks the prediction against what it recorded::

    q1_answer = ...            # cell 1: the learner writes a prediction here

    with capture.record() as rec:                                  # cell 2
        f(torch.ones(3)); f(torch.ones(4))
    q1 = predict_number("q1", "How many compiles?", len(rec.compiles),
                        prediction="q1_answer", look="the ids in rec.compiles")
    q1.check(q1_answer)

`prediction` names the variable, so an empty prediction says where to write it;
`look` says what to look at when the prediction was wrong.

The `predict_*` helpers read their right answer from a recording (`capture.trace`,
`capture.record`, `%%capture_trace -o`): the VariableTracker stack after a step,
a guard, the line of a graph break. `predict_number`, `predict_set` and
`predict_choice` cover answers a lesson measured itself (e.g. the number of
compiles a recording holds).

The viewer has its own predict mode: before each step forward the learner says what
the instruction will push and do, and the browser keeps the answers in the viewer's
`predictions`. `review_predictions(viewer)` reads them back in Python: the score, and
for each wrong answer what the step really did and which pane shows it::

    viewer = TraceViewer(rec); viewer.predict = True; viewer      # cell 1: step through it
    print(review_predictions(viewer))                              # cell 2

Everything prints plain text (stable under nbval) and never raises on a strange
answer: it says what form it expected instead. Importing it the way a lesson does
(``from widgets.course.exercises import predict_stack``) imports neither ipywidgets
nor IPython nor torch: the `widgets` package loads its viewer only when one is made.

exercise.py   Exercise and Result: ask, check, hint, reveal
answers.py    reading a learner's answer (sloppy-but-right spellings, odd ones)
steps.py      the stack after a step, the line that breaks
guards.py     a guard Dynamo installs
measured.py   numbers, sets of names and choices a lesson measured itself
review.py     the viewer's predict mode, read back
"""

from .exercise import Exercise, Result
from .fixes import predict_fix  # noqa: F401  (answers written as code: lesson 16)
from .guards import predict_guard
from .measured import predict_choice, predict_number, predict_set
from .recompiles import predict_failed_guard  # noqa: F401  (which guard failed: lesson 19)
from .review import review_predictions
from .steps import predict_break_line, predict_stack

__all__ = [
    "Exercise", "Result", "predict_stack", "predict_guard", "predict_break_line",
    "predict_number", "predict_set", "predict_choice", "review_predictions",
]
