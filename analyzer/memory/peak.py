"""Device memory in use along the operation axis, its peak, and the peak a changed lifetime would give.

An object is resident at operation i when its alloc is at or before i and its free after i: the half-open
index range [alloc, free), or [alloc, len(operations)) when it is never freed. So the value at an alloc includes
the new object and the value at a free no longer includes the released one. A fix moves an object's residency
(allocate later, free earlier, free across an idle gap, share another object's buffer), and the figure each
finding carries is how far the peak of the curve drops once that object's ranges are replaced (DrGPUM, seed
002: objects are ranked by whether they take part in the largest peaks).

Public API: :data:`Residency`, :class:`Peak`, :class:`PeakModel`, :func:`residency`, :func:`usage`, :func:`peak`,
:func:`peak_with`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from reuselens.analyzer.memory.timeline import Timeline

# Half-open [first, end) operation ranges during which an object holds its bytes; empty: the object is gone.
Residency = Sequence[tuple[int, int]]


@dataclass(frozen=True)
class Peak:
    bytes: int
    index: int | None  # the first operation at which the peak is reached; None for an empty timeline
    live: tuple[int, ...]  # ids of the objects resident at that operation, largest first


def residency(timeline: Timeline, object_id: int) -> Residency:
    """The object's residency as the program ran it."""
    return ((timeline.allocated_at[object_id], timeline.end_of(object_id)),)


def usage(timeline: Timeline, changed: Mapping[int, Residency] | None = None) -> list[int]:
    """Bytes resident at each operation, with the objects in `changed` given the residency mapped to them."""
    count = len(timeline.operations)
    delta = [0] * (count + 1)  # a difference array: one pass whatever the number of objects
    for oid, obj in timeline.objects.items():
        ranges = changed[oid] if changed and oid in changed else residency(timeline, oid)
        for first, end in ranges:
            first, end = max(first, 0), min(end, count)
            if first < end:
                delta[first] += obj.size
                delta[end] -= obj.size
    curve, total = [], 0
    for step in delta[:count]:
        total += step
        curve.append(total)
    return curve


def peak(timeline: Timeline) -> Peak:
    """The highest point of the as-run curve and what is resident there."""
    curve = usage(timeline)
    if not curve:
        return Peak(0, None, ())
    top = max(curve)
    index = curve.index(top)
    live = [oid for oid in timeline.objects if timeline.allocated_at[oid] <= index < timeline.end_of(oid)]
    live.sort(key=lambda oid: (-timeline.objects[oid].size, oid))
    return Peak(top, index, tuple(live))


def peak_with(timeline: Timeline, changed: Mapping[int, Residency]) -> int:
    """The peak bytes if the objects in `changed` had the given residencies and everything else ran as before."""
    return max(usage(timeline, changed), default=0)


class PeakModel:
    """The as-run curve prepared for many what-if questions: one per finding, on programs of many thousands of
    objects and operations, where recomputing the whole curve each time (:func:`peak_with`) would be quadratic.

    A change shifts the curve by a step function with a few breakpoints (the old and new residency bounds), so
    the new peak is the largest of (maximum of the as-run curve over a segment + that segment's shift); a sparse
    table answers each segment's maximum in O(1) after an O(n log n) build."""

    def __init__(self, timeline: Timeline):
        self.timeline = timeline
        self.curve = usage(timeline)
        self.peak = max(self.curve, default=0)
        self._levels = [self.curve]  # _levels[k][i]: max of curve[i : i + 2**k]
        width = 1
        while 2 * width <= len(self.curve):
            prev = self._levels[-1]
            self._levels.append([max(prev[i], prev[i + width]) for i in range(len(prev) - width)])
            width *= 2

    def max_over(self, first: int, end: int) -> int:
        """The largest as-run value at indices [first, end), which must not be empty."""
        level = (end - first).bit_length() - 1
        row = self._levels[level]
        return max(row[first], row[end - (1 << level)])

    def peak_with(self, changed: Mapping[int, Residency], sizes: Mapping[int, int] | None = None) -> int:
        """Same answer as :func:`peak_with`, in time proportional to the number of changed ranges. `sizes`: objects
        that hold this many bytes instead of their own (over their new residency, or their own where unchanged)."""
        count = len(self.curve)
        shift: dict[int, int] = {}
        sizes = sizes or {}
        for oid in {*changed, *sizes}:
            size = self.timeline.objects[oid].size
            as_run = residency(self.timeline, oid)
            new_ranges = changed.get(oid, as_run)
            for sign, spans, held in ((-1, as_run, size), (1, new_ranges, sizes.get(oid, size))):
                for first, end in spans:
                    first, end = max(first, 0), min(end, count)
                    if first < end:
                        shift[first] = shift.get(first, 0) + sign * held
                        shift[end] = shift.get(end, 0) - sign * held
        bounds = sorted({0, count, *(i for i in shift if i < count)})
        best, running = 0, 0
        for first, end in zip(bounds, bounds[1:]):
            running += shift.get(first, 0)
            best = max(best, self.max_over(first, end) + running)
        return best
