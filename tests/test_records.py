"""A recording is plain data: frozen records, no live objects, listings read once.

`CodeInfo` used to hold its code object and disassemble it when first asked, from a
cache shared by the whole process; these tests pin what replaced that: every listing
is read when the recording finishes, by a reader that belongs to the recording.
"""

from __future__ import annotations

import dataclasses
import gc
import dis
import sys
import types

import pytest
import torch

import capture
from capture import bytecode
from capture.recording import CodeInfo, Compile, Recording, Step, Steps, Var
from capture.steps import FIELD_NAMES


def helper(t):
    return t.cos() * 2


def f(x, a=None):
    y = x.sin()
    if a is not None:  # 3.11's POP_JUMP_*_IF_NONE: Dynamo's walked listing differs from dis
        y = y + a
    return helper(y) + 1


@pytest.fixture(scope="module")
def rec() -> Recording:
    return capture.trace(f, torch.ones(3))


def _values(obj, seen=None):
    """Every value reachable through a recording's records, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for fld in dataclasses.fields(obj):
            if fld.name != "result":  # the call's return value, a live value by design
                yield from _values(getattr(obj, fld.name), seen)
    elif isinstance(obj, Steps):
        yield from _values(obj.rows(), seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _values(v, seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _values(k, seen)
            yield from _values(v, seen)


def test_code_info_is_a_frozen_record(rec):
    info = rec.compiles[0].codes[0]
    assert dataclasses.is_dataclass(CodeInfo) and CodeInfo.__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "g"  # type: ignore[misc]
    assert [fld.name for fld in dataclasses.fields(CodeInfo)] == [
        "name", "filename", "firstlineno", "source_lines", "instructions", "walked", "qualname"]
    assert not hasattr(info, "__dict__")


def test_a_recording_holds_no_live_object(rec):
    plain = (str, int, float, bool, type(None))
    for v in _values(rec):
        assert isinstance(v, plain) or dataclasses.is_dataclass(v) or \
            type(v) in (list, tuple, dict, Steps), f"a live {type(v).__name__} in the recording: {v!r}"


def test_storing_a_step_leaves_nothing_for_the_collector(rec):
    # A real model's compile stores tens of thousands of steps; every object they left
    # alive counted towards the next young collection and moved a full collection into
    # the program's own time (bench/README.md). The recorder hands `add` a new row and
    # stack tuple each step, as here; once stored, neither may stay alive.
    rows = [row for c in rec.compiles for row in c.steps.rows()] * 20
    at = FIELD_NAMES.index("stack")
    assert len(rows) > 400 and any(row[at] for row in rows)
    enabled = gc.isenabled()
    gc.disable()   # no collection may move what is young while it is counted
    try:
        for _ in range(2):   # the first round also makes what any first call makes
            steps = Steps([])
            before = len(gc.get_objects(0))   # tracked objects made since the last collection
            for row in rows:
                fields = dict(zip(FIELD_NAMES, row))
                fields["stack"] = tuple(list(row[at]))
                steps.add(**fields)
            left = len(gc.get_objects(0)) - before
    finally:
        if enabled:
            gc.enable()
    assert left < len(rows) / 100, f"{left} objects left for the collector by {len(rows)} steps"
    assert steps.rows() == rows
    # ... and each reads back as the Step it was
    c = rec.compiles[0]
    s = c.steps[3]
    assert isinstance(s, Step) and s.index == 3 and s.vars is c.vars
    assert [t.index for t in c.steps[1:4]] == [1, 2, 3] and list(c.steps)[3] == s


def test_a_step_made_over_its_own_table_joins_the_compiles():
    table = [Var("TensorVariable", "Tensor", "L['x']")]
    own = Step(index=0, offset=0, opname="LOAD_FAST", argrepr="x", lineno=1, depth=0, code=0,
               stack_ids=(0,), locals_ids={"x": 0}, vars=table)
    c = Compile("0/0", "f", "f.py", 1, vars=[Var("ConstantVariable", "int")], steps=[own])
    back = c.steps[0]
    assert back.stack == own.stack and back.locals == own.locals and back.stack_ids == (1,)
    from capture.recording import compile_to_dict
    assert compile_to_dict(c)["steps"][0]["stack"] == [1]


def test_steps_made_by_hand_keep_their_indices_as_columns():
    table = [Var("TensorVariable", "Tensor", "L['x']")]
    steps = [Step(index=k, offset=2 * k, opname="LOAD_FAST", argrepr="x", lineno=1, depth=0,
                  code=0, stack_ids=(0,), locals_ids={"x": 0}, vars=table) for k in (5, 9)]
    c = Compile("0/0", "f", "f.py", 1, vars=table, steps=steps)
    rec = Recording(compiles=[c])
    back = Recording.from_json(rec.to_json(columns=True)).compiles[0]
    assert [s.index for s in back.steps] == [5, 9] and list(back.steps) == list(c.steps)
    placed = Recording(compiles=[Compile("0/0", "f", "f.py", 1, vars=table, steps=[
        dataclasses.replace(s, index=k) for k, s in enumerate(steps)])])
    assert "index" not in placed.to_dict(columns=True)["compiles"][0]["steps"]


def test_every_listing_is_read_when_the_recording_finishes(rec):
    c = rec.compiles[0]
    names = [info.name for info in c.codes]
    assert names[:1] == ["f"] and "helper" in names
    for info in c.codes:
        assert info.instructions and info.walked
        assert all(i.original is None or 0 <= i.original < len(info.instructions)
                   for i in info.walked)
    own = [i.opname for i in dis.get_instructions(f.__code__)]
    assert [i.opname for i in c.codes[0].instructions] == own


def test_writing_json_reads_no_code_object(monkeypatch):
    """The JSON costs what the records hold: nothing is disassembled on the way out,
    however many recordings came before."""
    def refuse(*args, **kwargs):
        raise AssertionError("disassembled while writing a finished recording")

    def fresh(x):
        return helper(x) - 1

    rec = capture.trace(fresh, torch.ones(3))
    monkeypatch.setattr(dis, "get_instructions", refuse)
    monkeypatch.setattr(bytecode, "instructions", refuse)
    monkeypatch.setattr(bytecode, "align", refuse)
    text = rec.to_json()
    again = Recording.from_json(text)
    assert again.compiles[0].codes == rec.compiles[0].codes
    assert again.to_json() == text


def test_listings_are_read_once_per_code_object_per_recording(monkeypatch):
    calls = []
    original = bytecode.instructions

    def counted(code, *rest):
        calls.append(code)
        return original(code, *rest)

    monkeypatch.setattr(bytecode, "instructions", counted)

    def g(x, n):
        return helper(x) * n

    torch._dynamo.reset()
    compiled = torch.compile(g, backend="eager", dynamic=False)
    with capture.record() as r:
        compiled(torch.ones(2), 1)
        compiled(torch.ones(2), 2)  # a recompile: the same two code objects again
        assert calls == []  # nothing is read while Dynamo compiles
    assert len(r.compiles) == 2
    assert [c.co_name for c in calls].count("helper") == 1
    assert [c.co_name for c in calls].count("g") == 1
    assert r.compiles[0].codes == r.compiles[1].codes


def test_no_reading_outlives_its_recording():
    """Two recordings share no record, and nothing in capture's modules keeps a code
    object or a record after a recording (there is no cache shared by the process;
    Dynamo's own caches are another matter)."""
    a = capture.trace(f, torch.ones(2))
    b = capture.trace(f, torch.ones(2))
    assert a.compiles[0].codes == b.compiles[0].codes
    assert all(x is not y for x, y in zip(a.compiles[0].codes, b.compiles[0].codes))
    for module in [m for name, m in sys.modules.items() if name.split(".")[0] == "capture"]:
        for name, value in vars(module).items():
            if isinstance(value, dict):
                items = [*value.keys(), *value.values()]
            elif isinstance(value, (list, set, tuple)):
                items = list(value)
            else:
                continue
            held = [x for x in items if isinstance(x, (types.CodeType, CodeInfo))]
            assert not held, f"{module.__name__}.{name} holds {held[:3]}"


def test_a_reader_holds_nothing_once_finished(rec):
    reader = bytecode.CodeReader()
    info = reader.info(f.__code__)
    assert info.name == "f" and info.instructions == () and info.source_lines
    compiles = [capture.Compile(compile_id="0/0", code_name="f", filename="x", firstlineno=1,
                                codes=[info, rec.compiles[0].codes[0]])]
    reader.finish(compiles)
    done = compiles[0].codes
    assert done[0].instructions and done[1] is rec.compiles[0].codes[0]  # not its own: kept
    # never walked: the walked listing is the dis one, each row its own original
    assert [i.original for i in done[0].walked] == list(range(len(done[0].instructions)))
    assert all(not v for v in vars(reader).values())


def test_compile_index_and_schema_check_are_said_once():
    """capture owns finding a compile by id and refusing another schema; views call these."""
    from capture.recording import SCHEMA_VERSION, SchemaMismatch, check_schema

    r = Recording(compiles=[capture.Compile(compile_id=i, code_name="f", filename="x",
                                            firstlineno=1, generation=g)
                            for i, g in (("0/0", 0), ("1/0", 0), ("0/0", 1))])
    assert [r.compile_index("0/0"), r.compile_index("1/0"), r.compile_index("0/0", 1)] == [0, 1, 2]
    assert r.compile("0/0", 1) is r.compiles[2]
    with pytest.raises(KeyError, match="it has: 0/0, 1/0, 0/0"):
        r.compile_index("2/0")
    check_schema({"schema": SCHEMA_VERSION})
    for bad in ({"schema": SCHEMA_VERSION + 1}, {}, [1]):
        with pytest.raises(SchemaMismatch) as info:
            check_schema(bad)
        assert info.value.expected == SCHEMA_VERSION and isinstance(info.value, ValueError)
    with pytest.raises(SchemaMismatch, match=f"reads schema {SCHEMA_VERSION}"):
        Recording.from_json('{"schema": 0, "compiles": [], "events": []}')
    assert not hasattr(capture.Compile, "original_bytecode")
