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

Then what a coalesced shadow segment (docs/engine.md, "Where the next factor is") could take over: the global
records that cover one aligned 128-byte segment exactly (32 active lanes, 4 bytes each, consecutive, the first at a
multiple of 128), and how many of those find their segment's previous access (by any global record, in record
order, across launches) to be such a record too: only those would read and write a 16-byte summary instead of 32
entries; any other access of a segment expands it.

    python3 benchmarks/record_shapes.py RUN [RUN ...]      (runs recorded with `reuselens profile --traces`)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

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


class OneStride(NamedTuple):
    """Per record (RECORD_DTYPE): `header`, a record of its header alone (not a memory record, or no active lane);
    `one`, a memory record whose active lanes one stride gives, lane i at `a0` + (i - `first`) * `stride` (int64,
    wrapping: the device patch's strided form with one group of 32 lanes; stride 0, a broadcast, included)."""

    header: np.ndarray
    one: np.ndarray
    first: np.ndarray
    a0: np.ndarray
    stride: np.ndarray
    lanes: np.ndarray  # (n, 32) active lanes
    addr: np.ndarray  # (n, 32) int64 addresses


def one_stride(records: np.ndarray) -> OneStride:
    """Which records one stride over the warp gives (OneStride), vectorised."""
    mem = records["type"] == REC_MEM
    mask = records["active_mask"].astype(np.uint64)
    lanes = ((mask[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)  # (n, 32)
    active = lanes.sum(axis=1)
    addr = records["addr"].astype(np.int64)  # wrapping arithmetic is exact for this test
    header = ~mem | (active == 0)
    first = np.argmax(lanes, axis=1)
    rows = np.arange(len(records))
    a0 = addr[rows, first]
    # stride from the first two active lanes (the second: the first of the lanes left); then every active lane must
    # sit on base + (i - first) * stride. One active lane: stride 0.
    rest = lanes.copy()
    rest[rows, first] = False
    second = np.where(active >= 2, np.argmax(rest, axis=1), first)
    delta, gap = addr[rows, second] - a0, np.maximum(second - first, 1)
    stride = delta // gap
    expected = a0[:, None] + (np.arange(32)[None, :] - first[:, None]) * stride[:, None]
    one = ~header & (delta % gap == 0) & np.all(~lanes | (addr == expected), axis=1)
    return OneStride(header, one, first, a0, np.where(one, stride, 0), lanes, addr)


def classify(records: np.ndarray) -> dict[str, int | float]:
    """Counts of each shape among `records` (RECORD_DTYPE), and the compact form's bytes (other: 8 per lane)."""
    f = one_stride(records)
    header, lanes, addr, active = f.header, f.lanes, f.addr, f.lanes.sum(axis=1)
    broadcast = f.one & (f.stride == 0)
    arithmetic = f.one & ~broadcast
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


SEGMENT_SHIFT = 7  # 128-byte segments: 32 granules of 4 bytes
SPACE_GLOBAL = 1  # RlSpace (trace_format.h)


class SegmentFollow:
    """Walks global records in record order (feed() them launch by launch) and counts the records covering one
    aligned segment exactly and, of those, the ones whose segment was last accessed by such a record."""

    def __init__(self) -> None:
        self.global_records = self.covering = self.after_covering = 0
        self.last: dict[int, bool] = {}  # segment -> was its last access a covering record

    def feed(self, records: np.ndarray) -> None:
        glob = records[(records["type"] == REC_MEM) & (records["space"] == SPACE_GLOBAL)]
        if not len(glob):
            return
        self.global_records += len(glob)
        mask = glob["active_mask"].astype(np.uint64)
        lanes = ((mask[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
        addr = glob["addr"].astype(np.uint64)
        size = glob["size"].astype(np.uint64)
        covering = (
            (glob["active_mask"] == 0xFFFFFFFF)
            & (glob["size"] == 4)
            & (addr[:, 0] % 128 == 0)
            & np.all(addr == addr[:, :1] + 4 * np.arange(32, dtype=np.uint64)[None, :], axis=1)
        )
        # One event per (record, segment) it touches: a covering record its one segment, any other each lane's first
        # and last byte's segment.
        index = np.arange(len(glob))
        rows, cols = np.nonzero(lanes & ~covering[:, None])
        lo = addr[rows, cols] >> SEGMENT_SHIFT
        hi = (addr[rows, cols] + np.maximum(size[rows], 1) - 1) >> SEGMENT_SHIFT
        seg = np.concatenate([addr[covering, 0] >> SEGMENT_SHIFT, lo, hi])
        rec = np.concatenate([index[covering], rows, rows])
        kind = np.concatenate([np.ones(int(covering.sum()), bool), np.zeros(2 * len(rows), bool)])
        order = np.lexsort((rec, seg))  # by segment, then record order
        seg, kind = seg[order], kind[order]
        new_seg = np.ones(len(seg), bool)
        new_seg[1:] = seg[1:] != seg[:-1]
        prev_kind = np.zeros(len(seg), bool)
        prev_kind[1:] = kind[:-1]
        firsts = np.nonzero(new_seg)[0]
        prev_kind[firsts] = [self.last.get(int(x), False) for x in seg[firsts]]
        self.covering += int(covering.sum())
        self.after_covering += int((kind & prev_kind).sum())
        ends = np.append(firsts[1:], len(seg)) - 1
        self.last.update(zip(seg[ends].tolist(), kind[ends].tolist(), strict=True))


def run_shapes(run_dir: Path) -> dict[str, int | float]:
    total = {s: 0 for s in SHAPES} | {"bytes": 0, "records": 0}
    # in launch order (traces/<launch id>.rltrace), which the segments' walk needs
    traces = sorted((run_dir / "traces").glob("*.rltrace"), key=lambda p: (len(p.stem), p.stem))
    if not traces:
        raise SystemExit(f"record_shapes: {run_dir} holds no traces (record it with `reuselens profile --traces`)")
    segments = SegmentFollow()
    for path in traces:
        records = replay.read_trace(path).records
        records = records[records["type"] != REC_VALUES]  # value companions are not records
        for start in range(0, len(records), 1 << 18):
            chunk = np.asarray(records[start : start + (1 << 18)])
            part = classify(chunk)
            for key, value in part.items():
                total[key] += value
            segments.feed(chunk)
        total["records"] += len(records)
    total |= {
        "global": segments.global_records,
        "covering": segments.covering,
        "after_covering": segments.after_covering,
    }
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
        g = max(1, t["global"])
        print(
            f"{'':24} global records {t['global']:,}: {100 * t['covering'] / g:.1f}% cover one aligned 128-byte "
            f"segment, {100 * t['after_covering'] / g:.1f}% do and find it last accessed by such a record"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
