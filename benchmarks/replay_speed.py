#!/usr/bin/env python3
"""The engine on a recorded run: records/s and where each step's time goes, per worker count.

`benchmarks/engine.py` measures generated traces; this one replays the traces of a real run directory
(`reuselens profile --traces`), every launch in order with its allocations, as the online engine saw them. The
traces are read into memory first, so the clock measures the engine alone. Printed per worker count: the best of
`--repeat` replays (wall seconds, M records/s, M records per CPU-second of the engine's workers, and how busy the
workers were: their CPU seconds over workers x the engine's consume seconds, the rest spent waiting for each step's
slowest worker) and the step split of that replay (slowest worker and all workers' CPU seconds: ids, new PCs,
routing, blocks, global shadow).

    python3 benchmarks/replay_speed.py RUN_DIR [--workers 1,4,12] [--repeat 2] [--engine A.so,B.so]
                                               [--independent 12] [--check-equal]

--engine replays with each given engine module in turn (a `_engine*.so` built from another revision, e.g. by
benchmarks/build_revision.sh; `installed` names the installed one), alternating per worker count and repeat, so
that two engines meet the same machine state. Each replay then runs in a child forked after the traces were read
(they are shared, not copied): a process keeps one extension module per name, and loading a second file under the
same name hands back the first, so comparing two engines in one process compares one with itself.

--check-equal: every replay's result (the engine's analysis JSON and object touches) must be the same, whatever the
engine or worker count; the first that differs stops the benchmark with exit code 1 (an optimisation must not
change a count).

--independent N also runs N one-worker engines at once, each replaying the whole run on its own thread with its
own shadow (the records, read-only, are shared: N copies of a large run would not fit), and prints what they reach
together, N x records / wall seconds: the ceiling for N workers on this host with no communication at all, which
issue 14 asks an N-worker engine to reach 0.9 of. Where N is also among --workers, the N-worker engine's share of
that ceiling is printed too (the installed engine, or the last of --engine).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import multiprocessing
import sys
import threading
import time
from pathlib import Path

import numpy as np

from reuselens.analyzer import replay, replay_manifest
from reuselens.analyzer.rundir import MANIFEST, inside_run, open_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_module import engine_module  # noqa: E402

STEPS = ("ids", "new PCs", "routing", "blocks", "global shadow")


def load(run_dir: Path) -> tuple[dict, list, list]:
    """The run's manifest, its allocations, and (launch, trace) for every launch with a trace, in launch order."""
    run = open_run(run_dir).manifest
    manifest = run_dir / MANIFEST
    launches = []
    for launch in replay_manifest.launches(manifest, run):
        if launch.trace:
            try:
                trace = replay.read_trace(inside_run(run_dir, launch.trace, "a trace"))
                # Copied out of the file's mapping, as the docstring says: otherwise the first replay's workers
                # fault its pages in inside the clock (each forked child again), which the online engine, fed
                # from an arena it reuses, does not pay.
                launches.append((launch, dataclasses.replace(trace, records=np.array(trace.records))))
            except replay.TraceError as error:
                raise SystemExit(f"replay_speed: {error}") from None
    if not launches:
        raise SystemExit(f"replay_speed: {run_dir} holds no traces (record it with `reuselens profile --traces`)")
    return run, replay_manifest.allocations(manifest, run), launches


def measure(path: str, isolate: bool, job):
    """job(module) with the engine module at `path`: here, or (isolate) in a child forked for it, where that module
    is the only engine loaded. The child inherits the traces read so far; its answer comes back through a pipe."""
    if not isolate:
        return job(engine_module(path))
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        try:
            send.send((True, job(engine_module(path))))
        except BaseException as error:  # noqa: BLE001 (any failure is reported by the parent)
            send.send((False, f"{type(error).__name__}: {error}"))

    process = context.Process(target=child)
    process.start()
    send.close()
    try:
        ok, value = receive.recv()
    except EOFError:
        process.join()
        raise SystemExit(f"replay_speed: the replay with {path} died (exit code {process.exitcode})") from None
    process.join()
    if not ok:
        raise SystemExit(f"replay_speed: the replay with {path} failed: {value}")
    return value


