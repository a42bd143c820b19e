"""https://github.com/pytorch/pytorch/issues/128319 — "[dynamo] Recompilation on a
counter-like attribute of nn module".

Mechanism: an int attribute of an nn.Module is guarded by its value (ints on modules are
not made dynamic by default); `self.counter += 1` recompiles on every call until the limit.
A right answer says: `self.counter` changed on every call (0, 1, 2, ...); the fix is
`torch._dynamo.config.allow_unspec_int_on_nn_module = True`.
"""
import torch
from torch import nn


class Mod(nn.Module):
    def __init__(self):
        super().__init__()
        self.counter = 0
        self.linear = nn.Linear(1, 1)

    def forward(self, x):
        self.counter += 1  # user line
        return self.linear(x)


mod = Mod()
compiled = torch.compile(mod, backend="eager")
for _ in range(5):
    compiled(torch.randn(1, 1))
