"""https://github.com/pytorch/pytorch/issues/102814 — "mark_dynamic may error too
aggressively": `x + y` with `y` of a fixed size specializes `x`'s marked dimension.

Mechanism: a dimension marked dynamic is specialized to 4 by a broadcast; the compile raises
ConstraintViolationError (the program catches it).
A right answer says: the compile failed (not "no graph breaks"), with Dynamo's message
(specialized to a constant 4), the user line `return x + y`; the fix is
`torch._dynamo.maybe_mark_dynamic` (or removing the mark, or marking `y` too).
"""
import torch


def f(x, y):
    return x + y  # user line


x = torch.randn(4, 16)
y = torch.randn(4, 16)
torch._dynamo.mark_dynamic(x, 0)
compiled = torch.compile(f, backend="eager")
try:
    compiled(x, y)
except Exception as e:  # the program goes on, as a training script's retry would
    print("compile failed:", type(e).__name__)
