"""The loops of a kernel's functions, read off their SASS: which PCs one loop's iterations run.

The trace says how often each PC ran, not in which loop, and a reload's register advice hinges on it: a load that
re-reads, in one loop, the values an earlier loop of the same thread loaded (PolyBench gramschmidt's second pass
`a[i][j] -= q[i][k] * r[k][j]` over the `a[i][j]` the first pass summed) would need one register per iteration of
that earlier loop. A loop in SASS is a backward branch: the branch at PC b to a target t <= b repeats [t, b]
(nvdisasm prints the target as a label, which lineinfo.sass renames after its offset: `.L_0x01e0`). A branch to
itself (the `BRA` trap after a kernel's EXIT) is no loop. Nested loops are nested intervals; a PC's innermost loop
is the shortest interval holding it. An unrolled loop's copies share one back edge; a fully unrolled loop has none.

Only functions whose reloads have the shape of a second loop over an earlier loop's values are looked at
(_candidates). Their branches are decoded from the CUBIN's bytes (backward_branches: sm_80 and later); nvdisasm, whose
start alone costs 0.4 s (docs/engine.md, "Post-run cost"), reads the others. Without either the report has no
`loops`, and the rules give the advice they gave before.

Public API: :func:`loops_in`, :func:`backward_branches`, :func:`branch_target`, :func:`innermost`, :func:`attach_loops`,
:func:`function_code`, :func:`node_instructions`.
"""

from __future__ import annotations

import re
import struct
from typing import Any, Callable, Iterator

from reuselens.analyzer.configurations import warps_launched
from reuselens.analyzer.errors import ReuseLensError

INSTRUCTION_BYTES = 16  # sm_70 and later
MAX_INSTRUCTIONS = 1 << 20  # a function's code is far shorter; a bound on the scan, not a limit met in practice

_PREDICATE = re.compile(r"^@!?U?P[0-7T]\s+")
_TARGET = re.compile(r"\.L_0x([0-9a-fA-F]+)")


def loops_in(sass_at: Callable[[int], str | None], origin: int = 0) -> list[tuple[int, int]]:
    """(head, back edge) PCs of every loop of one function, whose instructions `sass_at(pc)` gives (None past its
    end), in order of the back edge. The listing names targets by their offset in the code section, and `origin` is
    where the function starts in it (a device function placed after its kernel in one section)."""
    loops = []
    for index in range(MAX_INSTRUCTIONS):
        pc = index * INSTRUCTION_BYTES
        text = sass_at(pc)
        if text is None:
            break
        body = _PREDICATE.sub("", text.strip())
        if body.split(" ", 1)[0].split(".")[0] != "BRA":
            continue
        target = _TARGET.search(body)
        if target is not None and 0 <= int(target.group(1), 16) - origin < pc:
            loops.append((int(target.group(1), 16) - origin, pc))
    return loops


# Branches decoded from the machine code itself (a process start of nvdisasm costs 0.4 s, more than the rest of a
# small app's analysis): on sm_80 and later a 128-bit instruction's opcode is its low 12 bits, BRA 0x947 and BRA.U
# (a uniform predicate) 0x547, and the target is relative to the next instruction, in 4-byte units: signed bits
# 34-81 on sm_8x; on sm_90 and later bits 16-23 hold the low 8 bits and 34-81 the rest. Checked against nvdisasm's
# listings of every CUBIN of tests/data/cubins (sm_80, sm_89, sm_90, sm_120; tests/analyzer/test_loops.py). Other
# architectures, and any target outside the function or off an instruction, fall back to nvdisasm.
_BRANCH_OPCODES = (0x947, 0x547)
_HIGH_BITS = (1 << 48) - 1


def _branch_offset(word: int, arch: int) -> int:
    high = (word >> 34) & _HIGH_BITS
    if arch >= 90:
        value, width = ((word >> 16) & 0xFF) | high << 8, 56
    else:
        value, width = high, 48
    if value >> (width - 1):
        value -= 1 << width
    return value * 4


