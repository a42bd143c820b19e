"""A step is declared once (`capture.steps.STEP_FIELDS`): the recorder's call, the `Step`
record, the JSON rows and columns and the viewer's decoder all follow from it.

The node tests (tests/js/decode.test.mjs, run by tests/test_viewer_js.py) decode real
recordings sent as columns with the field list written from the declaration and find
exactly the rows the engine writes: the Python and JS sides agree on real data.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest
import torch

import capture
from capture.recording import Compile, Recording, Step, Steps, Var
from capture.steps import FIELD_NAMES, STEP_FIELDS, steps_from_columns
from widgets.viewer import stepfields

ROOT = Path(__file__).resolve().parents[1]


def helper(t):
    return t.cos() * 2


def f(x):
    y = x.sin()
    y = helper(y)
    return y + 1


@pytest.fixture(scope="module")
def rec() -> Recording:
    # one small real compile: an inlined call, a rename (STORE_FAST y), guards, nodes
    return capture.trace(f, torch.ones(3))


def test_the_viewers_field_list_is_written_from_the_declaration():
    assert stepfields.OUT.read_text(encoding="utf-8") == stepfields.source(), \
        "widgets/viewer/js/stepfields.js is stale: run python -m widgets.viewer.stepfields"
    written = re.findall(r'"name": "(\w+)"', stepfields.source())
    assert tuple(written) == FIELD_NAMES


def test_the_step_record_has_the_declared_fields_in_order():
    names = [fld.name for fld in dataclasses.fields(Step)]
    assert names == [fld.step_attr for fld in STEP_FIELDS] + ["vars"]


def test_the_recorder_hands_over_every_field_in_the_declared_order():
    """The recorder calls `Steps.add` by position (the hot path: no keyword matching, no row
    tuple); each value it passes is named after its field, in the declared order."""
    params = list(inspect.signature(Steps.add).parameters)
    assert params == ["_self", *FIELD_NAMES]
    tree = ast.parse((ROOT / "capture" / "attempt.py").read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "add"
             and ast.unparse(node.func.value) == "c.steps"]
    assert len(calls) == 1 and not calls[0].keywords
    passed = [arg.id.rstrip("_") if isinstance(arg, ast.Name) else ast.unparse(arg)
              for arg in calls[0].args]
    assert passed == list(FIELD_NAMES)


def test_a_step_left_short_is_refused():
    one = dict(index=0, offset=0, opname="NOP", argrepr="", lineno=1, depth=0, code=0,
               code_name="f", graph_size=0, nodes_added=(), nodes_renamed=(), guards_added=(),
               inline_stack=(), stack=(), locals=())
    assert tuple(one) == FIELD_NAMES
    steps = Steps([])
    steps.add(**one)
    with pytest.raises(TypeError):
        steps.add(*list(one.values())[:-1])   # a field left out
    with pytest.raises(TypeError):
        steps.add(**one, colour="red")        # one not declared
    assert len(steps) == 1 and steps[0].code_name == "f"


def test_every_field_survives_rows_and_columns(rec):
    steps = [s for c in rec.compiles for s in c.steps]
    assert any(s.nodes_added for s in steps) and any(s.guards_added for s in steps)
    assert any(s.inline_stack for s in steps) and any(s.nodes_renamed for s in steps)
    rows = rec.to_dict()["compiles"][0]["steps"]
    assert all(tuple(r) == FIELD_NAMES for r in rows)
    cols = rec.to_dict(columns=True)["compiles"][0]["steps"]
    for fld in STEP_FIELDS:
        assert (fld.name in cols) == (fld.column != "place"), fld.name
        if fld.table:
            assert fld.table in cols
    assert list(steps_from_columns(cols)) == json.loads(json.dumps(rows))
    for text in (rec.to_json(), rec.to_json(columns=True)):
        back = Recording.from_json(text)
        assert [list(c.steps) for c in back.compiles] == [list(c.steps) for c in rec.compiles]


def test_json_made_before_a_field_existed_reads_its_default(rec):
    data = rec.to_dict()
    for s in data["compiles"][0]["steps"]:
        del s["code_name"], s["graph_size"], s["nodes_renamed"]
    back = Recording.from_dict(data).compiles[0].steps
    assert {s.code_name for s in back} == {""} and {s.graph_size for s in back} == {0}
    assert all(s.nodes_renamed == () for s in back)
    cols = rec.to_dict(columns=True)
    del cols["compiles"][0]["steps"]["guards_added"]
    assert all(s.guards_added == () for s in Recording.from_dict(cols).compiles[0].steps)
    del cols["compiles"][0]["steps"]["opname"]   # a field every step must have
    with pytest.raises(KeyError, match="opname"):
        Recording.from_dict(cols)


def test_a_slice_of_steps_is_the_steps_read_one_by_one(rec):
    steps = max((c.steps for c in rec.compiles), key=len)
    n = len(steps)
    for sl in (slice(None), slice(3, n - 2), slice(n - 2, n + 5), slice(5, 2), slice(-4, None),
               slice(1, None, 3), slice(None, None, -1)):
        got, want = steps[sl], [steps[k] for k in range(*sl.indices(n))]
        assert got == want and [s.index for s in got] == [s.index for s in want], sl
    assert [s.stack_ids for s in steps] == [steps[k].stack_ids for k in range(n)]


def test_a_column_of_another_length_than_the_steps_is_refused(rec):
    cols = rec.to_dict(columns=True)
    cols["compiles"][0]["steps"]["offset"].pop()
    with pytest.raises(ValueError, match="offset"):
        Recording.from_dict(cols)


def test_no_reader_or_writer_names_a_field_but_the_declaration():
    """The codec, the recording and the viewer's decoder name no step field: each reads
    the declaration (the recorder names them all, by keyword, in one call)."""
    for module in ("codec", "recording"):
        tree = ast.parse((ROOT / "capture" / f"{module}.py").read_text(encoding="utf-8"))
        named = {node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and node.value in FIELD_NAMES}
        assert named == set(), (module, named)
    js = (ROOT / "widgets" / "viewer" / "js" / "decode.js").read_text(encoding="utf-8")
    js = re.sub(r"//.*", "", re.sub(r"/\*.*?\*/", "", js, flags=re.DOTALL))
    steps_code = js[js.index("export function stepRows"):]
    assert not [n for n in FIELD_NAMES if re.search(rf"\b{n}\b", steps_code)]


def test_steps_made_by_hand_over_a_table_of_their_own():
    table = [Var("TensorVariable", "Tensor", "L['x']")]
    own = Step(index=0, offset=0, opname="LOAD_FAST", argrepr="x", lineno=1, depth=0, code=0,
               stack_ids=(0,), locals_ids={"x": 0}, nodes_renamed=[("a", "b")], vars=table)
    c = Compile("0/0", "f", "f.py", 1, vars=[Var("ConstantVariable", "int")], steps=[own])
    assert c.steps[0] == own and c.steps[0].nodes_renamed == [("a", "b")]
    assert c.steps.row(0)[FIELD_NAMES.index("locals")] == (("x", 1),)
