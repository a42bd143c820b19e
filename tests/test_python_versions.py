"""Each Python's bytecode, read as that Python's `dis` reads it (3.11, 3.12, 3.13).

The engine records what the running interpreter's `dis` and Dynamo's walk say; the
bytecode itself differs by Python. These tests hold on every supported Python and
pick steps by what they do. Where a Python differs, the test says which: PEP 709
inlines comprehensions on 3.12, which also brings `LOAD_SUPER_ATTR` and
`CALL_INTRINSIC_1`; 3.13 pushes the NULL after the callable (`len + NULL`), fuses
loads (`LOAD_FAST_LOAD_FAST x, a`), writes `COMPARE_OP bool(>)` and names jump
targets by label (`to L1`).
"""

from __future__ import annotations

import dis
import inspect
import sys
import types

import pytest
import torch

import capture
from capture import bytecode
from capture.recording import disassembly_text
from capture.text import MAX_ARGREPR, shorten
from scenarios import SCENARIOS

PY = sys.version_info[:2]
LABELLED = PY >= (3, 13)


def programs(x, n, xs):
    doubled = [v * 2 for v in xs]
    both = (*doubled, x)
    if n > 2:
        x = x + len(both)
    for i in range(n):
        x = x + i
    return +torch.cat(both)


def fused(x, a, b):
    return x + a * b


def trace_programs():
    return capture.trace(programs, torch.ones(2), 3, [torch.ones(2), torch.ones(2)])


def record(calls):
    torch._dynamo.reset()
    with capture.record() as rec:
        for fn, args in calls:
            torch.compile(fn, backend="eager")(*args)
    return rec


def is_line(value):
    return value is None or type(value) is int  # a bool is an int to isinstance


def renumbered(info):
    return any(r.original is not None and r.offset != info.instructions[r.original].offset
               for r in info.walked)


