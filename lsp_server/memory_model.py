"""A run's memory analysis (analyzer.memory, issue 18) indexed by allocation line, for the editor.

Built once per run off the request path (memory_loading.py): diagnostics, lenses and hovers only read the facts
prepared here, because a hover must answer in milliseconds (issue 14) and a real run's timeline has many
thousands of operations. Lines are 1-based snapshot lines, as in model.py.

An allocation line is where the program called the allocator: the first frame of the object's call path that
is not the CUDA stack (analysis.site). Several objects can share it (a loop, or a helper that wraps cudaMalloc).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from reuselens.analyzer.units import format_bytes

if TYPE_CHECKING:  # the analysis itself loads in the background thread that runs it (memory_loading.py)
    from reuselens.analyzer.memory.analysis import MemoryAnalysis
    from reuselens.analyzer.memory.patterns import Finding
    from reuselens.analyzer.memory.timeline import Frame, Timeline

# Where a frame's file:line is in the workspace (pathPrefixMap, the run's cwd), or None when it has no line.
SiteMapper = Callable[["Frame"], "tuple[str, int] | None"]


@dataclass(frozen=True)
class FindingFacts:
    finding: Finding
    remedy: str  # what the fix does, short enough for a lens: "freed after op 12 (saxpy)"


@dataclass(frozen=True)
class ObjectFacts:
    object_id: int
    size: int
    allocated: str  # the label of its alloc operation
    freed: str | None  # the label of its free; None: never freed
    first_touch: str | None  # None: no GPU operation touched it
    last_touch: str | None
    live_operations: int  # GPU work operations (memcpy, memset, kernel) run while it was allocated
    idle_operations: int  # of those, the ones that did not touch it
    live_at_peak: bool
    findings: tuple[FindingFacts, ...]  # the largest peak reduction first
    element_use: str | None = None  # how kernels used its elements (intra.element_use); None: no profile of it

    @property
    def idle_share(self) -> float | None:
        return self.idle_operations / self.live_operations if self.live_operations else None


@dataclass(frozen=True)
class LiveObject:
    """An object resident at the peak, as a hover names it."""

    size: int
    site: str  # "app.cu:42", "make_buffer (no debug info; build with -g)" or "object 3 at 0x7f…"
    place: tuple[str, int] | None  # the workspace file and line, for a link


@dataclass
class AllocationLine:
    path: str
    line: int
    objects: list[ObjectFacts] = field(default_factory=list)

    @cached_property  # the hover's order, asked on every hover; the objects are all added before
    def ranked_objects(self) -> list[ObjectFacts]:
        """The objects whose fix saves the most first, then the largest."""
        return sorted(
            self.objects, key=lambda o: (-max((f.finding.peak_reduction for f in o.findings), default=0), -o.size)
        )

    @cached_property  # asked on every lens and diagnostics request; the objects are all added before
    def findings(self) -> list[tuple[ObjectFacts, FindingFacts]]:
        """(object, finding) of every object on the line, the largest peak reduction first."""
        pairs = [(obj, facts) for obj in self.objects for facts in obj.findings]
        return sorted(pairs, key=lambda pair: (-pair[1].finding.peak_reduction, -pair[1].finding.bytes))


@dataclass(frozen=True)
class PeakFacts:
    bytes: int
    operation: str | None  # the label of the operation at which the peak is first reached
    live: tuple[tuple[int, LiveObject], ...]  # (object id, what it is), largest first


@dataclass
class MemorySurface:
    digest: str  # the report.json digest of the run it belongs to
    peak: PeakFacts
    lines: dict[str, dict[int, AllocationLine]]
    unplaced_findings: int  # findings whose allocation site has no file:line (no call path, no debug info)

    def files(self) -> set[str]:
        return set(self.lines)

    def at(self, path: str, line: int) -> AllocationLine | None:
        return self.lines.get(path, {}).get(line)


def short_operation(timeline: Timeline, index: int) -> str:
    """ "op 12 (saxpy)": the operation's place in the global order and its kernel or API name."""
    op = timeline.operations[index]
    name = op.name or op.kind
    return f"op {index} ({name})"


