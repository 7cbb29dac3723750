"""What the GPU waits for when online analysis is on, measured without a GPU: the drain thread's copies into
the engine queue (collector/native/src/queued_sink.cpp) with a consumer as fast or as slow as the engine.

Usage: python benchmarks/queue_drain.py [--engine-ns 30,300] [--copy-threads 1,4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from native_build import NoCompiler, built  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine-ns", default="30,300", help="consumer speed, ns per record (comma-separated)")
    ap.add_argument("--copy-threads", default="1,4", help="cores sharing each copy (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    try:
        with built(
            "queue_drain",
            [REPO / "benchmarks/native/queue_drain.cpp", REPO / "collector/native/src/queued_sink.cpp"],
            [REPO / "collector/native/src", REPO / "analyzer/engine/include"],
        ) as exe:
            for ns in args.engine_ns.split(","):
                for threads in args.copy_threads.split(","):
                    for _ in range(args.repeat):
                        out = subprocess.run(
                            [str(exe), ns, threads], capture_output=True, text=True, check=True
                        ).stdout.strip()
                        print(f"engine {ns:>4} ns/record, {threads:>2} copy threads: {out}")
    except NoCompiler as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
