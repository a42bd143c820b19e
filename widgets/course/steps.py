"""Questions about what the tracer did at a step: the stack after it, the line that breaks."""

from __future__ import annotations

import re
from typing import Any

from .answers import (
    as_list, first_int, kind_key, kind_keys, short, squash,
)
from .exercise import Exercise

# -- reading a recording ---------------------------------------------------------

def compile_of(source: Any, compile_id: str | None) -> Any:
    """The `Compile` asked for, from a Recording, a Compile or anything holding one."""
    if hasattr(source, "recording") and not hasattr(source, "compiles"):
        source = source.recording  # a viewer
    if hasattr(source, "compiles"):
        if compile_id is not None:
            return source.compile(compile_id)
        if not source.compiles:
            raise ValueError("this recording has no compiles: did the cell call the "
                             "compiled function?")
        return source.compiles[0]
    if hasattr(source, "steps") and hasattr(source, "compile_id"):
        if compile_id is not None and source.compile_id != compile_id:
            raise ValueError(f"this is compile {source.compile_id}, not {compile_id}")
        return source
    raise TypeError(f"expected a capture Recording or Compile, got {type(source).__name__}")


def select_step(compile_: Any, step: Any) -> Any:
    """A step by index, by a predicate, or by attributes: {'opname': 'CALL', 'nth': 0}."""
    steps = compile_.steps
    if isinstance(step, int) and not isinstance(step, bool):
        if not -len(steps) <= step < len(steps):
            raise IndexError(f"compile {compile_.compile_id} has {len(steps)} steps; "
                             f"there is no step {step}")
        return steps[step]
    if isinstance(step, dict):
        wanted = dict(step)
        nth = wanted.pop("nth", 0)
        unknown = [k for k in wanted if steps and not hasattr(steps[0], k)]
        if unknown:
            raise TypeError(f"a step has no attribute {unknown[0]!r}; select with Step fields "
                            "such as opname, argrepr, lineno, offset, code_name, depth")
        matches = [s for s in steps
                   if all(getattr(s, k, None) == v for k, v in wanted.items())]
    elif callable(step):
        matches = [s for s in steps if step(s)]
        nth = 0
    else:
        raise TypeError("select a step by index, by a function of the step, or by a dict "
                        "such as {'opname': 'CALL', 'lineno': 3}")
    if len(matches) <= nth:
        raise LookupError(f"no step of compile {compile_.compile_id} matches {step!r}")
    return matches[nth]


def step_where(step: Any) -> str:
    arg = f" {step.argrepr}" if step.argrepr else ""
    return f"step #{step.index} ({step.opname}{arg}, line {step.lineno})"


def var_text(var: Any) -> str:
    return str(var).strip()


