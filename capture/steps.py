"""A step of a compile, declared once: its fields, how `Steps` keep them, how they are written.

`STEP_FIELDS` is the one declaration. From it follow: `Steps.add`, which the recorder
calls with each field in order (a test holds its call to the declaration), the `Step` records a compile's steps read back as, the
step in the JSON (a dict of its fields, `to_json`/`from_json`), the columns
`Recording.to_json(columns=True)` writes (`step_columns`, `steps_from_columns`) and the
viewer's decoder (`widgets/viewer/js/stepfields.js`, written from this declaration by
`python -m widgets.viewer.stepfields`). Adding a field is one `StepField` here, the
value the recorder hands `Steps.add` for it (capture/attempt.py) and its tests.

One step, as it appears in ``Recording.to_json()`` (schema 2; ``stack`` and ``locals``
hold indices into the compile's ``vars``; ``offset`` is an offset in the compile's
``codes[code].walked``, the instructions Dynamo's translator walks)::

    {"index": 5, "offset": 30, "opname": "CALL", "argrepr": "0", "lineno": 2,
     "depth": 0, "code": 0, "code_name": "f", "graph_size": 2,
     "nodes_added": ["sin"], "nodes_renamed": [], "guards_added": [7],
     "inline_stack": [], "stack": [3], "locals": {"x": 1, "y": 2}}

and the steps of a compile as columns (``columns=True``, what the viewer is sent: a
140,000-step recording's JSON is about a quarter of the size and parses several times
faster)::

    {"length": 2, "strings": ["RESUME", "0", "f", "LOAD_FAST", "x"],
     "offset": [0, 2], "opname": [0, 3], "argrepr": [1, 4], "lineno": [1, 2],
     "depth": [0, 0], "code": [0, 0], "code_name": [2, 2], "graph_size": [0, 0],
     "nodes_added": [], "nodes_renamed": [], "guards_added": [[1, [7]]],
     "inline_stack": [0, 0], "inline_stacks": [[]],
     "stack": [[], [1]], "locals": [0, 0], "locals_table": [{"x": 1}]}

each field written the way its `StepField.column` says.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from dataclasses import dataclass
from typing import Any, overload

from .records import Var


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()   # the default of a field every step must be given


@dataclass(frozen=True)
class StepField:
    """One field of a step: its name, how its value is kept, how its column is written.

    `value`, how the recorder hands it to `Steps.add` and `Steps` keep it:
      "scalar"  a number, a string or None;
      "ids"     a tuple of indices into the compile's `vars` (all steps' in one flat array);
      "pairs"   a tuple of (name, index into `vars`) pairs: a dict in the JSON and on a `Step`;
      "list"    a tuple of numbers or strings: a list in the JSON;
      "nested"  a tuple of tuples: a list of lists in the JSON.
    `column`, how `to_json(columns=True)` writes it:
      "place"   the step's place: written (as `index`) only where some step's differs;
      "plain"   each step's JSON value as it is;
      "text"    an index into the compile's `strings`;
      "table"   an index into `table`, the list of the distinct JSON values;
      "sparse"  `[place, value]` pairs for the steps where it is not empty.
    `default` is its value where a step is made without it (and where JSON written
    before it existed lacks it); `attr` the `Step`'s attribute where that is not `name`.
    """

    name: str
    value: str
    column: str
    default: Any = REQUIRED
    attr: str = ""
    table: str = ""
    doc: str = ""

    @property
    def step_attr(self) -> str:
        return self.attr or self.name


# The declaration. Its order is the order of `Step`'s fields and of a step's JSON keys.
STEP_FIELDS: tuple[StepField, ...] = (
    StepField("index", "scalar", "place", doc="the step's place among the compile's steps"),
    StepField("offset", "scalar", "plain",
              doc="in the instructions the translator walks (CodeInfo.walked)"),
    StepField("opname", "scalar", "text"),
    StepField("argrepr", "scalar", "text"),
    StepField("lineno", "scalar", "plain"),
    StepField("depth", "scalar", "plain", doc="inlining depth: 0 for the frame itself"),
    StepField("code", "scalar", "plain", doc="index in Compile.codes"),
    StepField("code_name", "scalar", "text", ""),
    StepField("graph_size", "scalar", "plain", 0,
              doc="nodes in the frame's graph before the step's own were added"),
    StepField("nodes_added", "list", "sparse", (), doc="FX nodes the step made, by name"),
    StepField("nodes_renamed", "nested", "sparse", (), doc="(old, new) names a store gave"),
    StepField("guards_added", "list", "sparse", (), doc="indices in Compile.guard_details"),
    StepField("inline_stack", "nested", "table", (), table="inline_stacks",
              doc="(caller's code name, line) of each inlining call, outermost first"),
    StepField("stack", "ids", "plain", (), attr="stack_ids",
              doc="the tracker stack after the step, bottom first"),
    StepField("locals", "pairs", "table", (), attr="locals_ids", table="locals_table",
              doc="the symbolic locals after the step, of the function traced at that step"),
)

FIELD_NAMES = tuple(f.name for f in STEP_FIELDS)
_FLAT = next(k for k, f in enumerate(STEP_FIELDS) if f.value == "ids")  # kept in one array
assert sum(f.value == "ids" for f in STEP_FIELDS) == 1, "one field is kept in the flat array"


# -- a field's value, as kept, as JSON and on a Step ------------------------------------

def _identity(v: Any) -> Any:
    return v


def _lists(v: tuple) -> list:
    return [list(p) for p in v]


def _tuples(v: list) -> tuple:
    return tuple(tuple(p) for p in v)


def _items(v: dict) -> tuple:
    return tuple(v.items())


_TO_JSON = {"scalar": _identity, "ids": list, "list": list, "pairs": dict, "nested": _lists}
_FROM_JSON = {"scalar": _identity, "ids": tuple, "list": tuple, "pairs": _items, "nested": _tuples}


def _sparse_on_step(v: tuple) -> list | tuple[()]:
    return list(v) if v else ()


def _on_step(f: StepField) -> Any:
    """How a kept value becomes the `Step`'s attribute."""
    if f.value == "pairs":
        return dict
    return _sparse_on_step if f.column == "sparse" else _identity


