"""Properties every finding must have, on random valid programs: a fix only shrinks or drops residencies, so it
never raises the peak and never saves more than the object's bytes; spans lie inside the program."""

from __future__ import annotations

import random

import pytest
from memory_programs import Program

from reuselens.analyzer.memory.patterns import analyze
from reuselens.analyzer.memory.peak import PeakModel, peak, peak_with, residency


def random_program(seed: int) -> Program:
    rng = random.Random(seed)
    program, live, next_id = Program(), [], 0
    for _ in range(rng.randint(5, 40)):
        choice = rng.random()
        if choice < 0.25 or not live:
            program.alloc(next_id, rng.choice([64, 128, 256, 1000]))
            live.append(next_id)
            next_id += 1
        elif choice < 0.4:
            program.free(live.pop(rng.randrange(len(live))))
        else:
            touched = rng.sample(live, rng.randint(1, min(3, len(live))))
            touches = [(oid, rng.choice(["r", "w", "rw"]), rng.choice([None, 64, 4096])) for oid in touched]
            touches = [(oid, mode) if size is None else (oid, mode, size) for oid, mode, size in touches]
            getattr(program, rng.choice(["kernel", "memcpy", "memset"]))(*touches)
    return program


@pytest.mark.parametrize("seed", range(40))
def test_findings_are_consistent_on_random_programs(seed):
    timeline = random_program(seed).timeline()
    as_run = peak(timeline).bytes
    assert peak_with(timeline, {}) == as_run
    for finding in analyze(timeline):
        size = timeline.objects[finding.object_id].size
        assert 0 <= finding.peak_reduction <= size, finding
        if finding.span is not None:
            first, last = finding.span
            assert 0 <= first <= last < len(timeline.operations), finding
        if finding.pattern != "dead_write":
            assert finding.bytes == size and finding.operations >= 0


@pytest.mark.parametrize("seed", range(40))
def test_the_fast_peak_model_agrees_with_recomputing_the_curve(seed):
    timeline = random_program(seed).timeline()
    model, rng = PeakModel(timeline), random.Random(seed)
    assert model.peak == peak(timeline).bytes
    for oid in timeline.objects:
        (first, end) = residency(timeline, oid)[0]
        cut = rng.randint(first, end)
        other = rng.choice(list(timeline.objects))
        for changed in (
            {oid: []},
            {oid: [(first, cut)]},
            {oid: [(first, cut), (cut + 2, end)]},
            {oid: [(0, end)]},
            {oid: [(first, cut)], other: [(0, len(timeline.operations))]} if other != oid else {},
        ):
            assert model.peak_with(changed) == peak_with(timeline, changed), changed
