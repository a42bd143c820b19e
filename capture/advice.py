"""Fixes by mechanism: what made Dynamo recompile or break, and the change that removes it.

A cause is classified into a mechanism (a guard's kind and source shape, a graph break's
registry id) and each mechanism has one piece of advice. Every entry is checked by
tests/test_problems.py, which applies the fix to a real problem script and shows the
recompile or the break gone. A mechanism this table does not know gets no advice rather
than a guess; Dynamo's hints written for its own developers ("avoid calling
`Optimizer.zero_grad`", "remove the `graph_break()` call" inside torch) are never passed on.
"""

from __future__ import annotations

import re
from typing import Any

# -- recompiles ------------------------------------------------------------------------

_SIZE = re.compile(r"size=\[([^\]]*)\]")
_LOWER = re.compile(r"^(\d+) <= (.+\.size\(\)\[(\d+)\])$")
# a size's range check: `9 <= L['x'].size()[0]`, `2 <= L['x'].size()[0] <= 8`
_RANGE = re.compile(r"^(?:(\d+) <= )?(.+\.size\(\)\[\d+\])(?: <= (\d+))?$")
_SEEN = re.compile(r"= (-?\d+)$")
_DUCK = re.compile(r"^(.+\.size\(\)\[\d+\]) == (.+\.size\(\)\[\d+\])$")


def python_name(source: str | None) -> str:
    """`x` for `L['x']`, `self.drop.training` for `L['self']._modules['drop'].training`."""
    if not source:
        return "it"
    name = re.sub(r"^[LG]\[(['\"])(.*?)\1\]", r"\2", source)
    name = re.sub(r"\.size\(\)\[\d+\]$", "", name)
    return re.sub(r"\._(?:modules|parameters|buffers)\[(['\"])(.*?)\1\]", r".\2", name)


def sizes(text: str | None) -> list[int | None] | None:
    """`[4, None]` from `[4, None]` or from a TENSOR_MATCH guard's `size=[4, None]`."""
    if not text:
        return None
    m = _SIZE.search(text)
    body = m.group(1) if m else text.strip()
    if not (m or (body.startswith("[") and body.endswith("]"))):
        return None
    try:
        return [None if x.strip() == "None" else int(x)
                for x in body.strip("[]").split(",") if x.strip()]
    except ValueError:
        return None


def _is_number(text: str | None) -> bool:
    try:
        float(text or "")
    except ValueError:
        return False
    return True


def mechanism(kind: str, source: str | None, what: str, values: list[str]) -> str | None:
    """The mechanism of a failed guard, from its kind, source and the values it saw
    (`values[0]` what the first entry held, then what each new call had)."""
    source = source or ""
    if kind == "GLOBAL_STATE" and any("grad_mode" in v for v in values):
        return "grad_mode"
    if source.endswith(".training"):
        return "training"
    if kind == "TENSOR_MATCH" and what == "size":
        seen = [sizes(v) for v in values]
        if any(s and any(d in (0, 1) for d in _changed(seen[0], s)) for s in seen[1:]):
            return "size_0_1"
        return "size"
    if what == "check":
        m = _RANGE.match(values[0]) if values else None
        if m and (m.group(1) or m.group(3)):
            lower = int(m.group(1)) if m.group(1) else None
            seen = [int(x.group(1)) for x in map(_SEEN.search, values[1:]) if x]
            if lower == 2 and any(v in (0, 1) for v in seen):
                return "size_0_1"
            if seen:
                return "size_branch"   # a bound the code's own comparison of the size set
            return "size_0_1" if lower == 2 and not m.group(3) else None
        if values and _DUCK.match(values[0]):
            return "duck_shape"
        return None
    if kind == "TENSOR_MATCH" and what in ("dtype", "device", "requires_grad"):
        return what
    if kind == "TENSOR_MATCH" and what == "type":
        return "tensor_type"
    if kind == "TENSOR_MATCH" and what == "dispatch keys" and len(values) == 2 \
            and ("Autograd" in values[0]) != ("Autograd" in values[1]):
        return "dispatch_keys"   # an inference tensor (no Autograd key) and a normal one
    if kind == "EQUALS_MATCH" and values and _is_number(values[0]):
        if "param_groups" in source:
            return "optimizer_number"
        if source.startswith("L['self']") and re.fullmatch(r"-?\d+", values[0]):
            return "module_int"
        return "number"
    if kind == "EQUALS_MATCH" and values and values[0][:1] in "'\"":
        return "string"
    if kind == "DICT_LENGTH" and source.startswith("G["):
        return "global_dict"
    return None


