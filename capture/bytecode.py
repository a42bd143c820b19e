"""Code objects as records: the disassembly and the source lines a view shows."""

from __future__ import annotations

import dis
import linecache
from operator import itemgetter
from types import CodeType

from .recording import CodeInfo, Instr, disassembly_text

MAX_ARGREPR = 80

# Code objects are immutable, so their reading is made once per process.
_infos: dict[CodeType, CodeInfo] = {}


def instructions(code: CodeType) -> tuple[Instr, ...]:
    out = []
    line = None
    for ins in dis.get_instructions(code):
        if ins.starts_line is not None:
            line = ins.starts_line
        arg = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
        if len(arg) > MAX_ARGREPR:
            arg = arg[: MAX_ARGREPR - 1] + "…"
        out.append(Instr(offset=ins.offset, opname=ins.opname, argrepr=arg, lineno=line,
                         is_jump_target=ins.is_jump_target))
    return tuple(out)


def source_lines(code: CodeType) -> tuple[str, ...]:
    """The lines of the file from the code's first line to its last (empty when unknown)."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return ()
    last = max(filter(None, map(itemgetter(2), code.co_lines())), default=code.co_firstlineno)
    # Kept whole: the learner's own source; views bound what they show.
    return tuple(l.rstrip("\n") for l in lines[code.co_firstlineno - 1: last])


def code_info(code: CodeType) -> CodeInfo:
    info = _infos.get(code)
    if info is None:
        if len(_infos) > 2000:  # bounded: a long session compiles many frames
            _infos.clear()
        info = _infos[code] = CodeInfo(
            name=code.co_name, filename=code.co_filename, firstlineno=code.co_firstlineno,
            source_lines=source_lines(code), code=code)  # disassembled when first shown
    return info


def disassemble_code(code: CodeType) -> str:
    """The disassembly text with a header, like TORCH_LOGS=bytecode prints it."""
    name = code.co_filename.rsplit("/", 1)[-1]
    header = f"{code.co_name} {name} line {code.co_firstlineno}"
    return header + "\n" + disassembly_text(instructions(code))
