"""https://github.com/pytorch/pytorch/issues/124858-style reports of `.item()` in compiled code
(Dynamo: "Unsupported Tensor.item() call with capture_scalar_outputs=False").

Mechanism: `.item()` turns a tensor into a Python number, which Dynamo does not trace by
default: a graph break.
A right answer says: a graph break at `scale = x.abs().max().item()`; the fix is
`torch._dynamo.config.capture_scalar_outputs = True` (or keeping it a tensor).
"""
import torch


def normalize(x):
    scale = x.abs().max().item()  # user line
    return x / scale


compiled = torch.compile(normalize, backend="eager")
compiled(torch.randn(16))
