"""DrGPUM's object-level memory patterns (seed 002), each an exact predicate over a :class:`Timeline`.

The seed's picture: every GPU operation on one axis, every data object under it, a mark wherever an operation
touched the object. Each pattern asks about a gap on that line. "Operations" in a gap are the GPU work that
ran there (memcpy, memset, kernel): the seed's definitions count operations that happened while the object
waited, and an allocation or free of another object between two touches is no time the object sat idle.

Every finding carries the bytes, the operations it held them needlessly (count and index range) and the peak
reduction its fix would give, recomputed on the whole curve (peak.PeakModel), so findings can be ranked by what
actually lowers the peak, as the seed ranks objects by their part in the largest peaks.

Public API: :data:`SETTINGS`, :data:`PATTERNS`, :class:`Finding`, :func:`analyze`, :func:`peak_reduction_together`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any, Callable, Iterator, Mapping

from reuselens.analyzer.errors import SettingsError
from reuselens.analyzer.memory.peak import PeakModel, Residency
from reuselens.analyzer.memory.timeline import Timeline

# DrGPUM's object-level predicates have no threshold: one memcpy, memset or kernel in a gap makes a finding
# (the paper claims no false positives because it never guesses). Raise it to hide short gaps.
SETTINGS: dict[str, int] = {"min_idle_operations": 1}


@dataclass(frozen=True)
class Finding:
    pattern: str
    object_id: int
    bytes: int  # the bytes held (or, for a dead write, written) needlessly
    operations: int  # GPU work operations in `span` (for a dead write: how many dead writes the object has)
    span: tuple[int, int] | None  # inclusive operation-index range held needlessly; None when empty
    fix: str
    peak_reduction: int  # bytes off the program's peak once fixed
    other_object: int | None = None  # redundant allocation: the object whose buffer could be reused
    # The residencies the fix gives (object id -> ranges; peak.Residency), from which peak_reduction was computed;
    # None where the reduction is not a lifetime change. Several fixes applied together: merge their changes.
    change: Mapping[int, Residency] | None = field(default=None, compare=False, repr=False)
    # The sizes the fix gives (object id -> bytes held instead of its size; the intra-object patterns), from which
    # peak_reduction was computed; None where the fix does not resize.
    resize: Mapping[int, int] | None = field(default=None, compare=False, repr=False)


def _operations(count: int) -> str:
    return f"{count} GPU operation{'' if count == 1 else 's'}"


class _Context:
    """What every predicate needs: the timeline, the settings, the as-run curve and its peak."""

    def __init__(self, timeline: Timeline, settings: Mapping[str, int]):
        self.timeline, self.min_idle = timeline, settings["min_idle_operations"]
        self.model = PeakModel(timeline)
        self.peak = self.model.peak
        self.alloc_indices = [op.index for op in timeline.operations if op.kind == "alloc"]

    def reduction(self, changed: Mapping[int, Residency]) -> int:
        return self.peak - self.model.peak_with(changed)

    def finding(
        self,
        pattern: str,
        oid: int,
        size: int,
        work: int,
        span: tuple[int, int] | None,
        fix: str,
        changed: Mapping[int, Residency],
        other_object: int | None = None,
    ) -> Finding:
        """A finding whose fix changes residencies: its peak reduction is computed from the change it carries."""
        return Finding(pattern, oid, size, work, span, fix, self.reduction(changed), other_object, changed)

    def allocations_within(self, first: int, last: int) -> list[int]:
        """Ids of the objects allocated at indices first..last."""
        start, stop = bisect_left(self.alloc_indices, first), bisect_right(self.alloc_indices, last)
        return [self.timeline.operations[i].object_id for i in self.alloc_indices[start:stop]]

    def idle(self, first: int, last: int) -> tuple[int, tuple[int, int] | None]:
        """(work operations, span) of the operations first..last; span None when the range is empty."""
        if first > last:
            return 0, None
        return self.timeline.work_between(first, last), (first, last)

    def op(self, index: int) -> str:
        return self.timeline.operations[index].label()

    def touch_indices(self, oid: int) -> list[int]:
        return sorted({index for index, _ in self.timeline.touched_at[oid]})


def _early_allocation(ctx: _Context, oid: int) -> Iterator[Finding]:
    """Operations ran between the object's allocation and its first touch."""
    marks = ctx.touch_indices(oid)
    if not marks:
        return
    tl, obj, alloc, first = ctx.timeline, ctx.timeline.objects[oid], ctx.timeline.allocated_at[oid], marks[0]
    work, span = ctx.idle(alloc + 1, first - 1)
    if work >= ctx.min_idle:
        fix = (
            f"Move the cudaMalloc of {obj.label()} down to just before {ctx.op(first)}, its first use: "
            f"{_operations(work)} run while it holds memory unused."
        )
        allocated_at_first_use = {oid: [(first, tl.end_of(oid))]}
        yield ctx.finding("early_allocation", oid, obj.size, work, span, fix, allocated_at_first_use)


