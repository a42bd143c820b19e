"""Reading a VariableTracker into a `Var` without changing what Dynamo does.

NOTE (the realization trap): a `LazyVariableTracker` builds its real tracker,
and installs guards, as soon as anything but a handful of its own fields is
touched: its `__getattr__` realizes, `isinstance(v, SomeTrackerClass)` realizes
(the tracker metaclass overrides `__instancecheck__`), and on a
`LazyConstantVariable` even `python_type()` installs a TYPE_MATCH guard. A
recorder that realized would change the graph and guards it records, so lazies
are read only through `type(v)`, `is_realized()`, `peek_type()`, `unwrap()`
and `source`, and class tests are done with `issubclass(type(v), ...)`.
"""

from __future__ import annotations

import functools
from typing import Any

from .recording import Var

MAX_DETAIL = 60

_DTYPE_SHORT = {
    "torch.float32": "f32", "torch.float64": "f64", "torch.float16": "f16",
    "torch.bfloat16": "bf16", "torch.int64": "i64", "torch.int32": "i32",
    "torch.int16": "i16", "torch.int8": "i8", "torch.uint8": "u8",
    "torch.bool": "bool", "torch.complex64": "c64", "torch.complex128": "c128",
}

# Trackers whose python_type() does work beyond reading a type (it may guard).
_NO_PYTHON_TYPE = ("SliceVariable",)
# Containers can change in place, so their reading is not cached.
_MUTABLE_KINDS = ("ListVariable", "DequeVariable", "ConstDictVariable", "DictVariable",
                  "SetVariable", "TupleVariable", "ListIteratorVariable")


def shorten(text: str, limit: int = MAX_DETAIL) -> str:
    """Bound a reading; the cut is marked, never silent."""
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dtype_short(dtype: Any) -> str:
    name = str(dtype)
    return _DTYPE_SHORT.get(name, name.replace("torch.", ""))


def tensor_meta(value: Any) -> tuple[str | None, str | None]:
    """(shape, dtype) of a fake tensor, e.g. ('[4, 3]', 'f32'); SymInts print as symbols."""
    try:
        shape = "[" + ", ".join(str(s) for s in value.shape) + "]"
        return shape, dtype_short(value.dtype)
    except Exception:
        return None, None


def _type_name(t: Any) -> str | None:
    try:
        return t.__name__
    except Exception:
        return None


class VarReader:
    """Turns trackers into `Var`s, once per tracker object while a compile lasts."""

    def __init__(self) -> None:
        # id(tracker) -> (tracker, Var); the tracker is kept so its id is not reused.
        self._cache: dict[int, tuple[Any, Var]] = {}
        self._lazy_cls: type | None = None
        self._sources: dict[Any, str] = {}

    def clear(self) -> None:
        self._cache.clear()
        self._sources.clear()

    def _lazy_class(self) -> type:
        if self._lazy_cls is None:
            from torch._dynamo.variables.lazy import LazyVariableTracker

            self._lazy_cls = LazyVariableTracker
        return self._lazy_cls

    def source_name(self, source: Any) -> str | None:
        if source is None:
            return None
        try:
            name = self._sources.get(source)
        except TypeError:  # an unhashable source
            name = None
        if name is None:
            try:
                name = source.name() if callable(source.name) else str(source.name)
            except Exception:
                name = type(source).__name__
            name = shorten(name, 120)
            try:
                self._sources[source] = name
            except TypeError:
                pass
        return name

    def read(self, v: Any) -> Var:
        cached = self._cache.get(id(v))
        if cached is not None and cached[0] is v:
            var = cached[1]
            if not (var.lazy and not var.realized and v.is_realized()):
                return var
        cls = type(v)
        if issubclass(cls, self._lazy_class()):
            var = self._read_lazy(v)  # re-read once it is realized (checked above)
        else:
            var = self._read_real(v, self.source_name(getattr(v, "source", None)))
            if cls.__name__ in _MUTABLE_KINDS:
                return var
        self._cache[id(v)] = (v, var)
        return var

    def _read_lazy(self, v: Any) -> Var:
        source = self.source_name(v.source)
        if not v.is_realized():
            t = _type_name(v.peek_type())
            return Var(kind=type(v).__name__, python_type=t, source=source,
                       detail=f"unrealized {t}", lazy=True, realized=False)
        real = self._read_real(v.unwrap(), source)
        return Var(kind=real.kind, python_type=real.python_type, source=real.source or source,
                   detail=real.detail, lazy=True, realized=True, node=real.node)

    def _read_real(self, v: Any, source: str | None) -> Var:
        cls = type(v)
        kind = cls.__name__
        ptype = _python_type(v, cls, kind)
        detail, node = _detail(v, kind)
        return Var(kind=kind, python_type=ptype, source=source, detail=shorten(detail), node=node)


@functools.cache
def _base_python_type() -> Any:
    """`VariableTracker.python_type`, looked up once (torch is imported lazily)."""
    from torch._dynamo.variables.base import VariableTracker

    return VariableTracker.python_type


def _python_type(v: Any, cls: type, kind: str) -> str | None:
    """The Python type a tracker models, without the costly fallbacks.

    The base `VariableTracker.python_type` tries `as_python_constant()` and, for
    most trackers, raises after formatting the tracker's repr: skipped. A
    `GetAttrVariable` knows its type only when Dynamo told it (`py_type`).
    """
    if kind in _NO_PYTHON_TYPE or cls.python_type is _base_python_type():
        return None
    if kind == "GetAttrVariable":
        t = v.__dict__.get("py_type")
        return _type_name(t) if t is not None else None
    try:
        return _type_name(v.python_type())
    except Exception:
        return None


def _detail(v: Any, kind: str) -> tuple[str, str | None]:
    """A short reading of a realized tracker and the FX node it stands for."""
    d = v.__dict__
    proxy = d.get("proxy")
    if proxy is not None and hasattr(proxy, "node"):
        node = proxy.node
        if "Tensor" in kind or kind in ("NumpyNdarrayVariable", "UnspecializedPythonVariable",
                                        "FakeItemVariable"):
            shape, dtype = tensor_meta(node.meta.get("example_value"))
            meta = f"{dtype}{shape}" if dtype else ""
            return f"{meta} node={node.name}".strip(), node.name
        if kind == "SymNodeVariable":
            sym = d.get("sym_num")
            return f"{type(sym).__name__} {sym} node={node.name}", node.name
        return f"node={node.name}", node.name
    if "value" in d and kind in ("ConstantVariable", "EnumVariable"):
        return repr(d["value"]), None
    if "items" in d:
        items = d["items"]
        try:
            return f"len {len(items)}", None
        except Exception:
            return "", None
    if "fn" in d:
        fn = d["fn"]
        return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "") or "", None
    if "value" in d:
        value = d["value"]
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if isinstance(name, str):
            module = getattr(value, "__module__", None)
            return (f"{module}.{name}" if module and kind.startswith("Torch") else name), None
        return f"{type(value).__name__} object", None
    if "module_type" in d:
        return getattr(d["module_type"], "__name__", ""), None
    return "", None