def replay_once(
    run: dict, allocations: list, launches: list, workers: int, module, digest: bool = False
) -> tuple[float, dict, str | None]:
    """Wall seconds of one replay on a fresh engine, the engine's stats after it, and (digest) a hash of its result:
    the analysis JSON and the object touches, taken after the clock stopped."""
    collector = run.get("collector") or {}
    engine = module.Engine(
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
    wall = time.perf_counter() - began
    result = None
    if digest:
        analysis = json.loads(engine.to_json())
        analysis.pop("stats", None)  # the engine's timings and worker count
        text = json.dumps(analysis, sort_keys=True) + "\n" + engine.object_touches_json()
        result = hashlib.sha256(text.encode()).hexdigest()
    return wall, engine.stats(), result


def independent(run: dict, allocations: list, launches: list, copies: int, module) -> float:
    """Wall seconds for `copies` one-worker engines replaying the whole run at once, each on its own thread (the
    engine releases the GIL while it consumes records)."""
    start = threading.Barrier(copies + 1)
    errors: list[BaseException] = []

    def one() -> None:
        try:
            start.wait()
            replay_once(run, allocations, launches, 1, module)
        except BaseException as error:  # reported on the main thread
            errors.append(error)

    threads = [threading.Thread(target=one) for _ in range(copies)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--workers", default="1,4,12", help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=2, help="replays per worker count; the best is printed")
    parser.add_argument("--engine", default="installed", help="comma-separated engine modules to compare")
    parser.add_argument("--independent", type=int, default=0, help="also N one-worker engines at once")
    parser.add_argument(
        "--check-equal", action="store_true", help="every replay's result must be the same (else exit code 1)"
    )
    args = parser.parse_args(argv)
    if args.independent < 0 or args.repeat < 1:
        parser.error("--independent: 0 or more engines; --repeat: at least 1")
    run, allocations, launches = load(args.run_dir)
    engines = args.engine.split(",")
    isolate = len(engines) > 1
    records = sum(len(trace.records) for _, trace in launches)
    print(f"{args.run_dir}: {len(launches)} launches with traces, {records:,} records")
    rate: dict[int, float] = {}  # worker count -> the last engine's best records/s
    reference: tuple[str, str] | None = None  # --check-equal: (which replay, its result's digest)
    for workers in (int(w) for w in args.workers.split(",")):
        results: dict[str, list] = {path: [] for path in engines}
        for _ in range(args.repeat):
            for path in engines:
                wall, stats, digest = measure(
                    path,
                    isolate,
                    functools.partial(replay_once, run, allocations, launches, workers, digest=args.check_equal),
                )
                results[path].append((wall, stats))
                if args.check_equal:
                    which = f"{path} at {workers} workers"
                    reference = reference or (which, digest)
                    if digest != reference[1]:
                        print(f"replay_speed: the result of {which} differs from that of {reference[0]}")
                        return 1
        for path in engines:
            best, stats = min(results[path], key=lambda r: r[0])
            cpu = sum(stats["phase_cpu_seconds"])
            label = f" [{path}]" if isolate else ""
            rate[workers] = records / best
            # The workers' busy share of the engine's time: what the steps' slowest workers leave the others idle.
            busy = cpu / (workers * stats["consume_seconds"]) if stats["consume_seconds"] else 0.0
            print(
                f"workers {workers:2d}: {best:7.3f} s  {records / best / 1e6:6.2f} M records/s  "
                f"{records / cpu / 1e6 if cpu else 0:6.2f} M records per CPU-second  busy {busy:4.0%}{label}"
            )
            print(
                "   slowest worker / all workers' CPU, s: "
                + "; ".join(
                    f"{name} {crit:.3f} / {cpu_s:.3f}"
                    for name, crit, cpu_s in zip(STEPS, stats["phase_seconds"], stats["phase_cpu_seconds"])
                )
            )
    if args.check_equal:
        print(f"results: every replay's the same ({len(engines)} engine(s) x {args.workers} workers x {args.repeat})")
    if args.independent:
        n = args.independent
        walls = [
            measure(engines[-1], isolate, functools.partial(independent, run, allocations, launches, n))
            for _ in range(args.repeat)
        ]
        ceiling = n * records / min(walls)
        print(
            f"independent {n:2d}: {min(walls):7.3f} s  {ceiling / 1e6:6.2f} M records/s in all "
            f"({n} one-worker engines at once)"
        )
        if n in rate:
            print(f"   the {n}-worker engine reaches {rate[n] / ceiling:.2f} of that")
    return 0


if __name__ == "__main__":
    sys.exit(main())
