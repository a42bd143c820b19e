"""The instructions Dynamo's translator walks, beside the code's own `dis`.

Dynamo cleans a copy of the bytecode before it traces; a step's offset is an
offset in that copy. What the cleaning does depends on the Python (explicit
`super()` below 3.12, fused loads split on 3.13, the method variant of
`LOAD_ATTR` split on 3.12+ with torch 2.14). These tests check the recording
against Dynamo's own cleaned listing and against `dis`.
"""

from __future__ import annotations

import dis
import sys

import pytest
import torch
from torch._dynamo.bytecode_transformation import cleaned_instructions

import capture


def both_not_none(x, a=None, b=None):
    if a is not None and b is not None:
        x = x + a * b
    return x * 2


class Scaled(torch.nn.Softmax):
    def __init__(self):
        super().__init__(dim=-1)

    def forward(self, x):
        return super().forward(x) * 3


def plain(x):
    y = x.sin()
    return y * 2 + 1


def uncleaned(x):
    y = x * 2
    return y + 1


PY311 = sys.version_info[:2] == (3, 11)


def walked_of(c, step):
    return {i.offset: i for i in c.codes[step.code].walked}


@pytest.mark.parametrize("fn, args", [
    (both_not_none, (torch.ones(3), torch.ones(3), torch.ones(3))),
    (both_not_none, (torch.ones(3),)),
    (plain, (torch.ones(3),)),
])
def test_every_step_is_a_row_of_the_listing_dynamo_walks(fn, args):
    rec = capture.trace(fn, *args)
    assert rec.step_count > 0
    for c in rec.compiles:
        for s in c.steps:
            row = walked_of(c, s).get(s.offset)
            assert row is not None, f"[{c.compile_id}] step {s.index} offset {s.offset}"
            assert (row.opname, row.argrepr) == (s.opname, s.argrepr)


def test_the_walked_listing_is_dynamos_cleaned_copy():
    rec = capture.trace(both_not_none, torch.ones(3), torch.ones(3), torch.ones(3))
    info = rec.compiles[0].codes[0]
    theirs = cleaned_instructions(both_not_none.__code__)
    assert [(i.offset, i.opname) for i in info.walked] == [(i.offset, i.opname) for i in theirs]


def test_cleaning_is_shown_where_it_changed_the_bytecode():
    rec = capture.trace(both_not_none, torch.ones(3), torch.ones(3), torch.ones(3))
    info = rec.compiles[0].codes[0]
    assert info.cleaned
    original = info.instructions
    # Each `is not None` jump became LOAD_CONST None; IS_OP; POP_JUMP_*_IF_TRUE.
    inserted = [i for i in info.walked if i.original is None]
    assert [i.opname for i in inserted].count("IS_OP") == 2
    assert [(i.opname, i.argrepr) for i in inserted].count(("LOAD_CONST", "None")) == 2
    kept = {i.original for i in info.walked if i.original is not None}
    removed = [original[k].opname for k in range(len(original)) if k not in kept]
    none_jumps = [op for op in removed if op.endswith("_NONE")]
    assert len(none_jumps) == 2 and len(set(none_jumps)) == 1, removed
    if PY311:
        assert none_jumps[0] in ("POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE")
    else:
        assert none_jumps[0] in ("POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NONE")
    # 3.13 fuses `x + a * b`'s loads (LOAD_FAST_LOAD_FAST); Dynamo splits them again.
    assert all(op == "LOAD_FAST_LOAD_FAST" for op in removed if op not in none_jumps), removed
    # Rows that correspond keep their order.
    pointers = [i.original for i in info.walked if i.original is not None]
    assert pointers == sorted(pointers)
    # The step at the inserted LOAD_CONST marks that row, which is no row of `dis`.
    c = rec.compiles[0]
    step = next(s for s in c.steps if s.opname == "IS_OP")
    assert walked_of(c, step)[step.offset].original is None


