"""ldmatrix and bulk-copy records, recorded on the H200 from tests/gpu/async_copies.cu (tests/data/runs/async_copies,
with the Nsight Compute CSV of the same program): the records the MATRIX_MEMORY_ACCESS and BULK_COPY_* callbacks
produce, checked against what the program does, and the counts they give against ncu."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from collector_traces import fidelity_table, recorded_launches

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests/data/runs/async_copies"
MEM, GLOBAL, SHARED = 1, 1, 2
READ, WRITE = 1, 2
ASYNC, MATRIX, BULK = 0x1, 0x2, 0x4
BLOCKS, ROWS, COPY_BLOCKS = 4, 32, 48  # tests/gpu/async_copies.cu


def launches() -> dict[str, tuple[dict, np.ndarray]]:
    return recorded_launches(RUN, "tests/gpu/run_on_device.sh records it")


def lane_addresses(record) -> list[int]:
    return [int(record["addr"][lane]) for lane in range(32) if record["active_mask"] >> lane & 1]


@pytest.mark.parametrize(
    "kernel, matrices", [("_Z13ldmatrix_rowsILi1EEvPK5uint4Pj", 1), ("_Z13ldmatrix_rowsILi4EEvPK5uint4Pj", 4)]
)
def test_ldmatrix_record_holds_one_row_address_per_supplying_lane(kernel, matrices):
    _launch, records = launches()[kernel]
    mem = records[records["type"] == MEM]
    ldsm = mem[(mem["flags"] & MATRIX) != 0]
    assert len(ldsm) == BLOCKS  # one warp per block, one ldmatrix each
    for r in ldsm:
        assert r["space"] == SHARED and r["access"] == READ and r["size"] == 16
        assert r["active_mask"] == (0xFFFFFFFF if matrices == 4 else 0xFF)
        rows = lane_addresses(r)
        assert rows == [rows[0] + 16 * i for i in range(8 * matrices)]  # lane i: row i of the tile
    # the tile's rows were stored by the same lanes, 16 bytes each, at the same addresses
    stores = mem[(mem["space"] == SHARED) & (mem["access"] == WRITE)]
    assert len(stores) == BLOCKS
    for store, load in zip(stores, ldsm):
        assert lane_addresses(store)[: 8 * matrices] == lane_addresses(load)


def test_bulk_copies_are_recorded_once_per_16_byte_block():
    _launch, records = launches()["_Z14bulk_roundtripPK6float4PS_"]
    bulk = records[(records["type"] == MEM) & ((records["flags"] & BULK) != 0)]
    assert ((bulk["flags"] & ASYNC) != 0).all() and (bulk["size"] == 16).all()
    for block in range(BLOCKS):
        mine = bulk[bulk["block"] == block]
        halves = {}
        for space, access in ((GLOBAL, READ), (SHARED, WRITE), (SHARED, READ), (GLOBAL, WRITE)):
            part = mine[(mine["space"] == space) & (mine["access"] == access)]
            addresses = [a for r in part for a in lane_addresses(r)]
            # 48 blocks: one record of 32 and one of 16, consecutive 16-byte blocks
            assert sorted(int(r["active_mask"]).bit_count() for r in part) == [16, 32], (block, space, access)
            assert addresses == [addresses[0] + 16 * i for i in range(COPY_BLOCKS)], (block, space, access)
            halves[space, access] = (part, addresses[0])
        # global half at pc, shared half at pc + 1, as for cp.async
        for g, s in (((GLOBAL, READ), (SHARED, WRITE)), ((GLOBAL, WRITE), (SHARED, READ))):
            assert set(halves[s][0]["pc"]) == {pc + 1 for pc in halves[g][0]["pc"]}
        # each block copies its own 768 bytes of the input and of the output; the shared buffer is the same
        assert halves[SHARED, WRITE][1] == halves[SHARED, READ][1]
    starts = sorted(
        lane_addresses(r)[0]
        for r in bulk
        if r["space"] == GLOBAL and r["access"] == READ and int(r["active_mask"]).bit_count() == 32
    )
    assert np.diff(starts).tolist() == [COPY_BLOCKS * 16] * (BLOCKS - 1)


def test_counts_equal_nsight_compute():
    launches()  # fails with the recording instructions when the run is missing
    table, mismatches = fidelity_table(RUN)
    compared = {(r["kernel"], r["metric"]): r for r in table if r["ncu"] is not None and r["match"] is not None}
    assert mismatches == 0, [r for r in compared.values() if not r["match"]]
    assert compared["ldmatrix_rows<4>", "ldmatrix instructions"]["ncu"] == BLOCKS
    assert compared["bulk_roundtrip", "bulk copy bytes global->shared"]["ncu"] == BLOCKS * COPY_BLOCKS * 16
    assert compared["bulk_roundtrip", "bulk copy bytes shared->global"]["ncu"] == BLOCKS * COPY_BLOCKS * 16


def test_engine_wavefronts_of_ldmatrix_equal_nsight_compute():
    """The engine's lane-group rule (section 3.2.2: 16-byte accesses in groups of 8 lanes) on the LDSM records
    gives the shared-load wavefronts ncu counted for them: one per 8x8 matrix."""
    from reuselens.analyzer.replay import replay_run

    result = replay_run(RUN, workers=1)
    for kernel, matrices in (("_Z13ldmatrix_rowsILi1EEvPK5uint4Pj", 1), ("_Z13ldmatrix_rowsILi4EEvPK5uint4Pj", 4)):
        (k,) = [k for k in result["kernels"] if k["mangled"] == kernel]
        reads = [n for n in k["nodes"] if n["space"] == "shared" and n["type"] == "read"]
        assert len(reads) == 1
        assert sum(v * c for v, c in reads[0]["wavefronts"]) == BLOCKS * matrices
        assert sum(v * c for v, c in reads[0]["wavefronts_ideal"]) == BLOCKS * matrices
