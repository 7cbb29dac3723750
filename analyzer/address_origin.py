"""Which loaded values an access's address is computed from: a def-use walk over its function's machine code.

The trace tells a gather from a strided walk only by its lanes' addresses (Node.addresses_follow_data: requests with
lanes on no stride). Where the loaded indices themselves follow a stride in the input at hand (SHOC BFS (UIUC)'s
frontier: 64-77% of the CSR gathers' requests are on a stride), a gather looks strided, and was told to index with
threadIdx.x, which no change of the indexing arithmetic can do. The SASS says what the data cannot: the address register
of `LDG [R2.64]` was computed from the value an earlier load returned (`edgeArray[frontier[tid]]`). So for shared
memory: a scatter to the ranks a binary search found (cuda-samples mergeSort's `baseKey[posA] = keyA`) touches 32 words
per access like a strided store and looked like a layout to pad (patterns/bank_conflict.py).

The walk follows registers through the instructions whose operands are known (_ALU below), forward over the function's
control-flow graph (branches decoded as analyzer/loops.py decodes them), joining at merges, until nothing changes. A
guarded instruction (`@!P0 IMAD.WIDE R2, ...`) sets its registers as an unguarded one would: the compiler guards the use
by the same predicate (`@!P0 STG [R2.64]`), and keeping the value the register held before (cuda-samples scalarProd: a
shared-memory sum) would name loads the address never came from. Predicates are followed as registers are: a comparison
(ISETP, FSETP) sets its predicates from its operands, and a select (SEL, FSEL) takes its predicate's origins besides its
operands', which is how a binary search's rank comes from the keys it compared. A guard hands on nothing (a bounds
check's guard on `if (flag[i]) out[i * 33] = x` would make out's address follow `flag`): a move guarded by a comparison
of loaded values is missed, so the walk can fall short of the data, never beyond it. A register's origins are the loads
whose values flowed into it. What may start an origin is the caller's to say (`starts_origin`): attach_address_origins
takes loads whose lanes read more than one address in some request (a warp-uniform value, `ptrs[blockIdx.x]` or a
broadcast length, cannot spread a warp's lanes), and atomics (their lanes get different old values even from one
address). Everything the walk does not know is taken as origin-free: an unknown instruction's destination, a call's (the
callee may set any register), a local-memory reload (a spill), a constant load, a special register (threadIdx), a
uniform register. So an unknown instruction can only hide an origin, never invent one: the rules then fall back on the
trace, as before.

Encoding (sm_80 and later, the 128-bit instruction as two little-endian 64-bit words lo, hi): the opcode is lo's bits
0-11, its guard predicate bits 12-15 (7: always), the destination register bits 16-23, register A bits 24-31, register B
bits 32-39; register C is hi's bits 0-7. Bits 9-11 of an ALU opcode give its operand form: 1 all registers (A, B, C); 2,
3 and 7 an immediate, a constant or a uniform register as the last operand, with the middle register in C's field; 4, 5
and 6 one of those as the middle operand, the last register in C's field. So B's field holds a register only in form 1,
and C's holds one in every form of an instruction with three operands. A load's size is hi's bits 9-11 (5: 64 bits, two
registers; 6: 128 bits, four). Every opcode below was checked against nvdisasm: on the CUBINs of tests/data in every
test run (tests/analyzer/test_address_origin.py), and on 56 sm_90 CUBINs of the suite's and the breadth set's
applications, 56,371 instructions (compares included), once (benchmarks/sass_decoder_check.py, session 53); with
session 54's additions (DADD, F2I.F64, the generic ATOM, and forms of SEL, FSEL, FADD, FMNMX, FSETP, IMAD.WIDE, IMAD.HI,
MUFU, SHF, VIMNMX and VIADDMNMX that the suite's and the breadth set's code uses), on 84 CUBINs, 63,899 instructions.
Not every form of an opcode is listed: a form missing here is an unknown instruction, never a guess.

Cost: only functions with a wasteful access (extra sectors, extra wavefronts) and a lane-varying load are walked: 0.2
to 7.6 ms per application on the suite's recorded reports. Walking every function of the 56 CUBINs, all loads as
origins, took 0.67 s in all on this project's two-core machine, 71 ms for the largest (cudaTensorCoreGemm's
compute_gemm, 7,368 instructions; session 53).

Public API: :func:`address_origins`, :func:`attach_address_origins`.
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Iterable

from reuselens.analyzer.graph import r_coal, r_conf
from reuselens.analyzer.loops import INSTRUCTION_BYTES, branch_target, function_code

ZERO_REGISTER = 255  # RZ: reads as zero, writes are dropped
_ALWAYS = 7  # the guard predicate PT
# Predicates P0-P6 are followed too, as registers 256-262 of the walk's state (PT, 263, is never set): a comparison
# of a loaded value sets one, and a select by it picks a value the data chose (a binary search's rank).
PREDICATE_BASE = 256
_TRUE_PREDICATE = PREDICATE_BASE + _ALWAYS
_STATE = PREDICATE_BASE + 8

# ALU opcodes: (operand count, destination registers, wide sources). The count says which fields hold registers by
# the form rule above: 1 (B alone, form 1 only), 2 (A, and B in form 1), 3 (A, C, and B in form 1). Wide sources
# name the operands that are register pairs (a 64-bit add's A, IMAD.WIDE's C).
_ALU: dict[int, tuple[int, int, str]] = {
    **{op: (1, 1, "") for op in (0x202, 0x802, 0xA02, 0xC02)},  # MOV
    **{op: (2, 1, "") for op in (0x207, 0x807, 0xC07)},  # SEL
    **{op: (2, 1, "") for op in (0x208, 0x808, 0xC08)},  # FSEL
    **{op: (3, 1, "") for op in (0x210, 0x810, 0xA10, 0xC10)},  # IADD3
    **{op: (3, 1, "") for op in (0x211, 0x811, 0xA11, 0xC11)},  # LEA (C is RZ where .HI is absent)
    **{op: (3, 1, "") for op in (0x212, 0x812, 0xC12)},  # LOP3
    **{op: (3, 1, "") for op in (0x219, 0x419, 0x819, 0xC19)},  # SHF
    **{op: (2, 1, "") for op in (0x220, 0x820, 0xC20)},  # FMUL
    **{op: (2, 1, "") for op in (0x221, 0x421, 0xE21)},  # FADD
    **{op: (3, 1, "") for op in (0x223, 0x423, 0x823, 0xC23)},  # FFMA
    **{op: (3, 1, "") for op in (0x224, 0x424, 0x624, 0x824, 0xA24, 0xC24, 0xE24)},  # IMAD
    **{op: (3, 2, "c") for op in (0x225, 0x625, 0x825, 0xC25)},  # IMAD.WIDE
    **{op: (2, 2, "ab") for op in (0x228, 0xA28, 0xC28)},  # DMUL
    **{op: (2, 2, "ac") for op in (0x229, 0x429, 0xE29)},  # DADD (a register second operand in C's field)
    **{op: (1, 1, "") for op in (0x245, 0x845, 0xC45)},  # I2FP
    0x305: (1, 1, ""),  # F2I
    **{op: (1, 1, "") for op in (0x306, 0x906, 0xD06)},  # I2F
    **{op: (1, 1, "") for op in (0x308, 0x908, 0xD08)},  # MUFU
    0x310: (1, 1, ""),  # F2F
    0x312: (1, 2, "b"),  # I2F.F64.S64
    0x311: (1, 1, "b"),  # F2I.F64
    **{op: (3, 1, "") for op in (0x431, 0x435)},  # HFMA2
    **{op: (1, 1, "") for op in (0x309, 0xD09)},  # POPC
    **{op: (1, 1, "") for op in (0x300, 0xD00)},  # FLO
    0x835: (2, 2, "a"),  # IADD.64
    **{op: (2, 1, "") for op in (0x836, 0xC36)},  # VIADD
    **{op: (3, 1, "") for op in (0x246, 0x846)},  # VIADDMNMX
    **{op: (2, 1, "") for op in (0x209, 0xC09)},  # FMNMX
    **{op: (2, 1, "") for op in (0x248, 0x848)},  # VIMNMX
    0x213: (1, 1, ""),  # IABS
    **{op: (3, 1, "") for op in (0x227, 0xC27)},  # IMAD.HI
    0x816: (3, 1, ""),  # PRMT
}
# Two-operand instructions whose register second operand (form 1) sits in C's field, not B's: DADD, unlike FADD.
_SECOND_IN_C = frozenset({0x229})
# Memory instructions whose destination takes the loaded value: a global or shared load starts an origin where the
# caller says so; a local reload (a spill's), a constant, a special register or a clock reading starts none.
_LOADS = {0x981, 0x984, 0x980, 0x9A8, 0x98A, 0x98C, 0x38C, 0xF8C}  # LDG, LDS, LD; ATOMG, ATOM, ATOMS (an old value)
_SHUFFLES = {0x389, 0x589, 0x989, 0xF89}  # SHFL: the destination takes register A's value from another lane
_ORIGIN_FREE_LOADS = {0x983, 0xB82}  # LDL, LDC
_ORIGIN_FREE = {0x919: 1, 0x805: 2}  # S2R, CS2R (two registers)
_CALLS = {0x943, 0x944}  # CALL.ABS, CALL.REL: the callee may set any register
_STOPS = {0x94D, 0x950}  # EXIT, RET: no successor unless guarded
# ISETP and FSETP: (operand count, as for _ALU); their two destination predicates are hi's bits 17-19 and 20-22.
_COMPARES = {**{op: 2 for op in (0x20C, 0x80C, 0xA0C, 0xC0C)}, **{op: 2 for op in (0x20B, 0x80B, 0xC0B)}}
_SELECTS = {0x207, 0x807, 0xC07, 0x208, 0x808, 0xC08}  # SEL, FSEL: the selecting predicate is hi's bits 23-25
_PREDICATE_RESULTS = (0x302, 0x81C)  # FCHK, PLOP3
_STORES = (0x986, 0x985, 0x388, 0x988, 0x387, 0x98E, 0x804)  # STG, ST, STS, STL, REDG; R2P (sets predicates)
# NOP, BSYNC, BSSY, BAR, BRA, BREAK, WARPSYNC, ENDCOLLECTIVE, YIELD, MEMBAR, DEPBAR
_CONTROL = (0x918, 0x941, 0x945, 0xB1D, 0x947, 0x547, 0x942, 0x348, 0x948, 0x91B, 0x946, 0x992, 0x91A)
# R2UR, S2UR, LDCU, ULDC, UIADD3, ULEA, UMOV, UISETP, VOTEU, REDUX, USHF, UIMAD, ULOP3, USEL, UFLO
_UNIFORM_RESULTS = (0x2CA, 0x9C3, 0x7AC, 0xAB9, 0x290, 0x890, 0x291, 0x482, 0x882, 0xC82, 0x88C, 0x886, 0x3C4)
_UNIFORM_RESULTS += (0x299, 0x899, 0x2A4, 0x892, 0x287, 0x2BD)
_NO_REGISTER_RESULT = frozenset((*_PREDICATE_RESULTS, *_STORES, *_CONTROL, *_UNIFORM_RESULTS))
# The accesses whose address register (A, for every memory instruction) may be asked about: LDG, STG, LD, ST, ATOMG,
# ATOM (generic), REDG; LDS, STS, ATOMS.
_ACCESSES = frozenset((0x981, 0x986, 0x980, 0x985, 0x9A8, 0x98A, 0x98E, 0x984, 0x388, 0x988, 0x38C, 0x98C, 0xF8C))


def _load_width(hi: int) -> int:
    size = (hi >> 9) & 7
    return 2 if size == 5 else 4 if size == 6 else 1


def _registers(first: int, count: int) -> tuple[int, ...]:
    """A destination of `count` registers from `first`, short of RZ (which is no register)."""
    return tuple(range(first, min(first + count, ZERO_REGISTER)))


def _operands(opcode: int, lo: int, hi: int, count: int, wide: str) -> list[int]:
    """The registers an ALU instruction reads, by the form rule (module docstring); a wide operand's pair whole."""
    a, b, c = (lo >> 24) & 0xFF, (lo >> 32) & 0xFF, hi & 0xFF
    form_one = (opcode >> 9) & 7 == 1
    if opcode in _SECOND_IN_C:
        fields = [("a", a)] + ([("c", c)] if form_one else [])
    else:
        fields = (
            ([("a", a)] if count > 1 else []) + ([("b", b)] if form_one else []) + ([("c", c)] if count == 3 else [])
        )
    sources: list[int] = []
    for name, register in fields:
        sources.append(register)
        if name in wide and register != ZERO_REGISTER:
            sources.append(register + 1)
    return sources


