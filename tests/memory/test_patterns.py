"""Each object-level pattern (DrGPUM, seed 002) on an implanted program and on a control that must stay clean.

Peak figures are worked out by hand in the comments; a finding's peak reduction is the as-run peak minus the
peak with the fix applied to that one object (peak.py)."""

from __future__ import annotations

import pytest
from memory_programs import Program

from reuselens.analyzer.errors import SettingsError
from reuselens.analyzer.memory.patterns import PATTERNS, analyze, peak_reduction_together


def summary(finding):
    return (finding.pattern, finding.object_id, finding.bytes, finding.operations, finding.span, finding.peak_reduction)


def clean_program():
    # cudaMalloc x; H2D x; cudaMalloc y; kernel(x -> y); cudaFree x; D2H y; cudaFree y
    return (
        Program()
        .alloc(1, 100)
        .memcpy((1, "w", 100))
        .alloc(2, 100)
        .kernel((1, "r"), (2, "w", 100))
        .free(1)
        .memcpy((2, "r"))
        .free(2)
    )


def test_a_program_that_allocates_late_and_frees_early_has_no_finding():
    assert analyze(clean_program().timeline()) == []


# --- early allocation -------------------------------------------------------------------------------------


def early_program(big_first: bool):
    program = Program()
    if big_first:
        program.alloc(1, 1000)
    program.alloc(2, 10).memset((2, "w", 10)).kernel((2, "rw")).free(2)
    if not big_first:
        program.alloc(1, 1000)
    return program.memcpy((1, "w", 1000)).kernel((1, "r")).free(1)


def test_early_allocation_implant():
    # curve 1000, 1010, 1010, 1010, 1000, 1000, 1000, 0: peak 1010; allocated at op 5 instead, the peak is 1000
    findings = analyze(early_program(big_first=True).timeline())
    assert [summary(f) for f in findings] == [("early_allocation", 1, 1000, 2, (1, 4), 10)]
    assert "cudaMalloc of object 1 (1000 bytes, allocated at app.cu:10 (main))" in findings[0].fix
    assert "op 5 (memcpy cudaMemcpy, stream 0), its first use: 2 GPU operations run while" in findings[0].fix


def test_early_allocation_control():
    assert analyze(early_program(big_first=False).timeline()) == []


# --- late deallocation ------------------------------------------------------------------------------------


def late_program(free_late: bool):
    program = Program().alloc(1, 1000).memcpy((1, "w", 1000)).kernel((1, "r"))
    if not free_late:
        program.free(1)
    program.alloc(2, 10).memset((2, "w", 10)).kernel((2, "rw")).free(2)
    return program.free(1) if free_late else program


def test_late_deallocation_implant():
    # curve 1000, 1000, 1000, 1010, 1010, 1010, 1000, 0: freed after op 2, the peak is 1000
    findings = analyze(late_program(free_late=True).timeline())
    assert [summary(f) for f in findings] == [("late_deallocation", 1, 1000, 2, (3, 6), 10)]
    assert (
        "right after op 2 (kernel step, stream 0), its last use, instead of at op 7 (free, stream 0)" in findings[0].fix
    )


def test_late_deallocation_control():
    assert analyze(late_program(free_late=False).timeline()) == []


def test_never_freed_with_operations_after_its_last_use_is_late_and_leaked():
    # y (50 B) is last used at op 2 and never freed; z (100 B) lives over ops 3..5: peak 150, 100 once y is freed
    timeline = (
        Program()
        .alloc(1, 50)
        .memset((1, "w", 50))
        .kernel((1, "r"))
        .alloc(2, 100)
        .memcpy((2, "w", 100))
        .kernel((2, "r"))
        .free(2)
        .timeline()
    )
    assert sorted(summary(f) for f in analyze(timeline)) == [
        ("late_deallocation", 1, 50, 2, (3, 6), 50),
        ("memory_leak", 1, 50, 2, (3, 6), 50),
    ]


# --- memory leak ------------------------------------------------------------------------------------------


def test_memory_leak_implant_last_used_by_the_final_operation():
    # y is never freed but nothing follows its last use: a leak holding no operation, and no peak to gain
    timeline = Program().alloc(1, 100).memcpy((1, "w", 100)).alloc(2, 100).kernel((1, "r"), (2, "w", 100))
    timeline = timeline.free(1).memcpy((2, "r")).timeline()
    findings = analyze(timeline)
    assert [summary(f) for f in findings] == [("memory_leak", 2, 100, 0, None, 0)]
    assert "is never freed: add a cudaFree after op 5 (memcpy cudaMemcpy, stream 0), its last use" in findings[0].fix


def test_memory_leak_control():
    assert [f for f in analyze(clean_program().timeline()) if f.pattern == "memory_leak"] == []


# --- unused allocation ------------------------------------------------------------------------------------


