#!/usr/bin/env python3
"""The engine on a recorded run: records/s and where each step's time goes, per worker count.

`benchmarks/engine.py` measures generated traces; this one replays the traces of a real run directory
(`reuselens profile --traces`), every launch in order with its allocations, as the online engine saw them. The
traces are read into memory first, so the clock measures the engine alone. Printed per worker count: the best of
`--repeat` replays (wall seconds, M records/s, M records per CPU-second of the engine's workers) and the step
split of that replay (slowest worker and all workers' CPU seconds: ids, new PCs, routing, blocks, global shadow).

    python3 benchmarks/replay_speed.py RUN_DIR [--workers 1,4,12] [--repeat 2] [--engine A.so,B.so]

--engine replays with each given engine module in turn (a `_engine*.so` built from another revision, e.g. by
benchmarks/build_revision.sh; `installed` names the installed one), alternating per worker count and repeat, so
that two engines meet the same machine state.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
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


def engine_module(path: str):
    """The engine module built at `path` (`installed`: the one `reuselens` imports)."""
    if path == "installed":
        return replay._engine_module()
    loader = importlib.machinery.ExtensionFileLoader("reuselens.analyzer._engine", path)
    spec = importlib.util.spec_from_file_location("reuselens.analyzer._engine", path, loader=loader)
    if spec is None:
        raise SystemExit(f"replay_speed: {path} is not an extension module")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def replay_once(run: dict, allocations: list, launches: list, workers: int, module=None) -> tuple[float, dict]:
    """Wall seconds of one replay on a fresh engine, and the engine's stats after it."""
    collector = run.get("collector") or {}
    engine = (module or replay._engine_module()).Engine(
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
    parser.add_argument("--engine", default="installed", help="comma-separated engine modules to compare")
    args = parser.parse_args()
    run, allocations, launches = load(args.run_dir)
    engines = [(path, engine_module(path)) for path in args.engine.split(",")]
    records = sum(len(trace.records) for _, trace in launches)
    print(f"{args.run_dir}: {len(launches)} launches with traces, {records:,} records")
    for workers in (int(w) for w in args.workers.split(",")):
        results: dict[str, list] = {path: [] for path, _ in engines}
        for _ in range(args.repeat):
            for path, module in engines:
                results[path].append(replay_once(run, allocations, launches, workers, module))
        for path, _ in engines:
            best, stats = min(results[path], key=lambda r: r[0])
            cpu = sum(stats["phase_cpu_seconds"])
            label = f" [{path}]" if len(engines) > 1 else ""
            print(
                f"workers {workers:2d}: {best:7.3f} s  {records / best / 1e6:6.2f} M records/s  "
                f"{records / cpu / 1e6 if cpu else 0:6.2f} M records per CPU-second{label}"
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