def _effect(lo: int, hi: int) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """(kind, destination registers, source registers) of one instruction: kind "alu" (destinations take the
    sources' origins), "load" (a possible origin), "free" (destinations get no origin), "call" (every register
    loses its origins) or "none" (no register result)."""
    opcode = lo & 0xFFF
    dest = (lo >> 16) & 0xFF
    alu = _ALU.get(opcode)
    if alu is not None:
        count, width, wide = alu
        sources = _operands(opcode, lo, hi, count, wide)
        if opcode in _SELECTS:
            sources.append(PREDICATE_BASE + ((hi >> 23) & 7))
        return "alu", _registers(dest, width), tuple(sources)
    if opcode in _COMPARES:
        predicates = (PREDICATE_BASE + ((hi >> 17) & 7), PREDICATE_BASE + ((hi >> 20) & 7))
        return "alu", predicates, tuple(_operands(opcode, lo, hi, _COMPARES[opcode], ""))
    if opcode in _SHUFFLES:
        return "alu", (dest,), ((lo >> 24) & 0xFF,)
    if opcode in _LOADS:
        return "load", _registers(dest, _load_width(hi)), ()
    if opcode in _ORIGIN_FREE_LOADS:
        return "free", _registers(dest, _load_width(hi)), ()
    if opcode in _ORIGIN_FREE:
        return "free", _registers(dest, _ORIGIN_FREE[opcode]), ()
    if opcode in _CALLS:
        return "call", (), ()
    if opcode in _NO_REGISTER_RESULT or opcode in _STOPS:
        return "none", (), ()
    return "free", (dest,), ()  # unknown: whatever it sets, it sets without an origin we could name


