"""What tests/gpu/intra_waste.cu implants, checked on a traced run of it: each allocation's intra-object pattern,
and the controls' absence of the pattern they were built to avoid (docs/memory.md, "Intra-object patterns")."""

from __future__ import annotations

from pathlib import Path

from implant_sites import check_sites

from reuselens.analyzer.memory.analysis import MemoryAnalysis

SOURCE = Path(__file__).resolve().parents[1] / "gpu" / "intra_waste.cu"
# allocation order in the program = object ids (allocation indices in run.json)
ORDER = ("sink", "oversized", "sized", "hot_table", "flat_table", "parts", "shared_parts")
INTRA = ("overallocation", "non_uniform_access", "structured_access")
IMPLANTED = {"oversized": "overallocation", "hot_table": "non_uniform_access", "parts": "structured_access"}
BYTES = 4 << 20


def check(analysis: MemoryAnalysis, symbolised: bool) -> None:
    objects = analysis.timeline.objects
    assert sorted(objects) == list(range(len(ORDER))), objects
    assert all(obj.size == BYTES for obj in objects.values())
    intra: dict[str, set[str]] = {name: set() for name in ORDER}
    for finding in analysis.findings:
        if finding.pattern in INTRA:
            intra[ORDER[finding.object_id]].add(finding.pattern)
    # each implant gets its pattern and nothing else of the three; every control gets none
    assert intra == {name: {IMPLANTED[name]} if name in IMPLANTED else set() for name in ORDER}, intra
    over = next(f for f in analysis.findings if f.pattern == "overallocation")
    assert over.bytes == BYTES - BYTES // 16  # 1/16 of it used
    hot = next(f for f in analysis.findings if f.pattern == "non_uniform_access")
    assert hot.bytes == 8 * (BYTES // 64)  # the hottest eighth of 64 touched slices
    parts = next(f for f in analysis.findings if f.pattern == "structured_access")
    assert parts.bytes == BYTES - BYTES // 4 and parts.operations == 4
    if symbolised:
        check_sites(analysis, SOURCE, ORDER)
