"""benchmarks/engine.py's scalars pattern: each warp's loads are broadcasts (one address, one sector) at random
elements of the whole table, and its store is coalesced; what the broadcast prefetch of the global step is measured
on (docs/engine.md, "Irregular access")."""

from __future__ import annotations

import numpy as np
from engine_reference import engine_distributions
from test_bench_transpose import bench_module

from reuselens.analyzer.replay import analyze_records


def test_scalars_pattern_is_warp_uniform_loads_over_the_whole_table():
    bench = bench_module()
    footprint = 1 << 20
    recs = bench.generate(64, "scalars", footprint_mb=1)
    loads, stores = recs[recs["pc"] == 0x10], recs[recs["pc"] == 0x20]
    assert len(loads) == 7 * len(stores) and len(recs) == 64 * 8 * 8
    assert (loads["addr"] == loads["addr"][:, :1]).all()  # every lane on its warp's address
    assert (loads["addr"][:, 0] >= bench.A).all() and (loads["addr"][:, 0] < bench.A + footprint).all()
    assert len(np.unique(loads["addr"][:, 0])) > len(loads) // 2  # random elements, not one per block or per warp
    assert (np.diff(stores["addr"].astype(np.int64), axis=1) == 4).all()
    launch = {"id": 0, "function_id": 0, "grid": [64, 1, 1], "block": [256, 1, 1]}
    allocations = [(bench.A, 1 << 30), (bench.B, 1 << 30), (bench.C, 1 << 30)]
    dist = engine_distributions(analyze_records([(launch, recs)], allocations=allocations)["kernels"][0])
    assert dist[(0, 0x10)]["addresses"] == {1: len(loads)} and dist[(0, 0x10)]["sectors"] == {1: len(loads)}
    assert dist[(0, 0x20)]["sectors"] == {4: len(stores)}
