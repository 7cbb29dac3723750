"""benchmarks/engine.py's sgemm pattern: the recorded cuBLAS SGEMM slice (tests/data/real_launches) copied into one
grid of resident blocks whose records interleave, the slice's records unchanged but for their block and their global
addresses, which move into the benchmark's allocations with their offsets within 2 MiB; what the PyTorch loop's
engine cost is measured on (docs/engine.md, "Benchmark")."""

from __future__ import annotations

import numpy as np
from engine_reference import engine_distributions
from test_bench_transpose import bench_module

from reuselens.analyzer.replay import analyze_records

GLOBAL, SHARED = 1, 2


def test_sgemm_pattern_is_the_recorded_slice_copied_block_by_block():
    bench = bench_module()
    meta, one = bench.sgemm_slice()
    per_copy = int(one["block"].max()) + 1
    recs = bench.generate(3 * len(one) * bench.SGEMM_RESIDENT // per_copy // 64, "sgemm")
    copies = len(recs) // len(one)
    assert copies * len(one) == len(recs) and copies > bench.SGEMM_RESIDENT // per_copy  # more than one wave
    assert bench.threads_per_block("sgemm") == meta["block"][0] == 64
    wave = bench.SGEMM_RESIDENT // per_copy
    first = recs[: wave * len(one)]
    # Record i of the slice issued by every copy of the first wave in turn: blocks interleave one by one.
    assert (first["pc"][:wave] == one["pc"][0]).all() and len(np.unique(first["block"][:wave])) == wave
    for copy in (0, 5, copies - 1):
        mine = recs[(recs["block"] // per_copy) == copy]
        assert (mine["block"] - copy * per_copy == one["block"]).all()
        for field in ("type", "space", "access", "size", "warp", "active_mask", "pc"):
            assert (mine[field] == one[field]).all()
        shared = mine["space"] == SHARED
        assert (mine["addr"][shared] == one["addr"][shared]).all()
    globals_ = recs[(recs["type"] == 1) & (recs["space"] == GLOBAL)]
    lanes = globals_["addr"][globals_["addr"] != 0]
    assert (lanes >= bench.A).all() and (lanes < bench.A + (1 << 30)).all()
    # The same shapes as recorded: per PC, the distributions of one copy are the slice's.
    launch = {"id": 0, "function_id": 0, "grid": [per_copy, 1, 1], "block": meta["block"]}
    allocations = [(bench.A, 1 << 30)]
    mine = recs[recs["block"] < per_copy]
    moved = engine_distributions(analyze_records([(launch, mine)], allocations=allocations)["kernels"][0])
    recorded = engine_distributions(
        analyze_records([(launch, one)], allocations=[tuple(a) for a in meta["allocations"]])["kernels"][0]
    )
    assert moved == recorded