def _late_deallocation(ctx: _Context, oid: int) -> Iterator[Finding]:
    """Operations ran between the object's last touch and its free, or after it when it is never freed."""
    marks = ctx.touch_indices(oid)
    if not marks:
        return
    tl, obj, last = ctx.timeline, ctx.timeline.objects[oid], marks[-1]
    end = tl.end_of(oid)
    work, span = ctx.idle(last + 1, end - 1)
    if work >= ctx.min_idle:
        now = (
            f", its last use, instead of at {ctx.op(end)}"
            if oid in tl.freed_at
            else ", its last use (it is never freed)"
        )
        fix = f"cudaFree {obj.label()} right after {ctx.op(last)}{now}: {_operations(work)} run in between."
        freed_after_last_use = {oid: [(tl.allocated_at[oid], last + 1)]}
        yield ctx.finding("late_deallocation", oid, obj.size, work, span, fix, freed_after_last_use)


def _unused_allocation(ctx: _Context, oid: int) -> Iterator[Finding]:
    """No memcpy, memset or kernel ever touched the object."""
    tl, obj = ctx.timeline, ctx.timeline.objects[oid]
    if tl.touched_at[oid]:
        return
    work, span = ctx.idle(tl.allocated_at[oid] + 1, tl.end_of(oid) - 1)
    fix = f"Remove the cudaMalloc of {obj.label()}: no memcpy, memset or kernel ever touches it."
    yield ctx.finding("unused_allocation", oid, obj.size, work, span, fix, {oid: []})


def _memory_leak(ctx: _Context, oid: int) -> Iterator[Finding]:
    """The object is never freed."""
    tl, obj = ctx.timeline, ctx.timeline.objects[oid]
    if oid in tl.freed_at:
        return
    marks = ctx.touch_indices(oid)
    last = marks[-1] if marks else tl.allocated_at[oid]
    work, span = ctx.idle(last + 1, len(tl.operations) - 1)
    after = f"after {ctx.op(last)}, its last use" if marks else "(nothing uses it)"
    fix = f"{obj.label()} is never freed: add a cudaFree {after}."
    fixed = [(tl.allocated_at[oid], last + 1)] if marks else []
    yield ctx.finding("memory_leak", oid, obj.size, work, span, fix, {oid: fixed})


def _idle_gaps(ctx: _Context, oid: int) -> Iterator[tuple[int, int, int]]:
    """(work, before, after) for each gap between consecutive touches that freeing the object would help: the
    gap reaches the program's peak, or another object no larger is allocated in it and could take the space."""
    tl, size = ctx.timeline, ctx.timeline.objects[oid].size
    marks = ctx.touch_indices(oid)
    for before, after in zip(marks, marks[1:]):
        work, _ = ctx.idle(before + 1, after - 1)
        if work < ctx.min_idle:
            continue
        at_peak = ctx.model.max_over(before + 1, after) == ctx.peak
        reusable = any(tl.objects[other].size <= size for other in ctx.allocations_within(before + 1, after - 1))
        if at_peak or reusable:
            yield work, before, after