def test_unused_allocation_implant():
    # u (64 B) over ops 2..7 untouched: curve 100, 100, 164, 264, 264, 164, 164, 64, 0; without u the peak is 200
    program = Program().alloc(1, 100).memcpy((1, "w", 100)).alloc(9, 64).alloc(2, 100)
    program.kernel((1, "r"), (2, "w", 100)).free(1).memcpy((2, "r")).free(2).free(9)
    findings = analyze(program.timeline())
    assert [summary(f) for f in findings] == [("unused_allocation", 9, 64, 2, (3, 7), 64)]
    assert findings[0].fix.startswith("Remove the cudaMalloc of object 9 (64 bytes")


def test_unused_allocation_control():
    assert [f for f in analyze(clean_program().timeline()) if f.pattern == "unused_allocation"] == []


# --- temporary idle ---------------------------------------------------------------------------------------


def test_temporary_idle_across_the_peak():
    # the forward pass writes act (400 B), tmp (300 B) lives over ops 2..4, the backward pass reads act at op 6.
    # curve 400, 400, 700, 700, 700, 400, 400, 0; act offloaded over ops 2..5: 400, 400, 300, 300, 300, 0, 400
    program = Program().alloc(1, 400).kernel((1, "w", 400), name="forward")
    program.alloc(2, 300).kernel((2, "w", 300)).kernel((2, "r")).free(2)
    program.kernel((1, "r"), name="backward").free(1)
    findings = analyze(program.timeline())
    assert [summary(f) for f in findings] == [("temporary_idle", 1, 400, 2, (2, 5), 300)]
    assert "copy it to the host after op 1 (kernel forward, stream 0) and back before op 6" in findings[0].fix


def idle_gap_program(other_size: int):
    # act (400 B) is idle over ops 4..9, far below the peak (huge, 2000 B, at ops 13..15); inside the gap an
    # object of `other_size` is allocated, used and freed
    program = Program().alloc(2, 400).memset((2, "w", 400)).alloc(1, 50)
    program.kernel((2, "r"), (1, "w", 50)).kernel((1, "r")).free(1)
    program.alloc(3, other_size).memset((3, "w", other_size)).memcpy((3, "r")).free(3)
    program.kernel((2, "w", 400)).memcpy((2, "r")).free(2)
    return program.alloc(4, 2000).memset((4, "w", 2000)).memcpy((4, "r")).free(4)


def test_temporary_idle_when_an_allocation_in_the_gap_could_reuse_the_space():
    findings = analyze(idle_gap_program(other_size=300).timeline())
    assert [summary(f) for f in findings] == [("temporary_idle", 2, 400, 3, (4, 9), 0)]
    # the next touch only writes, so the contents need not survive the gap
    assert "cudaFree it after op 3 (kernel step, stream 0) and cudaMalloc it again before op 10" in findings[0].fix


def test_temporary_idle_control_gap_neither_at_the_peak_nor_reusable():
    # the object allocated in the gap is larger than act, so act's bytes could not hold it
    assert analyze(idle_gap_program(other_size=500).timeline()) == []


# --- dead write -------------------------------------------------------------------------------------------


def dead_write_program(*between, second_write=(1, "w", 100)):
    program = Program().alloc(1, 100).memset((1, "w", 100))
    for touches in between:
        program.kernel(touches)
    return program.memcpy(second_write).kernel((1, "r")).free(1)


def test_dead_write_implant():
    findings = analyze(dead_write_program().timeline())
    assert [summary(f) for f in findings] == [("dead_write", 1, 100, 1, (1, 2), 0)]
    assert "Drop the write to object 1 (100 bytes" in findings[0].fix
    assert (
        "by op 1 (memset cudaMemset, stream 0): op 2 (memcpy cudaMemcpy, stream 0) overwrites all of it"
        in findings[0].fix
    )


def test_dead_write_by_an_operation_that_also_reads():
    # the kernel at op 2 reads the memset's bytes, but its own write is overwritten by op 3 unread
    findings = analyze(dead_write_program((1, "rw")).timeline())
    assert [summary(f) for f in findings] == [("dead_write", 1, 100, 1, (2, 3), 0)]


def test_dead_write_control_one_operation_reading_and_writing_the_object_through_two_touches():
    # a device-to-device copy inside one object: a read touch and a write touch of the same operation
    program = Program().alloc(1, 100).memset((1, "w", 100)).memcpy((1, "r"), (1, "w", 100)).kernel((1, "r")).free(1)
    assert analyze(program.timeline()) == []


@pytest.mark.parametrize(
    "program",
    [
        dead_write_program((1, "r")),  # a read between the writes
        dead_write_program((1, "rw"), (1, "r")),  # an operation that reads and writes counts as reading first
        dead_write_program(second_write=(1, "w", 60)),  # the second write covers only part of the object
        dead_write_program(second_write=(1, "w")),  # the second write's size was not measured
    ],
    ids=["read-between", "read-write-between", "partial-overwrite", "unmeasured-overwrite"],
)
def test_dead_write_controls(program):
    assert analyze(program.timeline()) == []


