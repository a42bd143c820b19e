"""https://github.com/pytorch/pytorch/issues/148983 — "inference_mode Tensors do not always
need to be guarded on" (seen in vLLM).

Mechanism: a tensor made under torch.inference_mode has another dispatch key set than a
normal one; TENSOR_MATCH checks it, so the normal tensor recompiles.
A right answer says: a recompile on `x` (its dispatch keys: an inference tensor, then a
normal one) at `return x.sin()`; no graph breaks.
"""
import torch

with torch.inference_mode():
    x = torch.randn(3)
y = torch.randn(3)


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    return x.sin()  # user line


f(x)
f(y)
