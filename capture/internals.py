"""Every read of torch's private state, behind one named accessor each.

The recorder reads what Dynamo holds while it traces: the translator's
instructions, stack and locals, the FX graph as it grows, the guards as they
are installed. None of that is public API, so each read lives here, says which
torch behaviour it relies on, and the versions it was checked on. A new torch
release is this file's work (and `hooks.py`'s, the one place that patches).
Nothing here changes torch's state; reads that could (a lazy tracker's
attributes realize it) are written so that they cannot.

The releases it was checked on, and what changed from one to the next, are one table,
`RELEASES`, below: an accessor reads torch the same way on every release listed unless
the table says otherwise. `tests/test_internals.py` exercises every accessor; CI runs it,
with the engine's suite, on every release listed (`./lab test-matrix`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import operator
import re
from typing import Any, NamedTuple

# The torch releases this seam was checked on, oldest first, each with what changed in it
# that an accessor absorbs (accessor -> what changed, and how it is read now). Adding a
# release: run tests/test_internals.py and the engine's suite on it, fix the accessors
# that fail, and add a row here saying what changed; nothing outside this file names a
# release.
RELEASES: dict[str, dict[str, str]] = {
    "2.13": {},   # torch 2.13.0 (CPU): every accessor as written
    "2.14": {     # torch 2.14.1 (a CUDA build, run on the CPU)
        "asks_python_type": "CallMethodVariable (made by LOAD_METHOD on a dict-valued tracker) "
                            "answers python_type() by as_python_constant() on the dict, which "
                            "realizes every lazy value in it: never asked "
                            "(PYTHON_TYPE_NOT_ASKED)",
        "is_torch_log_handler": "the stderr handler set_logs installs writes to whatever "
                                "sys.stderr is at the time (2.13's is bound to a stream); "
                                "recognised by torch's own test either way",
        "source_name": "Source.name() stays a method (a property in some nightlies: both "
                       "are read)",
    },
}
CHECKED_ON = tuple(RELEASES)

# -- instructions -----------------------------------------------------------------


class InstructionFields(NamedTuple):
    offset: int | None
    opname: str
    arg: int | None
    argval: Any
    lineno: int | None
    target: int | None  # a jump's target offset


def instruction_fields(inst: Any) -> InstructionFields:
    """The fields of a Dynamo `Instruction` (bytecode_transformation.Instruction, a
    mutable dis.Instruction with `target`, the Instruction a jump goes to, and
    `positions`)."""
    target = inst.target
    positions = inst.positions
    lineno = positions.lineno if positions is not None else None
    return InstructionFields(inst.offset, inst.opname, inst.arg, inst.argval,
                             lineno if lineno is not None else inst.starts_line,
                             target.offset if target is not None else None)


# The offset of a Dynamo `Instruction` (renumbered by `update_offsets`; None for one Dynamo
# made up while tracing). Read on every step, so an attrgetter (C speed).
instruction_offset = operator.attrgetter("offset")


def walked_instructions(tx: Any) -> list[Any]:
    """The instructions a translator steps through: `tx.instructions`, Dynamo's cleaned
    copy of the code's bytecode (`cleaned_instructions`), offsets renumbered."""
    return tx.instructions


# -- translators ------------------------------------------------------------------


def parent(tx: Any) -> Any:
    """The translator that inlined this one (`InliningInstructionTranslator.parent`), or None
    for the frame's own."""
    return getattr(tx, "parent", None)


def code_of(tx: Any) -> Any:
    """The code object a translator runs (`f_code`)."""
    return tx.f_code


def current_line(tx: Any) -> int | None:
    """The line the translator is at (`lineno`, set as instructions start lines), or None
    before its first line: Dynamo starts a translator at -1, and a closure's first
    instructions (COPY_FREE_VARS, MAKE_CELL) come before any line."""
    lineno = tx.lineno
    return lineno if lineno is not None and lineno >= 0 else None


def stack(tx: Any) -> list[Any]:
    """The VariableTracker stack (`tx.stack`, bottom first)."""
    return tx.stack


def symbolic_locals(tx: Any) -> dict[str, Any]:
    """Local names to trackers (`tx.symbolic_locals`)."""
    return tx.symbolic_locals


def output_of(tx: Any) -> Any:
    """The `OutputGraph` an attempt builds (`tx.output`, shared by inlined translators;
    a new one for every attempt)."""
    return tx.output


def trace_id() -> str | None:
    """The attempt-aware compile id (`0/0`, `0/0_1`) of the compile in progress:
    `CompileContext.current_trace_id()`."""
    from torch._guards import CompileContext

    tid = CompileContext.current_trace_id()
    return str(tid) if tid is not None else None


# -- the FX graph -----------------------------------------------------------------


def current_graph(output: Any) -> Any:
    """The FX graph being built: the innermost subtracer's (`output.tracers[-1].graph`),
    which is `output.graph` outside higher-order ops."""
    return output.tracers[-1].graph


def root_graph(output: Any) -> Any:
    """The frame's own FX graph (`OutputGraph.graph`)."""
    return output.graph


def graph_size(graph: Any) -> int:
    """Nodes in an FX graph, read without walking it (`Graph._len`)."""
    return graph._len


def graph_tail(graph: Any) -> Any:
    """The graph's last node: FX keeps nodes in a ring around `_root` (`_root._prev`)."""
    return graph._root._prev


def example_value(node: Any) -> Any:
    """The fake value Dynamo propagated through a node (`meta["example_value"]`)."""
    return node.meta.get("example_value")


def tracker_node(v: Any, lazy_class: type) -> Any:
    """The FX node a tracker stands for (its `proxy.node`), or None. A lazy tracker is
    looked through only once realized (`is_realized`, `unwrap`): anything else would
    realize it."""
    if issubclass(type(v), lazy_class):
        if not v.is_realized():
            return None
        v = v.unwrap()
    proxy = tracker_proxy(v)
    return getattr(proxy, "node", None) if proxy is not None else None


# -- guards -----------------------------------------------------------------------


def guard_set(output: Any) -> Any:
    """The ordered set of guards installed so far (`output.guards.inner`, reached without
    `OutputGraph.guards`' two properties). New guards are appended at its end."""
    return output.tracing_context.guards_context.dynamo_guards.inner


def guard_count(guards: Any) -> int:
    """How many guards an ordered guard set holds (`OrderedSet._dict`)."""
    return len(guards._dict)