def branch_target(word: int, pc: int, arch: int) -> int | None:
    """Where the BRA at `pc` (its 128-bit instruction `word`) goes, as an offset in the function's code; None for
    any other instruction."""
    if word & 0xFFF not in _BRANCH_OPCODES:
        return None
    return pc + INSTRUCTION_BYTES + _branch_offset(word, arch)


def backward_branches(code: bytes, arch: int | None) -> list[tuple[int, int]] | None:
    """(head, back edge) of every loop of one function's machine code, as loops_in reads them off its SASS; None for
    an architecture this decoder does not know, or code whose branches do not decode to its own instructions."""
    if arch is None or arch < 80 or len(code) % INSTRUCTION_BYTES:
        return None
    loops = []
    for pc in range(0, len(code), INSTRUCTION_BYTES):
        target = branch_target(int.from_bytes(code[pc : pc + INSTRUCTION_BYTES], "little"), pc, arch)
        if target is None:
            continue
        if target % INSTRUCTION_BYTES or not 0 <= target < len(code):
            return None
        if target < pc:
            loops.append((target, pc))
    return loops


def function_code(mapper: Any, module: Any, function: str) -> tuple[bytes, int | None, int] | None:
    """A function's machine code in its module's CUBIN, the CUBIN's architecture and where the code starts in its
    section, or None (unknown module or function). Node PCs are section offsets (docs/report-format.md): a
    non-inlined callee placed after its kernel (`$kernel$callee`) starts at that offset, so a node's instruction is
    at `pc - start` of the code. Also what analyzer/operands.py and analyzer/address_origin.py decode."""
    try:
        table = mapper.table(module)
    except ReuseLensError:
        return None
    symbol = table.function_symbol(function)
    if symbol is None or symbol.size <= 0:
        return None
    data = table.elf.section_data(table.elf.sections[symbol.shndx])
    return data[symbol.value : symbol.value + symbol.size], table.arch, symbol.value


def node_instructions(
    mapper: Any, kernel: dict[str, Any], wanted: Callable[[dict[str, Any]], bool]
) -> Iterator[tuple[dict[str, Any], int, int]]:
    """(node, low word, high word) of the instruction at each `wanted` node's PC, where its function's code decodes
    (sm_80 and later); the nodes of one function read its code once. What analyzer/memory_order.py and
    analyzer/atomic_results.py mark their nodes from."""
    by_function: dict[str, list[dict[str, Any]]] = {}
    for node in kernel.get("nodes") or []:
        if isinstance(node.get("function"), str) and isinstance(node.get("pc"), int) and wanted(node):
            by_function.setdefault(node["function"], []).append(node)
    for function, nodes in sorted(by_function.items()):
        found = function_code(mapper, kernel.get("module"), function)
        if found is None or found[1] is None or found[1] < 80:
            continue
        code, start = found[0], found[2]
        for node in nodes:
            pc = node["pc"] - start
            if pc % INSTRUCTION_BYTES == 0 and 0 <= pc <= len(code) - INSTRUCTION_BYTES:
                yield (node, *struct.unpack_from("<QQ", code, pc))


def _decoded(mapper: Any, module: Any, function: str) -> list[tuple[int, int]] | None:
    """The function's loops from its CUBIN's bytes, as section offsets like node PCs, or None (unknown module,
    architecture or encoding)."""
    found = function_code(mapper, module, function)
    if found is None:
        return None
    code, arch, start = found
    loops = backward_branches(code, arch)
    return None if loops is None else [(head + start, back + start) for head, back in loops]


def _span(mapper: Any, module: Any, function: str) -> tuple[int, int | None]:
    """Where the function starts in its code section and its size (0 and None where the CUBIN's symbols cannot be
    read): the SASS of a section runs on into the functions after it."""
    try:
        symbol = mapper.table(module).function_symbol(function)
    except ReuseLensError:
        return 0, None
    return (symbol.value, symbol.size or None) if symbol is not None else (0, None)


def innermost(loops: list[tuple[int, int]] | list[list[int]], pc: int) -> tuple[int, int] | None:
    """The shortest loop holding `pc`, or None outside every loop."""
    holding = [(int(head), int(back)) for head, back in loops if int(head) <= pc <= int(back)]
    return min(holding, key=lambda loop: loop[1] - loop[0]) if holding else None