def _kept(f: StepField) -> Any:
    """How a `Step`'s attribute (or a value given by hand) becomes the kept value."""
    return _FROM_JSON[f.value] if f.value != "pairs" else _items


def json_default(f: StepField) -> Any:
    """A field's default as JSON (what a decoder puts where a column or key is missing)."""
    return _TO_JSON[f.value](f.default)


_ROW_TO_JSON = tuple((f.name, _TO_JSON[f.value]) for f in STEP_FIELDS)
_ROW_ON_STEP = tuple(_on_step(f) for f in STEP_FIELDS)
_ROW_KEPT = tuple(_kept(f) for f in STEP_FIELDS)


def to_json(row: tuple) -> dict[str, Any]:
    """A kept step (a row, as `Steps.rows` gives it) as its JSON dict."""
    return {name: convert(v) for (name, convert), v in zip(_ROW_TO_JSON, row)}


def from_json(d: dict[str, Any]) -> tuple:
    """A step's JSON dict as a row (the fields `Steps.add` takes, in order); a field
    missing from it (JSON written before the field existed) takes its default."""
    return tuple(convert(d[name]) if name in d or default is REQUIRED else default
                 for name, convert, default in _ROW_FROM_JSON)


_ROW_FROM_JSON = tuple((f.name, _FROM_JSON[f.value],
                        REQUIRED if f.default is REQUIRED
                        else _FROM_JSON[f.value](json_default(f)))
                       for f in STEP_FIELDS)


# -- Step --------------------------------------------------------------------------------


class _StepReading:
    """What a `Step` reads besides its fields (the fields are made from `STEP_FIELDS`)."""

    __slots__ = ()

    @classmethod
    def of(cls, *, stack: list[Var], locals: dict[str, Var], vars: list[Var] | None = None,
           **fields: Any) -> Step:
        """A step made from readings rather than indices (tools and tests): the readings
        are added to `vars` (a new table unless one is given)."""
        table = vars if vars is not None else []
        ids = {id(v): i for i, v in enumerate(table)}

        def intern(v: Var) -> int:
            i = ids.get(id(v))
            if i is None:
                i = ids[id(v)] = len(table)
                table.append(v)
            return i

        return cls(stack_ids=tuple(intern(v) for v in stack),
                   locals_ids={k: intern(v) for k, v in locals.items()}, vars=table, **fields)

    @property
    def stack(self) -> list[Var]:
        """The VariableTracker stack after the step, bottom first."""
        table = self.vars
        return [table[i] for i in self.stack_ids]

    @property
    def locals(self) -> dict[str, Var]:
        """The symbolic locals after the step (of the function being traced at that step)."""
        table = self.vars
        return {name: table[i] for name, i in self.locals_ids.items()}

    def _key(self) -> tuple:
        """Every field, readings as `Var`s: two steps over different tables can be equal."""
        key = []
        for f, kept in zip(STEP_FIELDS, _ROW_KEPT):
            if f.value == "ids":
                key.append(self.stack)
            elif f.value == "pairs":
                key.append(self.locals)
            else:
                key.append(kept(getattr(self, f.step_attr)))
        return tuple(key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _StepReading):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"Step(index={self.index}, offset={self.offset}, opname={self.opname!r}, "
                f"argrepr={self.argrepr!r}, lineno={self.lineno}, depth={self.depth}, "
                f"stack={self.stack!r}, nodes_added={list(self.nodes_added)!r})")

    def __str__(self) -> str:
        line = f"L{self.lineno}" if self.lineno is not None else "L?"
        indent = "  " * self.depth
        head = f"#{self.index:<4} {line:<5} {indent}{self.opname} {self.argrepr}".rstrip()
        stack = ", ".join(str(v) for v in reversed(self.stack))
        text = f"{head:<44} stack(top first): [{stack}]"
        if self.nodes_added:
            text += f"  +nodes {', '.join(self.nodes_added)}"
        for old, new in self.nodes_renamed:
            text += f"  renamed {old} -> {new}"
        if self.guards_added:
            text += f"  +{len(self.guards_added)} guard(s)"
        return text