# --- redundant allocation ---------------------------------------------------------------------------------


def two_buffers(size_b: int, allocated_at_once: bool):
    program = Program().alloc(1, 256)
    if allocated_at_once:
        program.alloc(2, size_b)
    program.memcpy((1, "w", 256)).kernel((1, "r"))
    if not allocated_at_once:
        program.free(1).alloc(2, size_b)
    program.kernel((2, "w", size_b)).memcpy((2, "r"))
    return program.free(1).free(2) if allocated_at_once else program.free(2)


def test_redundant_allocation_implant():
    # a and b (256 B each) are both allocated over ops 1..5 but a is done at op 3, before b's first use at op 4:
    # curve 256, 512 x5, 256, 0; with b in a's buffer (a kept to op 7) the peak is 256
    findings = analyze(two_buffers(256, allocated_at_once=True).timeline())
    (redundant,) = [f for f in findings if f.pattern == "redundant_allocation"]
    assert summary(redundant) == ("redundant_allocation", 2, 256, 4, (1, 5), 256)
    assert redundant.other_object == 1
    assert "Reuse the buffer of object 1 (256 bytes" in redundant.fix


@pytest.mark.parametrize("size_b, at_once", [(512, True), (256, False)], ids=["other-size", "allocations-disjoint"])
def test_redundant_allocation_controls(size_b, at_once):
    assert [f for f in analyze(two_buffers(size_b, at_once).timeline()) if f.pattern == "redundant_allocation"] == []


def test_disjoint_allocations_of_one_size_are_clean_altogether():
    assert analyze(two_buffers(256, allocated_at_once=False).timeline()) == []


# --- ranking and settings ---------------------------------------------------------------------------------


def test_findings_come_largest_peak_reduction_first():
    findings = analyze(two_buffers(256, allocated_at_once=True).timeline())
    reductions = [f.peak_reduction for f in findings]
    assert reductions == sorted(reductions, reverse=True) and len(findings) == 3
    assert {f.pattern for f in findings} == {"redundant_allocation", "early_allocation", "late_deallocation"}


def test_min_idle_operations_hides_shorter_gaps():
    timeline = early_program(big_first=True).timeline()  # 2 operations before the first use
    assert [f.pattern for f in analyze(timeline, {"min_idle_operations": 2})] == ["early_allocation"]
    assert analyze(timeline, {"min_idle_operations": 3}) == []


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"min_idle": 2}, "unknown memory setting 'min_idle'; known: min_idle_operations"),
        ({"min_idle_operations": 0}, "memory setting min_idle_operations: expected an integer >= 1, found 0"),
        ({"min_idle_operations": True}, "memory setting min_idle_operations: expected an integer >= 1, found True"),
    ],
)
def test_bad_settings_are_one_line_errors(settings, message):
    with pytest.raises(SettingsError) as caught:
        analyze(clean_program().timeline(), settings)
    assert str(caught.value) == message


def test_every_pattern_has_a_test_here():
    source = open(__file__, encoding="utf-8").read()
    assert all(f"def test_{name}_implant" in source or f"def test_{name}_across" in source for name in PATTERNS)


# --- several fixes applied together -----------------------------------------------------------------------


def two_unused_and_a_pair():
    # 1 and 2 (300 B each) are never touched; 3 is done before 4 (both 100 B) is first used:
    # curve 300, 600, 700, 800, 800, 800, 800, 800, 500, 200, 100, 0
    return (
        Program()
        .alloc(1, 300)
        .alloc(2, 300)
        .alloc(3, 100)
        .alloc(4, 100)
        .memset((3, "w", 100))
        .kernel((3, "r"))
        .memset((4, "w", 100))
        .kernel((4, "r"))
        .free(1)
        .free(2)
        .free(3)
        .free(4)
    )


def test_fixes_applied_together_are_computed_on_one_curve():
    timeline = two_unused_and_a_pair().timeline()
    findings = analyze(timeline)
    unused = [f for f in findings if f.pattern == "unused_allocation"]
    (redundant,) = [f for f in findings if f.pattern == "redundant_allocation"]
    assert [f.peak_reduction for f in unused] == [300, 300] and redundant.peak_reduction == 100
    # 800 -> 100: both removed and 4 in 3's buffer; each finding alone leaves the other objects' bytes in place
    assert peak_reduction_together(timeline, [*unused, redundant]) == 700
    assert peak_reduction_together(timeline, unused) == 600
    assert peak_reduction_together(timeline, [redundant]) == redundant.peak_reduction


def test_a_reduction_that_is_not_a_lifetime_change_cannot_be_combined():
    timeline = dead_write_program().timeline()
    (dead,) = analyze(timeline)
    with pytest.raises(ValueError, match="dead_write finding.s peak reduction is not a lifetime change or a resize"):
        peak_reduction_together(timeline, [dead])
