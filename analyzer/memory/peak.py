"""Device memory in use along the operation axis, its peak, and the peak a changed lifetime would give.

An object is resident at operation i when its alloc is at or before i and its free after i: the half-open
index range [alloc, free), or [alloc, len(operations)) when it is never freed. So the value at an alloc includes
the new object and the value at a free no longer includes the released one. A fix moves an object's residency
(allocate later, free earlier, free across an idle gap, share another object's buffer), and the figure each
finding carries is how far the peak of the curve drops once that object's ranges are replaced (DrGPUM, seed
002: objects are ranked by whether they take part in the largest peaks).

Public API: :data:`Residency`, :class:`Peak`, :func:`residency`, :func:`usage`, :func:`peak`, :func:`peak_with`.
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
