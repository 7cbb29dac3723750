"""One run's memory analysis: its timeline, the as-run peak and the object-level findings, for every surface
(the CLI's table, JSON, SARIF and HTML page) to present alike.

Public API: :class:`MemoryAnalysis`, :func:`analyze_run`, :func:`site`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from reuselens.analyzer.memory import intra
from reuselens.analyzer.memory.patterns import PATTERNS, Finding, analyze
from reuselens.analyzer.memory.peak import Peak, peak
from reuselens.analyzer.memory.run_timeline import RunMemory, load_run_memory
from reuselens.analyzer.memory.timeline import DataObject, Frame, Timeline


@dataclass(frozen=True)
class MemoryAnalysis:
    memory: RunMemory
    peak: Peak
    findings: list[Finding]  # the largest peak reduction first

    @property
    def timeline(self) -> Timeline:
        return self.memory.timeline


def analyze_run(path: str | Path, settings: Mapping[str, Any] | None = None) -> MemoryAnalysis:
    memory = load_run_memory(path)
    findings = analyze(memory.timeline, settings) + intra.analyze_intra(memory)
    order = PATTERNS + intra.PATTERNS
    findings.sort(key=lambda f: (-f.peak_reduction, -f.bytes, order.index(f.pattern), f.object_id))
    return MemoryAnalysis(memory, peak(memory.timeline), findings)


def site(obj: DataObject) -> Frame | None:
    """Where the program allocated the object: the first frame of its call path (runtime frames are already
    left out), or None when the collector recorded no call path."""
    return obj.call_path[0] if obj.call_path else None
