"""A recording as JSON and back: what `Recording.to_json` writes and `from_json` reads.

A record becomes a dict of its fields, in order, tuples as lists (`records.plain`), and
is made again from that dict by keyword. Only what is not a plain field is written out
here: a compile's steps (as `capture/steps.py` declares them, as rows or as columns), its
readings (`vars`, as rows or as columns) and its code objects (two listings).

``Recording.to_json(columns=True)`` writes each compile's ``steps`` and ``vars`` as
objects of columns (what the viewer is sent), and ``from_json`` reads both. The vars
as columns: ``{"length": n, "strings": [...], "kind": [...], ...}``, a column per field,
each text an index into ``strings`` or null, ``lazy`` and ``realized`` as they are; one
of them as a row::

    {"kind": "TensorVariable", "python_type": "Tensor", "source": null,
     "detail": "f32[4] node=sin", "lazy": false, "realized": true,
     "node": "sin"}

Decoding gives the keyword arguments of `Compile` and `Recording` (`compile_fields`,
`recording_fields`), which `capture/recording.py` makes them from: this module reads
the records and the steps and never the containers, so nothing imports in a circle.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterator
from typing import Any

from .records import (
    CodeInfo, DdpSplit, Event, FailedGuard, GraphBreak, Guard, Instr, Node, ResumeFunction, Stage, Var,
    from_plain, plain,
)
from .shapes import Shapes
from .steps import Steps, step_columns, step_rows
from .steps import from_json as step_from_json

SCHEMA_VERSION = 2

_COMPILE_LISTS = {"nodes": Node, "guard_details": Guard, "resume_functions": ResumeFunction,
                  "failed_guards": FailedGuard}


# -- readings -------------------------------------------------------------------------

_VAR_FIELDS = tuple(f.name for f in dataclasses.fields(Var))
_VAR_STRINGS = ("kind", "python_type", "source", "detail", "node")   # the rest are bools


def var_columns(vars_: list[Var]) -> dict[str, Any]:
    """A compile's readings as columns: each text field an index into `strings` (or
    null), the flags as they are (see the top of this module)."""
    strings: list[str] = []
    string_at: dict[str, int] = {}
    cols: dict[str, list] = {name: [] for name in _VAR_FIELDS}
    get = operator.attrgetter(*_VAR_FIELDS)
    interned = [cols[name] for name in _VAR_STRINGS]
    flags = [cols[name] for name in _VAR_FIELDS if name not in _VAR_STRINGS]
    at = [_VAR_FIELDS.index(name) for name in _VAR_STRINGS]
    flag_at = [k for k, name in enumerate(_VAR_FIELDS) if name not in _VAR_STRINGS]
    for v in vars_:
        values = get(v)
        for col, k in zip(interned, at):
            text = values[k]
            if text is None:
                col.append(None)
                continue
            j = string_at.get(text)
            if j is None:
                j = string_at[text] = len(strings)
                strings.append(text)
            col.append(j)
        for col, k in zip(flags, flag_at):
            col.append(values[k])
    return {"length": len(vars_), "strings": strings, **cols}


def vars_from_columns(d: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Readings written as columns (`var_columns`) read back: each as its dict."""
    strings = d["strings"]
    for i in range(d["length"]):
        row = {}
        for name in _VAR_FIELDS:
            value = d[name][i]
            row[name] = strings[value] if name in _VAR_STRINGS and value is not None else value
        yield row


# -- compiles ---------------------------------------------------------------------------

def compile_to_dict(c: Any, columns: bool = False) -> dict[str, Any]:
    """A `Compile` as JSON data; with `columns`, its steps and readings as columns."""
    if columns:
        return _compile_fields(c, var_columns(c.vars), step_columns(c.steps))
    vars_out = [plain(v) for v in c.vars]  # every step's readings are in it (see Steps)
    return _compile_fields(c, vars_out, step_rows(c.steps))