# A reload of an earlier loop's values matters to the rules (patterns/redundant.py) only when the origins ran at
# least this many times per warp: fewer values fit in registers.
MIN_VALUES = 16


# An origin this much first touch streams through its data (each execution a new value), as an earlier loop's
# loads do; a loop's own accumulator (`c[i][j] +=`, reloaded every iteration) is no first touch.
STREAMING_ORIGIN = 0.9


def _streams(node: dict[str, Any]) -> bool:
    metrics = node.get("metrics") or {}
    total = float(metrics.get("W_total") or 0)
    return total > 0 and float((metrics.get("W_out") or {}).get("cold") or 0) >= STREAMING_ORIGIN * total


def _candidates(kernel: dict[str, Any]) -> set[str]:
    """Functions of the kernel where a thread re-reads, at least MIN_VALUES times per warp, values that loads or
    stores streaming through their data (first touches) produced at least MIN_VALUES times per warp: the shape of
    a second loop over an earlier loop's values. Only these are read (their branches decoded, or disassembled where
    the decoder cannot: nvdisasm costs 0.4 s a module, more than the rest of a small app's analysis); a reload in its
    origin's loop is read too, and keeps its advice."""
    nodes = {node.get("id"): node for node in kernel.get("nodes") or []}
    origins: dict[str, dict[Any, int]] = {}
    reloads: dict[str, dict[Any, int]] = {}
    for edge in kernel.get("edges") or []:
        if edge.get("label") != "thread" or edge.get("from") == edge.get("to"):
            continue
        if not (edge.get("rar") or edge.get("raw")):
            continue
        u, v = nodes.get(edge.get("from")) or {}, nodes.get(edge.get("to")) or {}
        function = u.get("function")
        if u.get("type") != "read" or not isinstance(function, str) or function != v.get("function") or not _streams(v):
            continue
        origins.setdefault(function, {})[v.get("id")] = int(v.get("executions") or 0)
        reloads.setdefault(function, {})[u.get("id")] = int(u.get("executions") or 0)
    floor = MIN_VALUES * warps_launched(kernel)
    return {
        function
        for function, runs in origins.items()
        if floor > 0 and sum(runs.values()) >= floor and sum(reloads[function].values()) >= floor
    }


def attach_loops(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets each kernel's `loops` ({function: [[head, back edge], ...]}, docs/report-format.md) for the functions
    whose reloads look like a second loop over an earlier loop's values: decoded from the CUBIN, or where that cannot
    be done, from nvdisasm's SASS (one run per module). Without either, the kernel gets no `loops` for it."""
    from reuselens.analyzer.lineinfo.sass import find_nvdisasm

    wanted = {id(kernel): _candidates(kernel) for kernel in kernels}
    found: dict[int, dict[str, list[list[int]]]] = {}
    undecoded: dict[str, set[str]] = {}
    for kernel in kernels:
        module = kernel.get("module")
        for function in sorted(wanted[id(kernel)]):
            loops = _decoded(mapper, module, function)
            if loops is not None:
                found.setdefault(id(kernel), {})[function] = [[head, back] for head, back in loops]
            elif isinstance(module, str):
                undecoded.setdefault(module, set()).add(function)
    if undecoded and find_nvdisasm() is not None:
        mapper.prepare_sass(undecoded)
        for kernel in kernels:
            module = kernel.get("module")
            for function in sorted(wanted[id(kernel)] & undecoded.get(module, set())):
                start, size = _span(mapper, module, function)

                def sass_at(
                    pc: int, module: Any = module, function: str = function, size: int | None = size, start: int = start
                ):
                    if size is not None and pc >= size:
                        return None  # the next function of the section
                    try:
                        return mapper.sass(module, function, start + pc)  # sass() takes section offsets
                    except ReuseLensError:  # the module's CUBIN is missing or unreadable: no loops known
                        return None

                if sass_at(0) is not None:
                    loops = loops_in(sass_at, start)
                    found.setdefault(id(kernel), {})[function] = [[head + start, back + start] for head, back in loops]
    for kernel in kernels:
        if id(kernel) in found:
            kernel["loops"] = found[id(kernel)]
