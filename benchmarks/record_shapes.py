#!/usr/bin/env python3
"""How many bytes a run's warp records would take in a compact form, from its recorded traces (issue 14: "bytes
per record are a lever"; the collector writes 288 bytes per record, docs/trace-format.md).

Each record is classed by the shape of its active lanes' addresses, the cheapest that reproduces it exactly:

* header: not a memory record (barrier, block exit) or no active lane: the 32-byte header alone;
* broadcast: every active lane at one address: header + 8 bytes;
* arithmetic: lane i at base + i * stride for every active lane i (a coalesced access, a strided one): header + 16;
* two-level: lane i at base + (i >> k) * outer + (i & (2^k - 1)) * inner, k = 1..4, lanes 0, 1 and 2^k active (a
  GEMM's shared fragments, which groups of lanes read together, or its tile loads across rows): header + 24;
* other: header + 8 bytes per active lane (the mask in the header says which).

Printed per run: records, the share of each shape, and the bytes per record such a form would take against 288,
so the saving on the way from the GPU to the engine (PCIe, the queue's copy) can be weighed before any of it is
built. Records are read with numpy (analyzer/replay.py), a few launches' traces at a time.

    python3 benchmarks/record_shapes.py RUN [RUN ...]      (runs recorded with `reuselens profile --traces`)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from reuselens.analyzer import replay

HEADER_BYTES = 32
REC_MEM, REC_VALUES = 1, 4  # RlRecordType (trace_format.h): a memory record, a value companion
SHAPES = ("header", "broadcast", "arithmetic", "two-level", "other")
COST = {
    "header": HEADER_BYTES,
    "broadcast": HEADER_BYTES + 8,
    "arithmetic": HEADER_BYTES + 16,
    "two-level": HEADER_BYTES + 24,
}


def classify(records: np.ndarray) -> dict[str, int | float]:
    """Counts of each shape among `records` (RECORD_DTYPE), and the compact form's bytes (other: 8 per lane)."""
    mem = records["type"] == REC_MEM
    mask = records["active_mask"].astype(np.uint64)
    lanes = ((mask[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)  # (n, 32)
    active = lanes.sum(axis=1)
    addr = records["addr"].astype(np.int64)  # wrapping arithmetic is exact for this test
    header = ~mem | (active == 0)
    first = np.argmax(lanes, axis=1)
    rows = np.arange(len(records))
    a0 = addr[rows, first]
    broadcast = ~header & np.all(~lanes | (addr == a0[:, None]), axis=1)
    # stride from the first two active lanes (the second: the first of the lanes left); then every active lane must
    # sit on base + (i - first) * stride. One active lane: stride 0, which a broadcast already took.
    rest = lanes.copy()
    rest[rows, first] = False
    second = np.where(active >= 2, np.argmax(rest, axis=1), first)
    delta, gap = addr[rows, second] - a0, np.maximum(second - first, 1)
    stride = delta // gap
    expected = a0[:, None] + (np.arange(32)[None, :] - first[:, None]) * stride[:, None]
    arithmetic = ~header & ~broadcast & (delta % gap == 0) & np.all(~lanes | (addr == expected), axis=1)
    two_level = np.zeros(len(records), dtype=bool)
    lane = np.arange(32)
    for k in range(1, 5):
        known = lanes[:, 0] & lanes[:, 1] & lanes[:, 1 << k]
        inner = addr[:, 1] - addr[:, 0]
        outer = addr[:, 1 << k] - addr[:, 0]
        guess = addr[:, :1] + (lane >> k)[None, :] * outer[:, None] + (lane & ((1 << k) - 1))[None, :] * inner[:, None]
        two_level |= known & np.all(~lanes | (addr == guess), axis=1)
    two_level &= ~header & ~broadcast & ~arithmetic
    other = ~header & ~broadcast & ~arithmetic & ~two_level
    counts = {
        "header": int(header.sum()),
        "broadcast": int(broadcast.sum()),
        "arithmetic": int(arithmetic.sum()),
        "two-level": int(two_level.sum()),
        "other": int(other.sum()),
    }
    counts["bytes"] = (
        sum(COST[s] * counts[s] for s in COST) + int((HEADER_BYTES + 8 * active[other]).sum())  # other: its lanes
    )
    return counts


def run_shapes(run_dir: Path) -> dict[str, int | float]:
    total = {s: 0 for s in SHAPES} | {"bytes": 0, "records": 0}
    traces = sorted((run_dir / "traces").glob("*.rltrace"))
    if not traces:
        raise SystemExit(f"record_shapes: {run_dir} holds no traces (record it with `reuselens profile --traces`)")
    for path in traces:
        records = replay.read_trace(path).records
        records = records[records["type"] != REC_VALUES]  # value companions are not records
        for start in range(0, len(records), 1 << 18):
            part = classify(np.asarray(records[start : start + (1 << 18)]))
            for key, value in part.items():
                total[key] += value
        total["records"] += len(records)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(
        f"{'run':24} {'records':>12} {'header':>7} {'bcast':>7} {'arith':>7} {'2-level':>7} {'other':>7}  bytes/record"
    )
    for run_dir in args.runs:
        t = run_shapes(run_dir)
        n = max(1, t["records"])
        shares = "".join(f" {100 * t[s] / n:6.1f}%" for s in SHAPES)
        print(f"{run_dir.name:24} {t['records']:12,}{shares}  {t['bytes'] / n:6.1f} (of {replay.RECORD_BYTES})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