def _compile_fields(c: Any, vars_out: Any, steps: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(c):
        value = getattr(c, f.name)
        if f.name == "codes":
            value = [ci.to_dict() for ci in value]
        elif f.name == "vars":
            value = vars_out
        elif f.name == "steps":
            value = steps
        elif f.name in _COMPILE_LISTS or f.name == "modified_instructions":
            value = [plain(x) for x in value]
        elif f.name == "graph_break":
            value = plain(value) if value is not None else None
        elif f.name == "stages":
            value = [stage.to_dict() for stage in value]
        elif f.name in ("shapes", "ddp_split"):
            value = value.to_dict() if value is not None else None
        elif isinstance(value, list):
            value = list(value)
        out[f.name] = value
    return out


def compile_fields(d: dict[str, Any]) -> dict[str, Any]:
    """A compile's JSON data (rows or columns) as the keyword arguments of `Compile`."""
    d = dict(d)
    read = d["vars"]
    vars_ = [Var(**v) for v in (vars_from_columns(read) if isinstance(read, dict) else read)]
    rows = d["steps"]
    if isinstance(rows, dict):   # columns: read column by column
        steps = Steps.from_columns(vars_, rows)
    else:
        steps = Steps(vars_)
        add_row = steps.add_row
        shared: dict[tuple, tuple] = {}   # equal values (a frame's locals) kept once
        for s in rows:
            add_row(tuple(shared.setdefault(v, v) if type(v) is tuple else v
                          for v in step_from_json(s)))
    d["vars"], d["steps"] = vars_, steps
    d["codes"] = [CodeInfo.from_dict(ci) for ci in d["codes"]]
    for name, cls in _COMPILE_LISTS.items():
        d[name] = [from_plain(cls, x) for x in d.get(name, ())]
    d["failed_guards"] = tuple(d["failed_guards"])
    d["modified_instructions"] = [Instr(**i) for i in d["modified_instructions"]]
    d["graph_break"] = from_plain(GraphBreak, d["graph_break"]) if d["graph_break"] else None
    d["stages"] = tuple(Stage.from_dict(stage) for stage in d.get("stages", ()))
    d["shapes"] = Shapes.from_dict(d["shapes"]) if d.get("shapes") else None
    d["ddp_split"] = DdpSplit.from_dict(d["ddp_split"]) if d.get("ddp_split") else None
    return d


# -- recordings -------------------------------------------------------------------------

def recording_to_dict(r: Any, columns: bool = False) -> dict[str, Any]:
    """A `Recording` as JSON data (everything but `result`, a live value)."""
    out: dict[str, Any] = {"schema": SCHEMA_VERSION}
    for f in dataclasses.fields(r):
        name = f.name
        if name == "result":
            continue
        value = getattr(r, name)
        if name == "compiles":
            value = [compile_to_dict(c, columns) for c in value]
        elif name == "events":
            value = [plain(e) for e in value]
        elif isinstance(value, dict):
            value = dict(value)
        out[name] = value
    return out


class SchemaMismatch(ValueError):
    """A recording written with another schema than this version of capture reads."""

    def __init__(self, found: Any) -> None:
        self.found, self.expected = found, SCHEMA_VERSION
        super().__init__(f"this recording uses schema {found!r}; this version of capture reads "
                         f"schema {SCHEMA_VERSION}: record it again with the current version")


def check_schema(d: Any) -> None:
    """Refuse a recording's JSON data (a dict) of another schema: `SchemaMismatch`, which
    says the schema found and the one read (the one check; doors phrase it their way)."""
    found = d.get("schema") if isinstance(d, dict) else None
    if found != SCHEMA_VERSION:
        raise SchemaMismatch(found)


def recording_fields(d: dict[str, Any]) -> dict[str, Any]:
    """A recording's JSON data as the keyword arguments of `Recording`, each compile as
    the keyword arguments of `Compile` (`compile_fields`)."""
    check_schema(d)
    d = {k: v for k, v in d.items() if k != "schema"}
    d["compiles"] = [compile_fields(c) for c in d["compiles"]]
    d["events"] = [Event(**{**e, "failed_guards": tuple(
        FailedGuard(**g) for g in e.get("failed_guards", ()))}) for e in d["events"]]
    return d