def _step_field(f: StepField) -> tuple:
    if f.default is REQUIRED:
        return (f.step_attr, Any)
    if f.value == "pairs":
        return (f.step_attr, Any, dataclasses.field(default_factory=dict))
    return (f.step_attr, Any, dataclasses.field(default=f.default))


Step = dataclasses.make_dataclass(
    "Step", [*map(_step_field, STEP_FIELDS),
             ("vars", Any, dataclasses.field(default_factory=list))],
    bases=(_StepReading,), namespace={"__module__": __name__}, slots=True, eq=False)
Step.__doc__ = """One instruction the tracer executed, and the state it left behind.

    Its fields are `STEP_FIELDS`, in order (`stack_ids` and `locals_ids` for `stack` and
    `locals`), then `vars`. The stack and the symbolic locals are kept as indices into the
    compile's table of readings (`Compile.vars`, shared by every step, as in the JSON):
    `stack` and `locals` give them back as `Var`s. A compile keeps its steps column by
    column (`Steps`); a `Step` is made each time one is read. Every field is as Dynamo
    held it at the end of this step; nothing is rewritten afterwards.
    """


# the fields whose kept value is not the Step's attribute as it is (a few of them)
_CONVERTED = tuple((k, convert) for k, convert in enumerate(_ROW_ON_STEP)
                   if convert is not _identity)


def _step(row: tuple, table: list[Var]) -> Step:
    values = list(row)
    for k, convert in _CONVERTED:
        values[k] = convert(values[k])
    return Step(*values, table)


# -- Steps ---------------------------------------------------------------------------------

# NOTE (the collector): a compile's steps are kept column by column, each field a list
# of numbers, strings and shared tuples, and every step's stack in one flat array of
# indices (an `array` is not a container the garbage collector tracks). Storing a step
# therefore leaves no new object behind for the collector, where a tuple a step (or a
# `Step` object) did: a real model's compile makes tens of thousands of steps, and each
# object they left alive counted towards the next young collection, so recording ran
# about half as many young collections again as a plain compile, each promoting what of
# Dynamo's was alive at that moment, until a full collection fell inside the compile
# (bench/README.md, "The collector"). The locals stay (name, index) pairs in a tuple
# that steps of a frame share while they are unchanged. A `Step` is made when one is read.
#
# NOTE (speed): `add` runs once per instruction Dynamo executes. It is written out from
# the declaration once, when this module is imported (as `dataclasses` and `namedtuple`
# write theirs), one parameter and one append a field: the recorder passes the fields by
# position, in the declared order, with no row tuple made and unpacked (keywords cost
# more than that: matching fifteen names on every step). The recorder's call names each
# value after its field, and tests/test_step_fields.py checks those names against the
# declaration, in order.

def _write_add() -> Any:
    """`Steps.add`, written out from the declaration (one keyword a field)."""
    names = FIELD_NAMES
    cols = ", ".join(f"_c{k}" if k != _FLAT else "_" for k in range(len(names)))
    lines = [f"def add(_self, {', '.join(names)}):",
             '    """Store a step given as its fields in the declared order (STEP_FIELDS), each',
             '    a number, a string, None or a tuple of those; the locals as (name, index)',
             '    pairs."""',
             f"    ({cols},) = _self._cols"]
    for k, name in enumerate(names):
        if k == _FLAT:
            lines += ["    _flat = _self._stack", f"    _flat.extend({name})",
                      "    _self._ends.append(len(_flat))"]
        else:
            lines.append(f"    _c{k}.append({name})")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)  # noqa: S102  (written from the declaration above, nothing else)
    return scope["add"]