class GuardFields(NamedTuple):
    kind: str
    source: str | None
    lineno: int | None
    line: str | None
    code_name: str | None


def guard_fields(g: Any) -> GuardFields:
    """A `torch._guards.Guard`'s kind (`create_fn_name()`, e.g. TENSOR_MATCH), source name
    (`name`, e.g. `L['x']`) and the user frame that caused it (`user_stack[-1]`)."""
    try:
        kind = g.create_fn_name()
    except Exception:
        kind = "GUARD"
    lineno = line = code_name = None
    stack_ = getattr(g, "user_stack", None)
    if stack_:
        frame = stack_[-1]
        lineno, line, code_name = frame.lineno, (frame.line or "").strip(), frame.name
    return GuardFields(kind, getattr(g, "name", None) or None, lineno, line, code_name)


def guard_tree(result: Any) -> str | None:
    """The guard tree of a finished compile, exactly as TORCH_LOGS=guards prints it:
    `str(result.guarded_code.guard_manager)` (the C++ guard manager's own rendering).
    None when the compile produced no guarded code."""
    guarded = getattr(result, "guarded_code", None) if result is not None else None
    return str(guarded.guard_manager) if guarded is not None else None


# `| | +- TENSOR_MATCH: check_tensor(L['x'], ...)  # y = x.sin()  # f.py:3 in f`
_LEAF = re.compile(r"^[| ]*\+- ([A-Z][A-Z0-9_]*): (.*)$", re.MULTILINE)


def guard_tree_leaves(tree: str) -> list[tuple[str, str]]:
    """(kind, check) of each leaf of a rendered guard tree: the guard manager draws a leaf
    as `+- KIND: check  # user line  # file:line in fn` under `| ` rails."""
    return [(m.group(1), m.group(2).split("  # ", 1)[0].rstrip()) for m in _LEAF.finditer(tree)]


def skip_reason(result: Any) -> str | None:
    """Why a compile produced nothing (`ConvertFrameReturn.skip_reason`)."""
    return getattr(result, "skip_reason", None) if result is not None else None


# -- compiles and exceptions ------------------------------------------------------


@functools.cache
def _compile_signature() -> inspect.Signature:
    from torch._dynamo import convert_frame

    return inspect.signature(convert_frame._compile)


def compile_flags(code: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, bool, Any]:
    """(one_graph, export, convert_frame_box) of a `convert_frame._compile` call, bound by
    name against its signature (`one_graph` is fullgraph=True)."""
    try:
        bound = _compile_signature().bind_partial(code, *args, **kwargs).arguments
    except TypeError:
        return True, True, None
    return (bool(bound.get("one_graph", True)), bool(bound.get("export", True)),
            bound.get("convert_frame_box"))


def is_restart(exc: BaseException) -> bool:
    """Dynamo throws an attempt away and traces the frame again (`RestartAnalysis`)."""
    from torch._dynamo import exc as dynamo_exc

    return isinstance(exc, dynamo_exc.RestartAnalysis)


def restart_reason(exc: BaseException) -> str | None:
    """The reason a `RestartAnalysis` carries (`restart_reason`)."""
    return getattr(exc, "restart_reason", None)


def is_unsupported(exc: BaseException) -> bool:
    """An instruction Dynamo cannot trace (`Unsupported`, the graph-break exception)."""
    from torch._dynamo import exc as dynamo_exc

    return isinstance(exc, dynamo_exc.Unsupported)


def is_soft_failure(exc: BaseException) -> bool:
    """A failure `ConvertFrame` swallows, running the frame eagerly instead: `Unsupported` and
    `UserError`, but never an uncaptured higher-order op."""
    from torch._dynamo import exc as dynamo_exc

    if isinstance(exc, dynamo_exc.UncapturedHigherOrderOpError):
        return False
    return isinstance(exc, (dynamo_exc.Unsupported, dynamo_exc.UserError))


def errors_on_graph_break(box: Any) -> bool:
    """Whether a compile's `convert_frame_box` says graph breaks are errors."""
    return box is None or getattr(box, "error_on_graph_break", True)


def break_type(exc: BaseException) -> str | None:
    """The graph-break type Dynamo names an `Unsupported` by (`gb_type`)."""
    return getattr(exc, "gb_type", None)


def break_message(exc: BaseException) -> str:
    """The text of a graph-break exception (`msg`, with Explanation and Hint lines)."""
    return str(getattr(exc, "msg", "") or exc)


def user_frame(exc: BaseException) -> tuple[int | None, str, str] | None:
    """(line, function, source line) of the innermost user frame of a graph break
    (`real_stack[-1]`, inside inlined helpers), or None."""
    stack_ = getattr(exc, "real_stack", None)
    if not stack_:
        return None
    frame = stack_[-1]
    return frame.lineno, frame.name, (frame.line or "").strip()


def break_frames(exc: BaseException) -> list[Any]:
    """The user frames a graph break passed through, outermost first (`real_stack`, a list
    of `traceback.FrameSummary`), or []."""
    return list(getattr(exc, "real_stack", None) or [])


def breaks_one_graph(exc: BaseException) -> bool:
    """An error `fullgraph=True` raises where Dynamo cannot capture one graph: `Unsupported`
    (a graph break) or `UserError` (a branch on a value known only at run time)."""
    from torch._dynamo import exc as dynamo_exc

    return isinstance(exc, (dynamo_exc.Unsupported, dynamo_exc.UserError))


def recompile_limit_hit(exc: BaseException) -> bool:
    """Whether a compile failed because the frame hit a recompile limit: Dynamo raises an
    `Unsupported` of type "Dynamo recompile limit exceeded", or `FailOnRecompileLimitHit`
    from it under fullgraph=True."""
    from torch._dynamo import exc as dynamo_exc

    while exc is not None:
        if isinstance(exc, dynamo_exc.FailOnRecompileLimitHit):
            return True
        if break_type(exc) == "Dynamo recompile limit exceeded":
            return True
        exc = exc.__cause__
    return False


def raises_at_recompile_limit(exc: BaseException) -> bool:
    """Whether a recompile-limit failure is `FailOnRecompileLimitHit` (fullgraph=True, or
    `fail_on_recompile_limit_hit`): the call raises rather than running eagerly."""
    from torch._dynamo import exc as dynamo_exc

    while exc is not None:
        if isinstance(exc, dynamo_exc.FailOnRecompileLimitHit):
            return True
        exc = exc.__cause__
    return False