def _guarded(lo: int) -> bool:
    return (lo >> 12) & 0xF != _ALWAYS


def _blocks(words: list[tuple[int, int]], arch: int) -> tuple[list[int], dict[int, list[int]]]:
    """Block starts (instruction indexes) and each block's successors. A branch whose target is not an instruction
    of the function ends its block with no successor there: what follows only that edge is never reached, and an
    unreached block hands on no origins."""
    count = len(words)
    targets: dict[int, int | None] = {}
    starts = {0}
    for index, (lo, hi) in enumerate(words):
        opcode = lo & 0xFFF
        pc = index * INSTRUCTION_BYTES
        target = branch_target(lo | hi << 64, pc, arch)
        if target is not None:
            inside = target % INSTRUCTION_BYTES == 0 and 0 <= target < count * INSTRUCTION_BYTES
            targets[index] = target // INSTRUCTION_BYTES if inside else None
            if inside:
                starts.add(target // INSTRUCTION_BYTES)
            starts.add(index + 1)
        elif opcode in _STOPS:
            starts.add(index + 1)
    ordered = sorted(start for start in starts if start < count)
    successors: dict[int, list[int]] = {}
    for position, start in enumerate(ordered):
        end = ordered[position + 1] if position + 1 < len(ordered) else count
        last = end - 1
        lo = words[last][0]
        following = [end] if end < count else []
        if last in targets:
            target = targets[last]
            successors[start] = ([target] if target is not None else []) + (following if _guarded(lo) else [])
        elif lo & 0xFFF in _STOPS:
            successors[start] = following if _guarded(lo) else []
        else:
            successors[start] = following
    return ordered, successors


def address_origins(
    code: bytes, arch: int | None, accesses: Iterable[int], starts_origin: Callable[[int], bool]
) -> dict[int, list[int]] | None:
    """For each PC of `accesses` that is a global or shared load, store or atomic of `code`, the PCs of the loads
    whose values its address register was computed from (empty: none found). `starts_origin(pc)` says whether the
    load or atomic at pc starts an origin. None for an architecture this decoder does not know or code that is no
    whole number of instructions."""
    if arch is None or arch < 80 or len(code) % INSTRUCTION_BYTES or not code:
        return None
    words = list(struct.iter_unpack("<QQ", code))
    wanted = {
        pc // INSTRUCTION_BYTES
        for pc in accesses
        if pc % INSTRUCTION_BYTES == 0
        and 0 <= pc < len(code)
        and words[pc // INSTRUCTION_BYTES][0] & 0xFFF in _ACCESSES
    }
    if not wanted:
        return {}
    effects = [_effect(lo, hi) for lo, hi in words]
    origin_bit: dict[int, int] = {}  # load instruction index -> its bit in the origin masks
    for index, (kind, _dests, _sources) in enumerate(effects):
        if kind == "load" and starts_origin(index * INSTRUCTION_BYTES):
            origin_bit[index] = 1 << len(origin_bit)
    if not origin_bit:
        return {index * INSTRUCTION_BYTES: [] for index in wanted}
    starts, successors = _blocks(words, arch)
    ends = {start: (starts[i + 1] if i + 1 < len(starts) else len(words)) for i, start in enumerate(starts)}
    found: dict[int, int] = {}

    def run(start: int, state: list[int], record: bool) -> list[int]:
        for index in range(start, ends[start]):
            lo = words[index][0]
            if record and index in wanted:
                found[index] = state[(lo >> 24) & 0xFF]
            kind, dests, sources = effects[index]
            if kind == "call":
                state = [0] * _STATE
                continue
            if kind == "alu":
                value = 0
                for register in sources:
                    value |= state[register]
            elif kind == "load":
                value = origin_bit.get(index, 0)
            else:
                value = 0
            for register in dests:
                if register != ZERO_REGISTER and register != _TRUE_PREDICATE:
                    state[register] = value
        return state

    entry: dict[int, list[int]] = {0: [0] * _STATE}
    pending = [0]
    while pending:
        start = pending.pop()
        out = run(start, list(entry[start]), False)
        for successor in successors[start]:
            before = entry.get(successor)
            merged = out if before is None else [x | y for x, y in zip(before, out)]
            if before is None or merged != before:
                entry[successor] = merged
                if successor not in pending:
                    pending.append(successor)
    for start in entry:
        run(start, list(entry[start]), True)
    bit_origin = {bit: index for index, bit in origin_bit.items()}
    return {
        index * INSTRUCTION_BYTES: sorted(
            origin * INSTRUCTION_BYTES for bit, origin in bit_origin.items() if found.get(index, 0) & bit
        )
        for index in wanted
    }


def _starts_origin(node: dict[str, Any]) -> bool:
    """Whether the node's value may spread a warp's lanes: an atomic, or a load whose lanes read more than one address
    (global) or word (shared) in some request. The trace's distinct-address counts say it: a load that every request
    serves from one address returns one value to all its lanes."""
    return node.get("type") == "atomic" or (
        node.get("type") == "read" and any(value > 1 for value, _count in node.get("addresses") or ())
    )


def _wasteful(node: dict[str, Any]) -> bool:
    """A global access (load, store or atomic) that fetches more sectors than its lanes need, or a shared one with
    more wavefronts than its words need: the accesses whose advice depends on whether the data picks their
    addresses."""
    ratio = r_coal(node) if node.get("space") == "global" else r_conf(node)
    return ratio is not None and ratio > 1


def attach_address_origins(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets `address_from` (docs/report-format.md: the PCs of the loads and atomics whose values the address was
    computed from) on the global accesses that fetch more sectors than their lanes need and the shared ones with
    bank conflicts, where their function's code decodes and such origins exist."""
    for kernel in kernels:
        wasteful: dict[str, list[dict[str, Any]]] = {}
        starts: dict[str, set[int]] = {}  # per function, the PCs that start an origin
        for node in kernel.get("nodes") or []:
            if not isinstance(node.get("function"), str) or not isinstance(node.get("pc"), int):
                continue
            if _wasteful(node):
                wasteful.setdefault(node["function"], []).append(node)
            if _starts_origin(node):
                starts.setdefault(node["function"], set()).add(node["pc"])
        for function, nodes in sorted(wasteful.items()):
            if function not in starts:
                continue
            found = function_code(mapper, kernel.get("module"), function)
            if found is None:
                continue
            code, arch, start = found  # node PCs are section offsets, the code's from its start (loops.function_code)
            origin_pcs = {pc - start for pc in starts[function]}
            origins = address_origins(code, arch, [node["pc"] - start for node in nodes], origin_pcs.__contains__)
            for node in nodes:
                if (origins or {}).get(node["pc"] - start):
                    node["address_from"] = [pc + start for pc in origins[node["pc"] - start]]
