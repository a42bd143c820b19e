"""https://github.com/pytorch/pytorch/issues/100977 — "torch.compile can re-use an inference
graph when it should run autograd" (an evaluation under no_grad, then training).

Mechanism: grad mode is a global guard; the no_grad entry and the grad entry are each
compiled once.
A right answer says: one recompile on grad mode, expected (one entry per mode, bounded);
no graph breaks.
"""
import torch
from torch import nn

model = nn.Linear(4, 4)
compiled = torch.compile(model, backend="eager")
x = torch.randn(2, 4)
for _ in range(2):
    with torch.no_grad():
        compiled(x)
    compiled(x).sum().backward()