def recompile_limits() -> tuple[int, int]:
    """(recompile_limit, accumulated_recompile_limit) from Dynamo's config."""
    from torch._dynamo import config

    return config.recompile_limit, config.accumulated_recompile_limit


_RESUME = re.compile(r"__resume_at_(\d+)_\d+")


def resume_offset(global_name: str) -> int | None:
    """The offset where a resume function continues the frame, in Dynamo's cleaned
    instructions (`tx.instructions`, as `create_call_resume_at` sees them), read from the
    global Dynamo names it by (`__resume_at_<offset>_<n>`, `n` a process-wide counter);
    None for any other name."""
    m = _RESUME.fullmatch(global_name)
    return int(m.group(1)) if m else None


def resume_function(output: Any, global_name: str) -> Any:
    """A resume function Dynamo installed in the frame's globals (`output.global_scope`)."""
    scope = getattr(output, "global_scope", None) or {}
    return scope.get(global_name)


def counters() -> dict[str, int]:
    """Dynamo's own bookkeeping (`torch._dynamo.utils.counters`): graphs compiled, FX call
    nodes captured, graph breaks."""
    from torch._dynamo.utils import counters as dynamo_counters

    stats = dynamo_counters.get("stats", {})
    return {
        "unique_graphs": int(stats.get("unique_graphs", 0)),
        "calls_captured": int(stats.get("calls_captured", 0)),
        "graph_breaks": int(sum(dynamo_counters.get("graph_break", {}).values())),
    }


def refusals(prefix: str) -> int:
    """How many refusals whose message starts with `prefix` Dynamo counted in this process
    (`counters["unimplemented"]`, keyed by message: e.g. "Attempt to trace generator",
    raised before `_compile` runs)."""
    from torch._dynamo.utils import counters as dynamo_counters

    return sum(n for text, n in dynamo_counters.get("unimplemented", {}).items()
               if text.startswith(prefix))


# The attributes `torch._dynamo.mark_dynamic` and its kin set on a tensor: attribute -> the
# call that sets it.
DYNAMIC_MARKS = {"_dynamo_dynamic_indices": "mark_dynamic",
                 "_dynamo_weak_dynamic_indices": "maybe_mark_dynamic",
                 "_dynamo_unbacked_indices": "mark_unbacked",
                 "_dynamo_strict_unbacked_indices": "mark_unbacked(strict=True)",
                 "_dynamo_static_indices": "mark_static"}


def marked_dims(tensor: Any, mark: str) -> list[int]:
    """The dimensions a tensor is marked on by one of `DYNAMIC_MARKS` (a set of indices
    on the tensor), sorted; [] when it has no such mark."""
    if mark not in DYNAMIC_MARKS:
        raise ValueError(f"not a mark: {mark!r} (one of {', '.join(DYNAMIC_MARKS)})")
    return sorted(getattr(tensor, mark, ()) or ())


def compiled_function(fn: Any) -> Any:
    """What `torch.compile` wrapped (`_torchdynamo_orig_callable`), or `fn` itself."""
    return getattr(fn, "_torchdynamo_orig_callable", fn)


# -- torch's logging --------------------------------------------------------------


def log_names() -> set[str]:
    """The TORCH_LOGS names `torch._logging.set_logs` takes (its keyword arguments)."""
    import torch._logging

    return set(inspect.signature(torch._logging.set_logs).parameters) - {"all", "modules"}


def is_log_artifact(name: str) -> bool:
    """Whether a TORCH_LOGS name is an artifact (switched on) rather than a log (given a
    level): `log_registry.is_artifact`."""
    from torch._logging._internal import log_registry

    return log_registry.is_artifact(name)


def set_logs(**settings: Any) -> None:
    """`torch._logging.set_logs`: what TORCH_LOGS would set, from Python."""
    import torch._logging

    torch._logging.set_logs(**settings)


def log_qnames() -> set[str]:
    """The qualified names of torch's registered logs (`log_registry.get_log_qnames()`)."""
    from torch._logging._internal import log_registry

    return set(log_registry.get_log_qnames())


def torch_loggers() -> list[Any]:
    """Every logger torch's log settings touch: registered logs, artifacts, their children,
    and the structured trace logger (`log_registry`, `trace_log`)."""
    import logging

    from torch._logging._internal import log_registry, trace_log

    names = (log_registry.get_log_qnames() | log_registry.get_artifact_log_qnames()
             | log_registry.get_child_log_qnames())
    return [logging.getLogger(n) for n in sorted(names)] + [trace_log]


def log_state() -> tuple[dict[str, int], set[str]]:
    """torch's log settings as a later `set_logs` or a new artifact logger reads them
    (`log_state.log_qname_to_level`, `.artifact_names`): the live dict and set."""
    from torch._logging._internal import log_state as state

    return state.log_qname_to_level, state.artifact_names


def is_torch_log_handler(handler: Any) -> bool:
    """Whether a handler is the stderr handler `set_logs` installs (`_is_torch_handler`)."""
    from torch._logging._internal import _is_torch_handler

    return _is_torch_handler(handler)


def configure_artifact_log(logger: Any) -> None:
    """Configure an artifact logger as torch does when it is first created."""
    from torch._logging._internal import configure_artifact_log as configure

    configure(logger)


# -- trackers ---------------------------------------------------------------------


@functools.cache
def lazy_tracker_class() -> type:
    """`LazyVariableTracker`: touched only through `is_realized`, `peek_type`, `unwrap` and
    `source` (anything else realizes it)."""
    from torch._dynamo.variables.lazy import LazyVariableTracker

    return LazyVariableTracker


@functools.cache
def base_python_type() -> Any:
    """`VariableTracker.python_type`, the fallback that formats reprs and may guard: trackers
    that do not override it are not asked."""
    from torch._dynamo.variables.base import VariableTracker

    return VariableTracker.python_type


# A tracker's own attributes are read from its `__dict__`, never through `__getattr__` (a
# lazy tracker's realizes) nor a property that builds trackers (`DunderDictVariable.items`).
# An attribute a tracker does not have reads as ABSENT (None is a value some hold).
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT", "__bool__": lambda self: False})()


def tracker_proxy(v: Any) -> Any:
    """The FX proxy a tracker of a graph value holds (`proxy`), or None."""
    return v.__dict__.get("proxy")


def tracker_sym_num(v: Any) -> Any:
    """The symbolic number a `SymNodeVariable` holds (`sym_num`), or None."""
    return v.__dict__.get("sym_num")


