"""https://github.com/pytorch/pytorch/issues/114220 — "boolean masking creates a graph break
due to aten.nonzero".

Mechanism: `t[t > 0.5]` has an output size that depends on the data (a dynamic-output op).
A right answer says: a graph break at `return t[t > 0.5]`; the fix is
`torch._dynamo.config.capture_dynamic_output_shape_ops = True` (or `torch.where` to keep the
shape); no recompiles.
"""
import torch


def f(t):
    return t[t > 0.5]  # user line


compiled = torch.compile(f, backend="eager")
compiled(torch.rand(3, 16))
