"""DrGPUM's intra-object patterns (seed 002): waste inside one data object, from what the engine saw of its
elements (object_touches.json's per-object profiles and per-launch slices; docs/memory.md, "Intra-object
patterns").

- overallocation: only a small part of the object was ever touched; allocate what is used.
- non_uniform_access: a few slices take most of the object's accesses; stage them in shared memory or keep
  them in L2 (an access-policy window). A placement opportunity, so its peak reduction is 0.
- structured_access: every kernel that touches the object touches a part no other kernel touches; the whole
  object never needed to exist at once, one part at a time would do.

Public API: :data:`SETTINGS`, :data:`PATTERNS`, :func:`analyze_intra`, :func:`element_use`.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from reuselens.analyzer.memory.object_touches import ObjectProfile, slices_bytes
from reuselens.analyzer.memory.patterns import Finding
from reuselens.analyzer.memory.peak import residency, usage
from reuselens.analyzer.memory.run_timeline import RunMemory
from reuselens.analyzer.memory.timeline import Timeline
from reuselens.analyzer.units import format_bytes

SETTINGS: dict[str, float] = {
    # overallocation: at most this share of the object touched, and at least min_waste_bytes never touched
    "max_touched_share": 0.5,
    "min_waste_bytes": 64 << 10,
    # non-uniform access: the hottest eighth of the touched slices takes at least this share of the accesses
    "hot_access_share": 0.5,
    "min_touched_slices": 8,
}
HOT_SLICE_FRACTION = 8  # "the hottest eighth"
PATTERNS = ("overallocation", "structured_access", "non_uniform_access")


def analyze_intra(memory: RunMemory, settings: Mapping[str, Any] | None = None) -> list[Finding]:
    """The intra-object findings of a run; none for objects the engine has no profile of."""
    options = {**SETTINGS, **(settings or {})}
    curve = usage(memory.timeline)
    findings: list[Finding] = []
    for oid, profile in sorted(memory.profiles.items()):
        if oid not in memory.timeline.objects:
            continue
        findings.extend(_overallocation(memory.timeline, curve, oid, profile, options))
        findings.extend(_non_uniform_access(memory, oid, profile, options))
        findings.extend(_structured_access(memory, curve, oid, profile))
    return findings


def element_use(profile: ObjectProfile) -> str:
    """How the kernels used the object's elements, in one clause (an allocation's hover says it whether or not a
    pattern fired): what they touched and, where the run counted accesses, the hottest eighth of its touched
    slices' share of them; in a run with values, the share of its loads that returned what their location's last
    load returned (the object's value redundancy, LoadSpy's per-object metric)."""
    if profile.touched_bytes == 0:
        return "no kernel touched its elements"
    text = f"{_touched_clause(profile)} ({profile.touched_bytes / profile.size:.1%})"
    total = sum(profile.slice_accesses)
    if profile.touched_slices is None and sum(1 for count in profile.slice_accesses if count) >= 2:
        hot = _hot_slices(profile)
        share = sum(profile.slice_accesses[k] for k in hot) / total
        text += f"; {_ranges(profile, hot)} took {share:.0%} of its {total:,} word accesses"
    if profile.value_loads:
        text += (
            f"; {profile.same_value / profile.value_loads:.0%} of its {profile.value_loads:,} word loads returned "
            f"the value their location's last load returned"
        )
    return text


def _touched_clause(profile: ObjectProfile, only: bool = False) -> str:
    """What the kernels touched, as far as the profile knows: the slices' bound (an object-level run without
    element maps), a coarse element map's bound, or the exact bytes."""
    touched = format_bytes(profile.touched_bytes)
    if profile.touched_slices is not None:
        slices = bin(profile.touched_slices).count("1")
        return f"kernels touched {slices} of its {len(profile.slice_accesses)} slices, at most {touched}"
    if profile.touched_unit > 4:
        return f"kernels touched at most {touched} of it"
    return f"kernels touched {'only ' if only else ''}{touched} of it"


def _peak_with_size(timeline: Timeline, curve: list[int], oid: int, size: int) -> int:
    """The peak had the object held `size` bytes instead of its own for all its life."""
    if not curve:
        return 0
    cut = timeline.objects[oid].size - size
    shrunk = list(curve)
    for first, end in residency(timeline, oid):
        for index in range(first, min(end, len(shrunk))):
            shrunk[index] -= cut
    return max(curve) - max(shrunk)


def _label(timeline: Timeline, oid: int) -> str:
    return timeline.objects[oid].label()


def _operations_touching(timeline: Timeline, oid: int) -> list[int]:
    """Indices of the operations that touch the object, in order, each once."""
    return sorted({index for index, _ in timeline.touched_at.get(oid, ())})


