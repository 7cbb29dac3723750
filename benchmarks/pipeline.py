#!/usr/bin/env python3
"""The collector's host side of online analysis, without a GPU: a recorded launch slice (or one of engine.py's
patterns) packed as the device patch packs it, handed buffer by buffer to the engine queue, whose copy threads unpack
it into the ring, while the real engine analyses the ring with its workers (benchmarks/native/pipeline.cpp builds
both from this checkout: collector/native/src/queued_sink.cpp, the collector's engine sink and analyzer/engine).

What an engine-bound app waits for, measured where neither the GPU nor the app adds its noise: the queue's copy
threads write each record's lines on one core and the workers read them on others, as online, which
benchmarks/engine.py (records written long before, by numpy) does not reproduce. Prints, per worker count and
launch, the engine's consume seconds and records/s with its steps' slowest worker and all workers' CPU, and the
pipeline's records/s end to end.

    python3 benchmarks/pipeline.py --slice tests/data/real_launches/cs_mergesort_shared [--workers 12]
        [--copy-threads 4] [--launches 2] [--blocks 2048] [--repeat 2] [--results FILE] [--quick-build]

--results copies the last run's analysis.json (as the engine sink writes it into a run directory) to FILE; tests/engine/test_bench_pipeline.py
compares it with the engine module's replay of the same records.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import engine as engine_bench  # noqa: E402  (benchmarks/engine.py: the traces and their packing)
from native_build import NoCompiler, built  # noqa: E402

COLLECTOR = REPO / "collector/native/src"
INCLUDES = [COLLECTOR, REPO / "analyzer/engine/include", REPO / "analyzer/engine/src"]
# engine_sink.cpp compiles its sink only with the engine (as collector/native/CMakeLists.txt builds it)
DEFINES = ("-DREUSELENS_WITH_ENGINE",)


def sources() -> list[pathlib.Path]:
    engine_sources = sorted((REPO / "analyzer/engine/src").glob("*.cpp"))
    engine_sources = [s for s in engine_sources if s.name != "bindings.cpp"]  # the Python module's, not the engine's
    collector = [COLLECTOR / name for name in ("queued_sink.cpp", "engine_sink.cpp", "support.cpp", "json.cpp")]
    return [REPO / "benchmarks/native/pipeline.cpp", *collector, *engine_sources]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--slice",
        help="launch slices, DIR/NAME (benchmarks/launch_slice.py), each copied into a full grid (comma-separated: "
        "one build for all)",
    )
    ap.add_argument("--pattern", default="slice", help="one of benchmarks/engine.py's patterns, instead of --slice")
    ap.add_argument("--blocks", type=int, default=16384, help="blocks of a pattern (engine.py --blocks)")
    ap.add_argument("--workers", default="12", help="engine workers (comma-separated)")
    ap.add_argument(
        "--copy-threads",
        type=int,
        default=max(1, min(4, (os.cpu_count() or 4) // 4)),
        help="the queue's copy threads (the collector's default: a quarter of the cores, 1-4)",
    )
    ap.add_argument("--launches", type=int, default=2, help="the trace replayed as this many launches (first cold)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--results", type=pathlib.Path, help="write the last run's engine JSON here")
    ap.add_argument("--quick-build", action="store_true", help="build at -O1 (tests: the results, not the speed)")
    args = ap.parse_args()
    if (args.slice is None) == (args.pattern == "slice"):
        ap.error("name a --slice, or a --pattern other than slice")
    traces = args.slice.split(",") if args.slice is not None else [None]
    for trace in traces:
        if trace is not None and not pathlib.Path(f"{trace}.json").is_file():
            ap.error(f"--slice: {trace}.json does not exist")
    if args.launches < 1 or args.repeat < 1:
        ap.error("--launches and --repeat: at least 1")
    allocations = ",".join(f"{base}:{1 << 30}" for base in (engine_bench.A, engine_bench.B, engine_bench.C))
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            built(
                "pipeline",
                sources(),
                INCLUDES,
                flags=DEFINES + (("-O1",) if args.quick_build else ("-O3", "-DNDEBUG", "-fno-semantic-interposition")),
            ) as exe,
        ):
            for trace in traces:
                recs = engine_bench.generate(args.blocks, args.pattern, 256, trace)
                grid = engine_bench.grid_blocks(recs)
                threads = engine_bench.threads_per_block(args.pattern, trace)
                path = pathlib.Path(tmp) / "stream.slots"
                engine_bench.packed_stream(recs).tofile(path)
                print(f"trace ({trace or args.pattern}): {len(recs):,} records, grid {grid} x {threads} threads")
                run_dir = pathlib.Path(tmp) / "run"
                run_dir.mkdir(exist_ok=True)
                for workers in [int(w) for w in args.workers.split(",")]:
                    for _ in range(args.repeat):
                        command = [str(exe), str(path), str(grid), str(threads), "0", str(args.copy_threads)]
                        command += [str(args.launches), allocations, str(run_dir)]
                        env = {**os.environ, "REUSELENS_ENGINE_WORKERS": str(workers)}
                        print(f"{workers} engine workers")
                        done = subprocess.run(command, capture_output=True, text=True, env=env)
                        sys.stdout.write(done.stdout)
                        sys.stdout.flush()
                        if done.returncode != 0:
                            sys.stderr.write(done.stderr)
                            return done.returncode
                        if args.results is not None:
                            shutil.copyfile(run_dir / "analysis.json", args.results)
    except NoCompiler as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
