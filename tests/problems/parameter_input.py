"""https://github.com/pytorch/pytorch/issues/135011 — "dynamo (re)compilation issues: shape
(1,1), nn.Parameter, mark_dynamic": "passing `Parameter` as argument instead of `Tensor`
causes recompilation".

Mechanism: TENSOR_MATCH checks the tensor's Python type; an nn.Parameter, then a plain
Tensor of the same shape, are two types, so the second call recompiles.
A right answer says: a recompile on `x` (its type, Parameter then Tensor) at the user line
`return x.sin() + 1.0`; bounded (one entry per type); no graph breaks.
"""
import torch


def f(x):
    return x.sin() + 1.0  # user line


compiled = torch.compile(f, backend="eager")
compiled(torch.nn.Parameter(torch.ones(2, 2)))
compiled(torch.ones(2, 2))
