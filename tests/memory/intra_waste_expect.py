"""What tests/gpu/intra_waste.cu implants, checked on a traced run of it: each allocation's intra-object pattern,
and the controls' absence of the pattern they were built to avoid (docs/memory.md, "Intra-object patterns")."""

from __future__ import annotations

import re
from pathlib import Path

from reuselens.analyzer.memory.analysis import MemoryAnalysis, site

SOURCE = Path(__file__).resolve().parents[1] / "gpu" / "intra_waste.cu"
# allocation order in the program = object ids (allocation indices in run.json)
ORDER = ("sink", "oversized", "sized", "hot_table", "flat_table", "parts", "shared_parts")
INTRA = ("overallocation", "non_uniform_access", "structured_access")
IMPLANTED = {"oversized": "overallocation", "hot_table": "non_uniform_access", "parts": "structured_access"}
BYTES = 4 << 20


def site_lines() -> dict[str, int]:
    """Marker name -> line of its allocation in intra_waste.cu."""
    lines = {}
    for number, text in enumerate(SOURCE.read_text().splitlines(), start=1):
        if match := re.search(r"// site:(\w+)", text):
            lines[match.group(1)] = number
    return lines


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
        lines = site_lines()
        for index, name in enumerate(ORDER):
            frame = site(objects[index])
            assert frame is not None and frame.file and Path(frame.file).name == SOURCE.name, (name, frame)
            assert frame.line == lines[name], (name, frame, lines[name])
