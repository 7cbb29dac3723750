"""The address operand of a kernel's global loads and stores, read off their CUBIN's bytes: base register and offset.

The trace gives each access's lanes and sectors, not which structure field it reads. A structure with no alignment
beyond its members' (cuda-samples alignedTypes' `RGBA32_misaligned`, four ints; SHOC scan's `double4`, two 16-byte
halves) is read one member at a time: PCs of one statement whose lanes lie an element apart, each uncoalesced alone,
whose sectors together are exactly the element's. Nothing in the report tells them from two arrays read at the same
stride, or from unrolled iterations of one access; their SASS does: the members of one element are addressed from
one base register at consecutive offsets (`[R4.64]`, `[R4.64+0x4]`, `[R4.64+0x8]`, `[R4.64+0xc]`), unrolled
iterations from other registers or offsets an iteration apart. patterns/coalescing.py reads `address` for that.

Only PCs that can matter are decoded: global loads and stores that fetch more sectors than their lanes need, two or
more on one statement (_candidates). sm_80 and later only (the encoding below was checked against nvdisasm on every
global access of the sm_80, sm_90 and sm_120 fixtures, tests/analyzer/test_operands.py; the sm_89 one has none);
without a decodable CUBIN a node has no `address`, and the rule gives the advice it gave before.

Encoding (the instruction's low 64 bits, little-endian): opcode in bits 0-11 (LDG 0x981, STG 0x986), the base
register Ra in bits 24-31, the immediate offset in bits 40-63 (signed, bytes); an instruction's destination register
in bits 16-23 (`defined_at`: where the base register was last set).

Public API: :func:`global_operand`, :func:`attach_operands`.
"""

from __future__ import annotations

import struct
from typing import Any

from reuselens.analyzer.graph import r_coal
from reuselens.analyzer.loops import INSTRUCTION_BYTES, function_code

_GLOBAL_MEMORY = (0x981, 0x986)  # LDG, STG
_ZERO_REGISTER = 255  # RZ: an absolute address, no base to compare
_LOW_WORD = "<Q8x"  # an instruction's low 64 bits of its 16 (INSTRUCTION_BYTES)


def global_operand(word: int) -> tuple[int, int] | None:
    """(base register, offset) of an LDG or STG instruction's low 64 bits, or None for any other instruction."""
    if word & 0xFFF not in _GLOBAL_MEMORY:
        return None
    register = (word >> 24) & 0xFF
    if register == _ZERO_REGISTER:
        return None
    offset = (word >> 40) & 0xFFFFFF
    if offset >> 23:
        offset -= 1 << 24
    return register, offset


def _wasteful(node: dict[str, Any]) -> bool:
    """A global load or store whose requests fetch more sectors than its lanes need."""
    if node.get("type") not in ("read", "write"):
        return False
    ratio = r_coal(node)  # global nodes only
    return ratio is not None and ratio > 1


def _candidates(kernel: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per function, the wasteful global accesses that share their statement (function, file, line) with another."""
    by_statement: dict[tuple, list[dict[str, Any]]] = {}
    for node in kernel.get("nodes") or []:
        source = node.get("source") or {}
        if _wasteful(node) and isinstance(node.get("function"), str) and source.get("line"):
            # a statement over several lines is one statement (analyzer/statements.py), as patterns/view.line_key has it
            key = (node["function"], source.get("file"), source.get("statement_line") or source["line"])
            by_statement.setdefault(key, []).append(node)
    found: dict[str, list[dict[str, Any]]] = {}
    for (function, _file, _line), nodes in by_statement.items():
        if len(nodes) > 1:
            found.setdefault(function, []).extend(nodes)
    return found


def attach_operands(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets `address` ({"register": n, "offset": bytes, "defined_at": pc}, docs/report-format.md) on the candidate
    nodes whose instruction decodes as an LDG or STG at their PC."""
    for kernel in kernels:
        for function, nodes in sorted(_candidates(kernel).items()):
            found = function_code(mapper, kernel.get("module"), function)
            if found is None:
                continue
            code, arch, start = found
            if arch is None or arch < 80:
                continue
            at_pc: dict[int, list[dict[str, Any]]] = {}  # by offset in the function's code
            for node in nodes:
                pc = node.get("pc")
                if not isinstance(pc, int):
                    continue
                pc -= start  # node PCs are section offsets (loops.function_code)
                if pc % INSTRUCTION_BYTES == 0 and 0 <= pc <= len(code) - INSTRUCTION_BYTES:
                    at_pc.setdefault(pc, []).append(node)
            if at_pc:
                _attach_in_function(code, at_pc, start)


def _section_pc(pc: int, start: int) -> int:
    """An offset in the function's code as a section offset, like node PCs; -1 (no instruction) stays -1."""
    return pc + start if pc >= 0 else pc


def _attach_in_function(code: bytes, at_pc: dict[int, list[dict[str, Any]]], start: int = 0) -> None:
    """One pass over the function's instructions up to its last candidate PC, remembering where each register was
    last set (the destination field, bits 16-23), so that each access's `defined_at` is the last instruction before
    it that set its 64-bit address's registers (Ra, Ra + 1), or -1: accesses through one register number set at
    different places (two arrays, or two iterations) are no members of one element. An instruction with no register
    destination may name them there by chance, which only splits a group: no element is made of accesses it should
    not be."""
    last_set = [-1] * 256
    end = max(at_pc) + INSTRUCTION_BYTES
    for index, (word,) in enumerate(struct.iter_unpack(_LOW_WORD, code[:end])):
        pc = index * INSTRUCTION_BYTES
        operand = global_operand(word) if pc in at_pc else None
        if operand is not None:
            register, offset = operand
            address = {
                "register": register,
                "offset": offset,
                "defined_at": _section_pc(max(last_set[register], last_set[register + 1]), start),
            }
            for node in at_pc[pc]:
                node["address"] = dict(address)
        last_set[(word >> 16) & 0xFF] = pc
