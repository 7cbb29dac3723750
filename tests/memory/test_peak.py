"""The memory curve, its peak and the peak after a changed residency, against numbers worked out by hand."""

from __future__ import annotations

from memory_programs import Program

from reuselens.analyzer.memory.peak import peak, peak_with, usage


def three_buffers():
    # op:     0        1        2           3        4            5        6         7
    return (
        Program()
        .alloc(1, 100)
        .memcpy((1, "w", 100))
        .alloc(2, 300)
        .kernel((1, "r"), (2, "w", 300))
        .alloc(3, 50)
        .kernel((2, "r"), (3, "w", 50))
        .free(2)
        .memcpy((3, "r"))
        .timeline()
    )


def test_usage_counts_an_object_from_its_alloc_up_to_but_not_at_its_free():
    # GIVEN objects 1 (100 B, never freed), 2 (300 B, freed at op 6) and 3 (50 B, never freed)
    # THEN the curve is 100, 100, 400, 400, 450, 450, 150, 150
    assert usage(three_buffers()) == [100, 100, 400, 400, 450, 450, 150, 150]


def test_peak_is_the_first_highest_point_and_lists_what_is_live_there_largest_first():
    result = peak(three_buffers())
    assert (result.bytes, result.index, result.live) == (450, 4, (2, 1, 3))


def test_peak_with_a_shortened_lifetime():
    # WHEN object 2 lives only over ops 2..5 but is freed right after op 3 (its last use): [2, 4)
    # THEN ops 4 and 5 hold 100 + 50 = 150 and the peak is 400, at ops 2 and 3
    assert peak_with(three_buffers(), {2: [(2, 4)]}) == 400


def test_peak_with_a_removed_object_and_a_split_residency():
    timeline = three_buffers()
    assert peak_with(timeline, {2: []}) == 150
    # object 1 freed after op 1 and allocated again for op 3 only: ops 2 and 4..5 lose its 100 bytes
    assert usage(timeline, {1: [(0, 2), (3, 4)]}) == [100, 100, 300, 400, 350, 350, 50, 50]
    assert peak_with(timeline, {1: [(0, 2), (3, 4)]}) == 400


def test_an_empty_timeline_has_a_peak_of_zero_at_no_operation():
    result = peak(Program().timeline())
    assert (result.bytes, result.index, result.live) == (0, None, ())
