"""The help data (capture/help.json): every word the suite's recordings show is explained.

tests/data/help_seen/<python>.json lists, per Python, every opname of that Python's
`dis.opmap`, and every opname Dynamo walked, VariableTracker class and guard kind that
recording the suite's programs gave (tests/help_seen.py writes them; run it again with
each venv when torch or the programs change). So the 3.11 venv checks 3.12 and 3.13 too.
GLOSSARY.md's last section is made from the same file and must be fresh.
"""

from __future__ import annotations

import dis
import json
import sys
from pathlib import Path

import pytest

from capture import help

ROOT = Path(__file__).resolve().parents[1]
SEEN = sorted((ROOT / "tests" / "data" / "help_seen").glob("*.json"))
GLOSSARY = ROOT / "notebooks" / "GLOSSARY.md"

# Named by the issue that asked for the help: each must have an entry of its own.
NAMED_TRACKERS = ["GetAttrVariable", "UnknownVariable", "NullVariable", "LazyVariableTracker",
                  "UnspecializedBuiltinNNModuleVariable", "TensorVariable", "ConstantVariable",
                  "SymNodeVariable", "UserFunctionVariable", "UnspecializedNNModuleVariable"]
NAMED_GUARDS = ["NOT_PRESENT_IN_GENERIC_DICT", "DICT_KEYS_MATCH", "EMPTY_NN_MODULE_HOOKS_DICT",
                "DIMENSION_DYNAMIC_MARKING_GUARD", "TENSOR_MATCH", "ID_MATCH", "TYPE_MATCH", "SHAPE_ENV"]
NAMED_OPS = {"3.11": ["PRECALL", "LOAD_METHOD", "KW_NAMES", "POP_JUMP_FORWARD_IF_NONE"],
             "3.12": ["LOAD_SUPER_ATTR", "CALL_INTRINSIC_1", "RETURN_CONST", "BINARY_SLICE"],
             "3.13": ["LOAD_FAST_LOAD_FAST", "TO_BOOL", "CALL_KW", "SET_FUNCTION_ATTRIBUTE"]}


def _seen(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_suite_was_seen_on_every_python():
    pythons = {_seen(p)["python"] for p in SEEN}
    assert {"3.11", "3.12", "3.13"} <= pythons, f"tests/help_seen.py has not been run on {pythons}"


@pytest.mark.parametrize("path", SEEN, ids=lambda p: p.stem)
def test_every_opname_of_that_pythons_dis_has_an_entry_that_knows_it(path):
    seen = _seen(path)
    missing = [op for op in seen["opmap"] if help.opcode(op) is None]
    assert not missing, f"no help for Python {seen['python']}'s {missing}"
    wrong = [op for op in seen["opmap"] if not help.opcode(op, seen["python"])["here"]]
    assert not wrong, f"help says {wrong} are not in Python {seen['python']}, whose dis has them"


@pytest.mark.parametrize("path", SEEN, ids=lambda p: p.stem)
def test_every_opname_tracker_and_guard_kind_the_recordings_hold_has_an_entry(path):
    seen = _seen(path)
    assert seen["walked"] and seen["trackers"] and seen["guards"], "nothing was recorded"
    assert [op for op in seen["walked"] if help.opcode(op) is None] == []
    # A class the recordings hold has an entry of its own, not only its family's.
    assert [k for k in seen["trackers"] if k not in help.data()["trackers"]] == []
    assert [g for g in seen["guards"] if help.guard(g) is None] == []


def test_this_pythons_opnames_are_all_explained():
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert [op for op in dis.opmap if not (help.opcode(op, python) or {}).get("here")] == []


@pytest.mark.parametrize("python, ops", NAMED_OPS.items())
def test_the_opnames_that_differ_between_pythons_say_which_pythons_have_them(python, ops):
    for op in ops:
        entry = help.opcode(op, python)
        assert entry and entry["here"], op
        assert entry["does"] and entry["dynamo"], op
    assert help.opcode("PRECALL", "3.12")["here"] is False
    assert help.opcode("LOAD_FAST_LOAD_FAST", "3.11")["here"] is False


def test_the_trackers_and_guard_kinds_named_by_the_issue_have_entries_of_their_own():
    assert [k for k in NAMED_TRACKERS if k not in help.data()["trackers"]] == []
    assert [g for g in NAMED_GUARDS if help.guard(g) is None] == []


def test_every_tracker_class_of_the_installed_torch_is_explained_at_least_by_its_family():
    import inspect
    import pkgutil
    import importlib

    import torch._dynamo.variables as variables
    from torch._dynamo.variables.base import VariableTracker

    classes = set()
    for m in pkgutil.iter_modules(variables.__path__):
        try:
            mod = importlib.import_module(f"torch._dynamo.variables.{m.name}")
        except Exception:
            continue
        classes.update(o.__name__ for o in vars(mod).values()
                       if inspect.isclass(o) and issubclass(o, VariableTracker))
    assert len(classes) > 100
    assert [k for k in sorted(classes) if help.tracker(k) is None] == []


def test_every_entry_says_something_in_full_sentences():
    d = help.data()
    for name, e in d["opcodes"].items():
        assert e["does"].strip() and e["dynamo"].strip(), name
        assert set(e.get("python", d["pythons"])) <= set(d["pythons"]), name
    for table in ("trackers", "guards", "symbols"):
        for name, text in d[table].items():
            assert len(text) > 15 and text.rstrip().endswith((".", ")")), (table, name)


def test_symbols_are_told_by_their_prefix():
    assert "backed size" in help.symbol("s77")
    assert "unbacked" in help.symbol("u0")
    assert help.symbol("x") is None
    assert help.symbols_in("f32[s77, 3] and u0") == ["s77", "u0"]


def test_the_glossary_section_is_made_from_the_help_file():
    text = GLOSSARY.read_text(encoding="utf-8")
    assert help.GLOSSARY_START in text, "run: python -m capture.help --glossary"
    assert text == help.glossary_with_section(text), \
        "GLOSSARY.md's generated section is stale: run python -m capture.help --glossary"
    for word in ["`LOAD_FAST_LOAD_FAST`", "`GetAttrVariable`", "`DICT_KEYS_MATCH`", "`s…`"]:
        assert word in text.split(help.GLOSSARY_START, 1)[1]


def test_a_recordings_help_covers_every_word_it_shows(viewer_recording):
    got = help.for_recording(viewer_recording)
    assert got["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    for c in viewer_recording.compiles:
        assert {s.opname for s in c.steps} <= set(got["opcodes"])
        assert {v.kind for v in c.vars} <= set(got["trackers"])
        assert {g.kind for g in c.guard_details} <= set(got["guards"])
    json.dumps(got)   # it travels as a trait


def test_a_graph_break_keeps_its_gb_id_and_the_registrys_entry(viewer_recording):
    from capture import internals

    registry = internals.graph_break_registry()
    broke = [c for c in viewer_recording.compiles if c.graph_break is not None]
    assert broke
    for c in broke:
        gb = c.graph_break
        assert gb.gb_id and gb.link and gb.link.endswith(f"/gb/{gb.gb_id.lower()}.html"), gb
        assert gb.registry in registry[gb.gb_id], "the entry is the installed torch's, as it writes it"
        assert gb.registry["Hints"] and gb.registry["Explanation"]
    again = type(viewer_recording).from_json(viewer_recording.to_json())
    assert [c.graph_break for c in again.compiles] == [c.graph_break for c in viewer_recording.compiles]
