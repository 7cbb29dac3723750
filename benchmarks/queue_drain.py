"""What the GPU waits for when online analysis is on, measured without a GPU: the drain thread's work on each
buffer (PC resolution, collector/native/src/pc_ranges.cpp, and the hand-over to the engine queue,
collector/native/src/queued_sink.cpp, whose copy threads unpack the packed records into its ring) with a consumer as
fast or as slow as the engine. `--walk two` finds the records in each buffer twice (the resolving walk, then the
queue's own, as before session 28), `one` hands the queue the records the resolving walk found (consume_walked).
Needs cuda.h (pc_ranges.h takes its types from it): CUDA_HOME, nvcc's toolkit or /usr/local/cuda.

`--ring cold` starts each run from a fresh ring, as a collected app does (its first lap's page faults), `warm`
(the default) after a lap of untimed buffers.

Usage: python benchmarks/queue_drain.py [--engine-ns 30,300] [--copy-threads 1,4] [--walk two,one] [--ring warm]
       [--repeat 3]
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from native_build import NoCompiler, built, cuda_include  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine-ns", default="30,300", help="consumer speed, ns per record (comma-separated)")
    ap.add_argument("--copy-threads", default="1,4", help="cores sharing each copy (comma-separated)")
    ap.add_argument("--walk", default="two,one", help="two: the queue walks each buffer again; one: it does not")
    ap.add_argument("--ring", default="warm", help="warm: after a lap of untimed buffers; cold: a fresh ring")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cuda = cuda_include()
    if cuda is None:
        print("queue_drain: no cuda.h (set CUDA_HOME)", file=sys.stderr)
        return 1
    try:
        with built(
            "queue_drain",
            [
                REPO / "benchmarks/native/queue_drain.cpp",
                REPO / "collector/native/src/queued_sink.cpp",
                REPO / "collector/native/src/pc_ranges.cpp",
                REPO / "collector/native/src/support.cpp",  # name_this_thread (the queue's threads are named)
            ],
            [REPO / "collector/native/src", REPO / "analyzer/engine/include", cuda],
        ) as exe:
            for ns in args.engine_ns.split(","):
                for threads in args.copy_threads.split(","):
                    for _ in range(args.repeat):
                        for walk in args.walk.split(","):  # alternated, so that both meet the same machine state
                            out = subprocess.run(
                                [str(exe), ns, threads, walk, args.ring], capture_output=True, text=True, check=True
                            ).stdout.strip()
                            print(
                                f"engine {ns:>4} ns/record, {threads:>2} copy threads, {walk} walk, {args.ring}: {out}"
                            )
    except NoCompiler as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
