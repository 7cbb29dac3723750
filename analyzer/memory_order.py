"""Which global loads and stores are strong (a `volatile` or a relaxed or acquire access), read off their CUBIN.

A weak load may be kept in a register, and the compiler reloads it only when it cannot prove that a store in between
misses its address: the reload advice (patterns/redundant.py) then says to mark the pointers `__restrict__`. A
`volatile` access (`ld.volatile`, and the scoped `ld.relaxed`, `ld.acquire` of `cuda::atomic_ref`) must reach memory
every time it executes: the compiler emits each one, `__restrict__` changes nothing, and the program may rely on
seeing other threads' writes (a value other threads lower with atomicMin, as SHOC BFS's `volatile int *cost`; a flag
polled in a loop). The SASS says which: such accesses are `LDG.E.STRONG.SYS`, `.STRONG.GPU` or `.STRONG.SM` (and
`STG`, `LD`, `ST` alike), the non-coherent `LDG.E.CONSTANT` and plain `LDG.E` are weak.

Encoding (sm_80 and later, hi = the instruction's high 64 bits): bits 13-14 of hi are zero for a weak access and not
for a strong one (`.STRONG.SYS` sets bit 14, `.STRONG.SM` bit 13, `.STRONG.GPU` both). Checked against nvdisasm on
every LDG, STG, LD and ST of the recorded CUBINs and of 56 CUBINs of the suite's and the breadth set's applications
(9,296 instructions, 712 strong; benchmarks/sass_decoder_check.py, session 53).

Public API: :func:`is_strong`, :func:`attach_strong_accesses`.
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.loops import node_instructions

_GLOBAL_LOADS_AND_STORES = (0x981, 0x986, 0x980, 0x985)  # LDG, STG, LD, ST


def is_strong(lo: int, hi: int) -> bool | None:
    """Whether the LDG, STG, LD or ST whose 64-bit halves are lo and hi is strong; None for any other instruction."""
    if lo & 0xFFF not in _GLOBAL_LOADS_AND_STORES:
        return None
    return (hi >> 13) & 3 != 0


def attach_strong_accesses(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets `strong: true` (docs/report-format.md) on the global loads and stores whose instruction is strong, where
    their function's code decodes (sm_80 and later); leaves every other node as it was."""
    for kernel in kernels:
        for node, lo, hi in node_instructions(mapper, kernel, _global_load_or_store):
            if is_strong(lo, hi):
                node["strong"] = True


def _global_load_or_store(node: dict[str, Any]) -> bool:
    return node.get("space") == "global" and node.get("type") in ("read", "write")
