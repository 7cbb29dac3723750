"""Topological Distance labels, edges and shadow semantics on hand-derivable record sequences (paper 3.1-3.2)."""

from __future__ import annotations

import numpy as np
import pytest
from engine_records import ASYNC, ATOMIC, LOCAL, SHARED, WRITE, mem, records, warp_addrs

from reuselens.analyzer.replay import RECORD_DTYPE, analyze_records

A = 0x7F0000000000  # a global allocation


def run(rows, *, grid=(1, 1, 1), block=(32, 1, 1), workers=1, allocations=((A, 1 << 20),)):
    out = analyze_records(
        [({"id": 0, "function_id": 0, "grid": grid, "block": block}, records(rows))],
        workers=workers,
        allocations=allocations,
    )
    assert len(out["kernels"]) == 1
    return out["kernels"][0]


def pcs(kernel):
    return {n["id"]: n["pc"] for n in kernel["nodes"]}


def edges(kernel):
    """{(from_pc, to_pc or None, label): (bytes, accesses)}"""
    ids = pcs(kernel)
    return {(ids[e["from"]], ids[e["to"]], e["label"]): (e["bytes"], e["accesses"]) for e in kernel["edges"]}


def edge(kernel, frm, to, label):
    ids = pcs(kernel)
    (e,) = [e for e in kernel["edges"] if (ids[e["from"]], ids[e["to"]], e["label"]) == (frm, to, label)]
    return e


def node(kernel, pc):
    (n,) = [n for n in kernel["nodes"] if n["pc"] == pc]
    return n


def listing2_rows(order="pc-major"):
    """The paper's Listing 2 on a[] with blockDim = 64, two blocks, issued in lock step (pc, block, warp)."""
    index = {
        0x10: lambda g: g,
        0x20: lambda g: g,
        0x30: lambda g: g & ~31,
        0x40: lambda g: g ^ 1,
        0x50: lambda g: g ^ 32,
        0x60: lambda g: g ^ 64,
    }
    rows = []
    for pc, f in index.items():
        for b in range(2):
            for w in range(2):
                rows.append(mem(pc, [A + 4 * f(b * 64 + w * 32 + lane) for lane in range(32)], warp=w, block=b))
    return rows


def test_listing2_every_label():
    # GIVEN Listing 2 (section 3.1) issued in lock step; WHEN analysed; THEN each line carries its annotated label
    k = run(listing2_rows(), grid=(2, 1, 1), block=(64, 1, 1))
    assert edges(k) == {
        (0x10, None, "cold"): (512, 128),
        (0x20, 0x10, "thread"): (512, 128),
        (0x30, 0x20, "thread"): (16, 4),  # lane 0 of each warp re-reads its own a[gid]
        (0x30, 0x30, "warp_same_inst"): (496, 124),  # the other lanes: served by lane 0 of the same issue
        (0x40, 0x20, "warp_diff_inst"): (496, 124),
        (0x40, 0x30, "warp_diff_inst"): (16, 4),  # a[base] was last read by lane 31 at 0x30
        (0x50, 0x40, "block"): (512, 128),
        (0x60, 0x50, "grid"): (512, 128),
    }
    assert all(e["rar"] == e["accesses"] for e in k["edges"] if e["label"] != "cold")
    n = node(k, 0x30)
    assert n["lanes"] == [[32, 4]] and n["addresses"] == [[1, 4]] and n["sectors"] == [[1, 4]]
    assert n["sectors_ideal"] == [[4, 4]] and n["bytes"] == 512 and n["executions"] == 4
    assert node(k, 0x10)["sectors"] == [[4, 4]] and node(k, 0x10)["type"] == "read"


def test_kinds_raw_war_waw():
    rows = [
        mem(0x10, warp_addrs(A), access=WRITE),
        mem(0x20, warp_addrs(A)),
        mem(0x30, warp_addrs(A), access=WRITE),
        mem(0x40, warp_addrs(A), access=WRITE),
    ]
    k = run(rows)
    assert edge(k, 0x20, 0x10, "thread")["raw"] == 32
    assert edge(k, 0x30, 0x20, "thread")["war"] == 32
    assert edge(k, 0x40, 0x30, "thread")["waw"] == 32
    assert node(k, 0x10)["type"] == "write"


