"""https://github.com/pytorch/pytorch/issues/93739 — "[Dynamo] Prints, logging, and warnings".

Mechanism: `print` inside the compiled function is a graph break (GB0059-like: a builtin
Dynamo cannot trace); the function is compiled in two graphs.
A right answer says: a graph break at the `print` line, the function compiled in 2 graphs;
the fix is `torch._dynamo.config.reorderable_logging_functions.add(print)` (Dynamo's second
hint, not the first); no recompiles.
"""
import torch


def f(x):
    y = x.sin()
    print("y computed")  # user line
    return y.cos()


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(4))
compiled(torch.randn(4))
