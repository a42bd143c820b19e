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
import sys
from collections.abc import Iterable
from dataclasses import replace
from difflib import SequenceMatcher
from operator import itemgetter
from types import CodeType
from typing import Any

from . import internals
from .recording import CodeInfo, Instr, disassembly_text
from .text import MAX_NAME, argument, shorten, shown_line

_JUMPS = frozenset(dis.opname[op] for op in (*dis.hasjrel, *dis.hasjabs))
# Where `dis` names a jump's target by a label (`to L1`) rather than by its offset (3.13+).
_LABELLED = sys.version_info >= (3, 13)
# The opcodes whose argument indexes the code's constants, names or local names.
_INDEXED = frozenset((*dis.hasconst, *dis.hasname, *dis.haslocal, *dis.hasfree))
_FUSED = frozenset(("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"))


class _Resolved:
    """Stands in for a code's constants, names and local names, where Dynamo already
    resolved the argument: whatever index `dis` looks up, it finds `argval`. A fused pair
    (3.13's `LOAD_FAST_LOAD_FAST a, b`) finds each half at its own index."""

    __slots__ = ("value", "pair")

    def __init__(self, value: Any, pair: dict[int, Any] | None = None) -> None:
        self.value = value
        self.pair = pair

    def __getitem__(self, index: int) -> Any:  # co_consts[i], co_names[i]
        return self.value if self.pair is None else self.pair[index]

    def __call__(self, index: int, **_: Any) -> Any:  # varname_from_oparg(i)
        return self[index]


if sys.version_info >= (3, 13):
    def _dis_writes(opcode: int, arg: int, table: _Resolved) -> str:
        # 3.13's dis resolves every argument through one ArgResolver.
        resolver = dis.ArgResolver(co_consts=table, names=table, varname_from_oparg=table)
        return resolver.get_argval_argrepr(opcode, arg, 0)[1]
else:
    def _dis_writes(opcode: int, arg: int, table: _Resolved) -> str:
        # 3.11 and 3.12's dis resolve arguments while walking the bytes of a code: give it
        # the one instruction (EXTENDED_ARG prefixes for an argument over 255).
        prefix = b"".join(bytes((dis.EXTENDED_ARG, (arg >> s) & 0xFF))
                          for s in (24, 16, 8) if arg >> s)
        *_, ins = dis._get_instructions_bytes(prefix + bytes((opcode, arg & 0xFF)),
                                              varname_from_oparg=table, names=table,
                                              co_consts=table)
        return ins.argrepr


# Argument texts already written, by (opname, arg, argval) where the value is of a type
# whose equal values print alike (not floats: -0.0 == 0.0; not bools: True == 1 unless the
# type is in the key). Reading a model walks the same few thousand arguments many times.
# Short texts only, and a bounded number of them, so little of a program is kept alive.
_MEMO: dict[tuple[str, int | None, type, Any], str] = {}
_MEMO_TYPES = frozenset((str, int, bool, type(None)))
_MEMO_MAX = 1 << 16


def argrepr(opname: str, arg: int | None, argval: Any, target: int | None = None,
            label: str | None = None) -> str:
    """An instruction's argument as the running Python's `dis` writes it (see
    `_argrepr`), remembered for plain argument values."""
    if (target is not None or type(argval) not in _MEMO_TYPES
            or (type(argval) is str and len(argval) > 100)):  # nor keep a program's long text
        return _argrepr(opname, arg, argval, target, label)
    key = (opname, arg, type(argval), argval)
    text = _MEMO.get(key)
    if text is None:
        text = _argrepr(opname, arg, argval, None, None)
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = text
    return text


def _argrepr(opname: str, arg: int | None, argval: Any, target: int | None = None,
             label: str | None = None) -> str:
    """An instruction's argument as the running Python's `dis` writes it, or the bare
    number when `dis` writes nothing; `target` is a jump's target offset and `label` its
    label where `dis` names targets by label (3.13: `to L1`).

    Dynamo's instructions carry the resolved value (`argval`), not the code's tables, so
    `dis` is handed tables that hold that value: its own rules then decide what to write
    (3.11 `NULL + len`, 3.12 `NULL|self + forward` and `INTRINSIC_STOPITERATION_ERROR`,
    3.13 `len + NULL` and `bool(>)`)."""
    if target is not None:
        text = f"to {label}" if label is not None else f"to {target}"
        return argument(opname, text)
    opcode = dis.opmap.get(opname)
    text = ""
    if opcode is not None and opcode < 256 and opname not in _JUMPS:
        if arg is None and opcode in _INDEXED:
            arg = 0  # made by Dynamo, not yet numbered: the value is what counts
        if arg is not None:
            pair = None
            if opname in _FUSED and isinstance(argval, tuple) and len(argval) == 2:
                pair = {arg >> 4: argval[0], arg & 15: argval[1]}
            try:
                text = _dis_writes(opcode, arg, _Resolved(argval, pair))
            except (IndexError, KeyError, TypeError, ValueError):
                text = ""  # an argument this Python's dis has no words for
    elif arg is None and argval is None:
        return ""
    elif isinstance(argval, str):
        text = argval  # an instruction this Python's dis does not know
    if not text and opname == "KW_NAMES":
        text = repr(argval)  # 3.11's dis writes nothing; the names say more (3.12 writes them)
    if not text:
        text = "" if arg is None else str(arg)
    return argument(opname, text)


