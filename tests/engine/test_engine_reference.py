"""The engine against the sequential Python model of tests/engine/engine_reference.py on randomised traces:
every edge (origin, label, prior kernel, bytes, accesses, kinds, barrier-separated counts) and every barrier
span must agree exactly, for one worker and several."""

from __future__ import annotations

import pytest
from engine_reference import Reference, engine_edges, engine_spans
from test_engine_determinism import A, random_trace

from reuselens.analyzer.replay import analyze_records


@pytest.mark.parametrize("seed", [21, 22, 23, 24])
@pytest.mark.parametrize("workers", [1, 3])
def test_engine_matches_reference_model(seed, workers):
    first = random_trace(seed, n=1500)
    second = random_trace(seed + 100, n=1500)
    second["function_id"] = 1  # another kernel: its cold edges must name the first as prior kernel
    launches = [
        ({"id": 0, "function_id": 0, "grid": [12, 1, 1], "block": [128, 1, 1]}, first),
        ({"id": 1, "function_id": 1, "grid": [12, 1, 1], "block": [100, 1, 1]}, second),
    ]
    second["warp"] %= 4  # 100 threads = 4 warps, the last one partial
    out = analyze_records(launches, workers=workers, allocations=[(A, 1 << 20)])
    ref = Reference()
    ref.run_launch(0, 0, 128, first)
    ref.run_launch(1, 1, 100, second)
    for i, kernel in enumerate(out["kernels"]):
        expected = {k: dict(v) for k, v in ref.edges[i].items()}
        assert engine_edges(kernel) == expected
        assert engine_spans(kernel) == dict(ref.spans[i])
    assert any(key[3] for key in ref.edges[1])  # the prior-kernel path was exercised
    assert any(v["synced"] for v in ref.edges[0].values())  # and the barrier path


@pytest.mark.parametrize("seed", [31, 32])
def test_distributions_match_reference_model(seed):
    from engine_reference import distributions, engine_distributions

    recs = random_trace(seed, n=1500)
    out = analyze_records(
        [({"id": 0, "function_id": 0, "grid": [12, 1, 1], "block": [128, 1, 1]}, recs)],
        workers=2,
        allocations=[(A, 1 << 20)],
    )
    expected = {pc: {k: dict(v) for k, v in d.items()} for pc, d in distributions(recs).items()}
    assert engine_distributions(out["kernels"][0]) == expected
