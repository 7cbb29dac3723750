"""Which atomics hand their old value back to the program, read off their CUBIN.

The trace sees an atomic's address and lanes, not what the program does with the value it returns, and the advice
depends on it. An update used as a statement (`atomicAdd(&hist[bin], 1)`) can be privatized: a copy per block in
shared memory, merged into global memory once at the block's end. An atomic whose old value the thread uses is a
ticket or a slot (`out[atomicAdd(&count, 1)] = x`, stream compaction; cuda-samples warpAggregatedAtomicsCG's
`dst[atomicAggInc(nres)] = src[i]`): merged at the end, a block's copy would hand out indices that collide with
other blocks' (session 55's review of the breadth set). The SASS says which: the compiler emits an atomic whose
result is unused as `REDG` (global) or as `ATOMS` with `RZ` as its destination, and one whose result is used as
`ATOMG`, `ATOM` (generic) or `ATOMS` with a destination register.

Encoding (sm_80 and later, lo = the instruction's low 64 bits): the opcode is lo's bits 0-11 (ATOMG 0x9A8, ATOM
0x98A, ATOMS 0x38C, 0x98C and 0xF8C, as analyzer/address_origin.py reads them), the destination register bits 16-23 (255: RZ).
Checked against nvdisasm on every atomic of tests/data's CUBINs in every test run (tests/analyzer/
test_atomic_results.py) and on the suite's and breadth set's sm_90 CUBINs once (benchmarks/sass_decoder_check.py,
session 55). An atomicCAS, which always returns, has other opcodes and is left unmarked, as is any form not listed:
the rules then give the advice they gave before.

Which operation a returning atomic performs is in the high word's bits 23-26: 0 for ADD (ATOMG, ATOM and ATOMS
alike), MIN 1, OR 6, EXCH 8 on ATOMG (nvdisasm on the second breadth set's and tests/data's sm_90 CUBINs, session
56). Only an add hands out slots; an atomicMin or atomicOr whose old value the program reads (Parboil bfs's
`atomicMin(&g_cost[id], cost)` compared with the cost, `atomicOr(x, 0)` as a read) is no ticket: its
`fetch_add` is false.

Public API: :func:`returns_old_value`, :func:`fetch_adds`, :func:`attach_atomic_results`.
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.loops import node_instructions

_RETURNING_FORMS = (0x9A8, 0x98A, 0x38C, 0x98C, 0xF8C)  # ATOMG, ATOM, and ATOMS in its three address forms
_REDUCTIONS = (0x98E,)  # REDG: an atomic without a result
_ZERO_REGISTER = 255
_ADD = 0  # the operation field of an add


def returns_old_value(lo: int, hi: int) -> bool | None:
    """Whether the atomic whose 64-bit halves are lo and hi writes its old value to a register; None for an
    instruction that is none of ATOMG, ATOM, ATOMS and REDG."""
    opcode = lo & 0xFFF
    if opcode in _REDUCTIONS:
        return False
    if opcode not in _RETURNING_FORMS:
        return None
    return (lo >> 16) & 0xFF != _ZERO_REGISTER


def fetch_adds(lo: int, hi: int) -> bool:
    """Whether a returning atomic (returns_old_value true) is an add: its operation field, hi's bits 23-26, is 0."""
    return (hi >> 23) & 0xF == _ADD


def attach_atomic_results(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets `returns: true` (docs/report-format.md) on the atomic nodes whose instruction writes its old value to a
    register, with `fetch_add` saying whether it is an add, where their function's code decodes (sm_80 and
    later); leaves every other node as it was."""
    for kernel in kernels:
        for node, lo, hi in node_instructions(mapper, kernel, lambda node: node.get("type") == "atomic"):
            if returns_old_value(lo, hi):
                node["returns"] = True
                node["fetch_add"] = fetch_adds(lo, hi)