def _remedy(timeline: Timeline, finding: Finding, site_of: Callable[[int], str]) -> str:
    """The fix as a short phrase: where the allocation or free would go (patterns.py says which gap each
    pattern is about; the first and last touch and the span of the finding name its operations)."""
    pattern, span = finding.pattern, finding.span
    marks = sorted({index for index, _ in timeline.touched_at[finding.object_id]})
    if pattern == "early_allocation" and marks:
        return f"allocated just before {short_operation(timeline, marks[0])}"
    if pattern in ("late_deallocation", "memory_leak") and marks:
        return f"freed after {short_operation(timeline, marks[-1])}"
    if pattern == "temporary_idle" and span:
        before, after = span[0] - 1, span[1] + 1
        return f"freed after {short_operation(timeline, before)} until {short_operation(timeline, after)}"
    if pattern == "redundant_allocation" and finding.other_object is not None:
        return f"it reuses the buffer allocated at {site_of(finding.other_object)}"
    if pattern == "dead_write" and span:
        return f"the write by {short_operation(timeline, span[0])} is never read"
    if pattern == "overallocation":
        size = timeline.objects[finding.object_id].size
        return f"sized to the {format_bytes(size - finding.bytes)} the kernels touch"
    if pattern == "structured_access":
        size = timeline.objects[finding.object_id].size
        return f"allocated one part ({format_bytes(size - finding.bytes)}) at a time"
    if pattern == "non_uniform_access":
        return f"its hot {format_bytes(finding.bytes)} are staged in shared memory or L2"
    return "removed"  # unused, or leaked and never used


def _object_facts(
    analysis: MemoryAnalysis, oid: int, findings: list[Finding], site_of, at_peak: set[int]
) -> ObjectFacts:
    from reuselens.analyzer.memory.intra import element_use  # loaded on first use, as index()'s import

    timeline = analysis.timeline
    alloc, end = timeline.allocated_at[oid], timeline.end_of(oid)
    marks = [index for index, _ in timeline.touched_at[oid]]
    touched = sorted(set(marks))
    live = timeline.work_between(alloc, end - 1)

    def touch_label(index: int) -> str:
        unknown = " (touches not recorded)" if timeline.operations[index].touches_unknown else ""
        return timeline.operations[index].label() + unknown

    return ObjectFacts(
        object_id=oid,
        size=timeline.objects[oid].size,
        allocated=timeline.operations[alloc].label(),
        freed=timeline.operations[end].label() if oid in timeline.freed_at else None,
        first_touch=touch_label(touched[0]) if touched else None,
        last_touch=touch_label(touched[-1]) if touched else None,
        live_operations=live,
        idle_operations=max(live - len(touched), 0),
        live_at_peak=oid in at_peak,
        findings=tuple(FindingFacts(f, _remedy(timeline, f, site_of)) for f in findings),
        element_use=element_use(profile) if (profile := analysis.memory.profiles.get(oid)) else None,
    )


def _site_text(frame: Frame | None, oid: int, address: int) -> str:
    if frame is None:
        return f"object {oid} at {address:#x}"
    if frame.file is None:
        return frame.where()
    return f"{os.path.basename(frame.file)}:{frame.line}" if frame.line else os.path.basename(frame.file)


def index(analysis: MemoryAnalysis, digest: str, map_site: SiteMapper) -> MemorySurface:
    """The analysis by allocation line; objects whose site has no line count only through their findings."""
    from reuselens.analyzer.memory.analysis import site  # loaded on first use: see the TYPE_CHECKING import

    timeline = analysis.timeline
    by_object: dict[int, list[Finding]] = {}
    for finding in analysis.findings:
        by_object.setdefault(finding.object_id, []).append(finding)
    places = {oid: map_site(frame) if (frame := site(obj)) else None for oid, obj in timeline.objects.items()}

    def site_of(oid: int) -> str:
        obj = timeline.objects[oid]
        return _site_text(site(obj), oid, obj.address)

    at_peak = set(analysis.peak.live)
    lines: dict[str, dict[int, AllocationLine]] = {}
    unplaced = 0
    for oid in timeline.objects:
        place = places[oid]
        if place is None:
            unplaced += len(by_object.get(oid, ()))
            continue
        if not by_object.get(oid) and oid not in at_peak:
            continue  # nothing to say about it on its line
        entry = lines.setdefault(place[0], {}).setdefault(place[1], AllocationLine(*place))
        entry.objects.append(_object_facts(analysis, oid, by_object.get(oid, []), site_of, at_peak))
    top = analysis.peak
    live = tuple((oid, LiveObject(timeline.objects[oid].size, site_of(oid), places[oid])) for oid in top.live)
    operation = timeline.operations[top.index].label() if top.index is not None else None
    return MemorySurface(digest, PeakFacts(top.bytes, operation, live), lines, unplaced)
