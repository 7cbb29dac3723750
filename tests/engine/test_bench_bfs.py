"""benchmarks/engine.py's bfs pattern is the instruction stream of SHOC BFS's warp-centric kernel: each warp's levels
loads are broadcasts (one address, one sector), one vertex in eight is on the frontier and loads its edge bounds
(broadcasts) and its four neighbours' ids (one sector) and levels (four lanes, scattered)."""

from __future__ import annotations

import numpy as np
from engine_reference import engine_distributions
from test_bench_transpose import bench_module

from reuselens.analyzer.replay import analyze_records


def test_bfs_pattern_is_broadcasts_and_a_sparse_frontier():
    bench = bench_module()
    recs = bench.generate(64, "bfs")
    warps = 64 * 64 // 52  # 52 records a warp: 32 levels loads, 4 frontier vertices of 5 records
    assert len(recs) == warps // 8 * 8 * 52 + (warps % 8 > 0) * 8 * 52  # whole blocks of 8 warps
    levels = recs[recs["pc"] == 0x10]
    assert (levels["addr"] == levels["addr"][:, :1]).all() and (levels["active_mask"] == 0xFFFFFFFF).all()
    frontier = recs[np.isin(recs["pc"], [0x40, 0x50, 0x60])]
    assert (frontier["active_mask"] == 0xF).all() and (frontier["addr"][:, 4:] == 0).all()
    broadcasts = np.isin(recs["pc"], [0x10, 0x20, 0x30]).mean()
    assert broadcasts == 40 / 52
    blocks = int(recs["block"].max()) + 1
    launch = {"id": 0, "function_id": 0, "grid": [blocks, 1, 1], "block": [256, 1, 1]}
    allocations = [(bench.A, 1 << 30), (bench.B, 1 << 30), (bench.C, 1 << 30)]
    out = analyze_records([(launch, recs)], allocations=allocations)
    dist = engine_distributions(out["kernels"][0])
    assert dist[(0, 0x10)]["addresses"] == {1: len(levels)} and dist[(0, 0x10)]["sectors"] == {1: len(levels)}
    ids = int((recs["pc"] == 0x40).sum())
    assert dist[(0, 0x40)]["sectors"] == {1: ids} and dist[(0, 0x40)]["addresses"] == {4: ids}
