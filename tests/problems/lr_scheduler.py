"""https://github.com/pytorch/pytorch/issues/107076 — "the lr in AdamW Optimizer is a float
so causes a recompile everytime LRScheduler changes the lr" (and #120934).

Mechanism: the optimizer's step is compiled; `param_groups[0]['lr']` is a Python float,
guarded by value; the scheduler changes it every epoch.
A right answer says: a recompile on the lr value (0.1, then 0.05), the user line `opt.step()`
(the guard is installed in torch/optim/sgd.py); the fix is a tensor lr
(`SGD(..., lr=torch.tensor(0.1))`).
"""
import torch
from torch import nn

model = nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)


@torch.compile(backend="eager")
def step():
    opt.step()  # user line


x = torch.randn(2, 4)
for _ in range(3):
    model(x).sum().backward()
    step()
    sched.step()
