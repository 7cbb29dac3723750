"""The intra-object patterns (analyzer/memory/intra.py; docs/memory.md, "Intra-object patterns") on run
directories written to the engine's object_touches.json format: each one found where built in, and its control."""

from __future__ import annotations

import pytest
from run_dirs import RunWriter

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.memory.analysis import analyze_run

MIB = 1 << 20
SLICE = 64 << 10  # 4 MiB in 64 slices


def findings_of(run: RunWriter, tmp_path, pattern: str):
    return [f for f in analyze_run(run.write(tmp_path / "run")).findings if f.pattern == pattern]


def one_buffer(touched_bytes: int, accesses: list[int], kernel_slices: list[int] | None = None) -> RunWriter:
    run = RunWriter()
    buffer = run.alloc(4 * MIB)
    for mask in kernel_slices or [(1 << 64) - 1]:
        run.kernel("k", [(buffer, "rw")], slices={buffer: mask})
    run.free(buffer)
    return run.profile(buffer, touched_bytes, accesses, SLICE)


def test_overallocation_names_the_untouched_bytes_and_the_peak_they_cost(tmp_path):
    # a 4 MiB buffer of which the kernels used 256 KiB (a maximum-size buffer for a small input)
    run = one_buffer(256 << 10, [100] * 4 + [0] * 60)
    (finding,) = findings_of(run, tmp_path, "overallocation")
    assert finding.bytes == 4 * MIB - (256 << 10)
    assert finding.peak_reduction == 4 * MIB - (256 << 10)  # the buffer alone is the peak
    assert "262.1 KB of it (6.2%)" in finding.fix


@pytest.mark.parametrize("touched", [3 * MIB, 4 * MIB - (32 << 10)])
def test_no_overallocation_when_most_is_used_or_little_is_wasted(tmp_path, touched):
    run = one_buffer(touched, [100] * 64)
    assert findings_of(run, tmp_path, "overallocation") == []


def test_non_uniform_access_names_the_hot_slices(tmp_path):
    # 64 slices touched; slices 0-7 (the first 512 KiB) take 90% of the accesses
    accesses = [900] * 8 + [14] * 56
    (finding,) = findings_of(one_buffer(4 * MIB, accesses), tmp_path, "non_uniform_access")
    assert finding.bytes == 8 * SLICE and finding.peak_reduction == 0
    assert "bytes 0-524,288 (524.3 KB) take 90% of its accesses" in finding.fix


def test_uniform_access_is_no_finding(tmp_path):
    assert findings_of(one_buffer(4 * MIB, [50] * 64), tmp_path, "non_uniform_access") == []


def test_structured_access_when_each_kernel_has_its_own_part(tmp_path):
    quarters = [((1 << 16) - 1) << (16 * q) for q in range(4)]
    (finding,) = findings_of(one_buffer(4 * MIB, [10] * 64, quarters), tmp_path, "structured_access")
    assert finding.bytes == 3 * MIB and finding.operations == 4
    assert finding.peak_reduction == 3 * MIB


@pytest.mark.parametrize(
    "masks",
    [
        [(1 << 32) - 1, ((1 << 32) - 1) << 16],  # two kernels share slices 16-31
        [(1 << 40) - 1, ((1 << 24) - 1) << 40],  # disjoint, but one part is more than half the object
        [(1 << 64) - 1],  # one kernel
    ],
    ids=["overlapping", "large-part", "one-kernel"],
)
def test_no_structured_access(tmp_path, masks):
    assert findings_of(one_buffer(4 * MIB, [10] * 64, masks), tmp_path, "structured_access") == []


@pytest.mark.parametrize("spoiler", ["whole-copy", "unrecorded-kernel"])
def test_a_whole_copy_or_an_unrecorded_kernel_rules_structured_access_out(tmp_path, spoiler):
    # the same four kernels on their own quarters, but the whole buffer copied in, or one more kernel unrecorded
    quarters = [((1 << 16) - 1) << (16 * q) for q in range(4)]
    run = RunWriter()
    buffer = run.alloc(4 * MIB)
    if spoiler == "whole-copy":
        run.memcpy(0x1000, run.address(buffer), 4 * MIB, "htod")
    for mask in quarters:
        run.kernel("k", [(buffer, "r")], slices={buffer: mask})
    if spoiler == "unrecorded-kernel":
        run.kernel("opaque", None)
    run.free(buffer).profile(buffer, 4 * MIB, [10] * 64, SLICE)
    assert findings_of(run, tmp_path, "structured_access") == []


def test_runs_without_profiles_have_no_intra_findings(tmp_path):
    run = RunWriter()
    buffer = run.alloc(4 * MIB)
    run.kernel("k", [(buffer, "rw")])
    run.free(buffer)
    patterns = {f.pattern for f in analyze_run(run.write(tmp_path / "run")).findings}
    assert not patterns & {"overallocation", "non_uniform_access", "structured_access"}


def test_a_profile_with_the_wrong_number_of_slices_is_one_clear_error(tmp_path):
    run = one_buffer(4 * MIB, [10] * 63)
    with pytest.raises(ReuseLensError, match=r"objects\[0\].*one count per slice"):
        analyze_run(run.write(tmp_path / "run"))