def test_wide_and_subword_granules():
    # 8-byte lanes cover two 4-byte granules each; 1-byte lanes hitting one word share its granule
    rows = [
        mem(0x10, warp_addrs(A, 8), size=8),
        mem(0x20, warp_addrs(A, 8), size=8),
        mem(0x30, [A + 4096 + i for i in range(4)], size=1),
    ]
    k = run(rows)
    assert edges(k)[(0x10, None, "cold")] == (256, 64)
    assert edges(k)[(0x20, 0x10, "thread")] == (256, 64)
    assert edges(k)[(0x30, None, "cold")] == (1, 1)
    assert edges(k)[(0x30, 0x30, "warp_same_inst")] == (3, 3)
    assert node(k, 0x30)["addresses"] == [[4, 1]] and node(k, 0x30)["sectors"] == [[1, 1]]
    assert node(k, 0x10)["sectors"] == [[8, 1]] and node(k, 0x10)["sectors_ideal"] == [[8, 1]]


def test_uncoalesced_sectors_and_partial_warp():
    rows = [mem(0x10, warp_addrs(A, 128)), mem(0x10, warp_addrs(A + 8192, 4, lanes=7))]
    n = node(run(rows), 0x10)
    assert n["lanes"] == [[7, 1], [32, 1]]
    assert n["sectors"] == [[1, 1], [32, 1]]
    assert n["sectors_ideal"] == [[1, 1], [4, 1]]


def test_unaligned_footprint_counts_both_sectors():
    # a 16-byte access starting 8 bytes before a sector boundary touches two sectors
    n = node(run([mem(0x10, {0: A + 24}, size=16)]), 0x10)
    assert n["sectors"] == [[2, 1]] and n["sectors_ideal"] == [[1, 1]]


def test_shared_memory_is_per_block():
    # GIVEN two blocks writing then reading the same shared offsets
    rows = []
    for b in (0, 1):
        rows.append(mem(0x10, warp_addrs(0), space=SHARED, access=WRITE, block=b))
    for b in (0, 1):
        rows.append(mem(0x20, warp_addrs(0), space=SHARED, block=b, warp=1))
    k = run(rows, grid=(2, 1, 1), block=(64, 1, 1))
    # THEN block 1's write is cold (not grid) and each block's read is intra-block
    assert edges(k) == {(0x10, None, "cold"): (256, 64), (0x20, 0x10, "block"): (256, 64)}
    assert edge(k, 0x20, 0x10, "block")["raw"] == 64


def test_local_memory_is_per_thread():
    rows = [
        mem(0x10, [0] * 32, space=LOCAL, access=WRITE),
        mem(0x20, [0] * 32, space=LOCAL),
        mem(0x10, [0] * 32, space=LOCAL, access=WRITE, warp=1),
    ]
    k = run(rows, block=(64, 1, 1))
    assert edges(k) == {(0x10, None, "cold"): (256, 64), (0x20, 0x10, "thread"): (128, 32)}


def test_cross_launch_prior_kernel():
    w = records([mem(0x10, warp_addrs(A), access=WRITE, fid=0)])
    r = records(
        [
            mem(0x80, warp_addrs(A, lanes=16), fid=1),
            mem(0x90, warp_addrs(A, lanes=16), fid=1),
            mem(0xA0, warp_addrs(A + 4096), fid=1),
        ]
    )
    out = analyze_records(
        [
            ({"id": 0, "function_id": 0, "grid": [1, 1, 1], "block": [32, 1, 1]}, w),
            ({"id": 1, "function_id": 1, "grid": [1, 1, 1], "block": [32, 1, 1]}, r),
        ],
        allocations=[(A, 1 << 20)],
    )
    k = out["kernels"][1]
    assert k["kernel_function_id"] == 1 and k["launches"] == [1]
    cold = [e for e in k["edges"] if e["label"] == "cold"]
    prior = [e for e in cold if e["prior_kernel"]]
    assert len(prior) == 1 and prior[0]["bytes"] == 64 and prior[0]["raw"] == 16
    assert prior[0]["prior_kernel"] == {"kernel_function_id": 0, "function_id": 0, "pc": 0x10, "bytes": 64}
    fresh = [e for e in cold if not e["prior_kernel"]]
    assert len(fresh) == 1 and fresh[0]["bytes"] == 128
    assert edges(k)[(0x90, 0x80, "thread")] == (64, 16)


def test_unknown_addresses_match_allocated_ones():
    rows = listing2_rows()
    with_alloc = run(rows, grid=(2, 1, 1), block=(64, 1, 1))
    without = run(rows, grid=(2, 1, 1), block=(64, 1, 1), allocations=())
    assert with_alloc == without


