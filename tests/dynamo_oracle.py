"""Dynamo as its own oracle, for the robustness tests: what it made of some calls, normalised.

`artifacts_of(make_calls, run)` is `scenarios.artifacts` for any list of calls:
it resets Dynamo, compiles each function once, calls it (through `run`, which
may wrap the call in `capture.record()`), and returns the graphs handed to the
backend, the guard trees of every cache entry, the rewritten bytecode and the
results, with process-wide counters and addresses normalised away. A call that
raises gives its exception's type and first line as its result, so "raises the
same error with and without recording" is part of the comparison.

`seams()` lists everything the recorder patches, by identity; `force_restore()`
puts those back if a test that found a bug left them installed, so one failure
does not cascade into every later test. `fresh_process_artifacts(names)` runs
scenarios in an interpreter that never imported the project.
"""

from __future__ import annotations

import functools
import gc
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch._dynamo import convert_frame, guards, output_graph, symbolic_convert
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

from scenarios import normalise as _scenario_normalise

# More process-wide numbering than scenarios.py knows about: Dynamo names the global
# holding a tensor subclass `__subclass_<Name>_<id(cls)>_c<n>`, n counting up per process.
_MORE_VOLATILE = [
    (re.compile(r"(__subclass_\w+?)_\d+_c\d+"), r"\1_ID_cN"),
]


def normalise(text: str) -> str:
    text = _scenario_normalise(text)
    for pattern, repl in _MORE_VOLATILE:
        text = pattern.sub(repl, text)
    return text


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

Call = tuple  # (fn, args) or (fn, args, kwargs)


def seams() -> dict[str, Any]:
    """Everything the recorder touches, as identities to compare before and after."""
    tx = symbolic_convert.InstructionTranslatorBase
    return {
        "step": vars(tx)["step"],
        "log_graph_break": vars(tx)["log_graph_break"],
        "call_user_compiler": vars(output_graph.OutputGraph)["call_user_compiler"],
        "_compile": convert_frame._compile,
        "reasons": convert_frame.get_and_maybe_log_recompilation_reasons,
        "stance_reasons": guards.get_and_maybe_log_recompilation_reasons,
        "bytecode_hooks": list(convert_frame._bytecode_hooks.values()),
        "dynamo_log_handlers": list(logging.getLogger("torch._dynamo").handlers),
        "gc": (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()),
        "dataloader_workers": vars(_MultiProcessingDataLoaderIter)["__init__"],
    }


def force_restore(before: dict[str, Any]) -> None:
    """Put the seams back as they were in `before` and forget any active recording."""
    import capture.recorder

    tx = symbolic_convert.InstructionTranslatorBase
    tx.step = before["step"]
    tx.log_graph_break = before["log_graph_break"]
    output_graph.OutputGraph.call_user_compiler = before["call_user_compiler"]
    convert_frame._compile = before["_compile"]
    convert_frame.get_and_maybe_log_recompilation_reasons = before["reasons"]
    guards.get_and_maybe_log_recompilation_reasons = before["stance_reasons"]
    keep = {id(h) for h in before["bytecode_hooks"]}
    for key, hook in list(convert_frame._bytecode_hooks.items()):
        if id(hook) not in keep:
            del convert_frame._bytecode_hooks[key]
    logger = logging.getLogger("torch._dynamo")
    for handler in list(logger.handlers):
        if handler not in before["dynamo_log_handlers"]:
            logger.removeHandler(handler)
    if gc.get_threshold() != before["gc"][1]:
        gc.set_threshold(*before["gc"][1])
    _MultiProcessingDataLoaderIter.__init__ = before["dataloader_workers"]
    capture.recorder._active = None
    if capture.recorder._lock.locked():  # held by an interrupted `with _lock:`
        capture.recorder._lock.release()
    while logging_lock_held():  # an interrupt between logging's acquire and release
        logging._lock.release()


def logging_lock_held() -> bool:
    """Whether this thread holds the logging module's lock (every other thread's logging waits)."""
    return logging._lock._is_owned()


def plain_result(value: Any) -> Any:
    """A call's result as plain data: tensors as (type, dtype, shape, values)."""
    if isinstance(value, torch.Tensor):
        return [type(value).__name__, str(value.dtype), list(value.shape),
                value.detach().to(torch.float64).tolist()]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [plain_result(v) for v in value]]
    if isinstance(value, dict):
        return ["dict", sorted((str(k), plain_result(v)) for k, v in value.items())]
    if isinstance(value, (int, float, str, bool, type(None))):
        return value
    return repr(value)


def raised(e: BaseException) -> list[str]:
    first = next((line for line in str(e).splitlines() if line.strip()), "")
    return ["raised", type(e).__name__, first]


