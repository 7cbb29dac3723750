#!/usr/bin/env python3
"""What the engine queue's copy threads pay per record to unpack packed records into the queue's ring, measured
without a GPU: whole records (unpack_record, as the trace sink writes them) against records as the queue hands them
to the engine (unpack_for_engine, reuselens/packed_records.h: a broadcast by its one address, a barrier by its
header), one thread, alternating, three rounds per setting. Mixes: SHOC BFS's (97% broadcasts), a GEMM's whose warps
read one element of A and a row of B (50%), a stencil's (coalesced loads only); each with 2% barriers. Rings: 4 MiB
(a short queue whose pages stay in the cache: docs/collector.md, "The engine queue") and 1 GiB (the whole ring).

Usage: python benchmarks/unpack_speed.py [--rings 4096,1048576] [--mixes bfs,gemm,stencil]
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from native_build import NoCompiler, built  # noqa: E402

MIXES = {"bfs": (97, 2), "gemm": (50, 2), "stencil": (0, 2)}  # broadcast %, barrier %


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rings", default="4096,1048576", help="ring sizes, KiB (comma-separated)")
    ap.add_argument("--mixes", default=",".join(MIXES), help="record mixes: " + ", ".join(MIXES))
    args = ap.parse_args()
    mixes = args.mixes.split(",")
    if unknown := [m for m in mixes if m not in MIXES]:
        ap.error(f"--mixes: unknown {', '.join(unknown)}")
    try:
        with built(
            "unpack_speed", [REPO / "benchmarks/native/unpack_speed.cpp"], [REPO / "analyzer/engine/include"]
        ) as exe:
            for ring in args.rings.split(","):
                for mix in mixes:
                    broadcast, barrier = MIXES[mix]
                    out = subprocess.run(
                        [str(exe), ring, str(broadcast), str(barrier)], capture_output=True, text=True, check=True
                    ).stdout.strip()
                    for line in out.splitlines():
                        print(f"ring {int(ring) // 1024:>5} MiB, {mix:>7}: ns a record, {line}")
    except NoCompiler as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
