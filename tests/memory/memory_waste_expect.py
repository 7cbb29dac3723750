"""What tests/gpu/memory_waste.cu implants, checked on a run of it: each allocation's pattern, and the controls'
absence of the patterns they were built to avoid. Shared by the GPU test and the replay of the recorded run."""

from __future__ import annotations

from pathlib import Path

from implant_sites import check_sites

from reuselens.analyzer.memory.analysis import MemoryAnalysis

SOURCE = Path(__file__).resolve().parents[1] / "gpu" / "memory_waste.cu"
# allocation order in the program = object ids (allocation indices in run.json)
ORDER = ("input", "output", "early", "unused", "dead", "idle", "leaked")
IMPLANTED = {
    "early": "early_allocation",
    "unused": "unused_allocation",
    "dead": "dead_write",
    "idle": "temporary_idle",
    "leaked": "memory_leak",
}
NEVER_ON_CONTROLS = {"unused_allocation", "memory_leak", "dead_write"}
BYTES = 4 << 20


def check(analysis: MemoryAnalysis, symbolised: bool) -> None:
    objects = analysis.timeline.objects
    assert sorted(objects) == list(range(len(ORDER))), objects
    assert all(obj.size == BYTES for obj in objects.values())
    by_object: dict[str, set[str]] = {name: set() for name in ORDER}
    for finding in analysis.findings:
        by_object[ORDER[finding.object_id]].add(finding.pattern)
    for name, pattern in IMPLANTED.items():
        assert pattern in by_object[name], (name, by_object[name])
    for name in ("input", "output"):
        assert not by_object[name] & NEVER_ON_CONTROLS, (name, by_object[name])
    leak = next(f for f in analysis.findings if f.pattern == "memory_leak" and ORDER[f.object_id] == "leaked")
    assert leak.bytes == BYTES
    unused = next(f for f in analysis.findings if f.pattern == "unused_allocation")
    assert unused.peak_reduction == BYTES  # every array is live at the peak; the unused one need not be
    if symbolised:
        check_sites(analysis, SOURCE, ORDER)