def call_of(call: Call) -> tuple[Callable[..., Any], tuple, dict]:
    fn, args, *rest = call
    return fn, tuple(args), dict(rest[0]) if rest else {}


def artifacts_of(make_calls: Callable[[], Sequence[Call]],
                 run: Callable[[Callable[[], Any]], Any] = lambda call: call(),
                 **compile_options: Any) -> dict[str, Any]:
    """Reset Dynamo, compile and call each call (through `run`), and read what Dynamo made."""
    from torch._dynamo.convert_frame import register_bytecode_hook
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    torch._dynamo.reset()
    calls = make_calls()
    graphs: list[str] = []
    bytecode: list[str] = []
    codes: list[Any] = []

    def backend(gm, example_inputs):
        graphs.append(gm.code)
        return gm.forward

    def on_bytecode(code, new_code):
        import dis
        bytecode.append(f"{code.co_name}\n{dis.Bytecode(new_code).dis()}")
        if code not in codes:
            codes.append(code)

    handle = register_bytecode_hook(on_bytecode)
    results: list[Any] = []
    try:
        compiled: dict[int, Any] = {}
        for call in calls:
            fn, args, kwargs = call_of(call)
            if id(fn) not in compiled:
                compiled[id(fn)] = torch.compile(fn, backend=backend, **compile_options)
            f = compiled[id(fn)]
            try:
                results.append(plain_result(run(lambda: f(*args, **kwargs))))
            except Exception as e:  # the same error with and without recording
                results.append(raised(e))
    finally:
        handle.remove()
    guard_trees = [f"{entry.compile_id}\n{entry.guard_manager}"
                   for code in codes for entry in _debug_get_cache_entry_list(code)]
    return {
        "graphs": [normalise(g) for g in graphs],
        "guards": [normalise(t) for t in guard_trees],
        "bytecode": [normalise(b) for b in bytecode],
        "results": results,
    }


def eager_results(make_calls: Callable[[], Sequence[Call]]) -> list[Any]:
    """The same calls without torch.compile: what the compiled results must equal."""
    out = []
    for call in make_calls():
        fn, args, kwargs = call_of(call)
        try:
            out.append(plain_result(fn(*args, **kwargs)))
        except Exception as e:
            out.append(raised(e))
    return out


def recorded_artifacts(make_calls: Callable[[], Sequence[Call]], max_steps: int | None = None,
                       **compile_options: Any) -> tuple[dict[str, Any], list[Any]]:
    """`artifacts_of` with every call made inside its own `capture.record()`; and the recordings."""
    import capture

    recordings = []
    kw = {} if max_steps is None else {"max_steps": max_steps}

    def run(call):
        rec = None
        try:
            with capture.record(**kw) as rec:
                return call()
        finally:
            recordings.append(rec)

    return artifacts_of(make_calls, run, **compile_options), recordings


@functools.lru_cache(maxsize=None)
def fresh_process_artifacts(names: tuple[str, ...]) -> dict[str, Any]:
    """`scenarios.artifacts(name)` for each name, in an interpreter that never imported capture."""
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    # imported as `scenarios`, not run as __main__, so class names in guards agree
    script = ("import json, scenarios; "
              f"print(json.dumps({{n: scenarios.artifacts(n) for n in {list(names)!r}}}))")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout.splitlines()[-1])


def scenario_artifacts(names: Sequence[str]) -> dict[str, Any]:
    """The same scenarios, compiled plainly in this process, now."""
    from scenarios import artifacts

    return {n: artifacts(n) for n in names}


def realizations(run: Callable[[], Any]) -> list[tuple]:
    """Each lazy realization while `run()` runs: its source, and the offset and frame asking.

    Reading a LazyVariableTracker the wrong way builds it (and installs guards), so the
    same sequence with and without recording says the recorder realized nothing:
    realizing early (then finding it done when Dynamo asks) shows as another place.
    """
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.variables import lazy

    original = lazy.LazyCache.realize
    log: list[tuple] = []

    def realize(self):
        name = getattr(self.source, "name", None)
        tx = InstructionTranslator.current_tx()
        inst = getattr(tx, "current_instruction", None)
        log.append((normalise(str(name() if callable(name) else name)),
                    getattr(inst, "offset", None), tx.f_code.co_name if tx else None))
        return original(self)

    lazy.LazyCache.realize = realize
    try:
        run()
    finally:
        lazy.LazyCache.realize = original
    return log


# -- Dynamo's own strings, unnormalised ---------------------------------------------------