def test_cp_async_pair():
    rows = [
        mem(0x100, warp_addrs(A, 16), size=16, flags=ASYNC),
        mem(0x101, warp_addrs(0, 16), space=SHARED, access=WRITE, size=16, flags=ASYNC),
        mem(0x200, warp_addrs(0, 16), space=SHARED, size=16),
    ]
    k = run(rows)
    g, s = node(k, 0x100), node(k, 0x101)
    assert (g["space"], g["type"], g["async_copy"]) == ("global", "read", True)
    assert (s["space"], s["type"], s["async_copy"]) == ("shared", "write", True)
    assert edges(k) == {
        (0x100, None, "cold"): (512, 128),
        (0x101, None, "cold"): (512, 128),
        (0x200, 0x101, "thread"): (512, 128),
    }
    assert edge(k, 0x200, 0x101, "thread")["raw"] == 128
    assert g["sectors"] == [[16, 1]] and s["wavefronts"] == [[4, 1]] and s["wavefronts_ideal"] == [[4, 1]]


def test_atomics_on_one_address():
    k = run([mem(0x10, [A] * 32, access=ATOMIC), mem(0x10, [A] * 32, access=ATOMIC)])
    n = node(k, 0x10)
    assert n["type"] == "atomic" and n["addresses"] == [[1, 2]]
    same = edge(k, 0x10, 0x10, "warp_same_inst")
    assert same["accesses"] == 62 and same["waw"] == 62
    diff = edge(k, 0x10, 0x10, "warp_diff_inst")  # lane 0 of the 2nd issue: lane 31 of the 1st touched it last
    assert diff["accesses"] == 1 and diff["waw"] == 1
    assert not any(e["label"] == "thread" for e in k["edges"])
    assert edges(k)[(0x10, None, "cold")] == (4, 1)


def test_grid_label_only_across_blocks():
    rows = [mem(0x10, warp_addrs(A), block=0), mem(0x20, warp_addrs(A), block=3)]
    k = run(rows, grid=(4, 1, 1))
    assert edges(k)[(0x20, 0x10, "grid")] == (128, 32)


def test_unknown_record_is_rejected():
    bad = list(mem(0x10, warp_addrs(A)))
    bad[1] = 9  # space
    with pytest.raises(RuntimeError, match="unknown memory space 9"):
        run([tuple(bad)])


def test_one_record_with_many_distinct_origins():
    # 32 stores at 32 PCs, then one gather whose lanes each meet another store: 32 edges from one record
    rows = [mem(0x1000 + 16 * i, {i: A + 4 * i}, access=WRITE) for i in range(32)]
    rows.append(mem(0x2000, warp_addrs(A)))
    k = run(rows)
    gather = [e for e in k["edges"] if pcs(k)[e["from"]] == 0x2000]
    assert len(gather) == 32 and all(e["label"] == "thread" and e["raw"] == 1 for e in gather)
    # the first record a launch sees can already carry many cold edges with prior-kernel origins
    again = analyze_records(
        [
            ({"id": 0, "function_id": 0, "grid": [1, 1, 1], "block": [32, 1, 1]}, records(rows[:32])),
            (
                {"id": 1, "function_id": 1, "grid": [1, 1, 1], "block": [32, 1, 1]},
                records([mem(0x10, warp_addrs(A), fid=1)]),
            ),
        ],
        workers=2,
    )
    assert len([e for e in again["kernels"][1]["edges"] if e["prior_kernel"]]) == 32


@pytest.mark.parametrize("workers", [1, 3])
def test_a_cp_async_global_half_with_no_lane_is_one_execution_and_no_access(workers):
    """The collector leaves a zero-fill cp.async's lanes (null source) out of the global half, so a warp whose lanes
    were all zero fills leaves a global record with no lane (docs/trace-format.md): one execution of its
    instruction, as ncu counts LDGSTS instructions, but no request (ncu counts none) and no access, so no edge;
    the lanes of the next execution are still cold misses."""
    base = 0x7F0000000000
    recs = np.zeros(3, dtype=RECORD_DTYPE)
    recs["type"], recs["space"], recs["access"], recs["size"], recs["flags"] = 1, 1, 1, 16, 1
    recs["pc"] = 32
    recs["block"] = [0, 1, 2]
    recs["active_mask"] = [0, 0x000FFFFF, 0]
    recs["addr"][1][:20] = base + 16 * np.arange(20)
    launch = {"id": 0, "function_id": 0, "grid": [3, 1, 1], "block": [32, 1, 1]}
    kernel = analyze_records([(launch, recs)], workers=workers, allocations=[(base, 1 << 16)])["kernels"][0]
    node = kernel["nodes"][1]
    assert node["executions"] == 3 and node["bytes"] == 20 * 16
    assert node["lanes"] == [[0, 2], [20, 1]]
    assert node["sectors"] == node["sectors_ideal"] == [[10, 1]] and node["addresses"] == [[20, 1]]
    assert [(e["label"], e["accesses"]) for e in kernel["edges"]] == [("cold", 80)]
