"""https://github.com/pytorch/pytorch/issues/131975 — "torch.compile should not recompiles
when `.requires_grad=True` under `torch.no_grad()` context".

Mechanism: TENSOR_MATCH checks requires_grad; `a.requires_grad_(True)` recompiles.
A right answer says: a recompile on `a`'s requires_grad (False then True), at the user line
`return (a + b).clip(0)`; each value of requires_grad gets its own compile (bounded).
"""
import torch


def f(a, b):
    return (a + b).clip(0)  # user line


compiled = torch.compile(f, backend="eager")
a = torch.randn(8, 8)
b = torch.randn(8, 8)
with torch.no_grad():
    compiled(a, b)
    a.requires_grad_(True)
    compiled(a, b)