def _seeded(make: Callable[[], Sequence[Call]]) -> Callable[[], Sequence[Call]]:
    def seeded() -> Sequence[Call]:
        torch.manual_seed(0)
        return make()
    return seeded


@_seeded
def _encoder_12() -> Sequence[Call]:
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()
    return [(model, (torch.randn(2, 5, 32),))]


@_seeded
def _attention() -> Sequence[Call]:
    mha = nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    return [(mha, (x, x, x))]


@_seeded
def _decoder_layer() -> Sequence[Call]:
    layer = nn.TransformerDecoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True).eval()
    return [(layer, (torch.randn(2, 5, 16), torch.randn(2, 4, 16)))]


# Real layers whose graph code has lines of thousands of characters and whose guard trees
# pass 100 000 characters: the fidelity cases beside scenarios.SCENARIOS.
LARGE_CASES: dict[str, Callable[[], Sequence[Call]]] = {
    "encoder_12_layers": _encoder_12,
    "multihead_attention": _attention,
    "decoder_layer": _decoder_layer,
}


def dis_rows(code: Any) -> list[tuple[int, str, str]]:
    """(offset, opname, argument) of each instruction as this Python's `dis` writes it: its
    argrepr, or the bare argument where it writes none. On 3.11 `dis` writes only the
    constant's index for KW_NAMES; capture shows the names (their tuple's repr)."""
    import dis

    rows = []
    for ins in dis.get_instructions(code):
        if ins.opname == "KW_NAMES" and ins.arg is not None and sys.version_info < (3, 12):
            arg = repr(code.co_consts[ins.arg])
        else:
            arg = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
        rows.append((ins.offset, ins.opname, arg))
    return rows


def dynamos_own_texts(make_calls: Callable[[], Sequence[Call]],
                      run: Callable[[Callable[[], Any]], Any] = lambda call: call()
                      ) -> dict[str, Any]:
    """What Dynamo wrote for some calls, exactly (not normalised: compare within one run).

    `graphs`: the code of each GraphModule handed to the backend, read after the recorder
    saw it; `guard_trees`: `str(guard_manager)` of every cache entry; `modified`: the rows
    of every code object Dynamo installed, in order; `originals`: the rows of the frames
    it compiled, by (name, first line).
    """
    from torch._dynamo.convert_frame import register_bytecode_hook
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    torch._dynamo.reset()
    calls = make_calls()
    graphs: list[str] = []
    modified: list[list[tuple[int, str, str]]] = []
    originals: dict[tuple[str, int], list[list[tuple[int, str, str]]]] = {}
    codes: list[Any] = []

    def backend(gm, example_inputs):
        graphs.append(gm.code.strip("\n"))
        return gm.forward

    def on_bytecode(code, new_code):
        modified.append(dis_rows(new_code))
        # two resume functions of one frame can share a name and first line
        originals.setdefault((code.co_name, code.co_firstlineno), []).append(dis_rows(code))
        if code not in codes:
            codes.append(code)

    handle = register_bytecode_hook(on_bytecode)
    try:
        compiled: dict[int, Any] = {}
        for call in calls:
            fn, args, kwargs = call_of(call)
            if id(fn) not in compiled:
                compiled[id(fn)] = torch.compile(fn, backend=backend)
            f = compiled[id(fn)]
            try:
                run(lambda: f(*args, **kwargs))
            except Exception:  # the texts are what matter here
                pass
    finally:
        handle.remove()
    trees = [str(entry.guard_manager) for code in codes
             for entry in _debug_get_cache_entry_list(code)]
    torch._dynamo.reset()
    return {"graphs": graphs, "guard_trees": trees, "modified": modified,
            "originals": originals}


def backend_views(make_calls: Callable[[], Sequence[Call]],
                  run: Callable[[Callable[[], Any]], Any] = lambda call: call()) -> list[Any]:
    """What the backend receives, as it receives it: the module's type, whether it is still
    lazy (`_LazyGraphModule` makes its code on first use), whether its `_code` exists, and
    its attribute names in order (a realized module gains `_code` and others mid-dict)."""
    torch._dynamo.reset()
    views: list[Any] = []

    def backend(gm, example_inputs):
        needs = getattr(type(gm), "_needs_recompile", None)
        views.append([type(gm).__name__, needs() if needs is not None else None,
                      "_code" in gm.__dict__, list(gm.__dict__)])
        return gm.forward

    compiled: dict[int, Any] = {}
    for call in make_calls():
        fn, args, kwargs = call_of(call)
        if id(fn) not in compiled:
            compiled[id(fn)] = torch.compile(fn, backend=backend)
        f = compiled[id(fn)]
        run(lambda: f(*args, **kwargs))
    torch._dynamo.reset()
    return views
