"""Which local-memory accesses of a called function are its register saves, read off its CUBIN.

A device function that is not inlined (recursion, a virtual or indirect call, a call into another compilation unit
under -rdc, CUDA's own slow paths such as `__cuda_sm20_div_rd_f64`) follows the ABI: on entry it stores the
callee-saved registers it will use to its stack frame in local memory, and before it returns it loads them back. The
trace sees each restore re-read what the same thread stored, a read after write that "keep it in a register" cannot
remove: the stores exist because the registers are in use (cuda-samples interval's recursive `newton_interval_rec`
saves 31 registers a call, 131 MB of local traffic, told to keep it in a register; session 56's review).

The SASS shows the shape. Within a function that is not the kernel, a save is `STL [R1+o], Rk` (R1 is the stack
pointer) of a register no earlier instruction of the function set, so its value is the caller's, in the function's
first FRAME_INSTRUCTIONS instructions; a restore is `LDL Rk, [R1+o]` of the same register from the same offset, at
most FRAME_INSTRUCTIONS instructions before a RET (opcode 0x950). Nodes at those PCs get `frame: "save"` or
`frame: "restore"` (docs/report-format.md), and the redundant-access rule tells the restores' re-reads apart
(patterns/redundant.py).

Encoding (sm_80 and later, lo = the instruction's low 64 bits): opcode in bits 0-11 (STL 0x387, LDL 0x983), the
destination register in bits 16-23 (what `last set` tracks for any instruction), the address register Ra in bits
24-31, a store's data register in bits 32-39, the immediate offset in bits 40-63 (signed, bytes). Checked against
nvdisasm on every STL and LDL of the fixtures' and the second breadth set's sm_90 CUBINs (tests/analyzer/
test_frame_saves.py). An instruction without a destination may name a register there by chance, which can only make
a save look like a spill of a value set in the function: a save missed, never one made up.

Public API: :func:`frame_slots`, :func:`attach_frame_saves`.
"""

from __future__ import annotations

import struct
from typing import Any

from reuselens.analyzer.loops import INSTRUCTION_BYTES, function_code

_STL, _LDL, _RET = 0x387, 0x983, 0x950
# A save lies in the function's prologue and a restore in its epilogue: within this many instructions of the
# function's start, and of a RET after it. A register spilled and filled in the function's body (an argument kept
# in local memory under register pressure) is no frame save, though it too holds the caller's value.
FRAME_INSTRUCTIONS = 64
_STACK_POINTER = 1  # R1
_ZERO_REGISTER = 255  # RZ: a stored zero, no register's value


def _offset(lo: int) -> int:
    offset = (lo >> 40) & 0xFFFFFF
    return offset - (1 << 24) if offset >> 23 else offset


def frame_slots(code: bytes) -> dict[int, str]:
    """{offset in `code`: "save" | "restore"} for the function's register saves and their restores (module
    docstring). `code` is one function's machine code, from its first instruction."""
    saved: dict[tuple[int, int], int] = {}  # (stack offset, register) -> the save's offset in code
    set_before = [False] * 256
    found: dict[int, str] = {}
    words = [lo for (lo,) in struct.iter_unpack("<Q8x", code)]
    returns = [index for index, lo in enumerate(words) if lo & 0xFFF == _RET]
    for index, lo in enumerate(words):
        pc = index * INSTRUCTION_BYTES
        opcode = lo & 0xFFF
        base = (lo >> 24) & 0xFF
        if opcode == _STL and base == _STACK_POINTER:
            register = (lo >> 32) & 0xFF
            fresh = register != _ZERO_REGISTER and not set_before[register] and index < FRAME_INSTRUCTIONS
            if fresh and (_offset(lo), register) not in saved:
                saved[(_offset(lo), register)] = pc
                found[pc] = "save"
            continue  # a store sets no register
        if opcode == _LDL and base == _STACK_POINTER and (_offset(lo), (lo >> 16) & 0xFF) in saved:
            if any(0 < ret - index <= FRAME_INSTRUCTIONS for ret in returns):
                found[pc] = "restore"
        set_before[(lo >> 16) & 0xFF] = True
    return found


def attach_frame_saves(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets `frame` on the local-memory nodes of called functions (not the kernel itself) whose instruction is a
    register save or restore, where the function's code decodes (sm_80 and later)."""
    for kernel in kernels:
        by_function: dict[str, list[dict[str, Any]]] = {}
        for node in kernel.get("nodes") or []:
            function = node.get("function")
            if node.get("space") == "local" and isinstance(function, str) and isinstance(node.get("pc"), int):
                if function != kernel.get("mangled"):
                    by_function.setdefault(function, []).append(node)
        for function, nodes in sorted(by_function.items()):
            found = function_code(mapper, kernel.get("module"), function)
            if found is None or found[1] is None or found[1] < 80:
                continue
            code, _arch, start = found
            slots = frame_slots(code)
            for node in nodes:
                kind = slots.get(node["pc"] - start)
                if kind is not None and node.get("type") == ("write" if kind == "save" else "read"):
                    node["frame"] = kind
