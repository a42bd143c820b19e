"""Reading a VariableTracker into a `Var` without changing what Dynamo does.

NOTE (the realization trap): a `LazyVariableTracker` builds its real tracker,
and installs guards, as soon as anything but a handful of its own fields is
touched: its `__getattr__` realizes, `isinstance(v, SomeTrackerClass)` realizes
(the tracker metaclass overrides `__instancecheck__`), and on a
`LazyConstantVariable` even `python_type()` installs a TYPE_MATCH guard. A
recorder that realized would change the graph and guards it records, so lazies
are read only through `type(v)`, `is_realized()`, `peek_type()`, `unwrap()`
and `source` (each an accessor of `capture.internals`), and class tests are
done with `issubclass(type(v), ...)`.
"""

from __future__ import annotations

import collections
import functools
import weakref
from typing import Any, NamedTuple

from . import internals
from .internals import (
    example_value, is_realized, lazy_tracker_class, peek_type, python_type,
    source_name, tracker_items, tracker_source, unwrap,
)
from .recording import Var
from .text import exact, shorten

_DTYPE_SHORT = {
    "torch.float32": "f32", "torch.float64": "f64", "torch.float16": "f16",
    "torch.bfloat16": "bf16", "torch.int64": "i64", "torch.int32": "i32",
    "torch.int16": "i16", "torch.int8": "i8", "torch.uint8": "u8",
    "torch.bool": "bool", "torch.complex64": "c64", "torch.complex128": "c128",
}

# Trackers with nothing of their own to show: without a source, all read alike.
_SAME_READING = ("NullVariable",)
# Containers a tracker keeps its items in; a reading shows their length.
_PLAIN_CONTAINERS = (list, tuple, dict, set, collections.deque)
# Trackers (and their subclasses) whose items never change after they are made:
# Dynamo builds a new tracker instead (iterators only move an index).
_FIXED_ITEMS = ("TupleVariable", "RangeVariable", "ListIteratorVariable", "FrozensetVariable")


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


class Reading(NamedTuple):
    """A `Var`'s fields as a key: equal readings share one entry of a compile's table
    (a tuple hashes and compares at C speed; `Var`, a dataclass, in Python)."""

    kind: str
    python_type: str | None
    source: str | None
    detail: str
    lazy: bool
    realized: bool
    node: str | None

    @classmethod
    def of(cls, v: Var) -> Reading:
        return cls(v.kind, v.python_type, v.source, v.detail, v.lazy, v.realized, v.node)

    def var(self) -> Var:
        return Var(*self)


def _type_name(t: Any) -> str | None:
    try:
        return t.__name__
    except Exception:
        return None


class _Held(weakref.ref):
    """A weak reference to a tracker whose reading is kept, by the id it is kept under."""

    __slots__ = ("key",)