class Steps(Sequence[Step]):
    """A compile's steps: a sequence of `Step`s over the compile's table of readings,
    stored column by column (see the note above)."""

    __slots__ = ("_cols", "_stack", "_ends", "_vars")

    def __init__(self, vars: list[Var], steps: Iterable[Step] = ()) -> None:
        self._vars = vars
        self._cols: tuple[list, ...] = tuple([] for _ in STEP_FIELDS)  # the flat one unused
        self._stack = array("q")   # every step's stack, one after the other
        self._ends = array("q")    # where each step's stack ends in it
        for s in steps:
            self.append(s)

    add = _write_add()

    def add_row(self, row: tuple) -> None:
        """Store a step given as a row: its fields in the declared order."""
        self.add(*row)

    @classmethod
    def from_columns(cls, vars: list[Var], d: dict[str, Any]) -> Steps:
        """Steps written as columns (`step_columns`) read back, column by column: the same
        steps as reading each one's JSON dict (`steps_from_columns`) and adding it, with no
        dict made a step. A column missing (written before its field existed) reads as
        the field's default; a table's values are made once and shared by the steps."""
        n = d["length"]
        steps = cls(vars)
        cols = []
        for f, (_, convert, default) in zip(STEP_FIELDS, _ROW_FROM_JSON):
            col = d.get(f.name)
            if f.column == "place":
                cols.append(list(col) if col is not None else list(range(n)))
            elif col is None:
                if default is REQUIRED:
                    raise KeyError(f"the steps' columns have no {f.name!r}")
                cols.append([default] * n)
            elif f.column == "plain":
                cols.append(list(col) if convert is _identity else list(map(convert, col)))
            elif f.column == "text":
                strings = d["strings"]
                cols.append([strings[k] for k in col])
            elif f.column == "table":
                table = [convert(v) for v in d[f.table]]
                cols.append([table[k] for k in col])
            elif f.column == "sparse":
                values = [default] * n
                for k, v in col:
                    values[k] = convert(v)
                cols.append(values)
            else:
                raise ValueError(f"step field {f.name}: unknown column {f.column!r}")
            if len(cols[-1]) != n:
                raise ValueError(f"the steps' column {f.name!r} has {len(cols[-1])} values "
                                 f"for {n} steps")
        stacks = cols[_FLAT]
        steps._stack = array("q", chain.from_iterable(stacks))
        steps._ends = array("q", accumulate(map(len, stacks)))
        cols[_FLAT] = []  # kept in the flat array
        steps._cols = tuple(cols)
        return steps

    def append(self, step: Step) -> None:
        row = [kept(getattr(step, f.step_attr)) for f, kept in zip(STEP_FIELDS, _ROW_KEPT)]
        if step.vars is not self._vars:  # a step made over a table of its own
            table, moved = self._vars, {}

            def move(i: int) -> int:
                if i not in moved:
                    moved[i] = len(table)
                    table.append(step.vars[i])
                return moved[i]

            for k, f in enumerate(STEP_FIELDS):
                if f.value == "ids":
                    row[k] = tuple(map(move, row[k]))
                elif f.value == "pairs":
                    row[k] = tuple((name, move(i)) for name, i in row[k])
        self.add_row(tuple(row))

    def _stacks(self, start: int, stop: int) -> list[tuple[int, ...]]:
        flat, ends = self._stack, self._ends
        begin = ends[start - 1] if start else 0
        out = []
        for k in range(start, stop):
            end = ends[k]
            out.append(tuple(flat[begin:end]))
            begin = end
        return out

    def columns(self) -> list[list]:
        """Each field's values, one list a field in the declared order (made when asked
        for: read, never change them)."""
        cols = list(self._cols)
        cols[_FLAT] = self._stacks(0, len(self._ends))
        return cols

    def stack_lists(self) -> list[list[int]]:
        """Every step's stack as a list (its JSON), made from the flat array with no tuple
        between (a big recording's JSON is written with less memory)."""
        flat, ends = self._stack, self._ends
        return [flat[b:e].tolist() for b, e in zip(chain((0,), ends), ends)]

    def row(self, i: int) -> tuple:
        """Step i's fields in order, as `add` took them."""
        n = len(self._ends)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("step index out of range")
        return tuple(self._stacks(i, i + 1)[0] if k == _FLAT else col[i]
                     for k, col in enumerate(self._cols))

    def rows(self, start: int = 0, stop: int | None = None) -> list[tuple]:
        """The fields of steps start to stop (every step's by default), in order (made
        when asked for: read, never change them)."""
        n = len(self._ends)
        stop = n if stop is None else min(stop, n)
        start = min(start, stop)
        return list(zip(*[self._stacks(start, stop) if k == _FLAT else col[start:stop]
                          for k, col in enumerate(self._cols)]))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, i: int) -> Step: ...
    @overload
    def __getitem__(self, i: slice) -> list[Step]: ...

    def __getitem__(self, i: int | slice) -> Step | list[Step]:
        if isinstance(i, slice):
            start, stop, stride = i.indices(len(self))
            table = self._vars
            if stride == 1:   # read in bulk: a break's explanation slices a whole compile
                return [_step(row, table) for row in self.rows(start, stop)]
            return [_step(self.row(k), table) for k in range(start, stop, stride)]
        return _step(self.row(i), self._vars)

    def __iter__(self) -> Iterator[Step]:
        table = self._vars
        for row in self.rows():
            yield _step(row, table)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Steps, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # filled in while Dynamo runs

    def __repr__(self) -> str:
        return f"<{len(self)} steps>"