def _temporary_idle(ctx: _Context, oid: int) -> Iterator[Finding]:
    """Operations ran between two consecutive touches (the seed's forward-to-backward activation); the largest
    such gap that freeing would help is reported."""
    gaps = list(_idle_gaps(ctx, oid))
    if not gaps:
        return
    work, before, after = max(gaps, key=lambda gap: (gap[0], gap[2] - gap[1]))
    tl, obj = ctx.timeline, ctx.timeline.objects[oid]
    reads_next = any(t.read for index, t in tl.touched_at[oid] if index == after)
    if reads_next:
        how = f"copy it to the host after {ctx.op(before)} and back before {ctx.op(after)} (or recompute it)"
    else:
        how = f"cudaFree it after {ctx.op(before)} and cudaMalloc it again before {ctx.op(after)}, which overwrites it"
    fix = f"{obj.label()} sits idle for {_operations(work)}: {how}."
    changed = {oid: [(tl.allocated_at[oid], before + 1), (after, tl.end_of(oid))]}
    yield ctx.finding("temporary_idle", oid, obj.size, work, (before + 1, after - 1), fix, changed)


def _dead_writes(ctx: _Context, oid: int) -> list[tuple[int, int, int]]:
    """(dead write, overwrite, bytes written) pairs. Within one operation the order of its reads and writes is
    unknown, so an operation that reads counts as reading first: it can never make a write look dead. The
    overwrite must have a measured size covering the object; a partial or unmeasured one proves nothing."""
    size = ctx.timeline.objects[oid].size
    by_op: dict[int, list[Any]] = {}
    for index, touch in ctx.timeline.touched_at[oid]:
        by_op.setdefault(index, []).append(touch)
    pending: tuple[int, int] | None = None  # (index, bytes) of a write nothing has read yet
    dead = []
    for index in sorted(by_op):
        if ctx.timeline.operations[index].touches_unknown:
            pending = None  # it may have read the object, and whether it wrote it at all is a guess
            continue
        touches = by_op[index]
        writes = [t for t in touches if t.write]
        if any(t.read for t in touches):
            pending = (index, size) if writes else None
        elif writes:
            if pending is not None and any(t.bytes is not None and t.bytes >= size for t in writes):
                dead.append((pending[0], index, pending[1]))
            pending = (index, max((t.bytes or size) for t in writes))
    return dead


def _dead_write(ctx: _Context, oid: int) -> Iterator[Finding]:
    """Two writes to the object with no read between them: the first one's work is thrown away."""
    dead = _dead_writes(ctx, oid)
    if not dead:
        return
    first, overwrite, written = dead[0]
    more = f" ({len(dead)} such writes in all)" if len(dead) > 1 else ""
    fix = (
        f"Drop the write to {ctx.timeline.objects[oid].label()} by {ctx.op(first)}: "
        f"{ctx.op(overwrite)} overwrites all of it before anything reads it{more}."
    )
    yield Finding("dead_write", oid, written, len(dead), (first, overwrite), fix, 0)


def _redundant_allocations(ctx: _Context) -> Iterator[Finding]:
    """Two objects of the same size, both allocated at once, whose uses never overlap: the later one's data
    could live in the earlier one's buffer. Objects whose allocations do not overlap are left out: the runtime
    already recycles such memory, and sharing the buffer would hold it across the gap between them."""
    tl = ctx.timeline
    used = {oid: ctx.touch_indices(oid) for oid in tl.objects if tl.touched_at[oid]}
    by_size: dict[int, list[int]] = {}
    for oid in used:
        by_size.setdefault(tl.objects[oid].size, []).append(oid)
    for group in by_size.values():
        yield from _lend_buffers(ctx, group, used)