class VarReader:
    """Reads trackers into a compile's table of `Var`s, each tracker once while it reads the same.

    `index(v)` gives the table index of v's reading now. Trackers are immutable,
    so most are read once: their index is in `stable` (keyed by id; the tracker is
    kept so its id stays its own), which the recorder looks up in bulk. Two kinds
    can read differently later and are checked on every use instead: an
    unrealized lazy (it may be realized since) and a container (its length, the
    one thing its reading shows, changes when it is mutated in place).
    Equal readings share one entry of the table.

    A tracker whose reading is kept is held weakly: when Dynamo drops it, its entry
    goes with it (so its id, free for a new tracker, is not taken for the old one's),
    and the reader keeps nothing alive that a compile without it would have freed
    (kept, they were promoted to the collector's oldest generation by the thousand and
    brought full collections into the compile: bench/README.md, "The collector").
    """

    def __init__(self) -> None:
        self.table: list[Var] = []
        self.stable: dict[int, int] = {}  # id(tracker) -> index
        self._stable_get = self.stable.get  # the dict is cleared, never replaced
        self._held: dict[int, _Held] = {}  # id -> the weak reference that keeps `stable` right
        self._forget_held = self._forget  # one bound method for every reference
        self._keep: list[Any] = []  # trackers that cannot be held weakly, kept instead
        # id(tracker) -> (tracker, real tracker or None while unrealized, its length, index)
        self._volatile: dict[int, tuple[Any, Any, int, int]] = {}
        self._by_value: dict[Reading, int] = {}
        self._same: dict[type, int] = {}  # see _SAME_READING
        # source -> Dynamo's name for it, held weakly like the trackers
        self._sources: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        # node name -> ids of stable trackers whose reading names that FX node
        self._by_node: dict[str, list[int]] = {}

    def begin(self, table: list[Var]) -> None:
        """Read into `table` from now on (a new compile attempt)."""
        self.clear()
        self.table = table
        for i, v in enumerate(table):
            self._by_value.setdefault(Reading.of(v), i)

    def clear(self) -> None:
        """Drop every tracker and cached reading (the attempt is over)."""
        self.table = []
        self.stable.clear()
        self._held.clear()  # a reference dropped before its tracker never calls back
        self._keep.clear()
        self._volatile.clear()
        self._by_value.clear()
        self._same.clear()
        self._sources.clear()
        self._by_node.clear()

    def node_renamed(self, old: str) -> None:
        """An FX node was renamed: trackers whose reading names it are read again when
        next seen (into new entries: the readings of earlier steps stay as they were)."""
        for key in self._by_node.pop(old, ()):
            self.stable.pop(key, None)

    def indices(self, trackers: tuple[Any, ...] | list[Any]) -> tuple[int, ...]:
        """The table indices of the trackers' readings now: those already read are
        looked up in bulk (at C speed), which is nearly all of them."""
        ids = tuple(map(self._stable_get, map(id, trackers)))
        if None in ids:
            index = self.index
            ids = tuple([i if i is not None else index(v) for i, v in zip(ids, trackers)])
        return ids

    def may_change(self, trackers: tuple[Any, ...]) -> tuple[int, ...]:
        """Positions of the trackers whose reading can still change (see the class)."""
        stable = self.stable
        return tuple(pos for pos, v in enumerate(trackers) if id(v) not in stable)

    def source_name(self, source: Any) -> str | None:
        if source is None:
            return None
        try:
            name = self._sources.get(source)
        except TypeError:  # an unhashable source
            name = None
        if name is None:
            try:
                name = source_name(source)
            except Exception:
                name = type(source).__name__
            name = exact(name)  # Dynamo's name of the source, kept whole
            try:
                self._sources[source] = name
            except TypeError:
                pass
        return name

    def index(self, v: Any) -> int:
        """The index of v's reading in the table, read again only if it may have changed."""
        i = self.stable.get(id(v))
        if i is not None:
            return i
        entry = self._volatile.get(id(v))
        if entry is not None and entry[0] is v:
            _, real, length, i = entry
            if real is None:
                if not is_realized(v):
                    return i
            elif _length(real) == length:
                return i
        return self._read(v)

    def _read(self, v: Any) -> int:
        cls = type(v)
        if cls in self._same:  # a class whose every sourceless instance reads the same
            if internals.tracker_own_source(v) is None:
                i = self._same[cls]
                self.stable[id(v)] = i
                self._hold(v)
                return i
        real = v
        if issubclass(cls, lazy_tracker_class()):
            source = self.source_name(tracker_source(v))
            if not is_realized(v):
                t = _type_name(peek_type(v))
                fields = Reading(type(v).__name__, t, source, f"unrealized {t}", True, False, None)
                real = None
            else:
                real = unwrap(v)
                seen = self._fields_of(real, source)
                fields = seen._replace(source=seen.source or source, lazy=True)
        else:
            fields = self._fields_of(v, self.source_name(tracker_source(v)))
        i = self._by_value.get(fields)
        if i is None:
            i = self._by_value[fields] = len(self.table)
            self.table.append(fields.var())
        if real is None or (type(tracker_items(real)) in _PLAIN_CONTAINERS
                            and not _fixed_items(type(real))):
            self._volatile[id(v)] = (v, real, _length(real) if real is not None else -1, i)
        else:
            self.stable[id(v)] = i
            self._hold(v)
            if cls.__name__ in _SAME_READING and fields.source is None:
                self._same[cls] = i
            node = fields.node
            if node is not None:
                self._by_node.setdefault(node, []).append(id(v))
        return i

    def _hold(self, v: Any) -> None:
        try:
            ref = _Held(v, self._forget_held)
        except TypeError:  # no weak references to it
            self._keep.append(v)
            return
        ref.key = id(v)
        self._held[ref.key] = ref

    def _forget(self, ref: _Held) -> None:
        """A held tracker is gone (called as it is freed, before its id can be reused)."""
        key = ref.key
        if self._held.get(key) is ref:
            del self._held[key]
            self.stable.pop(key, None)

    def _fields_of(self, v: Any, source: str | None) -> Reading:
        cls = type(v)
        kind = cls.__name__
        detail, node = _detail(v, kind)
        return Reading(kind, _python_type(v, cls, kind), source, shorten(detail), False, True, node)


