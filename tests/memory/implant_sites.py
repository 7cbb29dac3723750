"""The allocation lines of the GPU implant programs (tests/gpu/memory_waste.cu, intra_waste.cu): each allocation
carries a marker comment "site:NAME", and a symbolised run must place every object on its marker's line."""

from __future__ import annotations

import re
from pathlib import Path

from reuselens.analyzer.memory.analysis import MemoryAnalysis, site


def site_lines(source: Path) -> dict[str, int]:
    """Marker name -> line of its allocation in `source`."""
    lines = {}
    for number, text in enumerate(source.read_text().splitlines(), start=1):
        if match := re.search(r"// site:(\w+)", text):
            lines[match.group(1)] = number
    return lines


def check_sites(analysis: MemoryAnalysis, source: Path, order: tuple[str, ...]) -> None:
    """Object i (allocation order) is allocated on the line of marker order[i] of `source`."""
    lines = site_lines(source)
    for index, name in enumerate(order):
        frame = site(analysis.timeline.objects[index])
        assert frame is not None and frame.file and Path(frame.file).name == source.name, (name, frame)
        assert frame.line == lines[name], (name, frame, lines[name])
