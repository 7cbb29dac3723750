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


def with_gathers_and_tiles(recs, seed: int):
    """The random trace with a fifth of its global records turned into gathers (each lane at its own random,
    size-aligned offset) and a tenth of its whole-warp ones into tile rows (groups of 2-16 lanes on one stride, the
    groups on another), so that the stride test meets both of its branches and what lies beyond them."""
    import numpy as np

    rng = np.random.default_rng(seed + 7)
    lanes = np.arange(32)
    active = (recs["active_mask"][:, None] >> lanes[None, :]) & 1
    size = np.maximum(recs["size"], 1).astype(np.int64)[:, None]
    global_mem = (recs["type"] == 1) & (recs["space"] == 1)
    gather = global_mem & (rng.random(len(recs)) < 0.2)
    scattered = A + rng.integers(0, 4096, (len(recs), 32)) * size
    recs["addr"] = np.where(gather[:, None] & (active == 1), scattered, recs["addr"])
    tile = global_mem & ~gather & (recs["active_mask"] == 0xFFFFFFFF) & (rng.random(len(recs)) < 0.1)
    group = rng.choice([2, 4, 8, 16], len(recs))[:, None]
    rows = A + ((lanes[None, :] % group) + (lanes[None, :] // group) * 1024) * size
    recs["addr"] = np.where(tile[:, None], rows, recs["addr"])
    # a 4 x 4 x 2 block's warp, its x = 3 column masked off at the grid's edge (planes 4096 elements apart), and
    # compacted writes (the k-th active lane of a sparse mask at slot k): regular both, on partial masks
    planes = global_mem & ~gather & ~tile & (rng.random(len(recs)) < 0.1)
    x, y, z = lanes % 4, lanes // 4 % 4, lanes // 16
    recs["active_mask"] = np.where(planes, np.uint32(0x77777777), recs["active_mask"])
    block3d = A + (x + 64 * y + 4096 * z)[None, :] * size
    recs["addr"] = np.where(planes[:, None] & (x < 3)[None, :], block3d, np.where(planes[:, None], 0, recs["addr"]))
    compact = global_mem & ~gather & ~tile & ~planes & (rng.random(len(recs)) < 0.1)
    sparse = rng.integers(1, 2**32, len(recs), dtype=np.uint64).astype(np.uint32)
    recs["active_mask"] = np.where(compact, sparse, recs["active_mask"])
    on = (recs["active_mask"][:, None] >> lanes[None, :]) & 1
    rank = np.cumsum(on, axis=1) - 1
    recs["addr"] = np.where(compact[:, None], np.where(on == 1, A + rank * size, 0), recs["addr"])
    return recs


@pytest.mark.parametrize("seed", [31, 32])
def test_distributions_match_reference_model(seed):
    from engine_reference import distributions, engine_distributions, irregular_counts

    recs = with_gathers_and_tiles(random_trace(seed, n=1500), seed)
    out = analyze_records(
        [({"id": 0, "function_id": 0, "grid": [12, 1, 1], "block": [128, 1, 1]}, recs)],
        workers=2,
        allocations=[(A, 1 << 20)],
    )
    expected = {pc: {k: dict(v) for k, v in d.items()} for pc, d in distributions(recs).items()}
    assert engine_distributions(out["kernels"][0]) == expected
    irregular = {(n["function_id"], n["pc"]): n["irregular"] for n in out["kernels"][0]["nodes"] if n.get("irregular")}
    assert irregular == irregular_counts(recs)
    regular = recs[(recs["type"] == 1) & (recs["space"] == 1) & (recs["active_mask"] == 0x77777777)]
    assert len(regular) and not irregular_counts(regular)  # the edge of a 3-D block is on its strides
    assert irregular  # the random trace has gathers, and strided records beside them (the reference's other case)
