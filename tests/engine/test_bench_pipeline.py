"""benchmarks/pipeline.py: the collector's host side (the engine queue's copy threads unpacking a packed stream into
the ring, the engine's workers analysing it) built from this checkout and run without a GPU. Its figures are only
worth having if what it runs is what the collector runs: its engine's results equal the engine module's replay of
the same records, whole, at another worker count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "pipeline.py"
sys.path.insert(0, str(REPO / "benchmarks"))
SLICES = REPO / "tests" / "data" / "real_launches"


def without_timings(text: str) -> dict:
    result = json.loads(text)
    for timing in ("consume_us", "phase_us", "phase_cpu_us"):  # wall times differ run to run
        result["stats"].pop(timing)
    result["stats"].pop("workers")  # compared across worker counts on purpose
    return result


def replayed(recs, grid: int, threads: int, launches: int) -> dict:
    import engine as engine_bench  # benchmarks/engine.py

    from reuselens.analyzer import _engine

    e = _engine.Engine(workers=1)
    for base in (engine_bench.A, engine_bench.B, engine_bench.C):
        e.add_allocation(base, 1 << 30)
    for launch in range(launches):
        e.begin_launch(launch, 0, [grid, 1, 1], [threads, 1, 1], 0)
        e.consume(recs)
        e.end_launch()
    return without_timings(e.to_json())


@pytest.mark.parametrize("trace", ["cs_transpose", "shared"])
def test_the_pipeline_analyses_as_the_engine_module_replays(tmp_path, trace):
    import engine as engine_bench

    # GIVEN a recorded slice with shared tiles and global rows (transpose) and a synthetic shared trace, packed as
    # the device patch packs them (strided forms, headers alone, whole records)
    source = ["--slice", str(SLICES / trace)] if trace != "shared" else ["--pattern", "shared", "--blocks", "64"]
    results = tmp_path / "results.json"
    # WHEN the pipeline runs them through the queue's copy threads into a three-worker engine, two launches
    done = subprocess.run(
        [sys.executable, str(BENCH), *source, "--workers", "3", "--copy-threads", "2", "--launches", "2"]
        + ["--results", str(results), "--quick-build"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "M records/s end to end" in done.stdout
    # THEN its engine's results are the module's replay of the same records, whole, at one worker
    if trace == "shared":
        recs = engine_bench.generate(64, "shared", 256, None)
        threads = engine_bench.threads_per_block("shared", None)
    else:
        recs = engine_bench.generate(16384, "slice", 256, SLICES / trace)
        threads = engine_bench.threads_per_block("slice", SLICES / trace)
    expected = replayed(recs, engine_bench.grid_blocks(recs), threads, 2)
    got = without_timings(results.read_text())
    assert got["stats"]["records"] == 2 * len(recs)
    assert got == expected


def test_a_stream_that_is_not_whole_slots_or_missing_is_refused(tmp_path):
    # (the program itself, through the driver's build: a malformed or missing stream stops it with one line)
    from native_build import built
    from pipeline import DEFINES, INCLUDES, sources

    bad = tmp_path / "bad.slots"
    bad.write_bytes(b"\0" * 33)
    with built("pipeline", sources(), INCLUDES, flags=(*DEFINES, "-O0")) as exe:
        done = subprocess.run(
            [str(exe), str(bad), "1", "32", "0", "1", "1", "", str(tmp_path)], capture_output=True, text=True
        )
        missing = subprocess.run(
            [str(exe), str(tmp_path / "none.slots"), "1", "32", "0", "1", "1", "", str(tmp_path)],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 1
    assert "is not whole 32-byte slots" in done.stderr
    assert missing.returncode == 1
    assert "cannot read" in missing.stderr
