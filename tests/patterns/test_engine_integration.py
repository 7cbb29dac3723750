"""The rules on kernels reconstructed by the real engine (analyzer.replay.analyze_records) from warp records.

The records replay, warp by warp, what the test programs of tests/gpu/patterns/ do on a small launch: the
Listing-3 softmax (one shared allocation holding a thread-private row copy and a reduction buffer), the same
softmax without the barrier that separates two reductions (the llama.cpp race of paper 6.3), and a 32x32 tiled
transpose (32-way bank conflict).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("reuselens.analyzer._engine", reason="the C++ engine module is not built")

from reuselens.analyzer.patterns import find_findings  # noqa: E402
from reuselens.analyzer.replay import RECORD_DTYPE, analyze_records  # noqa: E402

MEM, BARRIER = 1, 2
GLOBAL, SHARED = 1, 2
READ, WRITE = 0x1, 0x2
X_BASE, DST_BASE = 0x10000000, 0x20000000


def mem(pc, lanes: dict[int, int], *, warp, space=GLOBAL, access=READ):
    mask, addrs = 0, [0] * 32
    for lane, address in lanes.items():
        mask |= 1 << lane
        addrs[lane] = address
    return (MEM, space, access, 0, 4, warp, 0, mask, pc, 0, addrs)


def bar(pc, warp):
    return (BARRIER, 1, 0, 0, 0, warp, 0, 0xFFFFFFFF, pc, 0, [0] * 32)


def kernel_of(rows, grid=(1, 1, 1), block=(64, 1, 1), allocations=()):
    launch = {"id": 0, "function_id": 0, "grid": list(grid), "block": list(block)}
    result = analyze_records([(launch, np.array(rows, dtype=RECORD_DTYPE))], allocations=allocations)
    (kernel,) = result["kernels"]
    kernel["mangled"] = "_Z7softmaxPKfPfi"
    for node in kernel["nodes"]:
        node["function"] = kernel["mangled"] if node["pc"] is not None else None
    return kernel


def softmax_rows(separate_reductions: bool) -> list[tuple]:
    """One block of two warps, 128 columns: vals = buf + 32 words, buf[0..31] is the reduction buffer."""
    warps, per_thread = 2, 2  # 128 columns
    cols = {w: [{lane: 32 * w + lane + 64 * k for lane in range(32)} for k in range(per_thread)] for w in range(warps)}
    vals = lambda c: {lane: 4 * (32 + col) for lane, col in c.items()}  # noqa: E731
    rows: list[tuple] = []

    def phase(make):
        for w in range(warps):
            rows.extend(make(w))

    def reduction(first_pc):
        phase(lambda w: [mem(first_pc, {0: 4 * w}, warp=w, space=SHARED, access=WRITE)])
        phase(lambda w: [bar(first_pc + 0x8, w)])
        phase(lambda w: [mem(first_pc + 0x10, {lane: 4 * lane for lane in range(warps)}, warp=w, space=SHARED)])

    phase(
        lambda w: [
            r
            for c in cols[w]
            for r in (
                mem(0x10, {l: X_BASE + 4 * a for l, a in c.items()}, warp=w),
                mem(0x20, vals(c), warp=w, space=SHARED, access=WRITE),
            )
        ]
    )
    phase(lambda w: [bar(0x28, w)])  # block_reduce's leading barrier: nothing to order the first time
    reduction(0x30)
    phase(
        lambda w: [
            r
            for c in cols[w]
            for r in (mem(0x50, vals(c), warp=w, space=SHARED), mem(0x60, vals(c), warp=w, space=SHARED, access=WRITE))
        ]
    )
    if separate_reductions:
        phase(lambda w: [bar(0x68, w)])  # the last readers of buf are done before it is overwritten
    reduction(0x70)
    phase(
        lambda w: [
            r
            for c in cols[w]
            for r in (
                mem(0x90, vals(c), warp=w, space=SHARED),
                mem(0xA0, {l: DST_BASE + 4 * a for l, a in c.items()}, warp=w, access=WRITE),
            )
        ]
    )
    return rows


def pcs(kernel, finding, key="pcs"):
    by_id = {n["id"]: n["pc"] for n in kernel["nodes"]}
    return sorted(by_id[i] for i in finding[key])


ALLOCATIONS = [(X_BASE, 1 << 16), (DST_BASE, 1 << 16)]


def test_softmax_thread_private_buffer_and_broadcast_buffer():
    kernel = kernel_of(softmax_rows(True), allocations=ALLOCATIONS)
    findings = find_findings(kernel)
    by_pattern = {f["pattern"]: f for f in findings}
    # Group 1 of paper Figure 1: the four vals PCs, all reuse intra-thread
    assert pcs(kernel, by_pattern["abuse-smem"]) == [0x20, 0x50, 0x60, 0x90]
    # the reduction buffer (Group 2) is shared across warps: no abuse-smem, and its barriers order it
    assert "race-candidate" not in by_pattern
    # the leading barrier of the first reduction orders nothing
    assert [f["barrier"]["pc"] for f in findings if f["pattern"] == "removable-barrier"] == [0x28]
    assert not [f for f in findings if f["pattern"].startswith("redundant")]


def test_softmax_without_the_separating_barrier_is_a_race_candidate():
    kernel = kernel_of(softmax_rows(False), allocations=ALLOCATIONS)
    races = [f for f in find_findings(kernel) if f["pattern"] == "race-candidate"]
    assert races, "the second reduction overwrites buf while other warps may still read it"
    assert all(f["severity"] == "warning" and f["scope"] == "block" for f in races)
    assert [pcs(kernel, f) for f in races] == [[0x70]]
    assert pcs(kernel, races[0], "origin_pcs") == [0x40]
    assert races[0]["message"].startswith("overwrites data another thread read (WAR) with no __syncthreads()")


def test_transpose_tile_read_is_a_32_way_bank_conflict():
    rows: list[tuple] = []
    warps = 8  # block (32, 8): warp w is threadIdx.y == w
    for j in range(0, 32, 8):
        for w in range(warps):
            rows.append(mem(0x10, {tx: X_BASE + 4 * ((w + j) * 32 + tx) for tx in range(32)}, warp=w))
            rows.append(
                mem(0x20, {tx: 4 * ((w + j) * 32 + tx) for tx in range(32)}, warp=w, space=SHARED, access=WRITE)
            )
    rows += [bar(0x28, w) for w in range(warps)]
    for j in range(0, 32, 8):
        for w in range(warps):
            rows.append(mem(0x30, {tx: 4 * (tx * 32 + w + j) for tx in range(32)}, warp=w, space=SHARED))
            rows.append(mem(0x40, {tx: DST_BASE + 4 * ((w + j) * 32 + tx) for tx in range(32)}, warp=w, access=WRITE))
    kernel = kernel_of(rows, block=(32, 8, 1), allocations=ALLOCATIONS)
    conflicts = [f for f in find_findings(kernel) if f["pattern"] == "bank-conflict"]
    assert [pcs(kernel, f) for f in conflicts] == [[0x30]]
    assert conflicts[0]["metrics"]["R_conf"] == 32.0
    assert conflicts[0]["waste"]["wavefronts"] == 31 * 32  # 32 warp reads, 31 extra wavefronts each
