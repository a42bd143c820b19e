"""https://github.com/pytorch/pytorch/issues/135011 — "dynamo (re)compilation issues: shape
(1,1) ... strange guard failure `- 2 <= L['x'].size()[0]`" (and #135430: "0/1 are always
specialized (unless you `mark_unbacked`)").

Mechanism: sizes 0 and 1 are specialized; after automatic dynamic made dim 0 dynamic, a call
with size 1 fails `2 <= L['x'].size()[0]` and recompiles.
A right answer says: a recompile on `2 <= x.size()[0]`, the new size 1; the fix is
`torch._dynamo.mark_unbacked(x, 0)`; never mark_dynamic, dynamic=True or duck shaping.
"""
import torch


def f(x):
    return x.sin() + 1.0  # user line


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(2, 3))
compiled(torch.randn(3, 3))
compiled(torch.randn(1, 3))
