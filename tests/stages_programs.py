"""Programs for the stages-after-Dynamo tests, and what torch makes of them in a fresh process.

Run as a script (`python stages_programs.py MODE PROGRAM`), it compiles one program under
Inductor in this interpreter and prints, as JSON, what Dynamo and Inductor produced:
the graphs handed to the backend, the guard trees, the rewritten bytecode, Inductor's
output code (`GraphLowering.save_output_code`, which involves no logging), the results
and gradients. MODE is `plain` (no recording), `off` (`record()`) or `on`
(`record(after_dynamo=True)`, which also prints the stages it recorded and its notes), or
`served`: `on` with Inductor's and AOTAutograd's caches left on, to see what they serve.
"""

from __future__ import annotations

import json
import re
import sys

import torch


def mlp_weights() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randn(8, 4, generator=g).requires_grad_(),
            torch.randn(3, 8, generator=g).requires_grad_())


W1, W2 = mlp_weights()


def mlp(x):
    h = torch.relu(x @ W1.t())
    return (h @ W2.t()).sum()


def gelu_block(x):
    y = x * 2
    return torch.nn.functional.gelu(y) + 1


def pointwise_chain(x):
    a = x.sin()
    b = a * 2 + 1
    return (b.relu() - x.cos()).exp()


def inputs(name: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    if name == "mlp":
        return torch.randn(2, 4, generator=g)
    return torch.randn(4, 5, generator=g, requires_grad=name == "gelu_block")


PROGRAMS = {"mlp": mlp, "gelu_block": gelu_block, "pointwise_chain": pointwise_chain}

# Volatile text: process-wide numbering and paths.
_VOLATILE = [
    (re.compile(r"__compiled_fn_\d+(_[0-9a-f_]+)?"), "__compiled_fn_N"),
    (re.compile(r"__resume_at_\d+_\d+"), "__resume_at_N"),
    (re.compile(r"0x[0-9a-f]{6,16}"), "0xADDR"),
    (re.compile(r"\b\d{12,16}\b"), "<ID>"),
    (re.compile(r"/tmp/\S+"), "<PATH>"),
]


def normalise(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


def run(mode: str, name: str) -> dict:
    import dis

    from torch._dynamo.convert_frame import register_bytecode_hook
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.graph import GraphLowering

    fn = PROGRAMS[name]
    graphs, bytecode, codes, output_code = [], [], [], []

    def backend(gm, example_inputs):
        graphs.append(gm.graph.python_code(root_module="self").src)
        return compile_fx(gm, example_inputs)

    def on_bytecode(code, new_code):
        bytecode.append(dis.Bytecode(new_code).dis())
        codes.append(code)

    GraphLowering.save_output_code = output_code.append
    handle = register_bytecode_hook(on_bytecode)
    x = inputs(name)
    compiled = torch.compile(fn, backend=backend)
    recording = None
    try:
        if mode == "plain":
            out, grads = _call(compiled, x, name)
        else:
            import capture

            if mode == "served":   # the caches are not turned off: stages come as they serve
                from capture import internals

                internals.compile_caches = lambda: []
            with capture.record(after_dynamo=mode in ("on", "served")) as recording:
                out, grads = _call(compiled, x, name)
    finally:
        handle.remove()
        GraphLowering.save_output_code = None
    guards = [str(e.guard_manager) for code in codes for e in _debug_get_cache_entry_list(code)]
    result = {
        "graphs": [normalise(g) for g in graphs],
        "guards": [normalise(g) for g in guards],
        "bytecode": [normalise(b) for b in bytecode],
        "output_code": [normalise(c) for c in output_code],
        "result": out.detach().tolist(),
        "grads": [g.tolist() for g in grads],
    }
    if recording is not None:
        result["stages"] = [[s.to_dict() for s in c.stages] for c in recording.compiles]
        result["notes"] = [e.message for e in recording.events if e.kind == "note"]
    return result


def _call(compiled, x, name):
    params = [W1, W2] if name == "mlp" else [x] if x.requires_grad else []
    for p in params:
        p.grad = None
    out = compiled(x)
    if params:
        out.sum().backward()
    return out, [p.grad for p in params]


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
