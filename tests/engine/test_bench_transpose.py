"""benchmarks/engine.py's transpose pattern is the instruction stream of cuda-samples transposeNoBankConflicts: its
column reads out of the padded tile (lanes 33 words apart, the shared columns' closed form) are conflict-free, one
wavefront each, while its global loads and stores are coalesced, four sectors per warp."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from engine_reference import engine_distributions

from reuselens.analyzer.replay import analyze_records

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "engine.py"


def bench_module():
    spec = importlib.util.spec_from_file_location("engine_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_transpose_pattern_reads_conflict_free_columns():
    bench = bench_module()
    recs = bench.generate(64, "transpose")
    assert len(recs) == 30 * 8 * 17  # 64 * 8 // 17 blocks of 8 warps, 17 instructions each
    column = recs[recs["pc"] == 0x40]
    assert (np.diff(column["addr"].astype(np.int64), axis=1) == 4 * 33).all()
    launch = {"id": 0, "function_id": 0, "grid": [30, 1, 1], "block": [256, 1, 1]}
    out = analyze_records([(launch, recs)], allocations=[(bench.A, 1 << 30), (bench.B, 1 << 30)])
    dist = engine_distributions(out["kernels"][0])
    column_reads = 30 * 8 * 4
    assert dist[(0, 0x40)]["wavefronts"] == {1: column_reads}  # padded: every bank once
    assert dist[(0, 0x40)]["addresses"] == {32: column_reads}
    assert dist[(0, 0x10)]["sectors"] == {4: column_reads} and dist[(0, 0x50)]["sectors"] == {4: column_reads}
