"""Results depend on record order only, never on the number of workers; launches merge by configuration."""

from __future__ import annotations

import json

import numpy as np
import pytest
from engine_records import BARRIER, BLOCK_EXIT, GLOBAL, LOCAL, MEM, SHARED

from reuselens.analyzer.replay import RECORD_DTYPE, analyze_records

A = 0x7F0000000000


def random_trace(seed: int, n: int = 4000, blocks: int = 12, warps: int = 4) -> np.ndarray:
    """Interleaved warps of several blocks: global (allocated and not), shared, local, wide, sub-word,
    atomics, barriers and block exits, with heavy address sharing so every label occurs."""
    rng = np.random.default_rng(seed)
    recs = np.zeros(n, dtype=RECORD_DTYPE)
    recs["type"] = MEM
    recs["block"] = rng.integers(0, blocks, n)
    recs["warp"] = rng.integers(0, warps, n)
    recs["pc"] = rng.integers(0, 24, n) * 16
    recs["function_id"] = 0
    kind = rng.integers(0, 10, n)
    recs["space"] = np.where(kind < 6, GLOBAL, np.where(kind < 9, SHARED, LOCAL))
    recs["access"] = rng.choice([1, 2, 3], n, p=[0.6, 0.3, 0.1])
    recs["size"] = rng.choice([1, 4, 8, 16], n, p=[0.1, 0.6, 0.2, 0.1])
    recs["active_mask"] = np.where(rng.random(n) < 0.8, 0xFFFFFFFF, rng.integers(1, 2**32, n))
    lanes = np.arange(32)
    base = np.where(rng.random(n) < 0.5, A, A + (1 << 24))  # half outside the allocation
    word = rng.integers(0, 2048, n)[:, None] + lanes[None, :] * rng.choice([0, 1, 2, 33], n)[:, None]
    offs = word * recs["size"][:, None].astype(np.int64)
    offs = offs - offs % np.maximum(recs["size"][:, None], 1)
    glob = base[:, None] + offs
    recs["addr"] = np.where(recs["space"][:, None] == GLOBAL, glob, offs % 8192)
    recs["addr"] = np.where((recs["active_mask"][:, None] >> lanes[None, :]) & 1, recs["addr"], 0)
    bar = rng.random(n) < 0.05
    recs["type"][bar] = BARRIER
    recs["space"][bar] = rng.choice([1, 2, 3], int(bar.sum()))
    ex = (rng.random(n) < 0.01) & ~bar
    recs["type"][ex] = BLOCK_EXIT
    return recs


def analyse(recs, workers, configs=((12, 1, 1),)):
    launches = [
        ({"id": i, "function_id": 0, "grid": list(g), "block": [128, 1, 1]}, recs) for i, g in enumerate(configs)
    ]
    return analyze_records(launches, workers=workers, allocations=[(A, 1 << 20)])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_and_many_workers_agree(seed):
    recs = random_trace(seed)
    one = analyse(recs, 1)
    labels = {e["label"] for e in one["kernels"][0]["edges"]}
    assert labels == {"cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid"}
    assert one["kernels"][0]["barriers"]
    for workers in (2, 3, 4, 7):
        many = analyse(recs, workers)
        assert many["kernels"] == one["kernels"]


def test_lane_bytes_are_conserved():
    recs = random_trace(5)
    k = analyse(recs, 4)["kernels"][0]
    mem = recs[recs["type"] == MEM]
    lanes = np.array([bin(int(m)).count("1") for m in mem["active_mask"]])
    total = int((lanes * mem["size"]).sum())
    assert sum(e["bytes"] for e in k["edges"]) == total == sum(n["bytes"] for n in k["nodes"])
    assert sum(n["executions"] for n in k["nodes"]) == len(mem)


def test_same_configuration_merges_and_others_stay_apart():
    recs = random_trace(7, n=500)
    out = analyse(recs, 2, configs=((12, 1, 1), (12, 1, 1), (24, 1, 1)))
    assert [k["launches"] for k in out["kernels"]] == [[0, 1], [2]]
    assert [k["grid"] for k in out["kernels"]] == [[12, 1, 1], [24, 1, 1]]
    assert out["kernels"][0]["records"] == 1000
    merged = {(e["from"], e["to"], e["label"]) for e in out["kernels"][0]["edges"]}
    # the second launch re-reads the first one's global data: cold with a prior-kernel origin
    assert any(e["prior_kernel"] for e in out["kernels"][0]["edges"])
    assert merged


def test_shadow_budget_is_enforced():
    recs = random_trace(1, n=200)
    with pytest.raises(RuntimeError, match="shadow memory budget of 0 MiB exceeded"):
        analyze_records(
            [({"id": 0, "function_id": 0, "grid": [12, 1, 1], "block": [128, 1, 1]}, recs)], shadow_budget_bytes=4096
        )


def feed(recs, workers, chunk):
    from reuselens.analyzer import _engine

    e = _engine.Engine(workers=workers)
    e.add_allocation(A, 1 << 20)
    e.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
    for s in range(0, len(recs), chunk):
        e.consume(recs[s : s + chunk])
    e.end_launch()
    return json.loads(e.to_json())["kernels"]


def test_batching_does_not_matter():
    recs = random_trace(11, n=3000)
    whole = feed(recs, 3, len(recs))
    assert feed(recs, 3, 7) == whole == feed(recs, 1, 1000)


@pytest.mark.parametrize("workers", [1, 4])
def test_first_malformed_record_is_reported_whatever_the_workers(workers):
    recs = random_trace(4, n=2000)
    recs["type"][recs["type"] == BLOCK_EXIT] = MEM  # keep the good part simple
    recs["space"][recs["type"] == MEM] = np.clip(recs["space"][recs["type"] == MEM], 1, 3)
    recs["size"][600] = 0
    # later errors, one in a piece dealt to worker 0 (records 1024-1087: piece 16) and one to worker 1
    recs["warp"][1030] = 31
    recs["warp"][1900] = 31
    with pytest.raises(RuntimeError, match="record 600 of launch 0: access size 0"):
        feed(recs, workers, len(recs))


def test_worker_count_is_capped_at_64():
    recs = random_trace(9, n=600)
    capped = json.loads(json.dumps(analyse(recs, 100)))
    assert capped["stats"]["workers"] == 64
    assert capped["kernels"] == analyse(recs, 1)["kernels"]


@pytest.mark.parametrize("workers", [1, 3])
def test_time_split_is_consistent(workers):
    """stats() splits consume()'s time per step: the slowest worker's share of a step is at most all workers'
    seconds in it and at least their mean."""
    from reuselens.analyzer import _engine

    e = _engine.Engine(workers=workers)
    e.add_allocation(A, 1 << 20)
    e.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
    e.consume(random_trace(5, n=20000))
    e.end_launch()
    s = e.stats()
    crit, cpu, wall = s["phase_seconds"], s["phase_cpu_seconds"], s["consume_seconds"]
    assert len(crit) == len(cpu) == 5
    assert wall > 0 and sum(crit) > 0
    for slowest, total in zip(crit, cpu):
        assert total / workers - 1e-9 <= slowest <= total + 1e-9
