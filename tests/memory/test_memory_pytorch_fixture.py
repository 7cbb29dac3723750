"""The memory analysis of a PyTorch training loop recorded on the H200 with the cudaMallocAsync allocator
backend (tests/data/memory_runs/pytorch_async): the pool's allocations are tensors, one object each, and the
findings on them are the exact consequences of the recorded run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from reuselens.analyzer.memory.analysis import analyze_run

RUN = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "pytorch_async"


def test_a_pool_allocators_tensors_are_objects_with_their_lifetimes():
    analysis = analyze_run(RUN)
    manifest = analysis.memory.run.manifest
    kinds = Counter(a["kind"] for a in manifest["allocations"])
    assert kinds == {"async": 55, "device": 6}  # 55 tensors from the pool, 6 cudaMalloc (cuBLAS workspaces, ...)
    timeline = analysis.timeline
    assert len(timeline.objects) == 61 and analysis.memory.unknown_touch_kernels == 0
    freed = sum(1 for oid in timeline.objects if oid in timeline.freed_at)
    assert freed == 52  # the tensors freed during the loop; the rest live until the process exits
    # every kernel's touches were recorded, and every touch names a live object
    assert analysis.memory.stray_touches == 0


def test_findings_follow_from_the_recorded_touches():
    analysis = analyze_run(RUN)
    timeline = analysis.timeline
    for finding in analysis.findings:
        size = timeline.objects[finding.object_id].size
        assert 0 <= finding.peak_reduction <= analysis.peak.bytes
        assert finding.bytes <= size
        if finding.pattern == "unused_allocation":
            assert not timeline.touched_at[finding.object_id]
        if finding.pattern == "overallocation":
            profile = analysis.memory.profiles[finding.object_id]
            assert finding.bytes == size - profile.touched_bytes and profile.touched_bytes * 2 <= size
    patterns = Counter(f.pattern for f in analysis.findings)
    # two 33.5 MB pool blocks of which the kernels touched about 1 MB and 33 KB: overallocation on real data
    assert patterns["overallocation"] == 2 and patterns["unused_allocation"] == 7