@pytest.mark.skipif(not PY311, reason="Dynamo makes super()'s arguments explicit below 3.12 only")
def test_explicit_super_keeps_the_call_and_marks_it_rewritten():
    module = Scaled()
    rec = capture.trace(lambda x: module(x), torch.ones(2, 3))
    infos = [ci for c in rec.compiles for ci in c.codes if ci.name == "forward"
             and ci.filename == __file__]
    assert infos, [ci.name for c in rec.compiles for ci in c.codes]
    info = infos[0]
    assert info.cleaned
    inserted = [(i.opname, i.argrepr) for i in info.walked if i.original is None]
    assert ("LOAD_DEREF", "__class__") in inserted
    calls = [i for i in info.walked if i.opname == "CALL" and i.changed]
    assert calls and all(i.original is not None for i in calls)
    assert info.instructions[calls[0].original].opname == "CALL"


@pytest.mark.skipif(PY311, reason="LOAD_SUPER_ATTR is 3.12's")
def test_super_is_one_load_super_attr_that_dynamo_walks_as_it_is():
    module = Scaled()
    rec = capture.trace(lambda x: module(x), torch.ones(2, 3))
    (info,) = {ci.name: ci for c in rec.compiles for ci in c.codes
               if ci.name == "forward" and ci.filename == __file__}.values()
    (row,) = [i for i in info.walked if i.opname == "LOAD_SUPER_ATTR"]
    assert row.original is not None and not row.changed
    # dis writes the NULL|self the attribute is loaded with: before the name on 3.12, after on 3.13
    assert row.argrepr == ("forward + NULL|self" if sys.version_info >= (3, 13)
                           else "NULL|self + forward")
    assert row.argrepr == info.instructions[row.original].argrepr
    assert not any(i.opname == "LOAD_DEREF" and i.original is None for i in info.walked)
    step = next(s for c in rec.compiles for s in c.steps if s.opname == "LOAD_SUPER_ATTR")
    assert step.argrepr == row.argrepr


def test_an_uncleaned_code_maps_row_for_row():
    rec = capture.trace(uncleaned, torch.ones(3))
    info = rec.compiles[0].codes[0]
    assert not info.cleaned
    assert [i.original for i in info.walked] == list(range(len(info.instructions)))
    assert not any(i.changed for i in info.walked)


def test_arguments_read_as_dis_writes_them():
    """Every unchanged row of every code a real model walks writes its argument as `dis`
    does (jumps aside: their targets are offsets in Dynamo's renumbered copy)."""
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).eval()
    rec = capture.trace(layer, torch.randn(1, 3, 8))
    checked = 0
    for c in rec.compiles:
        for info in c.codes:
            jumps = {i.offset for i in info.walked if i.argrepr.startswith("to ")}
            for row in info.walked:
                if row.original is None or row.changed or row.offset in jumps:
                    continue
                assert row.argrepr == info.instructions[row.original].argrepr, (info.name, row)
                checked += 1
    assert checked > 500
    ops = {(s.opname, s.argrepr) for c in rec.compiles for s in c.steps if s.opname == "BINARY_OP"}
    assert ops and all(not arg.isdigit() for _, arg in ops)


def test_the_listings_survive_json():
    rec = capture.trace(both_not_none, torch.ones(3), torch.ones(3), torch.ones(3))
    back = capture.Recording.from_json(rec.to_json())
    a, b = rec.compiles[0].codes[0], back.compiles[0].codes[0]
    assert a.walked == b.walked and a.instructions == b.instructions and b.cleaned


def test_dis_listing_is_the_codes_own():
    rec = capture.trace(both_not_none, torch.ones(3), torch.ones(3), torch.ones(3))
    info = rec.compiles[0].codes[0]
    assert [i.opname for i in info.instructions] == \
        [i.opname for i in dis.get_instructions(both_not_none)]


def test_a_resume_offset_is_an_offset_in_the_walked_listing():
    """Where cleaning renumbered the instructions before the break, the offset in the resume
    function's name is Dynamo's, not `dis`'s."""
    def f(x, a=None, b=None):
        if a is not None and b is not None:
            x = x + 1
        print("between")
        return x * 2

    rec = capture.trace(f, torch.ones(3))
    c = next(c for c in rec.compiles if c.resume_functions)
    (resume,) = c.resume_functions
    info = c.codes[0]
    walked = {i.offset: i for i in info.walked}
    assert walked[resume.offset].opname == "POP_TOP"
    assert resume.offset not in {i.offset for i in info.instructions
                                 if i.opname == "POP_TOP"}  # dis's POP_TOP sits elsewhere
