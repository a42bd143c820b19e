"""https://github.com/pytorch/pytorch/issues/119186 — "No logging of compiled code": "there
was a graph break inside of a for loop ... because of the conditional".

Mechanism: a data-dependent `if` inside a `for` loop; Dynamo cannot resume inside a loop,
so it skips the whole frame: `f` runs eagerly on every call, nothing of it compiled.
A right answer says: `f` was skipped (runs eagerly on every call), why (a data-dependent
branch in a loop), the user line `if x.sum() > 0:`; the fix is `torch.where` (or moving the
loop body into a function).
"""
import torch


def f(x):
    for _ in range(3):
        if x.sum() > 0:  # user line
            x = x - 1
        else:
            x = x + 1
    return x


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(4))
compiled(torch.randn(4))
