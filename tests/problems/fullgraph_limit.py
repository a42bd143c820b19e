"""https://github.com/pytorch/pytorch/issues/167504 — "torch._dynamo.exc.FailOnRecompileLimitHit
when compiling in a loop" (with fullgraph=True the recompile limit is an error, not a
fallback to eager).

Mechanism: a str argument takes a new value on every call and is guarded by value; with
fullgraph=True the call past `recompile_limit` (3 here) raises FailOnRecompileLimitHit, which
the program catches.
A right answer says: `mode` took a new value on every call, the recompile limit was hit and
with fullgraph=True that call raised (it does not run eagerly); the fix keeps the string
out of the compiled function.
"""
import torch

gains = {f"mode{i}": float(i) for i in range(6)}


def f(x, mode):
    return x * gains[mode]  # user line


compiled = torch.compile(f, backend="eager", fullgraph=True)
x = torch.randn(4)
try:
    with torch._dynamo.config.patch(recompile_limit=3):
        for i in range(6):
            compiled(x, f"mode{i}")
except Exception as e:  # the training loop's own handler
    print("stopped:", type(e).__name__)