def _changed(before: list | None, after: list | None) -> list[int]:
    """The values `after` has at the dimensions where it differs from `before`."""
    if not before or not after or len(before) != len(after):
        return []
    return [a for b, a in zip(before, after) if b is not None and a != b]


def changed_dims(before: str | None, after: str | None) -> list[int]:
    b, a = sizes(before), sizes(after)
    if not b or not a or len(b) != len(a):
        return []
    return [d for d, (x, y) in enumerate(zip(b, a)) if x is not None and x != y]


# Whether a mechanism's recompiles stop by themselves (one entry per value, few values).
BOUNDED = {"size_branch", "size_specialized", "grad_mode", "training", "dtype", "device", "requires_grad", "dispatch_keys",
           "tensor_type"}


def reachable(cause: dict[str, Any]) -> bool:
    """Whether a cause's name is one the user wrote: a plain argument of their own function."""
    return bool(re.fullmatch(r"[A-Za-z_]\w*", cause["name"])) and bool(cause.get("own_frame"))


def guard_advice(cause: dict[str, Any]) -> str | None:
    """The fix for one cause of recompiles (see `capture.explain`'s cause)."""
    name, kind, values = cause["name"], cause["mechanism"], cause["values"]
    where = ""
    if kind in ("size", "size_0_1", "size_specialized", "size_as_int") and not reachable(cause):
        # `args[0]` of a wrapper Dynamo made, `kwargs['cache'].layers[0].keys`, a resume
        # function's argument: not a name the user wrote; the mark goes on the tensor where
        # their code makes it
        name, where = "t", f", t being the tensor that reaches {cause['source']}, where your code makes it"
    if kind == "grad_mode":
        return ("expected: one cache entry for grad mode on and one for off (torch.no_grad); "
                "once both are compiled, switching reuses them. Nothing to fix")
    if kind == "training":
        return ("expected: one cache entry for train() and one for eval(); once both are "
                "compiled, toggling reuses them. Nothing to fix")
    if kind == "size_0_1":
        dims = cause.get("dims") or [0]
        marks = "; ".join(f"torch._dynamo.decorators.mark_unbacked({name}, {d})" for d in dims)
        return (f"sizes 0 and 1 are always specialized, whatever mark_dynamic or dynamic=True "
                f"say: call {marks} before the first call{where}, so one compile serves size 1 "
                f"too")
    if kind == "size_specialized":
        shape = cause.get("shape") or {}
        value = shape.get("specialized_to")
        asked = next((g for g in shape.get("guards", ()) if g.get("lineno")), None)
        line = f" (line {asked['lineno']})" if asked else ""
        dims = cause.get("dims") or [0]
        marks = "; ".join(f"torch._dynamo.maybe_mark_dynamic({name}, {d})" for d in dims)
        return (f"expected: the code compares the size with {value}{line}, so size {value} "
                f"gets a compile of its own and other sizes share a dynamic one. Do not "
                f"mark_dynamic it: a marked size the code specializes fails the compile "
                f"(ConstraintViolationError). To spare the static first compile, call "
                f"{marks} before the first call{where}")
    if kind == "size_as_int":
        shape = cause.get("shape") or {}
        asked = next((g for g in shape.get("guards", ()) if g.get("lineno")), None)
        line = f"line {asked['lineno']}" if asked else "the code"
        return (f"not expected to stop: {line} uses the size as a plain Python int (a loop "
                f"count, an index, int()), so every new size is specialized and compiles again, "
                f"up to the recompile limit. No mark keeps it dynamic (mark_dynamic fails the "
                f"compile with ConstraintViolationError; maybe_mark_dynamic still specializes): "
                f"keep the size symbolic on that line, e.g. a tensor operation over the "
                f"dimension instead of a Python loop over range(size)")
    if kind == "size_branch":
        return ("expected: the code compares this size (see the line), so each side of the "
                "comparison gets a compile of its own, and sizes on a side already compiled "
                "reuse it. Nothing to fix, unless the branch itself should go (torch.cond "
                "keeps both sides in one graph)")
    if kind == "duck_shape":
        return ("sizes that were equal share one symbol (duck shaping): set "
                "torch.fx.experimental._config.use_duck_shape = False to keep them apart")
    if kind == "size":
        dims = cause.get("dims") or []
        marks = "; ".join(f"torch._dynamo.mark_dynamic({name}, {d})" for d in dims)
        if cause.get("made_dynamic"):
            said = cause["name"] if not where else f"the tensor that reaches {cause['source']}"
            return (f"automatic dynamic made {said} dynamic in [{cause['made_dynamic']}]: other "
                    f"sizes (2 or more) reuse that compile, so this recompile happens once. "
                    + (f"To spare it, call {marks} before the first call{where}" if marks else ""))
        return (f"call {marks} before the first call{where} (or torch._dynamo.maybe_mark_dynamic, "
                f"which lets Dynamo specialize if the code needs it)") if marks else None
    if kind in ("dtype", "device", "requires_grad"):
        return (f"each {kind} of {name} gets a cache entry of its own ({len(set(values))} so "
                f"far); expected if it takes few values, else make it the same on every call")
    if kind == "optimizer_number":
        return (f"{name} is a Python float, guarded by its value, and the scheduler changes "
                f"it: give the optimizer a tensor learning rate (lr=torch.tensor(0.1)), "
                f"which the scheduler updates in place")
    if kind == "tensor_type":
        return (f"each Python type of {name} ({', '.join(dict.fromkeys(values))}) gets a cache "
                f"entry of its own; expected, or pass one type on every call (a Parameter's "
                f".detach() is a plain Tensor)")
    if kind == "dispatch_keys":
        return (f"a tensor made under torch.inference_mode has other dispatch keys than one "
                f"made outside it: each kind of {name} gets a cache entry of its own (two at "
                f"most); expected, or make the inputs the same kind on every call")
    if kind == "module_int":
        return (f"{name} is an int attribute of an nn.Module, guarded by its value (module "
                f"ints are never made dynamic by default): set "
                f"torch._dynamo.config.allow_unspec_int_on_nn_module = True, and after one "
                f"recompile it is a symbol that later values reuse")
    if kind == "number" and cause.get("made_dynamic"):
        return (f"automatic dynamic made {name} a symbol in [{cause['made_dynamic']}]: later "
                f"values reuse that compile, so this recompile happens once. Nothing to fix")
    if kind == "number":
        return (f"{name} is a Python number, guarded by its value: pass it as a tensor "
                f"(torch.tensor(...)) so a new value needs no new compile")
    if kind == "string":
        return (f"{name} is a str, guarded by its value: every new value compiles again. "
                f"Look up what it selects outside the compiled function and pass that in "
                f"(a tensor), so the string never reaches Dynamo")
    if kind == "global_dict":
        return (f"the global dict {name} changes size inside the compiled function and its "
                f"length is guarded: do that bookkeeping outside the compiled call (before "
                f"or after it), so each call sees the dict as the compile did")
    return None


