"""What tests/gpu/vmm_map.cu should give (docs/memory.md, "Virtual memory management"): the cudaMalloc'd control
and two cuMemMap'd ranges of one reservation. The Sanitizer reports each mapping as a device allocation when
cuMemSetAccess opens it and its free at cuMemUnmap, so the mapping no kernel touches is an unused allocation and
the one the kernel fills is clean."""

from __future__ import annotations

from pathlib import Path

from reuselens.analyzer.memory.analysis import MemoryAnalysis

SOURCE = Path(__file__).resolve().parents[1] / "gpu" / "vmm_map.cu"


def _line_of(marker: str) -> int:
    return next(n for n, text in enumerate(SOURCE.read_text().splitlines(), 1) if marker in text)


def check(analysis: MemoryAnalysis, symbolised: bool) -> None:
    # allocation order: the control, then the two mappings in address order (one cuMemSetAccess opens both)
    plain, used, untouched = (analysis.timeline.objects[i] for i in range(3))
    assert len(analysis.timeline.objects) == 3
    assert plain.size == 1 << 20
    assert used.size == untouched.size >= 2 << 20 and untouched.address == used.address + used.size
    unused = [f.object_id for f in analysis.findings if f.pattern == "unused_allocation"]
    assert unused == [untouched.id]
    assert analysis.peak.bytes == plain.size + used.size + untouched.size
    if symbolised:
        assert plain.call_path[0].line == _line_of("site:plain")
        access = _line_of("cuMemSetAccess(base")
        assert used.call_path[0].line == untouched.call_path[0].line == access
