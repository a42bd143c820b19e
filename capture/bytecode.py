"""Code objects as records: the disassembly, Dynamo's cleaned listing, the source lines.

Two listings of one code object are kept apart: `instructions` is what `dis`
prints, `walked` is the copy Dynamo's translator steps through. On Python 3.11
Dynamo cleans the copy before it traces (strips EXTENDED_ARG, rewrites
`POP_JUMP_*_IF_NONE`, makes `super()`'s arguments explicit, renumbers offsets);
`align` says which rows of the two correspond. Both write an instruction's
argument as `dis` does (`BINARY_OP` shows `*`, not `5`).
"""

from __future__ import annotations

import dis
import linecache
from collections.abc import Iterable
from difflib import SequenceMatcher
from operator import itemgetter
from types import CodeType
from typing import Any

from . import internals
from .recording import CodeInfo, Instr, disassembly_text
from .text import MAX_ARGREPR, MAX_NAME, shorten, shown_line

# Code objects are immutable, so their reading is made once per process.
_infos: dict[CodeType, CodeInfo] = {}

_JUMPS = frozenset(dis.opname[op] for op in (*dis.hasjrel, *dis.hasjabs))


def argrepr(opname: str, arg: int | None, argval: Any, target: int | None = None) -> str:
    """An instruction's argument as `dis` writes it (3.11), or the bare number when `dis`
    writes nothing; `target` is a jump's target offset."""
    if target is not None:
        text = f"to {target}"
    elif opname in ("LOAD_CONST", "KW_NAMES", "RETURN_CONST"):
        text = repr(argval)
    elif arg is None and argval is None:
        return ""
    elif opname == "BINARY_OP" and arg is not None:
        text = dis._nb_ops[arg][1]
    elif opname == "LOAD_GLOBAL" and arg is not None and arg & 1:
        text = f"NULL + {argval}"
    elif opname == "FORMAT_VALUE" and arg is not None:
        text = dis.FORMAT_VALUE_CONVERTERS[arg & 3][1] or ""
        if arg & 4:
            text = f"{text}, with format" if text else "with format"
    elif opname == "MAKE_FUNCTION" and arg is not None:
        text = ", ".join(name for i, name in enumerate(dis.MAKE_FUNCTION_FLAGS) if arg & (1 << i))
    elif opname in ("COMPARE_OP",) or isinstance(argval, str):
        text = str(argval)
    else:
        text = ""
    if not text:
        text = "" if arg is None else str(arg)
    return shorten(text, MAX_ARGREPR)


def instructions(code: CodeType) -> tuple[Instr, ...]:
    """The code's own disassembly, with each instruction's line carried forward."""
    out = []
    line = None
    for ins in dis.get_instructions(code):
        if ins.starts_line is not None:
            line = ins.starts_line
        out.append(Instr(offset=ins.offset, opname=ins.opname,
                         argrepr=_dis_argrepr(ins, code), lineno=line,
                         is_jump_target=ins.is_jump_target))
    return tuple(out)


def _dis_argrepr(ins: dis.Instruction, code: CodeType) -> str:
    if ins.opname == "KW_NAMES" and ins.arg is not None:
        # 3.11's dis writes only the constant's index; the names say more (3.12 writes them)
        return argrepr(ins.opname, ins.arg, code.co_consts[ins.arg])
    text = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
    return shorten(text, MAX_ARGREPR)


def walked_rows(dynamo_instructions: Iterable[Any]) -> tuple[tuple[Instr, ...], tuple[Any, ...]]:
    """Dynamo's cleaned listing as `Instr`s, and the keys that match them to `dis` rows."""
    rows = []
    keys = []
    fields = [internals.instruction_fields(inst) for inst in dynamo_instructions]
    targets = {f.target for f in fields if f.target is not None}
    for f in fields:
        offset = f.offset if f.offset is not None else -1
        rows.append(Instr(offset=offset, opname=f.opname,
                          argrepr=argrepr(f.opname, f.arg, f.argval, f.target),
                          lineno=f.lineno, is_jump_target=offset in targets))
        keys.append(_key(f.opname, f.arg))
    return tuple(rows), tuple(keys)


def step_fields(inst: Any) -> tuple[int, str, str, int | None]:
    """(offset, opname, argrepr, line) of the instruction a translator is about to run."""
    f = internals.instruction_fields(inst)
    return (f.offset if f.offset is not None else -1, f.opname,
            argrepr(f.opname, f.arg, f.argval, f.target), f.lineno)


def _key(opname: str, arg: int | None) -> tuple[str, int | None]:
    # A jump's argument is a relative distance, which renumbering changes.
    return (opname, None if opname in _JUMPS else arg)


def align(code: CodeType, rows: tuple[Instr, ...], keys: tuple[Any, ...]) -> tuple[Instr, ...]:
    """Dynamo's rows with `original` (index of the `dis` row each came from) and `changed`.

    Rows whose opname and argument agree with a `dis` row, in order, correspond.
    Where the listings differ, a rewritten row keeps its correspondent when its
    opname is the same (`CALL 0` made `CALL 2` by explicit super()); the rest are
    Dynamo's insertions, and `dis` rows nobody points to were removed.
    """
    theirs = [_key(i.opname, i.arg) for i in dis.get_instructions(code)]
    ours = list(keys)
    if theirs == ours:
        return tuple(Instr(r.offset, r.opname, r.argrepr, r.lineno, r.is_jump_target, k, False)
                     for k, r in enumerate(rows))
    pairs: dict[int, tuple[int, bool]] = {}
    matcher = SequenceMatcher(None, theirs, ours, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for d in range(i2 - i1):
                pairs[j1 + d] = (i1 + d, False)
        elif tag == "replace":
            p = i1
            for j in range(j1, j2):
                for q in range(p, i2):
                    if theirs[q][0] == ours[j][0]:
                        pairs[j] = (q, True)
                        p = q + 1
                        break
    out = []
    for j, r in enumerate(rows):
        k, changed = pairs.get(j, (None, True))
        out.append(Instr(r.offset, r.opname, r.argrepr, r.lineno, r.is_jump_target, k, changed))
    return tuple(out)


def source_lines(code: CodeType) -> tuple[str, ...]:
    """The lines of the file from the code's first line to its last (empty when unknown)."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return ()
    last = max(filter(None, map(itemgetter(2), code.co_lines())), default=code.co_firstlineno)
    return tuple(shown_line(l.rstrip("\n")) for l in lines[code.co_firstlineno - 1: last])


def code_info(code: CodeType) -> CodeInfo:
    info = _infos.get(code)
    if info is None:
        if len(_infos) > 2000:  # bounded: a long session compiles many frames
            _infos.clear()
        info = _infos[code] = CodeInfo(
            name=shorten(code.co_name, MAX_NAME), filename=shorten(code.co_filename, MAX_NAME),
            firstlineno=code.co_firstlineno,
            source_lines=source_lines(code), code=code)  # disassembled when first shown
    return info


def disassemble_code(code: CodeType,
                     listing: tuple[Instr, ...] | None = None) -> str:
    """The disassembly text with a header, like TORCH_LOGS=bytecode prints it (from the
    code's `instructions` when they were read already)."""
    name = shorten(code.co_filename.rsplit("/", 1)[-1], MAX_NAME)
    header = f"{shorten(code.co_name, MAX_NAME)} {name} line {code.co_firstlineno}"
    return header + "\n" + disassembly_text(listing if listing is not None else instructions(code))