def _kernels_touching(memory: RunMemory, oid: int) -> int:
    ops = memory.timeline.operations
    return sum(1 for index in _operations_touching(memory.timeline, oid) if ops[index].kind == "kernel")


def _overallocation(
    timeline: Timeline, curve: list[int], oid: int, profile: ObjectProfile, options: Mapping[str, Any]
) -> Iterator[Finding]:
    size, touched = profile.size, profile.touched_bytes
    if touched == 0:  # never touched by a kernel: unused_allocation speaks for it when nothing else touched it
        return
    waste = size - touched
    if touched > size * options["max_touched_share"] or waste < options["min_waste_bytes"]:
        return
    if profile.touched_slices is not None:
        why = "; a profile with --intra-object, or without --object-level, counts the bytes"
    elif profile.touched_unit > 4:
        why = f"; counted in units of {format_bytes(profile.touched_unit)}, the element map that fitted in free device memory"
    else:
        why = ""
    seen = f"{_touched_clause(profile, only=True)} ({touched / size:.1%}{why})"
    fix = f"{_label(timeline, oid)}: {seen}; size the allocation to what the input needs instead of a fixed maximum."
    reduction = _peak_with_size(timeline, curve, oid, touched)
    yield Finding("overallocation", oid, waste, 0, None, fix, reduction, resize={oid: touched})


def _hot_slices(profile: ObjectProfile) -> list[int]:
    touched = [k for k, count in enumerate(profile.slice_accesses) if count]
    hot_count = max(1, -(-len(touched) // HOT_SLICE_FRACTION))
    return sorted(sorted(touched, key=lambda k: -profile.slice_accesses[k])[:hot_count])


def _slice_bytes(profile: ObjectProfile, slices: list[int]) -> int:
    return slices_bytes(profile.size, profile.slice_bytes, slices)


def _ranges(profile: ObjectProfile, slices: list[int]) -> str:
    """Byte offsets of consecutive slices in the object, e.g. "bytes 0-4,096, 61,440-65,536" (three at most)."""
    runs: list[list[int]] = []
    for k in slices:
        if runs and runs[-1][1] == k - 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    last = len(profile.slice_accesses) - 1
    named = [
        f"{a * profile.slice_bytes:,}-{profile.size if b == last else min(profile.size, (b + 1) * profile.slice_bytes):,}"
        for a, b in runs[:3]
    ]
    more = f" and {len(runs) - 3} more ranges" if len(runs) > 3 else ""
    return "bytes " + ", ".join(named) + more


def _non_uniform_access(
    memory: RunMemory, oid: int, profile: ObjectProfile, options: Mapping[str, Any]
) -> Iterator[Finding]:
    accesses = profile.slice_accesses
    total = sum(accesses)
    touched = sum(1 for count in accesses if count)
    if total == 0 or touched < options["min_touched_slices"]:
        return
    hot = _hot_slices(profile)
    share = sum(accesses[k] for k in hot) / total
    if share < options["hot_access_share"]:
        return
    hot_bytes = _slice_bytes(profile, hot)
    fix = (
        f"{_label(memory.timeline, oid)}: {_ranges(profile, hot)} ({format_bytes(hot_bytes)}) take {share:.0%} of "
        f"its accesses: stage that part in shared memory, or keep it in L2 with an access-policy window "
        f"(cudaStreamAttrValue.accessPolicyWindow)."
    )
    yield Finding("non_uniform_access", oid, hot_bytes, _kernels_touching(memory, oid), None, fix, 0)


def _structured_access(memory: RunMemory, curve: list[int], oid: int, profile: ObjectProfile) -> Iterator[Finding]:
    timeline = memory.timeline
    parts: list[int] = []
    for index in _operations_touching(timeline, oid):
        if timeline.operations[index].kind != "kernel":
            return  # a copy or set of the object: which part of it, the run does not say
        slices = memory.kernel_slices.get(index, {}).get(oid)
        if slices is None:
            return  # a kernel whose touches were not recorded (or recorded without slices)
        parts.append(slices)
    if len(parts) < 2:
        return
    seen = 0
    for mask in parts:
        if seen & mask:
            return  # two kernels share a slice
        seen |= mask
    largest = max(_slice_bytes(profile, [k for k in range(64) if mask >> k & 1]) for mask in parts)
    if largest * 2 > profile.size:
        return
    fix = (
        f"{_label(timeline, oid)}: each of the {len(parts)} kernels that use it touches its own part (at most "
        f"{format_bytes(largest)} of {format_bytes(profile.size)}): allocate one part at a time, or a buffer of two "
        f"parts used in turn, instead of the whole object."
    )
    reduction = _peak_with_size(timeline, curve, oid, largest)
    yield Finding(
        "structured_access", oid, profile.size - largest, len(parts), None, fix, reduction, resize={oid: largest}
    )