def _lend_buffers(ctx: _Context, group: list[int], used: dict[int, list[int]]) -> Iterator[Finding]:
    """Greedy in first-use order: each object takes the buffer of one already done with (last use before its
    first) that is still allocated when it is; of those, the one freed last, which is the likeliest to be. An
    object lends or takes at most once, so every finding's saving is its own."""
    tl = ctx.timeline
    by_last_use = sorted(group, key=lambda oid: used[oid][-1])
    finished: list[tuple[int, int]] = []  # max-heap on free index: (-free, id) of objects that may lend
    takers: set[int] = set()
    next_done = 0
    for taker in sorted(group, key=lambda oid: used[oid][0]):
        while next_done < len(by_last_use) and used[by_last_use[next_done]][-1] < used[taker][0]:
            done = by_last_use[next_done]
            next_done += 1
            if done not in takers:  # final: `done` was offered its own donor earlier, its first use being earlier
                heappush(finished, (-tl.end_of(done), done))
        if finished and -finished[0][0] > tl.allocated_at[taker]:
            _, donor = heappop(finished)
            takers.add(taker)
            yield _redundant_finding(ctx, donor, taker, used)


def _redundant_finding(ctx: _Context, donor: int, taker: int, used: dict[int, list[int]]) -> Finding:
    tl = ctx.timeline
    both_first = max(tl.allocated_at[donor], tl.allocated_at[taker])
    both_end = min(tl.end_of(donor), tl.end_of(taker))
    work, span = ctx.idle(both_first, both_end - 1)
    fix = (
        f"Reuse the buffer of {tl.objects[donor].label()} for {tl.objects[taker].label()} instead of a second "
        f"cudaMalloc: the first is last used by {ctx.op(used[donor][-1])}, before the second is first used by "
        f"{ctx.op(used[taker][0])}."
    )
    changed = {taker: [], donor: [(tl.allocated_at[donor], max(tl.end_of(donor), tl.end_of(taker)))]}
    size = tl.objects[taker].size
    return ctx.finding("redundant_allocation", taker, size, work, span, fix, changed, other_object=donor)


PER_OBJECT: dict[str, Callable[[_Context, int], Iterator[Finding]]] = {
    "early_allocation": _early_allocation,
    "late_deallocation": _late_deallocation,
    "temporary_idle": _temporary_idle,
    "unused_allocation": _unused_allocation,
    "memory_leak": _memory_leak,
    "dead_write": _dead_write,
}
PATTERNS = (*PER_OBJECT, "redundant_allocation")


def _settings(overrides: Mapping[str, Any] | None) -> dict[str, int]:
    merged = dict(SETTINGS)
    for key, value in (overrides or {}).items():
        if key not in SETTINGS:
            raise SettingsError(f"unknown memory setting {key!r}; known: {', '.join(SETTINGS)}")
        if type(value) is not int or value < 1:
            raise SettingsError(f"memory setting {key}: expected an integer >= 1, found {value!r}")
        merged[key] = value
    return merged


def analyze(timeline: Timeline, settings: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every finding of every pattern, the largest peak reduction first."""
    ctx = _Context(timeline, _settings(settings))
    findings = [f for oid in timeline.objects for check in PER_OBJECT.values() for f in check(ctx, oid)]
    findings += _redundant_allocations(ctx)
    findings.sort(key=lambda f: (-f.peak_reduction, -f.bytes, PATTERNS.index(f.pattern), f.object_id))
    return findings


def peak_reduction_together(timeline: Timeline, findings: list[Finding]) -> int:
    """Bytes off the peak once all of `findings` are fixed together (one fix per object, as a user applies them):
    their residency changes merged, an object removed by one stays removed, an object whose buffer several others
    reuse keeps the union of its extended ranges, a resized object holds the smallest size given. Findings whose
    reduction is neither a lifetime change nor a resize are refused."""
    merged: dict[int, list[tuple[int, int]]] = {}
    removed: set[int] = set()
    sizes: dict[int, int] = {}
    for finding in findings:
        if finding.change is None and finding.resize is None:
            raise ValueError(f"a {finding.pattern} finding's peak reduction is not a lifetime change or a resize")
        for oid, ranges in (finding.change or {}).items():
            if not ranges:
                removed.add(oid)
            merged.setdefault(oid, []).extend(ranges)
        for oid, size in (finding.resize or {}).items():
            sizes[oid] = min(size, sizes.get(oid, size))
    changed = {oid: ([] if oid in removed else _union(ranges)) for oid, ranges in merged.items()}
    model = PeakModel(timeline)
    return model.peak - model.peak_with(changed, sizes)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for first, end in sorted(ranges):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((first, end))
    return out
