"""https://github.com/pytorch/pytorch/issues/135688 — "torch._dynamo.exc.Unsupported: Graph
break due to unsupported Python builtin _warnings.warn".

Mechanism: `warnings.warn` is a builtin Dynamo marks as skipped: a graph break (GB0007),
still on torch 2.13.
A right answer says: a graph break at `warnings.warn("aaa")`; the fix is
`torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)` (ezyang's answer in
the thread), not Dynamo's "file an issue".
"""
import warnings

import torch


def fn(x):
    warnings.warn("aaa")  # user line
    return x + 1


compiled = torch.compile(fn, backend="eager")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    compiled(torch.randn(3))
    compiled(torch.randn(3))