# -- graph breaks ------------------------------------------------------------------------

# Dynamo's hints that speak to its own developers, or name code the user did not write
_DEVELOPER = ("Please report", "It may be possible to write Dynamo tracing rules",
              "This graph break may be difficult to debug", "file an issue",
              "report an issue", "Avoid calling", "dont_skip_tracing",
              "This graph break may have been caused by an earlier graph break",
              "This graph break is fundamental")


# Dynamo's debug context of a logger break names the method called:
# "method: <Logger problem (WARNING)>.warning_once, args: ..."
_LOGGER_METHOD = re.compile(r"method: <\w*Logger [^>]*>\.(\w+),")


def break_advice(gb_id: str | None, explanation: str | None, hints: list[str],
                 in_user_code: bool, function: str | None,
                 message: str | None = None) -> str | None:
    """The fix for a graph break, by its registry id; None where no fix is known to work."""
    text = explanation or ""
    if gb_id == "GB0059" and "`print`" in text:
        return ("let Dynamo move the print after the graph: "
                "torch._dynamo.config.reorderable_logging_functions.add(print)")
    if gb_id == "GB0291":
        # Dynamo skips a call whose method, or the function behind it, is in the set: the
        # function on the class covers every logger (transformers' warning_once included)
        called = _LOGGER_METHOD.search(message or "")
        if called is None:
            return ("skip the logger call while compiling: add the logger method it calls to "
                    "torch._dynamo.config.ignore_logging_functions")
        return ("skip the logger call while compiling: "
                f"torch._dynamo.config.ignore_logging_functions.add(logging.Logger.{called[1]})")
    if gb_id == "GB0036":
        return ("the output's size depends on the data: set "
                "torch._dynamo.config.capture_dynamic_output_shape_ops = True, or keep the "
                "shape fixed: a mask combined with | or *, or torch.where(cond, a, b) with "
                "three arguments, instead of boolean indexing or one-argument torch.where")
    if gb_id == "GB0170":
        return ("a branch on a tensor's value: make it branchless (torch.where(cond, a, b) "
                "computes both sides and picks), or use torch.cond")
    if gb_id in ("GB0007", "GB0025") and not in_user_code:
        return None  # torch's own skip or break, on purpose: nothing in the user's code to change
    if gb_id == "GB0007" and "`_warnings.warn`" in text:
        return ("let Dynamo issue the warning after the graph: "
                "torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)")
    if gb_id == "GB0007":
        return None  # a function Dynamo will not inline; it may compile it as a frame of its own
    if gb_id == "GB0124":
        return ("a tensor turned into a Python number (.item()): keep it a tensor, or set "
                "torch._dynamo.config.capture_scalar_outputs = True")
    # Anything else has no tested fix: Dynamo's own hint is shown as its (see `useful_hint`),
    # and wrapping the code in torch.compiler.disable would still break the graph there.
    return None