def predict_stack(recording: Any, step: Any, answer: Any = ..., *, compile_id: str | None = None,
                  name: str = "stack", question: str | None = None, hint: str | None = None,
                  prediction: str | None = None, look: str = "") -> Exercise | None:
    """Predict the VariableTracker kinds on the stack after a step, bottom first.

    `step` is a step index, a function of a `Step`, or a dict of `Step` attributes
    (``{"opname": "CALL", "lineno": 3, "nth": 0}``). Returns the `Exercise`; given an
    `answer` too, checks it at once and returns None.
    """
    compile_ = compile_of(recording, compile_id)
    target = select_step(compile_, step)
    expected = list(target.stack)
    kinds = [v.kind for v in expected]

    def check(ans: Any) -> tuple[bool, str]:
        items = as_list(ans)
        if items is None:
            return False, (f"answer with a list of class names, bottom of the stack first, "
                           f"e.g. ['NullVariable', 'TensorVariable'] ([] for an empty stack); "
                           f"got {type(ans).__name__}")
        keys = [kind_keys(i) for i in items]
        bad = [i for i, k in zip(items, keys) if k is None]
        if bad:
            return False, (f"each entry should be a class name such as 'TensorVariable', "
                           f"not {short(bad[0])}")
        right = [kind_key(k) in got for k, got in zip(kinds, keys)]
        if len(items) == len(kinds) and all(right):
            return True, _reveal_stack(target, expected)
        if len(items) != len(kinds):
            return False, (f"the stack after {step_where(target)} holds {len(kinds)} "
                           f"item{'s' * (len(kinds) != 1)}, not {len(items)}.")
        reversed_right = [kind_key(k) in got for k, got in zip(reversed(kinds), keys)]
        if all(reversed_right):
            return False, "right items, but in reverse order: list the bottom of the stack first."
        pos = right.index(False)
        return False, f"entry {pos} (counting from the bottom, from 0) is not that. " + \
            _kind_feedback(expected[pos], items[pos])

    q = question or (f"After {step_where(target)} in [{compile_.compile_id}] {compile_.code_name}, "
                     f"which VariableTrackers are on the stack?")
    solution = f"{kinds!r} (bottom first)\n" + "\n".join(
        f"  {i}: {var_text(v)}" for i, v in enumerate(expected))
    ex = Exercise(name, q, check,
                  hint=hint or ("Follow the stack from the previous step: each instruction pops "
                                "its inputs and pushes its result. In the text view the stack is "
                                "printed top first; answer bottom first."),
                  solution=solution,
                  expected_form="a list of VariableTracker class names, bottom of the stack "
                                "first, e.g. ['NullVariable', 'TensorVariable']",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _kind_feedback(var: Any, said: Any) -> str:
    said_keys = kind_keys(said) or set()
    lazy_kind = kind_key(var.kind)
    # 'ConstantVariable' said for a 'LazyConstantVariable': the realized form of a lazy one
    said_realized_form = any(lazy_kind != k and lazy_kind.endswith(k) for k in said_keys)
    constant = lazy_kind == "lazyconstant"
    if constant and "lazy" in said_keys:
        return (f"a lazy stand-in, yes, but not the general one: a non-tensor constant "
                f"argument ({var.python_type or 'int, float, str'}) arrives as a "
                f"LazyConstantVariable, the stand-in Dynamo makes for plain constants; "
                f"LazyVariableTracker is the one for tensors and other objects.")
    if (var.lazy and not var.realized and var.python_type == "builtin_function_or_method"
            and "builtin" in said_keys):
        # checked on torch 2.13: realizing the global `print` gives BuiltinVariable(print)
        return ("BuiltinVariable is what Dynamo makes of a builtin such as print once "
                "something needs it, at the CALL. At this step nothing has looked at it yet: "
                "the global is still the lazy stand-in it was loaded as, a "
                "LazyVariableTracker.")
    if var.lazy and not var.realized and (said_realized_form or (
            var.python_type and kind_key(var.python_type) in said_keys)):
        text = ("Dynamo has not built that tracker yet: an input it has not looked at stays "
                "a lazy stand-in until something needs it.")
        if constant:
            text += " For a constant such as an int, float or str that stand-in is a " \
                    "LazyConstantVariable."
        return text
    if var.python_type and squash(var.python_type) in {squash(str(said))}:
        return "that is the Python type it models; name the VariableTracker class that models it."
    return "Which tracker models that value at this point?"


def _reveal_stack(step: Any, stack: list[Any]) -> str:
    if not stack:
        return f"After {step_where(step)} the stack is empty."
    lines = "\n".join(f"  {i}: {var_text(v)}" for i, v in enumerate(stack))
    return f"After {step_where(step)} the stack holds (bottom first):\n{lines}"


def predict_break_line(recording: Any, answer: Any = ..., *, compile_id: str | None = None,
                       name: str = "break_line", question: str | None = None,
                       hint: str | None = None, prediction: str | None = None,
                       look: str = "") -> Exercise | None:
    """Predict the line where Dynamo's capture breaks (None if it does not break).

    Reads the first compile with a graph break unless `compile_id` is given. Answers:
    a line number (``6``, ``"6"``, ``"line 6"``) or the text of the line.
    """
    if compile_id is None and hasattr(recording, "compiles"):
        broken = [c for c in recording.compiles if c.graph_break is not None]
        compile_ = broken[0] if broken else compile_of(recording, None)
    else:
        compile_ = compile_of(recording, compile_id)
    gb = compile_.graph_break
    lines = {compile_.firstlineno + i: text.strip()
             for i, text in enumerate(compile_.source_lines)}
    # the lines this attempt ran an instruction of (inlined calls are other functions' lines)
    traced = {s.lineno for s in compile_.steps if s.depth == 0 and s.lineno is not None}

    def check(ans: Any) -> tuple[bool, str]:
        if ans is None or (isinstance(ans, str) and squash(ans) in {"none", "nobreak", "no"}):
            if gb is None:
                return True, f"[{compile_.compile_id}] {compile_.code_name} compiles whole."
            return False, "Dynamo does break here. Which line can it not put in a graph?"
        line = first_int(ans)
        if line is None and isinstance(ans, str):
            said = re.sub(r"\s+", " ", ans.strip())
            found = [n for n, text in lines.items() if re.sub(r"\s+", " ", text) == said]
            line = found[0] if found else None
            if line is None:
                return False, "that is not a line of the function: give its number or its text."
        if line is None:
            return False, (f"answer with a line number such as 6, or None if nothing breaks; "
                           f"got {type(ans).__name__}")
        if gb is None:
            return False, "nothing breaks here: Dynamo captured the whole function."
        if line == gb.lineno:
            return True, _reveal_break(gb)
        text = lines.get(line)
        if text is None:
            return False, f"line {line} is not part of {compile_.code_name}."
        if gb.lineno is not None and line > gb.lineno:
            return False, (f"line {line} (`{text}`) comes after the break: this attempt never "
                           f"traced it (only a resume function, if Dynamo makes one, does). "
                           f"The break is earlier.")
        if line not in traced:
            return False, (f"line {line} (`{text}`) was never traced in this attempt (no "
                           f"instruction of it ran), so it cannot be where capture stopped. "
                           f"The break is later.")
        return False, (f"line {line} (`{text}`) was traced into the graph without trouble; "
                       f"the break is later.")

    q = question or f"On which line does Dynamo stop capturing {compile_.code_name}?"
    solution = _reveal_break(gb) if gb else "no graph break: answer None"
    ex = Exercise(name, q, check,
                  hint=hint or ("Look for the first thing that is not tensor math Dynamo "
                                "understands: a call it cannot trace, or a branch on a "
                                "tensor's value."),
                  solution=solution,
                  expected_form="a line number such as 6 (or None if nothing breaks)",
                  prediction=prediction, look=look)
    if answer is ...:
        return ex
    ex.check(answer)
    return None


def _reveal_break(gb: Any) -> str:
    line = f": {gb.line}" if gb.line else ""
    return f"line {gb.lineno}{line}  ({gb.reason})"
