"""Shared-memory wavefronts (paper 3.2.2 lane-group rule) and barrier execution / span counts."""

from __future__ import annotations

import pytest
from engine_records import BAR_BLOCK, BAR_MBARRIER, BAR_WARP, SHARED, WRITE, barrier, block_exit, mem
from test_engine_labels import edge, node, run


@pytest.mark.parametrize("stride_words,ways", [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1), (3, 1)])
def test_bank_conflict_degree(stride_words, ways):
    # lane i reads word i * stride: banks (i * stride) & 31 collide gcd(stride, 32) ways
    k = run([mem(0x10, [4 * i * stride_words for i in range(32)], space=SHARED)])
    n = node(k, 0x10)
    assert n["wavefronts"] == [[ways, 1]]
    assert n["wavefronts_ideal"] == [[1, 1]]
    assert n["addresses"] == [[32, 1]]
    assert n["sectors"] == []


def test_broadcast_is_one_wavefront():
    n = node(run([mem(0x10, [64] * 32, space=SHARED)]), 0x10)
    assert n["wavefronts"] == [[1, 1]] and n["addresses"] == [[1, 1]]


def test_multicast_two_words_same_bank():
    # half the lanes read word 0, half word 32: one bank, two distinct words
    n = node(run([mem(0x10, [0 if i < 16 else 128 for i in range(32)], space=SHARED)]), 0x10)
    assert n["wavefronts"] == [[2, 1]] and n["addresses"] == [[2, 1]] and n["wavefronts_ideal"] == [[1, 1]]


@pytest.mark.parametrize(
    "size,stride,wave,ideal",
    [
        (8, 8, 2, 2),  # 16 lanes per group, 32 distinct words per group, conflict-free
        (16, 16, 4, 4),  # 8 lanes per group
        (8, 16, 4, 2),  # 8 B at a 16 B stride: each group uses half the banks twice
        (16, 32, 8, 4),  # 16 B at a 32 B stride: 2-way inside each 8-lane group
        (8, 0, 2, 2),  # all lanes on one 8-byte word pair: broadcast, but still one pass per lane group
    ],
)
def test_wide_access_lane_groups(size, stride, wave, ideal):
    n = node(run([mem(0x10, [i * stride for i in range(32)], space=SHARED, size=size)]), 0x10)
    assert n["wavefronts"] == [[wave, 1]]
    assert n["wavefronts_ideal"] == [[ideal, 1]]


def test_lane_groups_skip_inactive_groups():
    # only lanes 0-7 active with 16-byte accesses: one group of eight lanes
    n = node(run([mem(0x10, {i: 16 * i for i in range(8)}, space=SHARED, size=16)]), 0x10)
    assert n["wavefronts"] == [[1, 1]] and n["lanes"] == [[8, 1]]


def producer_consumer(with_barrier: bool, kind: int = BAR_BLOCK):
    """Warp 0 writes shared[0..31], (barrier), warp 1 reads them."""
    rows = [mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE, warp=0)]
    if with_barrier:
        rows += [barrier(0x18, warp=0, kind=kind), barrier(0x18, warp=1, kind=kind)]
    rows.append(mem(0x20, [4 * i for i in range(32)], space=SHARED, warp=1))
    return run(rows, block=(64, 1, 1))


def test_barrier_spanned_by_cross_warp_edge():
    k = producer_consumer(True)
    e = edge(k, 0x20, 0x10, "block")
    assert e["accesses"] == 32 and e["synced"] == 32 and e["synced_bytes"] == 128 and e["raw"] == 32
    (b,) = k["barriers"]
    assert (b["pc"], b["kind"], b["executions"]) == (0x18, "block", 2)
    assert b["spanned_cross_thread_edges"] == 1 and b["spanned_accesses"] == 32 and b["spanned_bytes"] == 128
    ids = {n["id"]: n["pc"] for n in k["nodes"]}
    assert [(ids[s["from"]], ids[s["to"]], s["label"]) for s in b["spans"]] == [(0x20, 0x10, "block")]


