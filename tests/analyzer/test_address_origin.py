"""Addresses computed from loaded values (analyzer/address_origin.py): the instruction decoder against nvdisasm's
listings of every recorded CUBIN, the def-use walk on tests/data/sass/gathers.cu's kernels (gathers through CSR
rows, a float turned index, atomics' slots, an index staged in shared memory and shuffled, next to accesses indexed
by the thread alone), and what the report and the coalescing rule make of it."""

from __future__ import annotations

import random

import pytest

from benchmarks.sass_decoder_check import listed_instructions, registers_agree
from reuselens.analyzer.address_origin import _ACCESSES, address_origins, attach_address_origins
from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.patterns.bank_conflict import find as find_conflicts
from reuselens.analyzer.patterns.coalescing import find
from reuselens.analyzer.patterns.view import KernelView
from tests.analyzer.sass_listings import DATA, OneCubinMapper, listed_cubins

GATHERS = DATA / "sass" / "gathers.sm_90.cubin"
DOUBLES = DATA / "sass" / "doubles.sm_90.cubin"


@pytest.mark.parametrize("cubin, listing", listed_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_registers_read_and_set_decode_as_nvdisasm_lists_them(cubin, listing):
    """For every instruction the walk follows (an ALU operation of its table, a load, an atomic), the registers
    nvdisasm names are the destination and the sources the decoder reads (benchmarks/sass_decoder_check.py, which
    checks any CUBIN the same way)."""
    verdicts = [registers_agree(text, lo, hi) for _f, _pc, text, lo, hi in listed_instructions(cubin, listing)]
    assert False not in verdicts
    if cubin.name.startswith(("kernels", "gathers")):
        assert verdicts.count(True) > 20


def origins_of(function: str, starts=lambda pc: True, cubin=GATHERS) -> dict[int, list[int]]:
    table = CubinLineTable(cubin.read_bytes())
    symbol = table.function_symbol(function)
    code = table.elf.section_data(table.elf.sections[symbol.shndx])[symbol.value : symbol.value + symbol.size]
    accesses = [
        pc for pc in range(0, len(code), 16) if int.from_bytes(code[pc : pc + 2], "little") & 0xFFF in _ACCESSES
    ]
    found = address_origins(code, table.arch, accesses, starts)
    assert set(found) == set(accesses)
    return found


def test_csr_gathers_come_from_the_frontier_and_the_row_offsets():
    # LDG at 0xc0: frontier[tid]; 0x100, 0x110: row[node], row[node + 1]; in the loop (unrolled four times)
    # cost[node] from the frontier's value and col[j] from the row offsets (j carried round the loop);
    # out[tid * 33] from the thread's index alone; each atomicMin on cost[next] (REDG) from its col[j]
    found = origins_of("_Z8csr_stepPKjS0_S0_PjS1_j")
    assert found[0xC0] == [] and found[0x530] == []
    assert found[0x100] == found[0x110] == [0xC0]
    assert found[0x240] == found[0x300] == found[0x3A0] == found[0x410] == found[0x480] == [0xC0]
    assert found[0x250] == found[0x330] == found[0x390] == found[0x400] == found[0x470] == [0x100]
    assert [found[pc] for pc in (0x2B0, 0x380, 0x3F0, 0x460, 0x4D0)] == [[0x250], [0x330], [0x390], [0x400], [0x470]]


def test_origins_follow_floats_shuffles_and_atomics_but_not_the_thread_index():
    assert origins_of("_Z12float_lookupPKfS0_Pff") == {0xA0: [], 0xF0: [0xA0], 0x110: []}  # table[(int)(x * s)]
    # the warp-aggregated atomicAdd: one lane's ATOMG, its old value shuffled to all, each lane's slot after it
    assert origins_of("_Z12atomic_slotsPKfPfPi") == {0xC0: [], 0x110: [], 0x170: [0xC0]}
    # index[255 - tid] from shared memory (LDS at 0x120), then in[k * 7] and, through SHFL.BFLY, out[swapped * 5]
    found = origins_of("_Z19shared_and_shuffledPKiPKfPf")
    assert found == {0x70: [], 0x100: [], 0x120: [], 0x150: [0x120], 0x1C0: [], 0x1D0: [0x120]}
    # ATOMS on a shared counter (its own address a uniform register's: no origin)
    assert origins_of("_Z12shared_slotsPKfPf") == {0xD0: [], 0xF0: [], 0x1E0: [], 0x230: [0x1E0]}


def test_origins_follow_double_sums_and_their_conversion_to_indices():
    # x[i] at 0xb0, y[i] at 0xd0; DADD of both (registers: the second in C's field), of x[i] and 3.5, of the sum and
    # a uniform register; F2I.F64 of each into an index of table: 0x160 (x[i] + 3.5) from x alone, 0x180 (x[i] + y[i])
    # and 0x1a0 (the sum shifted) from both; the store at out[i] from the thread's index
    found = origins_of("_Z13double_lookupPKdS0_PKfPfd", cubin=DOUBLES)
    assert found == {0xB0: [], 0xD0: [], 0x160: [0xB0], 0x180: [0xB0, 0xD0], 0x1A0: [0xB0, 0xD0], 0x1E0: []}


def test_shared_accesses_at_loaded_keys_and_ranks_found_by_comparisons():
    # staged[k & 1023] (LDS at 0x250) from keys[i] (0x1a0), staged[(tid * 32) & 1023] (0x210) from the thread alone
    found = origins_of("_Z13shared_lookupPKiPKfPf")
    assert found == {0xF0: [], 0x130: [], 0x1A0: [], 0x210: [], 0x250: [0x1A0], 0x270: []}
    # a binary search: each probe's address from the comparisons (ISETP, then SEL by their predicate) of the key
    # (LDG at 0x110) with the probes before it; the scatter to the rank found (0x3d0) from all of them. The second
    # probe's base is set by a guarded move (`@P0 IMAD R6, RZ, RZ, UR4`), and a guard hands on no origin (a bounds
    # check's guard would name loads the address never came from): found from the third probe on.
    found = origins_of("_Z14rank_in_sortedPKjS0_Pj")
    probes = [0x130, 0x170, 0x1D0, 0x220, 0x270, 0x2C0, 0x310, 0x380]
    assert found[0x130] == found[0x170] == []
    assert found[0x1D0] == [0x110, 0x130, 0x170]
    assert found[0x3D0] == sorted([0x110, *probes[:-1]])
    assert found[0x90] == found[0xF0] == found[0x110] == []


def test_a_load_the_caller_rules_out_starts_no_origin():
    """rows[blockIdx.x] is read by every lane from one address: what attach_address_origins rules out."""
    assert origins_of("_Z13table_of_rowsPKPKfPf") == {0x70: [], 0xA0: [0x70], 0xC0: []}
    assert origins_of("_Z13table_of_rowsPKPKfPf", starts=lambda pc: False) == {0x70: [], 0xA0: [], 0xC0: []}


def test_code_the_decoder_does_not_know_gives_none():
    assert address_origins(b"\0" * 32, 75, [0], lambda pc: True) is None  # before sm_80
    assert address_origins(b"\0" * 24, 90, [0], lambda pc: True) is None  # no whole instruction
    assert address_origins(b"\0" * 32, 90, [0x10, 0x40, 3], lambda pc: True) == {}  # no LDG or STG there


def node(pc, type_="read", addresses=32, sectors=16, line=14, function="_Z8csr_stepPKjS0_S0_PjS1_j", space="global"):
    return {
        "id": pc + 1,
        "pc": pc,
        "function": function,
        "space": space,
        "type": type_,
        "size": 4,
        "executions": 64,
        "lanes": [[32, 64]],
        "addresses": [[addresses, 64]],
        "sectors": [[sectors, 64]] if space == "global" else None,
        "sectors_ideal": [[4, 64]] if space == "global" else None,
        "bytes": 64 * 32 * 4,
        "source": {"file": "/src/gathers.cu", "line": line},
    }


def kernel(nodes, module="m"):
    return {"module": module, "mangled": "k", "nodes": [{"id": 0}, *nodes], "edges": []}


def test_the_report_names_origins_that_spread_lanes():
    frontier = node(0xC0, sectors=4, line=13)  # coalesced: no address_from asked for
    offsets = node(0x100, line=14)
    reread = node(0x240, line=17)
    neighbours = node(0x250, line=16)
    strided = node(0x530, "write", line=20)
    relax = node(0x2B0, "atomic", line=17)  # atomicMin(&cost[next], ...): REDG, uncoalesced like the loads
    kernels = [kernel([frontier, offsets, reread, neighbours, strided, relax])]
    attach_address_origins(OneCubinMapper(GATHERS), kernels)
    assert offsets["address_from"] == [0xC0] and neighbours["address_from"] == [0x100]
    assert relax["address_from"] == [0x250]
    assert "address_from" not in frontier and "address_from" not in strided

    # a frontier every lane reads from one address is warp-uniform: no origin from it
    uniform = node(0xC0, addresses=1, sectors=1, line=13)
    offsets, neighbours = node(0x100, line=14), node(0x250, line=16)
    attach_address_origins(OneCubinMapper(GATHERS), [kernel([uniform, offsets, neighbours])])
    assert "address_from" not in offsets and neighbours["address_from"] == [0x100]

    # no CUBIN for the module: nothing attached, nothing raised
    lost = node(0x100, line=14)
    attach_address_origins(OneCubinMapper(GATHERS), [kernel([node(0xC0, sectors=4), lost], module="gone")])
    assert "address_from" not in lost


def test_the_coalescing_finding_of_a_strided_looking_gather_says_the_data_decides():
    """64% of the requests on a stride (SHOC BFS (UIUC)'s frontier): the trace alone calls it strided; with the
    SASS's origin the finding gives the gather's advice and names the line the indices were loaded at."""
    frontier = node(0xC0, sectors=4, line=13)
    offsets = node(0x100, line=14)
    offsets["irregular"] = 23
    view_before = KernelView(kernel([frontier, dict(offsets)]))
    attach_address_origins(OneCubinMapper(GATHERS), [kernel([frontier, offsets])])
    view_after = KernelView(kernel([frontier, offsets]))
    settings = {"coalescing": 1.5}
    (before,) = [d for d in find(view_before, settings)]
    (after,) = [d for d in find(view_after, settings)]
    assert "make consecutive lanes access consecutive addresses" in before.message
    assert "addresses_follow_data" not in before.metrics
    assert "loaded data (computed from the values loaded at gathers.cu:13)" in after.message
    assert after.metrics["addresses_follow_data"] is True and after.metrics["address_from"] == [0xC0]


def instruction(opcode, dest=255, a=255, b=255, c=255, guard=7, size=4):
    low = opcode | guard << 12 | dest << 16 | a << 24 | b << 32
    return low.to_bytes(8, "little") + (c | size << 9).to_bytes(8, "little")


def test_a_guarded_instruction_sets_its_registers_like_any_other():
    """cuda-samples scalarProd's last store: R3 held a shared-memory sum, `@!P0 LDC.64 R2` loads the output pointer
    into R2 and R3 under the store's own guard; the store's address owes nothing to the sum."""
    sum_loaded = instruction(0x984, dest=3, a=0)  # LDS R3, [R0]
    address = instruction(0x210, dest=2, a=3, b=0, c=255)  # IADD3 R2, R3, R0, RZ
    store = instruction(0x986, a=2, b=5, guard=8)  # @!P0 STG [R2.64], R5
    pointer = instruction(0xB82, dest=2, guard=8, size=5)  # @!P0 LDC.64 R2, c[0x0][0x210]
    assert address_origins(sum_loaded + address + store, 90, [0x20], lambda pc: True) == {0x20: [0x0]}
    assert address_origins(sum_loaded + pointer + store, 90, [0x20], lambda pc: True) == {0x20: []}
    assert address_origins(sum_loaded + address + store, 90, [0x20], lambda pc: pc != 0) == {0x20: []}


def test_the_register_check_tells_a_wrong_decoding():
    lo, hi = 0x9097A24, 0x1FCA00078E0200  # sm_80's `IMAD R9, R9, c[0x0][0x0], R0`
    assert registers_agree("IMAD R9, R9, c[0x0][0x0], R0 ;", lo, hi) is True
    assert registers_agree("IMAD R9, R9, c[0x0][0x0], R1 ;", lo, hi) is False
    assert registers_agree("IMAD R8, R9, c[0x0][0x0], R0 ;", lo, hi) is False
    assert registers_agree("EXIT ;", 0x794D, 0) is None


def shared_node(pc, line, address_from=None):
    found = {
        "id": pc + 1,
        "pc": pc,
        "function": "k",
        "space": "shared",
        "type": "write",
        "size": 4,
        "executions": 100,
        "lanes": [[32, 100]],
        "addresses": [[32, 100]],  # 32 words whatever the data: the trace alone sees no data-indexed words
        "wavefronts": [[1, 30], [2, 40], [4, 30]],
        "wavefronts_ideal": [[1, 100]],
        "bytes": 100 * 32 * 4,
        "source": {"file": "/src/mergeSort.cu", "line": line},
    }
    if address_from is not None:
        found["address_from"] = address_from
    return found


def test_a_bank_conflict_at_words_the_data_picks_is_no_padding_finding():
    """cuda-samples mergeSort's `baseKey[posA] = keyA`: the rank comes from a binary search over loaded keys, so the
    conflicts vary with the data, and the trace alone told the user to pad the array."""
    probe = shared_node(0x40, 97)
    probe.update(type="read", wavefronts=[[1, 100]])  # conflict-free: no finding of its own
    settings = {"bankConflict": 1.1}
    (before,) = find_conflicts(KernelView(kernel([probe, shared_node(0x80, 139)])), settings)
    (after,) = find_conflicts(KernelView(kernel([probe, shared_node(0x80, 139, address_from=[0x40])])), settings)
    assert before.fix_kind == "padding" and "pad or swizzle the array" in before.message
    assert after.fix_kind == "none"
    assert "data-dependent: the data picks the words (computed from the values loaded at mergeSort.cu:97)" in (
        after.message
    )
    assert "the SASS computes the address from the values loaded at mergeSort.cu:97" in after.explanation
    assert after.metrics["address_from"] == [0x40] and "data_indexed" not in after.metrics
    # a store: the advice is the scatter's (lanes writing in lane order), not a lookup's (values kept in registers)
    assert after.explanation.startswith("The lanes store to words the data chose") and "merge path" in after.explanation
    lookup = shared_node(0x80, 139, address_from=[0x40])
    lookup["type"] = "read"
    (read,) = find_conflicts(KernelView(kernel([probe, lookup])), settings)
    assert read.explanation.startswith("The lanes' words come from the data") and "merge path" not in read.explanation

    # steady at 2 wavefronts (92% of mergeSortSharedKernel's scatters): still the data's, not a layout to redo
    steady = shared_node(0x80, 139, address_from=[0x40])
    steady["wavefronts"] = [[1, 8], [2, 92]]
    (after,) = find_conflicts(KernelView(kernel([probe, steady])), settings)
    assert after.fix_kind == "none" and "data-dependent: the data picks the words" in after.message


def test_arbitrary_code_never_raises():
    """Bytes that are no compiler's (a hostile or truncated CUBIN): random words with memory, branch, compare and
    select opcodes among them, branches anywhere, give an answer for every access asked about, or none."""
    rng = random.Random(53)
    opcodes = [0x981, 0x986, 0x984, 0x388, 0x947, 0x547, 0x94D, 0x20C, 0x207, 0x224, 0x225, 0x589, 0x944, 0x9A8]
    for _ in range(200):
        words = []
        for _ in range(rng.randrange(1, 64)):
            low = rng.getrandbits(64)
            if rng.random() < 0.7:
                low = low & ~0xFFF | rng.choice(opcodes)
            words.append(low.to_bytes(8, "little") + rng.getrandbits(64).to_bytes(8, "little"))
        code = b"".join(words)
        asked = [16 * i for i in range(len(words))] + [3, -16, len(code)]
        found = address_origins(code, rng.choice((80, 90, 120)), asked, lambda pc: pc % 32 == 0)
        assert all(pc % 16 == 0 and 0 <= pc < len(code) for pc in found)
        assert all(origin % 16 == 0 and origin < len(code) for origins in found.values() for origin in origins)


def test_a_scatter_into_slots_an_atomic_returned_says_so():
    """warpAggregatedAtomicsCG's mapToBuckets: the store's address is the slot atomicAdd returned."""
    slot = node(0xC0, "atomic", addresses=1, sectors=1, line=79, function="_Z12atomic_slotsPKfPfPi")
    scatter = node(0x170, "write", line=80, function="_Z12atomic_slotsPKfPfPi")
    attach_address_origins(OneCubinMapper(GATHERS), [kernel([slot, scatter])])
    assert scatter["address_from"] == [0xC0]  # an atomic starts an origin whatever its lanes' addresses
    (draft,) = find(KernelView(kernel([slot, scatter])), {"coalescing": 1.5})
    assert "(computed from the old values the atomic at gathers.cu:79 returned)" in draft.message
    assert "stage the stores by destination" in draft.message