def useful_hint(hints: list[str], in_user_code: bool) -> str | None:
    """Dynamo's first hint that speaks to a user, for a break in their own code; shown as
    Dynamo's words, not as a tested fix."""
    if not in_user_code:
        return None  # a break inside torch or a library: its hints speak to its developers
    return next((h for h in hints if not any(d in h for d in _DEVELOPER)), None)


def from_break_advice(cause: dict[str, Any]) -> str:
    """A recompile of a resume function on a value the graph break left on the stack."""
    return ("this value is what the code before the graph break computed and handed on; "
            "no name of yours holds it: remove the break (see its fix) and these recompiles "
            "go with it")


def constraint_violation(message: str | None) -> dict[str, Any] | None:
    """What a ConstraintViolationError's whole message says: the dimension marked dynamic,
    the constant it was specialized to and the user's line that did it (None when absent)."""
    if not message or not message.startswith("ConstraintViolationError"):
        return None
    m = re.search(r"You marked (L\[.+?\]\.size\(\)\[(\d+)\]) as dynamic but your code "
                  r"specialized it to be a constant \((-?\d+)\)", message)
    if m is None:
        return None
    where = re.findall(r'File "(.+?)", line (\d+), in (\S+)', message.split("User stack:", 1)[-1]) \
        if "User stack:" in message else []
    file, lineno, function = where[-1] if where else (None, None, None)
    return {"name": python_name(m.group(1)), "source": m.group(1), "dim": int(m.group(2)),
            "constant": m.group(3),
            "file": file, "lineno": int(lineno) if lineno else None, "function": function}


def error_advice(error: str | None) -> str | None:
    """The fix for a compile that failed, by its error."""
    if error and error.startswith("ConstraintViolationError"):
        m = re.search(r"\((L\[.+?\]\.size\(\)\[(\d+)\])\)", error)
        name = python_name(m.group(1)) if m else "the tensor"
        dim = m.group(2) if m else "d"
        return (f"a dimension marked dynamic ({name}, {dim}) was made a constant by the code "
                f"(an operation with a tensor of fixed size, a comparison): use "
                f"torch._dynamo.maybe_mark_dynamic({name}, {dim}), which lets Dynamo "
                f"specialize, or change the operation that makes it a constant, or mark the "
                f"tensors it meets dynamic too")
    return None


__all__ = ["BOUNDED", "constraint_violation", "error_advice", "from_break_advice", "break_advice", "changed_dims", "guard_advice", "mechanism",
           "python_name", "sizes"]