def tracker_py_type(v: Any) -> Any:
    """The type a `GetAttrVariable` was told its value has (`py_type`), or None."""
    return v.__dict__.get("py_type")


def tracker_items(v: Any) -> Any:
    """A container tracker's `items` as it holds them (a list, tuple or dict of trackers;
    some trackers' is a view that builds trackers when walked), or ABSENT."""
    return v.__dict__.get("items", ABSENT)


def tracker_fn(v: Any) -> Any:
    """The function a function tracker stands for (`fn`), or ABSENT."""
    return v.__dict__.get("fn", ABSENT)


def tracker_value(v: Any) -> Any:
    """The Python value a constant, enum, torch or user-object tracker holds (`value`),
    or ABSENT."""
    return v.__dict__.get("value", ABSENT)


def tracker_module_type(v: Any) -> Any:
    """The class of the module a module tracker stands for (`module_type`), or ABSENT."""
    return v.__dict__.get("module_type", ABSENT)


def tracker_own_source(v: Any) -> Any:
    """The `Source` a tracker holds in its own attributes (`source`), or None: unlike
    `tracker_source`, never a class attribute."""
    return v.__dict__.get("source")


# -- the graph handed to the backend ----------------------------------------------


def graph_code(gm: Any) -> str:
    """The Python code of the GraphModule Dynamo hands the backend, exactly `gm.code`, read
    without realizing it. Dynamo hands over a lazy module (`_LazyGraphModule`) that makes
    its `_code` (and `forward`) on first use of `.code`; realizing it early changes the
    module's `__dict__` and what AOTAutograd's cache key hashes. The same text comes from
    the graph itself: `gm.graph.python_code(root_module="self", record_func=...)`, the call
    `GraphModule.recompile` makes, which leaves the module untouched."""
    from torch.fx.experimental import _config as fx_experimental_config

    graph = gm.graph
    if "record_func" not in _python_code_parameters(type(graph)):
        return graph.python_code(root_module="self").src
    return graph.python_code(
        root_module="self", record_func=fx_experimental_config.enrich_profiler_metadata).src


@functools.cache
def _python_code_parameters(graph_class: type) -> frozenset[str]:
    return frozenset(inspect.signature(graph_class.python_code).parameters)


# -- graph-break messages ---------------------------------------------------------


class BreakParts(NamedTuple):
    explanation: str | None
    hints: tuple[str, ...]
    link: str | None


_EXPLANATION = re.compile(r"\n  Explanation: (.*?)(?=\n  Hint: |\n\n\n  Developer debug context:"
                          r"|\n\n  Developer debug context:|\n\n For more details|\Z)", re.S)
_HINT = re.compile(r"\n  Hint: (.*?)(?=\n  Hint: |\n\n  Developer debug context:"
                   r"|\n\n For more details|\Z)", re.S)
_LINK = re.compile(r"\n For more details about this graph break, please visit: (\S+)")


def break_parts(exc: BaseException) -> BreakParts:
    """The explanation, hints and documentation link of a graph-break message, each as
    Dynamo was given it. `exc.format_graph_break_message` lays a message out as the type,
    `  Explanation: ...`, one `  Hint: ...` line per hint, `  Developer debug context: ...`
    and ` For more details about this graph break, please visit: <link>` (the graph-break
    site's page `gb/gbNNNN.html`), indenting the continuation lines of each part by four
    spaces: taken off again here."""
    message = break_message(exc)
    m = _EXPLANATION.search(message)
    explanation = m.group(1).replace("\n    ", "\n") if m else None
    hints = tuple(h.group(1).replace("\n    ", "\n") for h in _HINT.finditer(message))
    link = _LINK.search(message)
    return BreakParts(explanation, hints, link.group(1) if link else None)


# -- recompiles: cache entries and their guard trees -------------------------------
# A cache entry's guard manager is a `GuardManagerWrapper` (torch/_dynamo/guards.py)
# around a C++ `RootGuardManager` (torch._C._dynamo.guards). Nothing below asks a
# manager to check (`check` counts failures and reorders the tree): leaves are called.


def cache_entry_fields(entry: Any) -> tuple[Any, Any]:
    """(compile_id, guard_manager) of a `CacheEntry`, as `get_and_maybe_log_recompilation_reasons`
    receives them and `_debug_get_cache_entry_list(code)` lists them."""
    return getattr(entry, "compile_id", None), getattr(entry, "guard_manager", None)


def frame_locals(frame: Any) -> Any:
    """The locals of a frame Dynamo is about to compile (`frame.f_locals`), what it hands
    every guard manager's `check_verbose` when it looks for recompile reasons."""
    return frame.f_locals


def guard_manager_of(result: Any) -> Any:
    """The guard manager a finished compile installs (`result.guarded_code.guard_manager`,
    the same object its cache entry holds), or None."""
    guarded = getattr(result, "guarded_code", None) if result is not None else None
    return getattr(guarded, "guard_manager", None) if guarded is not None else None


def guard_root(manager: Any) -> Any:
    """The C++ root of a guard manager wrapper (`.root`, a RootGuardManager)."""
    return manager.root


