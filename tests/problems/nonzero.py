"""https://github.com/pytorch/pytorch/issues/99609 and the nonzero reports it links —
a dynamic-output op (`nonzero`) inside a compiled function.

Mechanism: `torch.nonzero` returns a tensor whose size depends on the values.
A right answer says: a graph break at the `nonzero` line; the fix is
`torch._dynamo.config.capture_dynamic_output_shape_ops = True`.
"""
import torch


def f(x):
    idx = torch.nonzero(x > 0)  # user line
    return idx.float().sum() + x.sum()


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(8))
