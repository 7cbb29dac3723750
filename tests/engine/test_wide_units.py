"""Batches whose granules inside allocations are owned by units wider than a chunk (choose_unit_shift, docs/engine.md
"Determinism and parallelism"): taken where warps walk rows, never where the warps of a batch share one row, and
results stay those of one worker, across batches that change the unit under the same granules."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from engine_records import BARRIER, BLOCK_EXIT, GLOBAL, MEM, READ, SHARED, WRITE
from packed import pack

from reuselens.analyzer.replay import RECORD_DTYPE

A = 0x7F0000000000  # an allocation of ROW_BYTES * ROWS + 8 bytes: its last 16-byte lanes cross its end
ROW_BYTES = 16 << 10
ROWS = 512
OUTSIDE = A + (64 << 20)  # no allocation there: the workers' own shadow, owned by the chunk whatever the batch
LANES = np.arange(32)


def records(n: int) -> np.ndarray:
    recs = np.zeros(n, dtype=RECORD_DTYPE)
    recs["type"] = MEM
    recs["space"] = GLOBAL
    recs["access"] = READ
    recs["size"] = 4
    recs["active_mask"] = 0xFFFFFFFF
    return recs


def row_walk(rng: np.random.Generator, n: int, blocks: int) -> np.ndarray:
    """PolyBench mvt's first kernel: thread i walks row i, so a warp's lanes lie a row apart; some lanes 16 bytes wide
    (the last rows' reach past the allocation's end), some warps partly active, some stores, barriers, exits."""
    recs = records(n)
    warp = rng.integers(0, 4, n)
    block = rng.integers(0, blocks, n)
    recs["block"], recs["warp"] = block, warp
    row0 = (block * 4 + warp) * 32 % ROWS
    column = rng.integers(0, ROW_BYTES // 16, n) * 16
    wide = rng.random(n) < 0.15
    recs["size"] = np.where(wide, 16, 4)
    column = np.where(wide & (rng.random(n) < 0.5), ROW_BYTES - 8, column)  # the last row's lane crosses the end
    recs["addr"] = A + (row0[:, None] + LANES[None, :]) % ROWS * ROW_BYTES + column[:, None]
    recs["pc"] = np.where(wide, 0x40, 0x20)
    store = rng.random(n) < 0.2
    recs["access"] = np.where(store, WRITE, READ)
    recs["pc"][store] = 0x60
    partial = rng.random(n) < 0.1
    recs["active_mask"][partial] = rng.integers(1, 2**32, int(partial.sum()))
    return recs


def shared_rows(rng: np.random.Generator, n: int, blocks: int) -> np.ndarray:
    """mvt's second kernel: every warp reads a stretch of one row (coalesced), the rows the walk above touched, and
    scalars outside the allocation."""
    recs = records(n)
    recs["block"] = rng.integers(0, blocks, n)
    recs["warp"] = rng.integers(0, 4, n)
    row = rng.integers(0, 8, n) * 64
    start = rng.integers(0, ROW_BYTES // 128, n) * 128
    recs["addr"] = A + row[:, None] * ROW_BYTES + start[:, None] + LANES[None, :] * 4
    outside = rng.random(n) < 0.1
    recs["addr"][outside] = OUTSIDE + rng.integers(0, 4096, int(outside.sum()))[:, None] * 4
    recs["pc"] = np.where(outside, 0x100, 0x80)
    return recs


def trace(seed: int) -> np.ndarray:
    """Row walks and shared rows in stretches of a few thousand records, so that the engine's batches (4,096 records
    and more) change their unit under the same granules, with barriers and shared stores between."""
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(6):
        part = row_walk(rng, 5000, 12) if k % 2 == 0 else shared_rows(rng, 3000, 12)
        parts.append(part)
    recs = np.concatenate(parts)
    bar = rng.random(len(recs)) < 0.01
    recs["type"][bar] = BARRIER
    recs["space"][bar] = 1
    smem = (rng.random(len(recs)) < 0.03) & ~bar
    recs["space"][smem] = SHARED
    recs["addr"][smem] = (LANES[None, :] * 4 + rng.integers(0, 64, int(smem.sum()))[:, None] * 128) % 8192
    ex = (rng.random(len(recs)) < 0.001) & ~bar & ~smem
    recs["type"][ex] = BLOCK_EXIT
    recs["addr"] = np.where((recs["active_mask"][:, None] >> LANES[None, :]) & 1, recs["addr"], 0)
    return recs


def engine_outputs(recs: np.ndarray, workers: int) -> tuple[dict, dict, dict]:
    """Two launches of the trace: the result without its timing stats, the object touches, the stats."""
    from reuselens.analyzer import _engine

    engine = _engine.Engine(workers=workers)
    engine.add_allocation(A, ROW_BYTES * ROWS + 8)
    for launch in range(2):
        engine.begin_launch(launch, 0, [12, 1, 1], [128, 1, 1], 0)
        for at in range(0, len(recs), 7000):  # calls that do not fall on the engine's batch bounds
            engine.consume(np.ascontiguousarray(recs[at : at + 7000]))
        engine.end_launch(complete=True)
    result = json.loads(engine.to_json())
    stats = result.pop("stats")
    for key in ("phase_seconds", "phase_cpu_seconds", "consume_seconds"):
        stats.pop(key, None)
    return result, json.loads(engine.object_touches_json()), stats


@pytest.mark.parametrize("seed", [1, 2])
def test_wide_units_change_no_result(seed):
    recs = trace(seed)
    one, one_touches, _ = engine_outputs(recs, 1)
    labels = {e["label"] for k in one["kernels"] for e in k["edges"]}
    assert {"cold", "thread", "warp_diff_inst", "block", "grid"} <= labels
    for workers in (2, 3, 5, 12):
        many, many_touches, stats = engine_outputs(recs, workers)
        assert stats["wide_unit_batches"] > 0, workers  # the row walks' batches took a wide unit
        assert many == one, workers
        assert many_touches == one_touches, workers


def mvt_first_kernel(rng: np.random.Generator, n: int) -> np.ndarray:
    """PolyBench mvt's first kernel as its warps issue it, N = 4096: x1[i] += a[i][j] * y1[j], so per step a
    coalesced load and store of x1 (16 KiB), the row walk on a (64 MiB), and a broadcast of y1[j]."""
    recs = records(n)
    warp = rng.integers(0, MVT_N // 32, n)
    recs["block"], recs["warp"] = warp // 4, warp % 4
    j = rng.integers(0, MVT_N, n)
    kind = np.arange(n) % 4
    x1 = X1 + warp[:, None] * 128 + LANES[None, :] * 4
    walk = MATRIX + (warp[:, None] * 32 + LANES[None, :]) * (MVT_N * 4) + j[:, None] * 4
    y1 = Y1 + j[:, None] * 4 + 0 * LANES[None, :]
    recs["addr"] = np.where(kind[:, None] == 1, walk, np.where(kind[:, None] == 2, y1, x1))
    recs["access"] = np.where(kind == 3, WRITE, READ)
    recs["pc"] = kind * 0x10
    return recs


MVT_N = 4096
MATRIX, X1, Y1 = A + (1 << 30), A + (1 << 29), A + (1 << 29) + (1 << 20)


def test_a_row_walk_beside_a_small_vector_widens_the_matrix_alone():
    """One unit for every allocation would put all of x1 in one unit, one owner for half the records, and the sample
    would refuse it (session 51's first try: no wide batch in mvt on the GPU); per allocation the matrix takes the
    wide unit and x1 keeps its chunks."""
    from reuselens.analyzer import _engine

    recs = mvt_first_kernel(np.random.default_rng(8), 30000)

    def run(workers, packed=False):
        engine = _engine.Engine(workers=workers)
        engine.add_allocation(MATRIX, MVT_N * MVT_N * 4)
        engine.add_allocation(X1, MVT_N * 4)
        engine.add_allocation(Y1, MVT_N * 4)
        engine.begin_launch(0, 0, [MVT_N // 128, 1, 1], [128, 1, 1], 0)
        if packed:
            engine.consume_packed(pack(recs))
        else:
            engine.consume(recs)
        engine.end_launch(complete=True)
        result = json.loads(engine.to_json())
        return result["kernels"], json.loads(engine.object_touches_json()), result["stats"]["wide_unit_batches"]

    one = run(1)
    for workers in (4, 12):
        kernels, touches, wide = run(workers)
        assert wide > 0, workers
        assert (kernels, touches) == one[:2], workers
    # the collector's path: a packed stream, the row walks handed over by their first and last lanes, which the
    # batch's sample unpacks before phase 1 has
    kernels, touches, wide = run(4, packed=True)
    assert wide > 0
    assert (kernels, touches) == one[:2]


def wide_unit_batches(recs: np.ndarray, workers: int = 4) -> int:
    """How many of the trace's batches took a wide unit, in one launch on the row-walk allocation."""
    from reuselens.analyzer import _engine

    engine = _engine.Engine(workers=workers)
    engine.add_allocation(A, ROW_BYTES * ROWS + 8)
    engine.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
    engine.consume(recs)
    engine.end_launch(complete=True)
    return engine.stats()["wide_unit_batches"]


def test_batches_of_one_shared_row_keep_the_chunk():
    """Coalesced records of warps that all read the same few rows: a unit of 32 row strides would put a batch on one
    owner, and nothing in it walks rows, so every batch keeps the chunk."""
    rng = np.random.default_rng(5)
    recs = shared_rows(rng, 20000, 12)
    assert wide_unit_batches(recs) == 0


def test_column_walks_of_one_stretch_keep_the_chunk():
    """Lanes a row apart, but every warp of the batch on the same 32 rows (a naive transpose's column reads): a wide
    unit would give the whole batch to one owner, which the sample's busiest owner tells, so the chunk stays."""
    rng = np.random.default_rng(6)
    n = 20000
    recs = records(n)
    recs["block"] = rng.integers(0, 12, n)
    recs["warp"] = rng.integers(0, 4, n)
    column = rng.integers(0, ROW_BYTES // 4, n) * 4
    recs["addr"] = A + LANES[None, :] * ROW_BYTES + column[:, None]
    assert wide_unit_batches(recs) == 0


def test_switched_off_the_chunk_is_every_batchs_unit(tmp_path):
    """REUSELENS_ENGINE_WIDE_UNITS=0 (read once per process) keeps the chunk: no wide batch, the same results."""
    recs = trace(3)
    np.save(tmp_path / "trace.npy", recs)
    script = (
        "import json, sys, numpy as np\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_wide_units import engine_outputs\n"
        "print(json.dumps(engine_outputs(np.load(sys.argv[2]), 3)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent), str(tmp_path / "trace.npy")],
        env={**os.environ, "REUSELENS_ENGINE_WIDE_UNITS": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    off_result, off_touches, off_stats = json.loads(done.stdout)
    on_result, on_touches, on_stats = engine_outputs(recs, 3)
    assert off_stats["wide_unit_batches"] == 0 < on_stats["wide_unit_batches"]
    assert on_result == off_result
    assert on_touches == off_touches


def engine_result(
    recs: np.ndarray, workers: int, allocations, values: bool = False, adding=contextlib.nullcontext
) -> tuple[dict, dict, int]:
    """One launch of `recs` on `allocations` ((base, size) pairs), added inside the context `adding()`: kernels,
    object touches, wide batches."""
    from reuselens.analyzer import _engine

    engine = _engine.Engine(workers=workers, values=values)
    with adding():
        for base, size in allocations:
            engine.add_allocation(base, size)
    engine.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
    for at in range(0, len(recs), 7000):
        engine.consume(np.ascontiguousarray(recs[at : at + 7000]))
    engine.end_launch(complete=True)
    result = json.loads(engine.to_json())
    return result["kernels"], json.loads(engine.object_touches_json()), result["stats"]["wide_unit_batches"]


def test_a_handed_over_record_across_a_wide_allocations_end_is_replayed_at_its_own_addresses():
    """A coalesced record in one chunk whose lanes run from a wide allocation's tail into the next allocation has two
    owners, each given part of its mask. Handed over by its first and last lanes' addresses (RL_FLAG_ONE_STRIDE), its
    other slots hold whatever the queue left there: the one-chunk replay, which reads the mask's first and last
    slots, replayed another stretch of memory (review of 8b49eb3: a later read there found a grid edge, not cold)."""
    size_a = ROW_BYTES * ROWS + 512  # ends half-way into a chunk
    b = A + size_a
    rng = np.random.default_rng(1)
    walk = row_walk(rng, 6000, 12)
    walk = walk[walk["size"] == 4]  # no lane past A's end but this test's
    n = 2000
    straddle = records(n)
    straddle["block"], straddle["warp"] = rng.integers(0, 12, n), rng.integers(0, 4, n)
    straddle["pc"] = 0x200
    straddle["addr"] = (b - 64) + LANES[None, :] * 4  # lanes 0-15 in A, 16-31 in B
    straddle["flags"] = 0x20  # RL_FLAG_ONE_STRIDE
    straddle["addr"][:, 1:31] = b + 8192 + LANES[None, 1:31] * 4  # slots the queue did not write
    probe = records(400)
    probe["block"], probe["warp"] = rng.integers(0, 12, 400), rng.integers(0, 4, 400)
    probe["pc"] = 0x300
    probe["addr"] = b + 8192 + LANES[None, :] * 4
    recs = np.concatenate([walk, straddle])
    recs = np.concatenate([recs[rng.permutation(len(recs))], probe])
    allocations = [(A, size_a), (b, 64 << 10)]
    one = engine_result(recs, 1, allocations)
    for workers in (3, 12):
        kernels, touches, wide = engine_result(recs, workers, allocations)
        assert wide > 0, workers
        assert (kernels, touches) == one[:2], workers


def test_two_wide_allocations_sharing_a_chunk_leave_the_gap_between_them_to_its_chunks_owner():
    """Two walked allocations of one unit, 256 unallocated bytes between them in one chunk: a record from A's tail over
    the gap into B's head has ends of the same shift but other owners between, which keep their chunk (and their
    owner's own shadow); the ends' shifts alone sent it whole to one owner (review of 8b49eb3)."""
    size_a = ROW_BYTES * ROWS + 256  # ends a quarter into a chunk
    gap = A + size_a
    b = gap + 256
    rng = np.random.default_rng(2)

    def walk(base, n, pc):
        r = records(n)
        r["block"], r["warp"] = rng.integers(0, 12, n), rng.integers(0, 4, n)
        row0 = (r["block"] * 4 + r["warp"]) * 32 % ROWS
        r["addr"] = base + (row0[:, None] + LANES[None, :]) % ROWS * ROW_BYTES + rng.integers(0, 4096, n)[:, None] * 4
        r["pc"] = pc
        return r

    n = 300
    across = records(n)
    across["block"], across["warp"] = rng.integers(0, 12, n), rng.integers(0, 4, n)
    across["pc"], across["active_mask"] = 0x80, 0xFFFF
    across["addr"] = np.where(LANES[None, :] < 16, (gap - 4) + LANES[None, :] * 32, 0)  # A's tail, the gap, B's head
    in_gap = records(n)
    in_gap["block"], in_gap["warp"] = rng.integers(0, 12, n), rng.integers(0, 4, n)
    in_gap["pc"] = 0xA0
    in_gap["addr"] = gap + 4 * LANES[None, :] + 128 * (np.arange(n) % 2)[:, None]
    recs = np.concatenate([walk(A, 3000, 0x20), walk(b, 3000, 0x40), across, in_gap])
    recs = recs[rng.permutation(len(recs))]
    allocations = [(A, size_a), (b, ROW_BYTES * ROWS)]
    one = engine_result(recs, 1, allocations)
    for workers in (2, 3, 12):
        kernels, touches, wide = engine_result(recs, workers, allocations)
        assert wide > 0, workers
        assert (kernels, touches) == one[:2], workers


def test_value_mode_keeps_the_chunk_for_an_allocation_without_its_value_shadow(tmp_path):
    """Value mode: an allocation whose value shadow could not be mapped (address space limited) keeps its granules'
    values in its owners' own tables, which need a fixed owner: it never takes a wide unit, and results stay one
    worker's (review of 8b49eb3). In a child, whose address space is limited while the allocation is added."""
    script = r"""
import contextlib, json, resource, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_engine_values import random_values, with_companions
from test_wide_units import A, LANES, engine_result, row_walk

SIZE = 1 << 30  # entry shadow 4 GiB, value shadow 2 GiB: room is left for the first alone


@contextlib.contextmanager
def little_address_space():
    mapped = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (4 << 30) + (512 << 20), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


recs = row_walk(np.random.default_rng(1), 12000, 12)
recs["access"], recs["size"] = 1, 4  # loads: the value shadow is what they compare against
recs["addr"] = np.where((recs["active_mask"][:, None] >> LANES[None, :]) & 1, recs["addr"], 0)
trace = with_companions(recs, random_values(recs, 1), seed=1)
args = dict(allocations=[(A, SIZE)], values=True, adding=little_address_space)
one = engine_result(trace, 1, **args)
out = {}
for workers in (3, 12):
    kernels, touches, wide = engine_result(trace, workers, **args)
    out[workers] = [wide, kernels == one[0], touches == one[1]]
print(json.dumps(out))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent)], capture_output=True, text=True, check=True
    )
    for workers, (wide, same_kernels, same_touches) in json.loads(done.stdout).items():
        assert wide == 0, workers
        assert same_kernels and same_touches, workers