def instructions(code: CodeType, keys: list | None = None) -> tuple[Instr, ...]:
    """The code's own disassembly, with each instruction's line carried forward (3.13
    carries it itself, as `line_number`; its `starts_line` is a bool) and, on 3.13, the
    label `dis` gives a jump target (`L1`). `keys`, when given, receives each row's
    alignment key (see `align`), so one reading of `dis` serves both."""
    out = []
    line = None
    for ins in dis.get_instructions(code):
        if keys is not None:
            keys.append(_key(ins.opname, ins.arg))
        if _LABELLED:
            line = ins.line_number
            label = f"L{ins.label}" if ins.label is not None else None
        else:
            if ins.starts_line is not None:
                line = ins.starts_line
            label = None
        out.append(Instr(offset=ins.offset, opname=ins.opname,
                         argrepr=_dis_argrepr(ins, code), lineno=line,
                         is_jump_target=ins.is_jump_target, label=label))
    return tuple(out)


def _dis_argrepr(ins: dis.Instruction, code: CodeType) -> str:
    if ins.opname == "KW_NAMES" and ins.arg is not None and not ins.argrepr:
        # 3.11's dis writes only the constant's index; the names say more (3.12 writes them)
        return argrepr(ins.opname, ins.arg, code.co_consts[ins.arg])
    text = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
    return argument(ins.opname, text)


def _marks(fields: list[internals.InstructionFields]) -> tuple[frozenset[int], dict[int, str]]:
    """The walked offsets `dis.get_instructions` would mark as jump targets, and on 3.13
    their labels, numbered in order (`L1`, `L2`, ...). Like `get_instructions`, and unlike
    3.13's printed `dis.dis`, exception handlers and ranges get neither."""
    marked = frozenset(f.target for f in fields if f.target is not None)
    if not _LABELLED:
        return marked, {}
    return marked, {offset: f"L{n}" for n, offset in enumerate(sorted(marked), 1)}


def jump_labels(dynamo_instructions: list[Any]) -> dict[int, str]:
    """Walked offset -> the label 3.13's `dis` would give it (`L1`); empty below 3.13,
    where `dis` names a jump's target by its offset."""
    if not _LABELLED:
        return {}
    return _marks([internals.instruction_fields(inst) for inst in dynamo_instructions])[1]


# A walked row before alignment: Instr's fields up to `is_jump_target`, then `label`.
Row = tuple[int, str, str, "int | None", bool, "str | None"]


def walked_rows(dynamo_instructions: Iterable[Any]) -> tuple[tuple[Row, ...], tuple[Any, ...]]:
    """Dynamo's cleaned listing as rows (made `Instr`s by `align`), and the keys that
    match them to `dis` rows."""
    rows = []
    keys = []
    fields = [internals.instruction_fields(inst) for inst in dynamo_instructions]
    marked, labels = _marks(fields)
    for f in fields:
        offset = f.offset if f.offset is not None else -1
        rows.append((offset, f.opname,
                     argrepr(f.opname, f.arg, f.argval, f.target, labels.get(f.target)),
                     f.lineno, offset in marked, labels.get(offset)))
        keys.append(_key(f.opname, f.arg))
    return tuple(rows), tuple(keys)


def step_fields(inst: Any, walked: list[Any] | None = None) -> tuple[int, str, str, int | None]:
    """(offset, opname, argrepr, line) of the instruction a translator is about to run;
    `walked` is the translator's listing, which names a jump's target on 3.13 (`to L1`)."""
    f = internals.instruction_fields(inst)
    label = None
    if _LABELLED and f.target is not None and walked is not None:
        label = jump_labels(walked).get(f.target)
    return (f.offset if f.offset is not None else -1, f.opname,
            argrepr(f.opname, f.arg, f.argval, f.target, label), f.lineno)


def _key(opname: str, arg: int | None) -> tuple[str, int | None]:
    # A jump's argument is a relative distance, which renumbering changes.
    return (opname, None if opname in _JUMPS else arg)


