"""https://github.com/pytorch/pytorch/issues/106067 and the threads on Python ints as inputs:
an int argument that changes between calls.

Mechanism: an int argument is guarded by value on the first compile; when it changes,
automatic dynamic recompiles once and makes it a symbol, so later values reuse that compile.
A right answer says: `n` changed once (2, then 3), automatic dynamic made it dynamic: no
more recompiles follow (calls with 4 and 5 reuse it); no "pass it as a tensor" needed.
"""
import torch


def repeat(x, n):
    return x * n  # user line


compiled = torch.compile(repeat, backend="eager")
for n in (2, 3, 4, 5):
    compiled(torch.randn(4), n)
