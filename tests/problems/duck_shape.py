"""https://github.com/pytorch/pytorch/issues/135011 (shapes that start equal) and the duck
shaping notes of the dynamic-shapes manual.

Mechanism: two inputs whose sizes were equal on the first dynamic compile share one symbol
(duck shaping); a call where they differ fails `L['x'].size()[0] == L['y'].size()[0]`.
A right answer says: the check that the two sizes are equal failed; the fix is
`torch.fx.experimental._config.use_duck_shape = False`.
"""
import torch


def f(x, y):
    return x.sum() + y.sum()  # user line


compiled = torch.compile(f, backend="eager", dynamic=True)
compiled(torch.randn(4), torch.randn(4))
compiled(torch.randn(5), torch.randn(6))
