"""https://github.com/pytorch/pytorch/issues/144787 ("always causes an unknown guard
failure" under `error_on_recompile`) and the `set_stance("fail_on_recompile")` recipe for
catching recompiles in CI.

Mechanism: after warm-up the program forbids recompiles; a call with a new dtype fails a
guard and, under the stance, raises instead of compiling (the program catches it).
A right answer says: the recompile was refused by fail_on_recompile, names the guard that
failed (x's dtype, float32 then float64) and the user line `return x.relu() * 2`; it must
not say the call compiled.
"""
import torch


def f(x):
    return x.relu() * 2  # user line


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(4))
torch.compiler.set_stance("fail_on_recompile")
try:
    compiled(torch.randn(4, dtype=torch.float64))
except Exception as e:
    print("refused:", type(e).__name__)
finally:
    torch.compiler.set_stance("default")