def align(code: CodeType, rows: tuple[Row, ...], keys: tuple[Any, ...],
          theirs: list | None = None) -> tuple[Instr, ...]:
    """Dynamo's rows as `Instr`s with `original` (index of the `dis` row each came from)
    and `changed`; `theirs` is the `dis` rows' keys when they were read already.

    Rows whose opname and argument agree with a `dis` row, in order, correspond.
    Where the listings differ, a rewritten row keeps its correspondent when its
    opname is the same (`CALL 0` made `CALL 2` by explicit super()); the rest are
    Dynamo's insertions, and `dis` rows nobody points to were removed.
    """
    if theirs is None:
        theirs = [_key(i.opname, i.arg) for i in dis.get_instructions(code)]
    ours = list(keys)
    if theirs == ours:
        return tuple(Instr(o, n, a, ln, j, k, False, lb)
                     for k, (o, n, a, ln, j, lb) in enumerate(rows))
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
    for j, (o, n, a, ln, jt, lb) in enumerate(rows):
        k, changed = pairs.get(j, (None, True))
        out.append(Instr(o, n, a, ln, jt, k, changed, lb))
    return tuple(out)


def source_lines(code: CodeType) -> tuple[str, ...]:
    """The lines of the file from the code's first line to its last (empty when unknown)."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return ()
    last = max(filter(None, map(itemgetter(2), code.co_lines())), default=code.co_firstlineno)
    return tuple(shown_line(l.rstrip("\n")) for l in lines[code.co_firstlineno - 1: last])


class CodeReader:
    """The code objects one recording walks, read into `CodeInfo` records.

    While recording, `info(code)` gives a code's record without its listings (name,
    file, source: what the steps and the text view need), one record per code
    object, and `note_walked` keeps Dynamo's cleaned listing the first time a
    translator walks the code (Dynamo's instruction objects are its own and can
    change: they are read into rows at once). `finish` then reads each code's `dis`
    once, aligns the two listings, and puts the full records in place in every
    compile, after which the reader holds nothing. Code objects are immutable, so
    reading them at the end reads what they were while Dynamo walked them.
    """

    def __init__(self) -> None:
        self._infos: dict[CodeType, CodeInfo] = {}  # code -> its record without listings
        self._codes: dict[int, CodeType] = {}  # id(record without listings) -> its code
        self._walked: dict[CodeType, tuple[tuple[Instr, ...], tuple[Any, ...]]] = {}

    def info(self, code: CodeType) -> CodeInfo:
        """The code's record, listings not yet read (the same record for the same code)."""
        info = self._infos.get(code)
        if info is None:
            info = self._infos[code] = CodeInfo(
                name=shorten(code.co_name, MAX_NAME), qualname=shorten(code.co_qualname, MAX_NAME),
                filename=shorten(code.co_filename, MAX_NAME),
                firstlineno=code.co_firstlineno, source_lines=source_lines(code))
            self._codes[id(info)] = code
        return info

    def note_walked(self, code: CodeType, dynamo_instructions: Iterable[Any]) -> None:
        """Dynamo's cleaned listing of `code`, the first time a translator walks it."""
        if code not in self._walked:
            self._walked[code] = walked_rows(dynamo_instructions)

    def finish(self, compiles: Iterable[Any]) -> None:
        """Read every listing and put the full records in the compiles' `codes`, then
        forget every code object. Records this reader did not make are left alone."""
        done: dict[int, CodeInfo] = {}
        for c in compiles:
            codes = c.codes
            for k, info in enumerate(codes):
                code = self._codes.get(id(info))
                if code is None or self._infos.get(code) is not info:
                    continue
                full = done.get(id(info))
                if full is None:
                    full = done[id(info)] = self._read(code, info)
                codes[k] = full
        self._infos.clear()
        self._codes.clear()
        self._walked.clear()

    def _read(self, code: CodeType, info: CodeInfo) -> CodeInfo:
        theirs: list = []
        own = instructions(code, theirs)
        raw = self._walked.get(code)
        if raw is None:  # never walked: Dynamo's listing is the `dis` one as far as we know
            walked = tuple(replace(i, original=k) for k, i in enumerate(own))
        else:
            walked = align(code, *raw, theirs)
        return replace(info, instructions=own, walked=walked)


def disassemble_code(code: CodeType,
                     listing: tuple[Instr, ...] | None = None) -> str:
    """The disassembly text with a header, like TORCH_LOGS=bytecode prints it (from the
    code's `instructions` when they were read already)."""
    name = shorten(code.co_filename.rsplit("/", 1)[-1], MAX_NAME)
    header = f"{shorten(code.co_name, MAX_NAME)} {name} line {code.co_firstlineno}"
    return header + "\n" + disassembly_text(listing if listing is not None else instructions(code))