# -- as JSON --------------------------------------------------------------------------------

def step_rows(steps: Steps) -> list[dict[str, Any]]:
    """A compile's steps as the schema's rows (see the top of this module). Values steps
    share (a frame's locals, an inlined call's callers) are converted once, and the rows
    share them: read, never change them."""
    cols = []
    for f, values in zip(STEP_FIELDS, steps.columns()):
        convert = _TO_JSON[f.value]
        if convert is _identity:
            cols.append(values)
        elif f.column == "table":
            memo: dict[Any, Any] = {}
            cols.append([memo[v] if v in memo else memo.setdefault(v, convert(v))
                         for v in values])
        else:
            cols.append([convert(v) for v in values])
    return [dict(zip(FIELD_NAMES, values)) for values in zip(*cols)]


# -- columns ------------------------------------------------------------------------------

def step_columns(steps: Steps) -> dict[str, Any]:
    """A compile's steps as columns (see the top of this module), each field as its
    `StepField.column` says."""
    strings: list[str] = []
    string_at: dict[str, int] = {}

    def string(text: str) -> int:
        k = string_at.get(text)
        if k is None:
            k = string_at[text] = len(strings)
            strings.append(text)
        return k

    columns = list(steps._cols)
    columns[_FLAT] = steps.stack_lists()   # already the JSON's lists (see below)
    # strings in the order steps first use them, field by field within a step
    for texts in zip(*[values for f, values in zip(STEP_FIELDS, columns) if f.column == "text"]):
        for text in texts:
            string(text)
    out: dict[str, Any] = {"length": len(steps), "strings": strings}
    for pos, (f, values) in enumerate(zip(STEP_FIELDS, columns)):
        convert = _TO_JSON[f.value]
        if f.column == "place":
            if any(v != k for k, v in enumerate(values)):   # steps made by hand
                out[f.name] = list(values)
        elif f.column == "plain":
            out[f.name] = values if convert is _identity or pos == _FLAT \
                else [convert(v) for v in values]
        elif f.column == "text":
            out[f.name] = [string(v) for v in values]
        elif f.column == "table":
            table: list = []
            at: dict[Any, int] = {}
            col = []
            for v in values:
                k = at.get(v)
                if k is None:
                    k = at[v] = len(table)
                    table.append(convert(v))
                col.append(k)
            out[f.name], out[f.table] = col, table
        elif f.column == "sparse":
            out[f.name] = [[k, convert(v)] for k, v in enumerate(values) if v]
        else:
            raise ValueError(f"step field {f.name}: unknown column {f.column!r}")
    return out


def steps_from_columns(d: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Steps written as columns (`step_columns`) read back: each step as its JSON dict,
    as the schema's rows are. A column missing (written before its field existed) reads
    as the field's default."""
    n = d["length"]
    strings = d["strings"]
    cols = []
    for f in STEP_FIELDS:
        col = d.get(f.name)
        if f.column == "place":
            cols.append(col if col is not None else range(n))
        elif col is None:
            if f.default is REQUIRED:
                raise KeyError(f"the steps' columns have no {f.name!r}")
            cols.append([json_default(f)] * n)
        elif f.column == "plain":
            cols.append(col)
        elif f.column == "text":
            cols.append([strings[k] for k in col])
        elif f.column == "table":
            table = d[f.table]
            cols.append([table[k] for k in col])
        else:  # sparse
            sparse = dict((k, v) for k, v in col)
            cols.append([sparse.get(k, []) for k in range(n)])
    for values in zip(*cols):
        yield dict(zip(FIELD_NAMES, values))
