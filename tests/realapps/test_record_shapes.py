"""benchmarks/record_shapes.py: each record is classed by the cheapest exact form of its lanes' addresses, and the
compact bytes follow from the classes."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
shapes = importlib.import_module("record_shapes")
from reuselens.analyzer.replay import RECORD_DTYPE  # noqa: E402


def record(addrs: dict[int, int], kind: int = 1) -> np.ndarray:
    r = np.zeros(1, dtype=RECORD_DTYPE)
    r["type"] = kind
    r["size"] = 4
    r["active_mask"] = sum(1 << lane for lane in addrs)
    for lane, address in addrs.items():
        r["addr"][0, lane] = address
    return r


def test_each_shape_is_the_cheapest_exact_one():
    base = 0x7F00_0000_0000
    records = np.concatenate(
        [
            record({}, kind=2),  # a barrier: header only
            record({lane: base for lane in range(32)}),  # broadcast
            record({lane: base + 4 * lane for lane in range(32)}),  # coalesced
            record({lane: base + 4 * lane for lane in range(0, 32, 2)}),  # every other lane, still arithmetic
            record({lane: base - 512 * lane for lane in range(32)}),  # a negative stride
            record({lane: base + 16 * (lane >> 2) for lane in range(32)}),  # fragments read by groups of 4 lanes
            record({lane: base + 4 * (lane >> 3) + 0x90 * (lane & 7) for lane in range(32)}),  # 8 rows of a tile
            record({0: base, 1: base + 8, 2: base + 40, 3: base + 44}),  # no form: its four lanes
        ]
    )
    counts = shapes.classify(records)
    assert {s: counts[s] for s in shapes.SHAPES} == {
        "header": 1,
        "broadcast": 1,
        "arithmetic": 3,
        "two-level": 2,
        "other": 1,
    }
    assert counts["bytes"] == 32 + 40 + 3 * 48 + 2 * 56 + (32 + 4 * 8)


def test_a_lane_off_the_pattern_makes_it_other():
    base = 0x1000
    lanes = {lane: base + 4 * lane for lane in range(32)}
    lanes[17] += 4
    assert shapes.classify(record(lanes))["other"] == 1


def global_record(addrs: dict[int, int]) -> np.ndarray:
    r = record(addrs)
    r["space"] = shapes.SPACE_GLOBAL
    return r


def test_segment_follow_counts_covering_records_whose_segment_a_covering_record_touched_last():
    base = 0x7F00_0000_0000  # a multiple of 128
    cover = global_record({lane: base + 4 * lane for lane in range(32)})
    cover_next = global_record({lane: base + 128 + 4 * lane for lane in range(32)})
    shifted = global_record({lane: base + 4 + 4 * lane for lane in range(32)})  # a[j + 1]: both segments
    partial = global_record({lane: base + 4 * lane for lane in range(31)})  # 31 lanes: not covering
    shared = record({lane: base + 4 * lane for lane in range(32)})  # another space: not a global access
    sequence = [cover, cover, cover_next, shifted, cover, cover_next, cover, partial, cover, shared, cover]
    # the covering records that follow one on their segment: the 2nd (after the 1st), the 7th (after the 5th; the
    # 4th, `shifted`, touched both segments before the 5th and 6th) and the last (the shared record between it and
    # the 9th is no global access); the 9th follows `partial`
    expected_after = 3
    whole = shapes.SegmentFollow()
    whole.feed(np.concatenate(sequence))
    assert (whole.global_records, whole.covering, whole.after_covering) == (10, 8, expected_after)
    pieces = shapes.SegmentFollow()  # fed launch by launch: the segments' history carries over
    for part in (sequence[:3], sequence[3:6], sequence[6:]):
        pieces.feed(np.concatenate(part))
    assert (pieces.global_records, pieces.covering, pieces.after_covering) == (10, 8, expected_after)
