"""FX nodes as records: op, target, arguments, fake-tensor metadata, creating step and
the module they were made in."""

from __future__ import annotations

from typing import Any

from .internals import example_value, module_path
from .recording import Node
from .text import MAX_ARGS, MAX_NAME, exact, shorten
from .variables import tensor_meta


def target_name(target: Any) -> str:
    """`torch.sin`, `operator.add`, `relu` (a method name) or a module path; a target
    with no name is the repr of the program's object, bounded."""
    if isinstance(target, str):
        return exact(target)
    name = getattr(target, "__name__", None)
    if name is None:
        return shorten(str(target), MAX_NAME)
    module = getattr(target, "__module__", None)
    if module in (None, "builtins"):
        return exact(name)
    if module == "_operator":
        module = "operator"
    if module.startswith("torch._C._nn"):
        module = "torch._C._nn"
    return exact(f"{module}.{name}")


def node_name(node: Any) -> str:
    """A node's name as records keep it: exactly Dynamo's (the name in the graph code)."""
    return exact(node.name)


def describe_node(node: Any, step: int | None) -> Node:
    """An FX node as a record; its arguments are reprs of the program's values, bounded."""
    args = ", ".join([repr(a) for a in node.args] + [f"{k}={v!r}" for k, v in node.kwargs.items()])
    shape, dtype = None, None
    value = example_value(node)
    if value is not None:
        shape, dtype = tensor_meta(value)
    module = module_path(node)
    return Node(name=node_name(node), op=node.op,
                target=target_name(node.target), args=shorten(args, MAX_ARGS),
                inputs=tuple(node_name(n) for n in node.all_input_nodes),
                shape=shape, dtype=dtype, step=step,
                module=None if module is None else shorten(module, MAX_NAME))
