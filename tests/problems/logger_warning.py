"""https://github.com/tenstorrent/tt-torch/issues/852 — "Disable logger level graph breaks"
(transformers' `logger.warning` in `generate`).

Mechanism: a `logging.Logger` method called inside the compiled function is a graph break.
A right answer says: a graph break at the `logger.warning` line; the fix is
`torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning)` (the method
called, on the class: every logger, and transformers' `warning_once` the same way; the older
name `ignore_logger_methods` is an alias); no recompiles.
"""
import logging

import torch

logger = logging.getLogger("problem")


def f(x):
    y = x * 2
    logger.warning("scaling")  # user line
    return y + 1


compiled = torch.compile(f, backend="eager")
compiled(torch.randn(4))
