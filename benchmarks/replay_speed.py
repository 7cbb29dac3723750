#!/usr/bin/env python3
"""The engine on a recorded run: records/s and where each step's time goes, per worker count.

`benchmarks/engine.py` measures generated traces; this one replays the traces of a real run directory
(`reuselens profile --traces`), every launch in order with its allocations, as the online engine saw them. The
traces are read into memory first, so the clock measures the engine alone. Printed per worker count: the best of
`--repeat` replays (wall seconds, M records/s, M records per CPU-second of the engine's workers) and the step
split of that replay (slowest worker and all workers' CPU seconds: ids, new PCs, routing, blocks, global shadow).

    python3 benchmarks/replay_speed.py RUN_DIR [--workers 1,4,12] [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from reuselens.analyzer import replay, replay_manifest
from reuselens.analyzer.rundir import MANIFEST, inside_run, open_run

STEPS = ("ids", "new PCs", "routing", "blocks", "global shadow")


def load(run_dir: Path) -> tuple[dict, list, list]:
    """The run's manifest, its allocations, and (launch, trace) for every launch with a trace, in launch order."""
    run = open_run(run_dir).manifest
    manifest = run_dir / MANIFEST
    launches = []
    for launch in replay_manifest.launches(manifest, run):
        if launch.trace:
            launches.append((launch, replay.read_trace(inside_run(run_dir, launch.trace, "a trace"))))
    if not launches:
        raise SystemExit(f"replay_speed: {run_dir} holds no traces (record it with `reuselens profile --traces`)")
    return run, replay_manifest.allocations(manifest, run), launches


def replay_once(run: dict, allocations: list, launches: list, workers: int) -> tuple[float, dict]:
    """Wall seconds of one replay on a fresh engine, and the engine's stats after it."""
    collector = run.get("collector") or {}
    engine = replay._engine_module().Engine(
        workers=workers,
        values=bool(collector.get("values")),
        value_approx=float(collector.get("values_approx") or 0.0),
    )
    feeding = replay._Allocations(engine, allocations)
    began = time.perf_counter()
    for launch, trace in launches:
        feeding.before_launch(launch.id)
        engine.begin_launch(
            launch.id, launch.function_id, list(launch.grid), list(launch.block), launch.dynamic_shared_bytes
        )
        replay._feed(engine, trace.records, trace.path)
        engine.end_launch(complete=True)
    return time.perf_counter() - began, engine.stats()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--workers", default="1,4,12", help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=2, help="replays per worker count; the best is printed")
    args = parser.parse_args()
    run, allocations, launches = load(args.run_dir)
    records = sum(len(trace.records) for _, trace in launches)
    print(f"{args.run_dir}: {len(launches)} launches with traces, {records:,} records")
    for workers in (int(w) for w in args.workers.split(",")):
        best, stats = min(
            (replay_once(run, allocations, launches, workers) for _ in range(args.repeat)), key=lambda r: r[0]
        )
        cpu = sum(stats["phase_cpu_seconds"])
        print(
            f"workers {workers:2d}: {best:7.3f} s  {records / best / 1e6:6.2f} M records/s  "
            f"{records / cpu / 1e6 if cpu else 0:6.2f} M records per CPU-second"
        )
        print(
            "   slowest worker / all workers' CPU, s: "
            + "; ".join(
                f"{name} {crit:.3f} / {cpu_s:.3f}"
                for name, crit, cpu_s in zip(STEPS, stats["phase_seconds"], stats["phase_cpu_seconds"])
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
