"""Results depend on record order only, never on the number of workers; a kernel's launches merge into one
entry whatever their configurations, or one entry per configuration when split."""

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


def analyse(recs, workers, configs=((12, 1, 1),), split=False):
    launches = [
        ({"id": i, "function_id": 0, "grid": list(g), "block": [128, 1, 1]}, recs) for i, g in enumerate(configs)
    ]
    return analyze_records(launches, workers=workers, allocations=[(A, 1 << 20)], split_configurations=split)


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


def test_split_configurations_keep_one_entry_per_configuration():
    recs = random_trace(7, n=500)
    out = analyse(recs, 2, configs=((12, 1, 1), (12, 1, 1), (24, 1, 1)), split=True)
    assert [k["launches"] for k in out["kernels"]] == [[0, 1], [2]]
    assert [k["grid"] for k in out["kernels"]] == [[12, 1, 1], [24, 1, 1]]
    assert [len(k["configurations"]) for k in out["kernels"]] == [1, 1]
    assert out["kernels"][0]["records"] == 1000
    # the second launch re-reads the first one's global data: cold with a prior-kernel origin
    assert any(e["prior_kernel"] for e in out["kernels"][0]["edges"])


def test_a_kernels_launches_merge_whatever_their_grids():
    recs = random_trace(7, n=500)
    out = analyse(recs, 2, configs=((12, 1, 1), (12, 1, 1), (24, 1, 1)))
    (kernel,) = out["kernels"]
    assert kernel["launches"] == [0, 1, 2] and kernel["records"] == 1500
    assert "grid" not in kernel and "block" not in kernel  # several configurations: only the list says which
    assert [(c["grid"], c["launches"], c["records"]) for c in kernel["configurations"]] == [
        ([12, 1, 1], [0, 1], 1000),
        ([24, 1, 1], [2], 500),
    ]
    one = analyse(recs, 1, configs=((12, 1, 1), (12, 1, 1)))["kernels"][0]
    assert one["grid"] == [12, 1, 1] and len(one["configurations"]) == 1


def _by_pc(kernel):
    """Nodes, edges and barrier spans keyed by (function, pc) instead of the entry's dense node ids."""
    pcs = {n["id"]: (n["function_id"], n["pc"]) for n in kernel["nodes"]}
    nodes = {pcs[n["id"]]: n for n in kernel["nodes"]}
    edges = {}
    for e in kernel["edges"]:
        origin = e["prior_kernel"] and (e["prior_kernel"]["function_id"], e["prior_kernel"]["pc"])
        edges[(pcs[e["from"]], pcs[e["to"]], e["label"], origin)] = e
    return nodes, edges


def _sum_distributions(a, b):
    total = dict(map(tuple, a))
    for value, count in b:
        total[value] = total.get(value, 0) + count
    return sorted([v, c] for v, c in total.items())


@pytest.mark.parametrize("seed", [7, 8])
def test_merged_entry_is_the_sum_of_its_configurations(seed):
    """The merged graph equals the split entries added up node by node and edge by edge: merging loses nothing
    and invents nothing (engine semantics per launch are those of version 1)."""
    recs = random_trace(seed, n=800)
    configs = ((12, 1, 1), (24, 1, 1), (12, 1, 1), (6, 2, 1))
    (merged,) = analyse(recs, 3, configs=configs)["kernels"]
    split = analyse(recs, 3, configs=configs, split=True)["kernels"]
    assert len(split) == 3
    want_nodes, want_edges = {}, {}
    for kernel in split:
        nodes, edges = _by_pc(kernel)
        for key, node in nodes.items():
            have = want_nodes.setdefault(key, {**node, "executions": 0, "bytes": 0, **{d: [] for d in DISTS}})
            have["executions"] += node["executions"]
            have["bytes"] += node["bytes"]
            for d in DISTS:
                have[d] = _sum_distributions(have[d], node[d])
        for key, edge in edges.items():
            have = want_edges.setdefault(key, dict.fromkeys(EDGE_COUNTS, 0))
            for name in EDGE_COUNTS:
                have[name] += edge[name]
    nodes, edges = _by_pc(merged)
    assert set(nodes) == set(want_nodes)
    for key, node in nodes.items():
        for name in ("executions", "bytes", *DISTS):
            assert node[name] == want_nodes[key][name], (key, name)
    assert set(edges) == set(want_edges)
    for key, edge in edges.items():
        assert {name: edge[name] for name in EDGE_COUNTS} == want_edges[key], key


DISTS = ("lanes", "addresses", "sectors", "sectors_ideal", "wavefronts", "wavefronts_ideal")
EDGE_COUNTS = ("bytes", "accesses", "rar", "raw", "war", "waw", "synced", "synced_bytes")


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


def test_budget_error_in_one_workers_block_step_stops_the_others():
    """Phases 3 and 4 run fused (consume.cpp): chunk owners wait for block owners' pieces. A block owner that
    exceeds the shadow budget in its block step must release them: the error is reported, nothing hangs. The
    budgets sweep the point where the shared and local shadow (block step) or the global shadow (global step)
    runs out first; a child process with a timeout turns a hang into a failure."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
        from test_engine_determinism import random_trace, A
        from reuselens.analyzer.replay import analyze_records
        recs = random_trace(21, n=12000, blocks=64)
        outcomes = []
        for kib in (4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536, 262144):
            try:
                analyze_records([({{"id": 0, "function_id": 0, "grid": [64, 1, 1], "block": [128, 1, 1]}}, recs)],
                                workers=4, allocations=[(A, 1 << 20)], shadow_budget_bytes=kib << 10)
                outcomes.append("ok")
            except RuntimeError as error:
                assert "shadow memory budget" in str(error), error
                outcomes.append("budget")
        print(" ".join(outcomes))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcomes = done.stdout.split()
    assert outcomes[0] == "budget" and outcomes[-1] == "ok", outcomes


@pytest.mark.parametrize("workers", [2, 5])
def test_malformed_record_of_a_later_batch_is_named_exactly(workers):
    """With several workers a batch's ids and routing run beside the steps of the batch before it (pipelined,
    consume.cpp): a malformed record in a later batch of one consume() call is still reported with its place in
    the launch, after a first call has shifted the batches."""
    from reuselens.analyzer import _engine

    for bad in (8191, 8192, 20000, 29999):
        recs = random_trace(4, n=30000)
        recs["type"][bad] = MEM
        recs["space"][bad] = GLOBAL
        recs["size"][bad] = 0
        e = _engine.Engine(workers=workers)
        e.add_allocation(A, 1 << 20)
        e.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
        e.consume(recs[:100])
        with pytest.raises(RuntimeError, match=f"record {bad} of launch 0: access size 0"):
            e.consume(recs[100:])
