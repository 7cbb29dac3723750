"""What the GPU waits for when online analysis is on, measured without a GPU: the drain thread's copies into
the engine queue (collector/native/src/queued_sink.cpp) with a consumer as fast or as slow as the engine.

Usage: python benchmarks/queue_drain.py [--engine-ns 30,300] [--repeat 3]
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine-ns", default="30,300", help="consumer speed, ns per record (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not cxx:
        print("queue_drain: no C++ compiler found (set CXX)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / "queue_drain"
        subprocess.run([cxx, "-std=c++17", "-O2", "-pthread", f"-I{REPO / 'collector/native/src'}",
                        f"-I{REPO / 'analyzer/engine/include'}", str(REPO / "benchmarks/native/queue_drain.cpp"),
                        str(REPO / "collector/native/src/queued_sink.cpp"), "-o", str(exe)], check=True)
        for ns in args.engine_ns.split(","):
            for _ in range(args.repeat):
                out = subprocess.run([str(exe), ns], capture_output=True, text=True, check=True).stdout.strip()
                print(f"engine {ns:>4} ns/record: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
