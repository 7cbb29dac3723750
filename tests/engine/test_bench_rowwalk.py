"""benchmarks/engine.py's rowwalk pattern is the instruction stream of PolyBench mvt's first kernel: thread i walks
row i of an n x n matrix, so a warp's loads of A have their lanes a row (4n bytes) apart, one sector each, and its
loads of y[j] are broadcasts (one address, one sector)."""

from __future__ import annotations

import numpy as np
from engine_reference import engine_distributions
from test_bench_transpose import bench_module

from reuselens.analyzer.replay import analyze_records


def test_rowwalk_pattern_is_row_walks_and_broadcasts():
    bench = bench_module()
    recs = bench.generate(64, "rowwalk")
    n = bench.MATVEC_N
    warps = n // 32
    steps = 64 * 64 // (2 * warps)
    assert len(recs) == 2 * warps * steps
    rows = recs[recs["pc"] == 0x10]
    assert (np.diff(rows["addr"].astype(np.int64), axis=1) == 4 * n).all()  # lanes a row apart
    first = rows["addr"][:warps, 0].astype(np.int64)
    assert (rows["addr"][warps : 2 * warps, 0].astype(np.int64) - first == 4).all()  # step j + 1: the next column
    vector = recs[recs["pc"] == 0x20]
    assert (vector["addr"] == vector["addr"][:, :1]).all()
    blocks = int(recs["block"].max()) + 1
    launch = {"id": 0, "function_id": 0, "grid": [blocks, 1, 1], "block": [256, 1, 1]}
    out = analyze_records([(launch, recs)], allocations=[(bench.A, 1 << 30), (bench.B, 1 << 30)])
    dist = engine_distributions(out["kernels"][0])
    assert dist[(0, 0x10)]["sectors"] == {32: len(rows)} and dist[(0, 0x10)]["addresses"] == {32: len(rows)}
    assert dist[(0, 0x20)]["sectors"] == {1: len(vector)} and dist[(0, 0x20)]["addresses"] == {1: len(vector)}