@functools.cache
def _fixed_items(cls: type) -> bool:
    return any(base.__name__ in _FIXED_ITEMS for base in cls.__mro__)


def _length(real: Any) -> int:
    items = tracker_items(real)
    return len(items) if type(items) in _PLAIN_CONTAINERS else -1


_asks_python_type: dict[type, bool] = {}  # tracker class -> whether to call python_type()


def _python_type(v: Any, cls: type, kind: str) -> str | None:
    """The Python type a tracker models, without the costly fallbacks.

    The base `VariableTracker.python_type` tries `as_python_constant()` and, for
    most trackers, raises after formatting the tracker's repr: skipped. A
    `GetAttrVariable` knows its type only when Dynamo told it (`py_type`).
    """
    asks = _asks_python_type.get(cls)
    if asks is None:
        asks = _asks_python_type[cls] = internals.asks_python_type(cls)
    if not asks:
        return None
    if kind == "GetAttrVariable":
        t = internals.tracker_py_type(v)
        return _type_name(t) if t is not None else None
    try:
        return _type_name(python_type(v))
    except Exception:
        return None


def _detail(v: Any, kind: str) -> tuple[str, str | None]:
    """A short reading of a realized tracker and the FX node it stands for."""
    proxy = internals.tracker_proxy(v)
    if proxy is not None and hasattr(proxy, "node"):
        node = proxy.node
        if "Tensor" in kind or kind in ("NumpyNdarrayVariable", "UnspecializedPythonVariable",
                                        "FakeItemVariable"):
            shape, dtype = tensor_meta(example_value(node))
            meta = f"{dtype}{shape}" if dtype else ""
            name = exact(node.name)
            return f"{meta} node={name}".strip(), name
        if kind == "SymNodeVariable":
            sym = internals.tracker_sym_num(v)
            name = exact(node.name)
            return f"{type(sym).__name__} {sym} node={name}", name
        name = exact(node.name)
        return f"node={name}", name
    absent = internals.ABSENT
    value = internals.tracker_value(v)
    if value is not absent and kind in ("ConstantVariable", "EnumVariable"):
        return repr(value), None
    items = internals.tracker_items(v)
    if items is not absent:
        # Only a plain container's length: some trackers' `items` is a view whose
        # len() walks the object's attributes and builds trackers.
        return (f"len {len(items)}" if type(items) in _PLAIN_CONTAINERS else ""), None
    fn = internals.tracker_fn(v)
    if fn is not absent:
        return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "") or "", None
    if value is not absent:
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if isinstance(name, str):
            module = getattr(value, "__module__", None)
            return (f"{module}.{name}" if module and kind.startswith("Torch") else name), None
        return f"{type(value).__name__} object", None
    module_type = internals.tracker_module_type(v)
    if module_type is not absent:
        return getattr(module_type, "__name__", ""), None
    return "", None
