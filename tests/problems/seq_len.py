"""https://github.com/pytorch/pytorch/issues/141589 — "Minimizing recompiles when compiling
multiple inlined `nn.Module`s" (a recompile for each new sequence length).

Mechanism: the first call's sizes are static; a new sequence length recompiles once, and
automatic dynamic makes that dimension dynamic for the calls after.
A right answer says: a recompile on `tokens`' size (dimension 1: 64, then 68), automatic
dynamic made it dynamic (no more recompiles follow); the fix that spares the first
recompile is `torch._dynamo.mark_dynamic(tokens, 1)` before the first call.
"""
import torch
from torch import nn

emb = nn.Embedding(100, 8)


def forward(tokens):
    return emb(tokens).sum(1)  # user line


compiled = torch.compile(forward, backend="eager")
for n in (64, 68, 66, 70):
    tokens = torch.ones(2, n, dtype=torch.long)
    compiled(tokens)