def guard_scope(manager: Any, f_locals: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(globals, locals) to evaluate guard code in, built as `get_guard_fail_reason_helper`
    builds them: the manager's `global_scope` (helpers such as `___check_obj_id`), and
    `{"L": f_locals, "G": global_scope["G"]}` with its `closure_vars`."""
    global_scope = dict(manager.global_scope or {})
    scope = {"L": f_locals, "G": global_scope.get("G", {})}
    scope.update(manager.closure_vars or {})
    return global_scope, scope


def leaf_guards(mgr: Any) -> list[Any]:
    """A manager's leaf checks (`get_leaf_guards()`), in the order it runs and prints them."""
    return mgr.get_leaf_guards()


def child_managers(mgr: Any) -> list[tuple[str, Any]]:
    """(accessor repr, child manager) of each accessor of a manager (`get_accessors()`,
    `get_child_managers()`, in the order it holds them now: failures reorder them). The
    repr (`FrameLocalsGuardAccessor(key='x', framelocals_idx=0)`, `GetAttrGuardAccessor(k)`)
    names the step from the parent's value to the child's."""
    return [(a.repr(), c) for a, c in zip(mgr.get_accessors(), mgr.get_child_managers())]


def dict_entry_managers(mgr: Any) -> list[tuple[str, Any]]:
    """A `DictGuardManager`'s key and value managers by entry index (`get_key_value_managers()`),
    as the tree prints them: `key <i>` then `value <i>`; none for other managers."""
    from torch._C._dynamo.guards import DictGuardManager

    if not isinstance(mgr, DictGuardManager):
        return []
    out = []
    for index, (key, value) in sorted(mgr.get_key_value_managers().items()):
        if key is not None:
            out.append((f"key {index}", key))
        if value is not None:
            out.append((f"value {index}", value))
    return out


def epilogue_guards(root: Any) -> list[Any]:
    """The root's epilogue lambda guards (`get_epilogue_lambda_guards()`: the shape relations
    Dynamo checks after every other guard), printed at the end of the tree."""
    get = getattr(root, "get_epilogue_lambda_guards", None)
    return list(get()) if get is not None else []


def manager_source(mgr: Any) -> str | None:
    """The source a manager guards (`get_source()`, e.g. `L['c'].k`)."""
    return mgr.get_source() or None


def manager_type(mgr: Any) -> Any:
    """The type the guarded value had when the guards were built (`get_type_of_guarded_value()`)."""
    return mgr.get_type_of_guarded_value()


def leaf_kind(leaf: Any) -> str:
    """A leaf's kind as the tree prints it: its class name (`TENSOR_MATCH`)."""
    return type(leaf).__name__


def leaf_parts(leaf: Any) -> list[str]:
    """A leaf's code parts (`verbose_code_parts()`), each with the user-line comment the
    tree prints after it; one printed line each."""
    return list(leaf.verbose_code_parts())


def is_relational(leaf: Any) -> bool:
    """A relational guard (NO_TENSOR_ALIASING, OBJECT_ALIASING, STORAGE_OVERLAPPING): it hangs
    under several managers, keeps state between calls until the root resets it, and so is
    never called here."""
    from torch._C._dynamo.guards import RelationalGuard

    return isinstance(leaf, RelationalGuard)


def leaf_check(leaf: Any, value: Any) -> bool:
    """Run one leaf check on a value (`leaf(value)`, the C++ `LeafGuard.__call__`); it
    changes nothing (fail counts and order belong to managers)."""
    return bool(leaf(value))


def dispatch_keys(tensor: Any) -> Any:
    """A tensor's dispatch key set (`torch._C._dispatch_keys`), what TENSOR_MATCH compares
    first."""
    import torch

    return torch._C._dispatch_keys(tensor)


# -- stages after Dynamo: the structured trace, AOTAutograd's and Inductor's graphs --------
#
# AOTAutograd and Inductor log each stage on the structured trace (`torch.__trace`,
# `torch._logging.trace_structured`) as text. The live graph the text was printed from is
# a local of the function that called `trace_structured`, read from its frame while the
# handler runs (nothing is changed, nothing kept).

# artifact -> (the local that holds the live object, the functions known to log it live)
_STAGE_LOCALS = {
    "aot_joint_graph": ("fx_g", ("_log_joint_graph",)),
    "aot_forward_graph": ("fw_module", ("_log_fw_bw_graphs",)),
    "aot_backward_graph": ("bw_module", ("_log_fw_bw_graphs",)),
    "aot_inference_graph": ("fw_module", ("aot_stage1_graph_capture", "aot_dispatch_base_graph",
                                          "_aot_stage1_graph_capture")),
    "inductor_post_grad_graph": ("gm", ("codegen_and_compile", "fx_codegen_and_compile")),
    "inductor_output_code": ("self", ("_compile_to_module_lines",)),
    "dynamo_output_graph": ("gm", ("compile_and_call_fx_graph",)),
}


def trace_logger() -> Any:
    """The structured trace logger (`torch._logging._internal.trace_log`, `torch.__trace`):
    always DEBUG, never propagates; `trace_structured` builds a record only while it has a
    handler."""
    from torch._logging._internal import trace_log

    return trace_log


def trace_artifact_name(record: Any) -> str | None:
    """What a structured trace record is: the first key of its `metadata` (`aot_forward_graph`,
    `inductor_output_code`), or for a generic `artifact` its `metadata["artifact"]["name"]`
    (`inductor_post_grad_graph`)."""
    metadata = getattr(record, "metadata", None)
    if not isinstance(metadata, dict) or not metadata:
        return None
    name = next(iter(metadata))
    if name == "artifact":
        inner = metadata.get("artifact")
        return inner.get("name") if isinstance(inner, dict) else None
    return name


def artifact_compile_id(record: Any) -> str | None:
    """The compile id a structured trace record carries, as Dynamo prints it (`0/0`, `0/0_1`):
    `frame_id`, `frame_compile_id` and `attempt` of its metadata."""
    metadata = getattr(record, "metadata", None) or {}
    frame, compile_ = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or compile_ is None:
        return None
    attempt = metadata.get("attempt") or 0
    return f"{frame}/{compile_}" + (f"_{attempt}" if attempt else "")


def artifact_payload(record: Any) -> str | None:
    """The text a structured trace record carries (`record.payload`)."""
    payload = getattr(record, "payload", None)
    return payload if isinstance(payload, str) else None


def artifact_object(name: str) -> Any:
    """The live object a stage's text was printed from, while the handler runs: the local
    `_STAGE_LOCALS` names in the frame that called `trace_structured` (`_log_fw_bw_graphs`'
    `fw_module`, `codegen_and_compile`'s `gm`, `_compile_to_module_lines`' GraphLowering).
    None when the text came from somewhere else: a cache hit re-logs the stored text from
    the cache's own code, with no graph behind it."""
    import sys

    wanted = _STAGE_LOCALS.get(name)
    if wanted is None:
        return None
    local, callers = wanted
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "trace_structured":
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name not in callers:
        return None
    return caller.f_locals.get(local)


def is_backward_compile(name: str) -> bool | None:
    """Whether the Inductor compile logging this stage compiles a backward graph: the
    `is_backward` local of `codegen_and_compile`, or the GraphLowering's `is_backward`."""
    import sys

    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "trace_structured":
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return None
    if name == "inductor_output_code":
        graph = caller.f_locals.get("self")
        value = getattr(graph, "is_backward", None)
    else:
        value = caller.f_locals.get("is_backward")
    return bool(value) if value is not None else None


def fx_graph_of(gm: Any) -> Any:
    """The FX graph of a GraphModule (`gm.graph`)."""
    return gm.graph


def node_sources(node: Any) -> list[tuple[str, int | None]]:
    """(name, graph id) of every node an FX node was made from, at any depth:
    `node.meta["from_node"]`, a list of `torch.fx.traceback.NodeSource` (`name`, `graph_id`,
    `from_node`), which AOTAutograd's retrace fills with the Dynamo node it interpreted and
    Inductor's pattern matcher copies onto a replacement (`_COPY_META_FIELDS`)."""
    out: list[tuple[str, int | None]] = []
    todo = list(node.meta.get("from_node") or ())
    seen = 0
    while todo and seen < 10_000:
        seen += 1
        src = todo.pop(0)
        name = getattr(src, "name", None)
        if isinstance(name, str):
            out.append((name, getattr(src, "graph_id", None)))
        todo.extend(getattr(src, "from_node", None) or ())
    return out


def node_seq_nr(node: Any) -> int | None:
    """The autograd sequence number of the forward op a node belongs to (`meta["seq_nr"]`):
    a backward node carries its forward op's number."""
    value = node.meta.get("seq_nr")
    return value if isinstance(value, int) else None


def node_partitioner_tag(node: Any) -> str | None:
    """Which side of the joint graph a node was traced on (`meta["partitioner_tag"]`:
    `is_forward`, `is_backward`)."""
    tag = node.meta.get("partitioner_tag")
    return tag if isinstance(tag, str) else None


def node_original_aten(node: Any) -> str | None:
    """The ATen op a node was decomposed from (`meta["original_aten"]`), as text."""
    op = node.meta.get("original_aten")
    return str(op) if op is not None else None


def node_desc(node: Any) -> tuple[str, int | None, int | None]:
    """What an AOT placeholder or output stands for (`meta["desc"]`, an AOTInput/AOTOutput of
    `torch._functorch._aot_autograd.descriptors`): (class name, `idx` of a plain input or
    output, `idx` of the output a tangent belongs to)."""
    desc = node.meta.get("desc")
    return _desc_fields(desc)


def _desc_fields(desc: Any) -> tuple[str, int | None, int | None]:
    if desc is None:
        return "", None, None
    kind = type(desc).__name__
    idx = getattr(desc, "idx", None)
    output = getattr(desc, "output", None)
    of_output = getattr(output, "idx", None) if output is not None else None
    return kind, idx if isinstance(idx, int) else None, (
        of_output if isinstance(of_output, int) else None)


def output_descs(gm: Any) -> list[tuple[str, str | None, int | None]]:
    """(class name of its desc, node name, idx) of each value an AOT graph returns: the output
    node's `args[0]` with `meta["desc"]`, a list beside it."""
    out = []
    for node in gm.graph.nodes:
        if node.op != "output":
            continue
        values = node.args[0] if node.args else ()
        if not isinstance(values, (list, tuple)):
            values = (values,)
        descs = node.meta.get("desc") or [None] * len(values)
        for value, desc in zip(values, descs):
            kind, idx, _ = _desc_fields(desc)
            out.append((kind, getattr(value, "name", None), idx))
    return out


def target_text(node: Any) -> str:
    """An FX node's target as text: `aten.mm.default`, or a placeholder's name."""
    target = node.target
    return target if isinstance(target, str) else str(target)


def output_code_kernels(graph: Any) -> list[tuple[str, str, list[Any]]]:
    """(kernel name, kind, post-grad FX nodes it computes) of each kernel call in the code
    Inductor generated, in call order, read from the GraphLowering after code generation.

    Its wrapper (`graph.wrapper_code.lines`) keeps the call lines: a `KernelCallLine`
    (`kernel_name`, `call_args`: the buffers it is called on) for a generated kernel, an
    `ExternKernelOutLine` / `ExternKernelAllocLine` (`node`: the IR node with `origins`, its
    `get_kernel_name()`, e.g. `extern_kernels.mm`) for a library call. A buffer is written
    by the first call that names it (it must be written before it is read), so a generated
    kernel computes the scheduler nodes (`scheduler.name_to_buf[b].defining_op`, fused
    through `scheduler.name_to_fused_node`) whose buffers it names first; their IR nodes'
    `origins` are the post-grad nodes. (On the CPU: C++ kernels.)"""
    wrapper = graph.wrapper_code
    scheduler = getattr(graph, "scheduler", None)
    name_to_buf = getattr(scheduler, "name_to_buf", {}) or {}
    name_to_fused = getattr(scheduler, "name_to_fused_node", {}) or {}
    claimed: set[int] = set()
    out: list[tuple[str, str, list[Any]]] = []

    def fused_of(buffer_name: str) -> Any:
        buf = name_to_buf.get(buffer_name)
        op = getattr(buf, "defining_op", None) if buf is not None else None
        if op is None:
            return None
        return name_to_fused.get(op.get_name(), op)

    def origins_of(snode: Any) -> list[Any]:
        found = []
        for sub in snode.get_nodes():
            ir = getattr(sub, "node", None)
            found.extend(getattr(ir, "origins", None) or ())
        return found

    for line in wrapper.lines:
        kind = type(line).__name__
        if kind == "KernelCallLine":
            origins: list[Any] = []
            for arg in line.call_args:
                snode = fused_of(str(arg))
                if snode is not None and id(snode) not in claimed:
                    claimed.add(id(snode))
                    origins.extend(origins_of(snode))
            out.append((str(line.kernel_name), "kernel", origins))
        elif kind in ("ExternKernelOutLine", "ExternKernelAllocLine", "ExternKernelMultiOutLine"):
            node = line.node
            snode = fused_of(node.get_name())
            if snode is not None:
                claimed.add(id(snode))
            kernel = getattr(node, "python_kernel_name", None) or node.get_kernel_name()
            out.append((str(kernel), "extern_kernel",
                        list(getattr(node, "origins", None) or ())))
    return out


def compile_caches() -> list[tuple[Any, str, str]]:
    """The caches that serve AOTAutograd's or Inductor's work without doing it (a stage is
    then re-logged as text, with no graph behind it): (config module, the setting that
    turns it on when true, what it is called). The remote ones are off (None) unless set."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    return [(inductor_config, "fx_graph_cache", "Inductor's FX graph cache"),
            (inductor_config, "fx_graph_remote_cache", "Inductor's remote FX graph cache"),
            (functorch_config, "enable_autograd_cache", "AOTAutograd's cache"),
            (functorch_config, "enable_remote_autograd_cache", "AOTAutograd's remote cache")]


# -- the graph-break registry -----------------------------------------------------


@functools.cache
def graph_break_registry() -> dict[str, list[dict[str, Any]]]:
    """Dynamo's graph-break registry, `torch/_dynamo/graph_break_registry.json` of the
    installed torch: `"GB0059"` -> variants `{Gb_type, Context, Explanation, Hints}` (the
    id a break message's link `.../gb/gb0059.html` names); {} when torch has none."""
    import json
    from pathlib import Path

    import torch._dynamo

    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# -- the lazy-tracker protocol and a tracker's own reads ---------------------------
# (read for every tracker a step looks at again: an unrealized lazy is checked on every
# use, so the first three are methodcallers, at C speed)

# Whether a `LazyVariableTracker` has built its real tracker (`is_realized()`; asking does
# not realize it).
is_realized = operator.methodcaller("is_realized")
# The Python type an unrealized lazy will model (`peek_type()`, only while unrealized;
# it does not realize).
peek_type = operator.methodcaller("peek_type")
# The real tracker of a realized lazy (`unwrap()`).
unwrap = operator.methodcaller("unwrap")


def tracker_source(v: Any) -> Any:
    """The `Source` a tracker was built from (`VariableTracker.source`, set in its
    `__init__`, so a lazy's is found without its realizing `__getattr__`), or None."""
    return getattr(v, "source", None)


def source_name(source: Any) -> str:
    """What a `Source` prints as in guards (`L['x']`): `Source.name()`, a method (or
    a property: see RELEASES)."""
    name = source.name
    return name() if callable(name) else str(name)


def python_type(v: Any) -> Any:
    """The Python type a realized tracker models (`VariableTracker.python_type()`; it may
    raise, and on some trackers guard: see `overrides_python_type`)."""
    return v.python_type()


def overrides_python_type(cls: type) -> bool:
    """Whether a tracker class has its own `python_type` (the base one formats reprs, calls
    `as_python_constant()` and may guard: trackers without their own are not asked)."""
    return cls.python_type is not base_python_type()


# Tracker classes whose own `python_type()` does work beyond reading a type (see RELEASES).
PYTHON_TYPE_NOT_ASKED = ("SliceVariable", "CallMethodVariable")


def asks_python_type(cls: type) -> bool:
    """Whether a tracker of this class may be asked its `python_type()`: it has its own,
    and asking only reads a type (never realizes, guards or builds trackers)."""
    return cls.__name__ not in PYTHON_TYPE_NOT_ASKED and overrides_python_type(cls)


# -- what the hooks read ----------------------------------------------------------


def next_instruction(tx: Any) -> Any:
    """The instruction a translator's `step` is about to run,
    `tx.instructions[tx.instruction_pointer]`, or None once it has finished
    (`instruction_pointer` None). Read before every step."""
    ip = tx.instruction_pointer
    return tx.instructions[ip] if ip is not None else None


def break_logged(exc: BaseException) -> bool:
    """Whether Dynamo has logged this graph-break exception already (`exc.logged`, which
    `log_graph_break` sets and checks first)."""
    return bool(getattr(exc, "logged", False))


def bytecode_hooks() -> list[Any]:
    """The hooks `register_bytecode_hook` has registered (`convert_frame._bytecode_hooks`,
    an ordered dict by handle id)."""
    from torch._dynamo import convert_frame

    return list(convert_frame._bytecode_hooks.values())


def artifact_name(logger: Any) -> str | None:
    """The TORCH_LOGS artifact a logger logs (`artifact_name`, which `getArtifactLogger`
    sets on the loggers it makes), or None for any other logger."""
    return getattr(logger, "artifact_name", None)


def reset() -> None:
    """Clear Dynamo's caches and counters of compiled frames (`torch._dynamo.reset()`,
    what `torch.compiler.reset()` calls)."""
    import torch._dynamo

    torch._dynamo.reset()


def leaf_check_verbose(leaf: Any, value: Any) -> list[str]:
    """What a leaf that explains itself says when it fails (`check_verbose(value)`, which
    GLOBAL_STATE has: `GLOBAL_STATE changed: grad_mode`); [] for other leaves or when it
    passes. It reads the state only."""
    check = getattr(leaf, "check_verbose", None)
    if check is None:
        return []
    info = check(value)
    return [] if info.result else list(info.verbose_code_parts)


# -- shapes -------------------------------------------------------------------------
# An attempt's shape environment (`ShapeEnv`, torch/fx/experimental/symbolic_shapes.py):
# the symbols it made, the symbolic guards and the replacements, all appended as the
# trace goes, read by length each step and in full when the compile ends.


def shape_env(output: Any) -> Any:
    """The attempt's `ShapeEnv` (`OutputGraph.shape_env`, its fake mode's), or None."""
    try:
        return output.shape_env
    except Exception:  # noqa: BLE001 - an output graph without one
        return None


def shape_counts(env: Any) -> tuple[int, int, int]:
    """(symbols, symbolic guards, replacements) so far: each only grows during a trace
    (`var_to_range` holds backed and unbacked symbols alike)."""
    return len(env.var_to_range), len(env.guards), len(env.replacements)


def shape_symbols(env: Any, start: int = 0) -> list[Any]:
    """The symbols made from the `start`-th on, in the order they were made."""
    return list(itertools.islice(env.var_to_range, start, None))


def shape_guards(env: Any, start: int = 0) -> list[Any]:
    """The symbolic guards (`ShapeGuard`: expr, sloc, size_oblivious) from the `start`-th on."""
    return env.guards[start:]


def shape_replacements(env: Any, start: int = 0) -> list[Any]:
    """The symbols replaced (set equal to a constant or another expression) from the
    `start`-th on, in the order they were first replaced."""
    return list(itertools.islice(env.replacements, start, None))


class SymbolFacts(NamedTuple):
    name: str
    sources: tuple[str, ...]   # what it stands for: L['x'].size()[0]; more than one: duck shaping
    hint: str | None           # the value it was made from (None: unbacked)
    range: str                 # its value range now: [2, int_oo]
    replacement: str | None    # what it was set equal to, if it was
    replaced_at: str | None    # where, as torch notes it: user line (framework line)


def symbol_facts(env: Any, symbol: Any) -> SymbolFacts:
    """A symbol as the shape environment holds it now."""
    hint = env.backed_var_to_val.get(symbol) if hasattr(env, "backed_var_to_val") else \
        env.var_to_val.get(symbol)
    vr = env.var_to_range.get(symbol)
    rng = f"[{vr.lower}, {vr.upper}]" if vr is not None else ""
    repl = env.replacements.get(symbol)
    sloc = env.replacements_slocs.get(symbol) if repl is not None else None
    return SymbolFacts(str(symbol), tuple(source_name(s) for s in env.var_to_sources.get(symbol, ())),
                       None if hint is None else str(hint), rng,
                       None if repl is None else str(repl), None if sloc is None else str(sloc))


class ShapeGuardFields(NamedTuple):
    expr: str
    user: str | None        # torch's note of the user's line: `if x.shape[0] > 8:  # f.py:6 in g`
    framework: str          # the framework line that asked: `_subclasses/fake_impls.py:1960 in infer_size`
    size_oblivious: bool


def shape_guard_fields(guard: Any) -> ShapeGuardFields:
    """A `ShapeGuard`'s expression and where it was added (`guard.sloc`, an `SLoc`)."""
    sloc = guard.sloc
    floc = sloc.framework_loc
    if floc is None:
        framework = ""
    elif isinstance(floc, str):
        framework = floc
    else:
        from torch._guards import format_frame
        framework = format_frame(floc)
    return ShapeGuardFields(str(guard.expr), sloc.maybe_user_loc, framework, bool(guard.size_oblivious))


class DimContext(NamedTuple):
    size: int                 # the real size
    dynamic: str              # DimDynamic's name: STATIC, DUCK, DYNAMIC, UNBACKED, ...
    constraint: str | None    # a constraint's class name (RelaxedUnspecConstraint, ...)
    value: str | None         # what the dimension became in this shape environment: s77, 4
    marks: tuple[str, ...]    # the user's marks on it: mark_dynamic, maybe_mark_dynamic, ...


_MARKS = (("_dynamo_unbacked_indices", "mark_unbacked"),
          ("_dynamo_strict_unbacked_indices", "mark_unbacked"),
          ("_dynamo_dynamic_indices", "mark_dynamic"),
          ("_dynamo_weak_dynamic_indices", "maybe_mark_dynamic"),
          ("_dynamo_static_indices", "mark_static"))


def input_dims(output: Any, env: Any) -> list[tuple[str, list[DimContext]]]:
    """Each tensor Dynamo wrapped in this attempt, by source, with each dimension's
    policy (`tracing_context.tensor_to_context`: real tensor -> symbolic context) and what
    it became here; empty once the attempt has cleaned up."""
    out = []
    contexts = output.tracing_context.tensor_to_context
    for tensor, ctx in list(contexts.items()):
        source = getattr(ctx, "tensor_source", None)
        cache = getattr(ctx, "shape_env_to_source_to_symbol_cache", {}).get(id(env))
        if source is None or cache is None:
            continue
        name = source_name(source)
        sizes = getattr(ctx, "dynamic_sizes", ())
        constraints = getattr(ctx, "constraint_sizes", ())
        dims = []
        for i, policy in enumerate(sizes):
            marks = tuple(dict.fromkeys(word for attr, word in _MARKS
                                        if i in getattr(tensor, attr, ())))
            value = cache.get(f"{name}.size()[{i}]")
            constraint = constraints[i] if i < len(constraints) else None
            dims.append(DimContext(int(tensor.shape[i]), policy.name,
                                   None if constraint is None else type(constraint).__name__,
                                   None if value is None else str(value), marks))
        out.append((name, dims))
    return out


def assumes_static() -> bool:
    """Whether sizes start static (`config.assume_static_by_default`; `dynamic=True`
    turns it off for its compiles)."""
    from torch._dynamo import config
    return bool(config.assume_static_by_default)


def module_name(tx: Any) -> str | None:
    """The `__name__` of the module whose function a translator traces (`tx.f_globals`)."""
    return tx.f_globals.get("__name__")


# -- DDPOptimizer ----------------------------------------------------------------------


class BucketFields(NamedTuple):
    size: int                 # bytes of the parameters counted into it
    params: tuple[str, ...]   # their names, as DDPOptimizer wrote them
    nodes: tuple[str, ...]    # the FX nodes of its subgraph, in graph order
    extended: int             # nodes added past the cap so the subgraph has an output


def ddp_optimizer(output: Any) -> Any:
    """The `DDPOptimizer` whose `compile_fn` is the backend of this compile, or None.

    Relies on: `convert_frame` (`get_optimize_ddp_mode() == "ddp_optimizer"` and an active
    DDP module) making one `DDPOptimizer` per frame compile and handing its bound
    `compile_fn` to Dynamo as the backend, which `OutputGraph.compiler_fn` holds."""
    # told by its class's name and module, so that a compile without DDP imports nothing
    owner = getattr(getattr(output, "compiler_fn", None), "__self__", None)
    cls = type(owner)
    if cls.__name__ == "DDPOptimizer" and cls.__module__ == "torch._dynamo.backends.distributed":
        return owner
    return None


def ddp_caps(optimizer: Any) -> tuple[int, int]:
    """`(bucket_bytes_cap, first_bucket_cap)` of a `DDPOptimizer`, in bytes: a bucket is
    closed once its parameters reach the cap; the last bucket in graph order (the first
    whose gradients are ready in backward) is closed at the first cap."""
    return int(optimizer.bucket_bytes_cap), int(optimizer.first_bucket_cap)


def ddp_buckets(optimizer: Any, graph: Any) -> list[BucketFields] | None:
    """The buckets `DDPOptimizer.compile_fn` made of `graph`, in graph order (bucket k is
    the subgraph `submod_k`), or None when it has not split this graph.

    Relies on: `compile_fn` stashing its `Bucket`s (`size`, `params`, `nodes` listed
    backwards, `opcount_increased_to_capture_external_output`) in `self.buckets`, in graph
    order, before it compiles any subgraph; the nodes are `graph`'s own."""
    buckets = getattr(optimizer, "buckets", None)
    if not buckets or any(n.graph is not graph for b in buckets for n in b.nodes):
        return None
    return [BucketFields(int(b.size), tuple(b.params), tuple(n.name for n in reversed(b.nodes)),
                         int(b.opcount_increased_to_capture_external_output))
            for b in buckets]


def module_path(node: Any) -> str | None:
    """The qualified path of the module an FX node was made in, as Dynamo wrote it
    (`L['self'].transformer.h.3.attn`): the innermost, last, entry of the node's
    `meta["nn_module_stack"]` (an ordered dict key -> (path, module type) that Dynamo
    fills while it inlines a module's `forward`); None for a node made outside any module."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    entry = next(reversed(stack.values()))
    path = entry[0] if isinstance(entry, tuple) and entry else None
    return path if isinstance(path, str) else None
