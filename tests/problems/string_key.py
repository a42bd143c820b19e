"""https://github.com/pytorch/pytorch/issues/128319 and diffusers' per-layer hooks — one
function compiled for many objects that differ in a string attribute.

Mechanism: a str attribute read in the compiled function is guarded by value; every object
with a new key recompiles, and the 9th hits `recompile_limit` (8) and runs eagerly.
A right answer says: `patch.key` takes a new value on every call (one line, not one per cache
entry), the recompile limit is reached and later calls run eagerly; the fix keeps the string
out of the compiled function.
"""
import torch


class Patch:
    def __init__(self, key):
        self.key = key


scales = {f"blocks.{i}.attn.v.weight": float(i + 1) for i in range(10)}


def apply(patch, x):
    return x * scales[patch.key]  # user line


compiled = torch.compile(apply, backend="eager")
x = torch.randn(4)
for i in range(10):
    compiled(Patch(f"blocks.{i}.attn.v.weight"), x)
