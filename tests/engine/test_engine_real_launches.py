"""The engine against the reference model on a slice of a real launch recorded on the H200 (tests/data/real_launches):
cuBLAS's SGEMM, whose shared fragments, padded-tile stores and tile loop the engine's closed forms and edge table
were shaped for (docs/engine.md, "Per-lane cost"), at one and three workers, with the launch's allocations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zstandard
from engine_reference import Reference, distributions, engine_distributions, engine_edges, engine_spans

from reuselens.analyzer.replay import RECORD_DTYPE, analyze_records

DATA = Path(__file__).resolve().parents[1] / "data" / "real_launches"
SHARED, MEM = 2, 1


def load(name: str) -> tuple[dict, np.ndarray]:
    meta = json.loads((DATA / f"{name}.json").read_text())
    raw = zstandard.ZstdDecompressor().decompress((DATA / f"{name}.records.zst").read_bytes())
    recs = np.frombuffer(raw, dtype=RECORD_DTYPE).copy()
    assert (meta["format"], meta["version"], len(recs)) == ("reuselens-real-launch-slice", 1, meta["records"])
    return meta, recs


def fragment_records(recs: np.ndarray) -> int:
    """Shared 16-byte loads whose lanes share footprints in groups (the shape the closed form was made for)."""
    shared = recs[(recs["type"] == MEM) & (recs["space"] == SHARED) & (recs["size"] == 16)]
    return sum(len(set(r["addr"].tolist())) < 32 for r in shared if r["active_mask"] == 0xFFFFFFFF)


def slice_matches_reference_model(meta: dict, recs: np.ndarray, workers: int) -> dict:
    """The slice as one launch with its allocations: the engine's edges, barrier spans and distributions equal the
    Python model's; the engine's kernel entry."""
    x, y, z = meta["block"]
    launch = {
        "id": 0,
        "function_id": 0,
        "grid": meta["grid"],
        "block": meta["block"],
        "dynamic_shared_bytes": meta["dynamic_shared_bytes"],
    }
    out = analyze_records([(launch, recs)], workers=workers, allocations=[tuple(a) for a in meta["allocations"]])
    ref = Reference()
    ref.run_launch(0, 0, x * y * z, recs)
    kernel = out["kernels"][0]
    assert engine_edges(kernel) == {k: dict(v) for k, v in ref.edges[0].items()}
    assert engine_spans(kernel) == dict(ref.spans[0])
    expected = {pc: {k: dict(v) for k, v in d.items()} for pc, d in distributions(recs).items()}
    assert engine_distributions(kernel) == expected
    return kernel


@pytest.mark.parametrize("workers", [1, 3])
def test_cublas_sgemm_slice_matches_reference_model(workers):
    meta, recs = load("cublas_sgemm_32x32_nn")
    assert fragment_records(recs) > 500  # the slice holds the shapes it is kept for
    kernel = slice_matches_reference_model(meta, recs, workers)
    labels = {e["label"] for e in kernel["edges"]}
    assert {"cold", "warp_same_inst", "block"} <= labels


# Slices of the real-application suite's engine-bound apps (session 31's device call 5, benchmarks/launch_slice.py):
# PolyBench fdtd2d's third step and LU's second kernel, cuda-samples transposeNoBankConflicts and reduce7, SHOC BFS's
# warp-centric kernel and sort's radixSortBlocks.
SUITE_SLICES = ["pb_fdtd2d", "pb_lu", "cs_transpose", "cs_reduction", "shoc_bfs", "shoc_sort"]


@pytest.mark.parametrize("name", SUITE_SLICES)
@pytest.mark.parametrize("workers", [1, 3])
def test_suite_app_slices_match_reference_model(name, workers):
    meta, recs = load(name)
    assert meta["launch_records"] >= len(recs) > 0 and meta["resident_blocks"] >= 1
    slice_matches_reference_model(meta, recs, workers)


def first_blocks(meta: dict, recs: np.ndarray, blocks: int | None) -> np.ndarray:
    """The records of the slice's first `blocks` blocks (all of them: None), in trace order."""
    if blocks is None:
        return recs
    return recs[np.isin(recs["block"], meta["blocks_kept"][:blocks])]


# Slices of what issue 14's slowest runs are made of (session 35's device call 3): the PyTorch loop's two heaviest
# cuBLAS SGEMMs (89% of a step's records) and cuda-samples mergeSort's two kernels. The PyTorch ones are cut to their
# first blocks here, which the reference model replays in seconds; benchmarks/engine.py --slice takes them whole.
WORKLOAD_SLICES = [
    ("pytorch_xmma_sgemm_64x64_tn", 1),
    ("pytorch_cutlass_sgemm_256x128_nt", 1),
    ("cs_mergesort_shared", 4),
    ("cs_merge_intervals", None),
]


@pytest.mark.parametrize("name,blocks", WORKLOAD_SLICES)
@pytest.mark.parametrize("workers", [1, 3])
def test_workload_slices_match_reference_model(name, blocks, workers):
    meta, recs = load(name)
    assert meta["launch_records"] >= len(recs) > 0 and meta["resident_blocks"] >= 1
    part = first_blocks(meta, recs, blocks)
    assert len(part) > 1000
    if name.startswith("pytorch"):
        assert fragment_records(part) > 1000  # 16-byte fragments shared by groups of lanes: what these are kept for
    slice_matches_reference_model(meta, part, workers)