def test_missing_barrier_leaves_edge_unsynced():
    e = edge(producer_consumer(False), 0x20, 0x10, "block")
    assert e["accesses"] == 32 and e["synced"] == 0


def test_warp_barrier_does_not_order_warps():
    k = producer_consumer(True, kind=BAR_WARP)
    assert edge(k, 0x20, 0x10, "block")["synced"] == 0
    assert k["barriers"][0]["kind"] == "warp" and k["barriers"][0]["spanned_cross_thread_edges"] == 0


def test_mbarrier_is_counted_only():
    k = producer_consumer(True, kind=BAR_MBARRIER)
    assert k["barriers"][0]["kind"] == "mbarrier" and k["barriers"][0]["executions"] == 2
    assert edge(k, 0x20, 0x10, "block")["synced"] == 0


def test_syncwarp_orders_lanes_of_one_warp():
    # lane i writes word i, __syncwarp, lane i reads word i ^ 1 (another lane of the same warp)
    rows = [
        mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE),
        barrier(0x18, kind=BAR_WARP),
        mem(0x20, [4 * (i ^ 1) for i in range(32)], space=SHARED),
    ]
    k = run(rows)
    e = edge(k, 0x20, 0x10, "warp_diff_inst")
    assert e["accesses"] == 32 and e["synced"] == 32
    assert k["barriers"][0]["spanned_accesses"] == 32


def test_barrier_after_both_accesses_is_not_spanned():
    rows = [
        mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE, warp=0),
        mem(0x20, [4 * i for i in range(32)], space=SHARED, warp=1),
        barrier(0x30, warp=0),
        barrier(0x30, warp=1),
    ]
    k = run(rows, block=(64, 1, 1))
    assert edge(k, 0x20, 0x10, "block")["synced"] == 0
    assert k["barriers"][0]["executions"] == 2 and k["barriers"][0]["spanned_cross_thread_edges"] == 0


def test_global_cross_warp_edge_spans_barrier_too():
    A = 0x7F0000000000
    rows = [
        mem(0x10, [A + 4 * i for i in range(32)], access=WRITE, warp=0),
        barrier(0x18, warp=0),
        barrier(0x18, warp=1),
        mem(0x20, [A + 4 * i for i in range(32)], warp=1),
    ]
    k = run(rows, block=(64, 1, 1))
    assert edge(k, 0x20, 0x10, "block")["synced"] == 32


def test_partial_exit_keeps_the_block_alive():
    # lanes 16-31 of both warps return early; lanes 0-15 of warp 1 then read what warp 0 wrote
    rows = [
        mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE, warp=0),
        block_exit(warp=0, lanes=0xFFFF0000),
        block_exit(warp=1, lanes=0xFFFF0000),
        mem(0x20, {i: 4 * i for i in range(16)}, space=SHARED, warp=1),
    ]
    k = run(rows, block=(64, 1, 1))
    assert edge(k, 0x20, 0x10, "block")["accesses"] == 16


def test_full_exit_drops_block_state():
    rows = [
        mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE, warp=0),
        block_exit(warp=0),
        block_exit(warp=1, lanes=0xFFFF),
        block_exit(warp=1, lanes=0xFFFF0000),
        mem(0x20, [4 * i for i in range(32)], space=SHARED, warp=1),
    ]  # a new block reusing the index
    k = run(rows, block=(64, 1, 1))
    assert {e["label"] for e in k["edges"]} == {"cold"}


def test_partial_last_warp_exits_with_its_real_lanes():
    # 40 threads: warp 1 has 8 lanes, so an exit of lanes 0-7 completes it
    rows = [
        mem(0x10, [4 * i for i in range(32)], space=SHARED, access=WRITE, warp=0),
        block_exit(warp=0),
        block_exit(warp=1, lanes=0xFF),
        mem(0x20, [4 * i for i in range(32)], space=SHARED, warp=0),
    ]
    k = run(rows, block=(40, 1, 1))
    assert {e["label"] for e in k["edges"]} == {"cold"}
