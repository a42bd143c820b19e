"""https://github.com/pytorch/pytorch/issues/98533 (a global dict read in compiled code) and
the hooks that count calls in a global registry.

Mechanism: the compiled function adds to a global dict each call (bookkeeping); the dict's
length is guarded, so every call recompiles, and so does the string attribute it reads.
A right answer says: both failing guards (the dict's length and `mod.name`); the fix covers
both: keep the bookkeeping out of the compiled region (`torch.compiler.disable`).
"""
import torch

seen = {}


class Mod:
    def __init__(self, name):
        self.name = name


def step(mod, x):
    seen[mod.name] = True  # user line
    return x + 1


compiled = torch.compile(step, backend="eager")
x = torch.randn(4)
for i in range(3):
    compiled(Mod(f"layer{i}"), x)
