"""Launch slices (tests/data/real_launches) and what benchmarks/engine.py makes of them: benchmarks/launch_slice.py cuts
one from a recorded run, and engine.py's --slice (and --pattern sgemm, the recorded cuBLAS SGEMM slice) copies its
blocks into one grid whose resident blocks interleave record by record, the records unchanged but for their block
and their global addresses, which move into the benchmark's allocations with their offsets within 2 MiB; what the
PyTorch loop's engine cost is measured on (docs/engine.md, "Benchmark")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from engine_reference import engine_distributions
from test_bench_transpose import bench_module

from reuselens.analyzer.replay import analyze_records, read_trace

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests" / "data" / "runs" / "pattern_suite"
GLOBAL, SHARED = 1, 2


def cut_slice(tmp_path: Path, *args: str, run: Path = RUN) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "launch_slice.py"), str(run), *args, "--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
    )


def copies_are_the_slice(bench, path: Path, blocks: int) -> None:
    meta, one = bench.launch_slice(path)
    per_copy = int(one["block"].max()) + 1
    recs = bench.slice_records(blocks, path)
    copies, wave = len(recs) // len(one), max(1, bench.slice_resident(meta) // per_copy)
    assert copies * len(one) == len(recs) and copies > wave  # more than one wave
    # Record i of the slice issued by every copy of the first wave in turn: blocks interleave one by one.
    assert (recs["pc"][:wave] == one["pc"][0]).all() and len(np.unique(recs["block"][:wave])) == wave
    for copy in (0, 1, copies - 1):
        mine = recs[(recs["block"] // per_copy) == copy]
        # Each copy's blocks turned by one more (slice_records: the owners of block b mod W get every slice block)
        assert (mine["block"] - copy * per_copy == (one["block"] + copy) % per_copy).all()
        for field in ("type", "space", "access", "size", "warp", "active_mask", "pc"):
            assert (mine[field] == one[field]).all()
        shared = mine["space"] == SHARED
        assert (mine["addr"][shared] == one["addr"][shared]).all()
    globals_ = recs[(recs["type"] == 1) & (recs["space"] == GLOBAL)]
    lanes = globals_["addr"][globals_["addr"] != 0]
    assert (lanes >= bench.A).all() and (lanes < bench.A + (1 << 30)).all()
    # The same shapes as recorded: per PC, the distributions of one copy are the slice's.
    launch = {"id": 0, "function_id": 0, "grid": [per_copy, 1, 1], "block": meta["block"]}
    mine = recs[recs["block"] < per_copy]
    moved = engine_distributions(analyze_records([(launch, mine)], allocations=[(bench.A, 1 << 30)])["kernels"][0])
    import zstandard

    raw = zstandard.ZstdDecompressor().decompress(Path(f"{path}.records.zst").read_bytes())
    recorded_recs = np.frombuffer(raw, dtype=one.dtype)
    recorded = engine_distributions(
        analyze_records([(launch, recorded_recs)], allocations=[tuple(a) for a in meta["allocations"]])["kernels"][0]
    )
    assert moved == recorded


def test_sgemm_pattern_is_the_recorded_slice_copied_block_by_block():
    bench = bench_module()
    meta, one = bench.launch_slice(bench.SGEMM_SLICE)
    assert bench.threads_per_block("sgemm") == meta["block"][0] == 64
    assert bench.slice_resident(meta) == 1024  # no count in this slice: its grid, all resident on the H200
    copies_are_the_slice(bench, bench.SGEMM_SLICE, 3 * len(one) * 1024 // 12 // 64)
    assert len(bench.generate(1024, "sgemm")) == len(bench.slice_records(1024, bench.SGEMM_SLICE))


def test_a_slice_cut_from_a_recorded_run_replays_as_recorded(tmp_path):
    done = cut_slice(tmp_path, "--launch", "largest", "--blocks", "1")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    run = json.loads((RUN / "run.json").read_text())
    launch = next(entry for entry in run["launches"] if entry["id"] == meta["launch"])
    whole = np.asarray(read_trace(RUN / launch["trace"]).records)
    assert launch["records"] == meta["launch_records"] == len(whole) == max(e["records"] for e in run["launches"])
    assert (meta["format"], meta["version"], meta["grid"], meta["block"]) == (
        "reuselens-real-launch-slice",
        1,
        launch["grid"],
        launch["block"],
    )
    assert meta["blocks_kept"] == [int(whole["block"].min())] and meta["resident_blocks"] >= 1
    bench = bench_module()
    _, one = bench.launch_slice(tmp_path / "s")
    assert len(one) == meta["records"] == int((whole["block"] == whole["block"].min()).sum())
    assert (one["pc"] == whole["pc"][whole["block"] == whole["block"].min()]).all()  # trace order kept
    assert {tuple(a) for a in meta["allocations"]} <= {(a["address"], a["size"]) for a in run["allocations"]}
    copies_are_the_slice(bench, tmp_path / "s", 64)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--launch", "999"], "launch 999 has no trace"),
        (["--launch", "0", "--blocks", "0"], "--blocks: at least 1"),
    ],
)
def test_launch_slice_refuses_what_it_cannot_cut_in_one_line(tmp_path, args, message):
    done = cut_slice(tmp_path, *args)
    assert done.returncode != 0 and message in done.stderr and not (tmp_path / "s.json").exists()


def test_engine_py_slice_option_needs_an_existing_slice(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "engine.py"), "--slice", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "none.json does not exist" in done.stderr


def test_a_damaged_trace_fails_the_launch_asked_for_and_is_skipped_by_largest(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    manifest = json.loads((run / "run.json").read_text())
    largest = max(manifest["launches"], key=lambda entry: entry["records"])
    other = next(entry for entry in manifest["launches"] if entry["id"] != largest["id"] and entry.get("trace"))
    (run / other["trace"]).write_bytes(b"not a trace")
    done = cut_slice(tmp_path, "--launch", str(other["id"]), run=run)
    assert done.returncode != 0 and "truncated trace header" in done.stderr and not (tmp_path / "s.json").exists()
    assert not list(tmp_path.glob("s.*"))  # nothing half-written
    done = cut_slice(tmp_path, "--launch", "largest", run=run)
    assert done.returncode == 0 and "skipped" in done.stderr
    assert json.loads((tmp_path / "s.json").read_text())["launch"] == largest["id"]


def test_allocations_a_slice_never_touches_take_no_room(tmp_path):
    assert cut_slice(tmp_path, "--launch", "largest", "--blocks", "1").returncode == 0
    meta = json.loads((tmp_path / "s.json").read_text())
    meta["allocations"].append([1 << 47, 4 << 30])  # a 4 GiB pool block the launch never reads
    (tmp_path / "s.json").write_text(json.dumps(meta))
    bench = bench_module()
    _, one = bench.launch_slice(tmp_path / "s")
    lanes = one["addr"][(one["type"] == 1) & (one["space"] == GLOBAL)]
    assert ((lanes == 0) | ((lanes >= bench.A) & (lanes < bench.A + (1 << 30)))).all()