RECORDED = {
    **{name: (lambda f=f: f()) for name, f in SCENARIOS.items()},
    "programs": lambda: [(programs, (torch.ones(2), 3, [torch.ones(2), torch.ones(2)]))],
    "fused": lambda: [(fused, (torch.ones(3), torch.ones(3), torch.ones(3)))],
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_every_line_is_an_int_or_none_and_every_unchanged_row_reads_as_dis_writes_it(name):
    """On the running Python: every recorded line number is an int or None (3.13's
    `starts_line` is a bool), and every walked row Dynamo did not rewrite writes its
    argument as the `dis` row it came from, jumps included where offsets were kept
    or `dis` names targets by label (3.13)."""
    rec = record(RECORDED[name]())
    assert rec.compiles
    checked = 0
    for c in rec.compiles:
        assert all(is_line(s.lineno) for s in c.steps), c.compile_id
        for info in c.codes:
            rows = (*info.instructions, *info.walked, *c.modified_instructions)
            assert all(is_line(r.lineno) for r in rows), (c.compile_id, info.name)
            assert any(r.lineno for r in info.instructions), info.name
            compare_jumps = LABELLED or not renumbered(info)
            for row in info.walked:
                if row.original is None or row.changed:
                    continue
                if row.argrepr.startswith("to ") and not compare_jumps:
                    continue
                theirs = info.instructions[row.original]
                assert (row.opname, row.argrepr, row.label) == \
                    (theirs.opname, theirs.argrepr, theirs.label), (info.name, row, theirs)
                checked += 1
    assert checked >= 5


def _codes(obj, seen):
    """Every code object of a module's functions and classes, nested ones included."""
    found = []
    for value in vars(obj).values():
        if isinstance(value, type) and value.__module__ == obj.__name__ and value not in seen:
            seen.add(value)
            found += _codes_of_class(value)
        elif isinstance(value, types.FunctionType) and value.__module__ == obj.__name__:
            found.append(value.__code__)
    return found


def _codes_of_class(cls):
    out = []
    for value in vars(cls).values():
        value = getattr(value, "__func__", value)
        if isinstance(value, property):
            value = value.fget
        if isinstance(value, types.FunctionType):
            out.append(value.__code__)
    return out


def _nested(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def test_the_code_listing_is_this_pythons_dis():
    """`capture.bytecode.instructions` over the real code a transformer walks (and the
    tests' programs): each row's argument is `dis`'s argrepr (or, where `dis` writes
    none, the bare argument, as `dis.dis` prints it), its line is the line `dis` gives
    (3.13's `line_number`), its label is `dis`'s (3.13)."""
    import scenarios
    import torch.nn.functional
    import torch.nn.modules.activation
    import torch.nn.modules.linear
    import torch.nn.modules.module
    import torch.nn.modules.transformer

    seen: set = set()
    codes = [c for m in (sys.modules[__name__], scenarios, torch.nn.functional,
                         torch.nn.modules.activation, torch.nn.modules.linear,
                         torch.nn.modules.module, torch.nn.modules.transformer)
             for top in _codes(m, seen) for c in _nested(top)]
    rows = 0
    for code in codes:
        line = None
        ours = bytecode.instructions(code)
        theirs = list(dis.get_instructions(code))
        assert len(ours) == len(theirs), code
        for mine, ins in zip(ours, theirs):
            if LABELLED:
                line = ins.line_number
            elif ins.starts_line is not None:
                line = ins.starts_line
            expected = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
            if ins.opname == "KW_NAMES" and not ins.argrepr:  # 3.11 writes no names: we do
                expected = repr(code.co_consts[ins.arg])
            if ins.opname in ("LOAD_CONST", "RETURN_CONST", "KW_NAMES"):
                expected = shorten(expected, MAX_ARGREPR)  # the program's constants are bounded
            assert (mine.offset, mine.opname, mine.argrepr) == (ins.offset, ins.opname, expected), \
                (code, ins)
            assert is_line(mine.lineno) and mine.lineno == line, (code, ins)
            assert mine.is_jump_target == ins.is_jump_target
            assert mine.label == (f"L{ins.label}" if LABELLED and ins.label is not None else None)
            rows += 1
    assert len(codes) > 300 and rows > 20_000


def test_a_list_comprehension_is_inlined_from_3_12_and_its_own_code_on_3_11():
    rec = trace_programs()
    (c,) = rec.compiles
    names = [ci.name for ci in c.codes]
    stored = next(s for s in c.steps if (s.opname, s.argrepr) == ("STORE_FAST", "doubled"))
    before = c.steps[:stored.index]
    if PY == (3, 11):
        # a code object of its own, which Dynamo inlines (one level deeper)
        assert names == ["programs", "<listcomp>"]
        assert any(s.code_name == "<listcomp>" and s.depth == 1 for s in before)
    else:
        # PEP 709: the loop is in the function's own code, its variable saved and cleared
        assert names == ["programs"]
        assert all(s.depth == 0 for s in c.steps)
        clear = next(s for s in before if s.opname == "LOAD_FAST_AND_CLEAR")
        assert clear.argrepr == "v"
    appends = [s for s in before if s.opname == "LIST_APPEND"]
    assert len(appends) == 2  # one per element


def test_the_null_of_a_call_is_pushed_before_the_callable_until_3_13():
    rec = trace_programs()
    (c,) = rec.compiles
    load = next(s for s in c.steps if s.opname == "LOAD_GLOBAL" and "len" in s.argrepr)
    kinds = [v.kind for v in load.stack]
    if LABELLED:
        assert load.argrepr == "len + NULL"
        assert kinds[-1] == "NullVariable" and kinds[-2] != "NullVariable"
    else:
        assert load.argrepr == "NULL + len"
        assert kinds[-2] == "NullVariable" and kinds[-1] != "NullVariable"
    info = c.codes[load.code]
    row = {r.offset: r for r in info.walked}[load.offset]
    assert row.argrepr == load.argrepr == info.instructions[row.original].argrepr


def test_intrinsics_are_named_as_dis_names_them():
    """3.12 turns UNARY_POSITIVE and LIST_TO_TUPLE into CALL_INTRINSIC_1, whose argument
    `dis` names (INTRINSIC_UNARY_POSITIVE), not numbers."""
    rec = trace_programs()
    (c,) = rec.compiles
    ret = next(s for s in c.steps if s.opname == "RETURN_VALUE" and s.depth == 0)
    positive = c.steps[ret.index - 1]  # the unary + on torch.cat's result
    stored = next(s for s in c.steps if (s.opname, s.argrepr) == ("STORE_FAST", "both"))
    to_tuple = c.steps[stored.index - 1]
    if PY == (3, 11):
        assert (positive.opname, positive.argrepr) == ("UNARY_POSITIVE", "")
        assert (to_tuple.opname, to_tuple.argrepr) == ("LIST_TO_TUPLE", "")
    else:
        assert (positive.opname, positive.argrepr) == ("CALL_INTRINSIC_1", "INTRINSIC_UNARY_POSITIVE")
        assert (to_tuple.opname, to_tuple.argrepr) == ("CALL_INTRINSIC_1", "INTRINSIC_LIST_TO_TUPLE")
    assert [v.kind for v in positive.stack] == ["TensorVariable"]
    assert positive.nodes_added  # the + is an op of the graph


def test_a_comparison_that_feeds_a_jump_says_bool_on_3_13():
    rec = trace_programs()
    (c,) = rec.compiles
    compare = next(s for s in c.steps if s.opname == "COMPARE_OP")
    assert compare.argrepr == ("bool(>)" if LABELLED else ">")
    (result,) = compare.stack[-1:]
    assert (result.kind, result.detail) == ("ConstantVariable", "True")


def test_every_jump_names_a_row_of_the_listing_it_walks():
    """Below 3.13 a jump says `to 14`, the offset of a row marked `>>`; 3.13 says `to L1`,
    as its `dis` does, and the row it names carries the label `L1`. Steps say the same as
    their rows, and the text listing shows each label where `dis` does."""
    rec = trace_programs()
    (c,) = rec.compiles
    for listing in (c.codes[0].walked, c.codes[0].instructions):
        by_label = {r.label: r for r in listing if r.label}
        by_offset = {r.offset: r for r in listing}
        jumps = [r for r in listing if r.argrepr.startswith("to ")]
        assert len(jumps) >= 3
        for jump in jumps:
            name = jump.argrepr.removeprefix("to ")
            if LABELLED:
                assert name.startswith("L") and by_label[name].is_jump_target
            else:
                assert by_offset[int(name)].is_jump_target and not by_label
        assert sum(r.is_jump_target for r in listing) == len({j.argrepr for j in jumps})
    for s in c.steps:
        row = {r.offset: r for r in c.codes[s.code].walked}[s.offset]
        assert (s.opname, s.argrepr) == (row.opname, row.argrepr)
    text = disassembly_text(c.codes[0].walked)
    loop = next(r for r in c.codes[0].walked if r.opname == "FOR_ITER")
    (line,) = [t for t in text.splitlines() if f" {loop.offset} FOR_ITER " in t]
    mark = f"{loop.label}:" if LABELLED else ">>"
    assert line.split()[line.split().index(str(loop.offset)) - 1] == mark, line


def test_labels_survive_json():
    rec = trace_programs()
    back = capture.Recording.from_json(rec.to_json())
    a, b = rec.compiles[0].codes[0], back.compiles[0].codes[0]
    assert a.walked == b.walked and a.instructions == b.instructions
    assert [r.label for r in b.walked if r.label] == \
        ([f"L{n}" for n in range(1, len([r for r in a.walked if r.label]) + 1)] if LABELLED else [])


@pytest.mark.skipif(not LABELLED, reason="LOAD_FAST_LOAD_FAST is 3.13's")
def test_fused_loads_are_one_dis_row_that_dynamo_walks_as_two():
    rec = capture.trace(fused, torch.ones(3), torch.ones(3), torch.ones(3))
    (c,) = rec.compiles
    info = c.codes[0]
    (pair,) = [r for r in info.instructions if r.opname == "LOAD_FAST_LOAD_FAST"]
    assert pair.argrepr == "x, a"
    k = info.instructions.index(pair)
    # Dynamo splits the pair (remove_fused_load_store): two LOAD_FASTs, neither the pair's
    split = [r for r in info.walked if r.opname == "LOAD_FAST"][:2]
    assert [r.argrepr for r in split] == ["x", "a"]
    assert all(r.original != k for r in info.walked)
    assert all(r.changed or r.original is None for r in split)
    loads = [(s.opname, s.argrepr) for s in c.steps if s.opname.startswith("LOAD_FAST")]
    assert loads == [("LOAD_FAST", "x"), ("LOAD_FAST", "a"), ("LOAD_FAST", "b")]


def test_argrepr_follows_this_pythons_rules_for_what_dynamo_made():
    """Rows Dynamo made carry a resolved value and no index: `dis`'s own rules still
    decide how they read (the inserted `LOAD_CONST None`, a split `LOAD_FAST`, a
    LOAD_ATTR without its method bit)."""
    assert bytecode.argrepr("LOAD_CONST", None, None) == "None"
    assert bytecode.argrepr("LOAD_FAST", None, "x") == "x"
    assert bytecode.argrepr("LOAD_ATTR", 0, "sin") == "sin"
    assert bytecode.argrepr("BINARY_OP", 5, 5) == "*"
    assert bytecode.argrepr("RETURN_VALUE", None, None) == ""
    assert bytecode.argrepr("CALL", 2, 2) == "2"
    null = bytecode.argrepr("LOAD_GLOBAL", 1, "len")
    assert null == ("len + NULL" if LABELLED else "NULL + len")
    if PY >= (3, 12):
        method = bytecode.argrepr("LOAD_ATTR", 1, "sin")
        assert method == ("sin + NULL|self" if LABELLED else "NULL|self + sin")
        stop = dis._intrinsic_1_descs.index("INTRINSIC_STOPITERATION_ERROR")
        assert bytecode.argrepr("CALL_INTRINSIC_1", stop, stop) == "INTRINSIC_STOPITERATION_ERROR"
    # an argument over 255 (EXTENDED_ARG below 3.13's resolver)
    assert bytecode.argrepr("LOAD_CONST", 300, "far") == "'far'"
    assert inspect.signature(bytecode.argrepr).parameters["label"].default is None
