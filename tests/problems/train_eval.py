"""https://github.com/pytorch/pytorch/issues/110803 — "Toggling model.train() causes guard
failures every time".

Mechanism: a module's `training` flag is guarded (nn.Dropout reads it); train and eval each
get their own cache entry, then calls hit one of the two.
A right answer says: one recompile, on `training` (True then False), expected: one entry per
mode and no more; the user's line is `return self.drop(h)` (the guard is installed in
torch/nn/modules/dropout.py); no graph breaks.
"""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.lin(x)
        return self.drop(h)  # user line


model = Net()
compiled = torch.compile(model, backend="eager")
x = torch.randn(4, 8)
for _ in range(3):
    model.train()
    compiled(x)
    model.eval()
    compiled(x)
