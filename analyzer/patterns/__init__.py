"""Pattern findings over one kernel of report.json (paper section 3.3, plus the section 6.3 queries).

Public API:
    find_findings(kernel, settings=None) -> list of finding objects (docs/report-format.md `findings`)
    find_report_findings(kernels, settings=None) -> the same for every kernel of a report, barrier lines that
        one kernel keeps kept in all (what the pipeline uses)
    PATTERNS: pattern id -> short title (docs/patterns.md has one section per id, anchored by the id)
    VALUE_PATTERNS: the ids only a run profiled with values (`profile --values`) can show
    DEFAULT_SETTINGS: the thresholds of docs/settings.md with the paper's values

The rules and their order live in registry.py, loaded on first use: a command that only parses the
thresholds (settings.py) does not load every rule. Each pattern lives in its own module exposing `PATTERNS` and `find(view, settings) -> list[Draft]`. The
rules are mechanical predicates over the graph; this module only runs them and removes overlaps so that a PC
is reported twice only when the two findings recommend different fixes:
  - PCs of a thread-private shared buffer (abuse-smem) are not also reported as redundant accesses or bank
    conflicts: moving the buffer to registers removes both;
  - PCs of a __constant__ candidate region are not also reported as broadcasting or hierarchical reuse;
  - thread-dominant hierarchical reuse keeps only the PCs no redundant-access finding already covers.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing itself is not imported at run time: every `reuselens` start loads this package
if TYPE_CHECKING:
    from typing import Any

__all__ = ["find_findings", "find_report_findings", "PATTERNS", "VALUE_PATTERNS", "DEFAULT_SETTINGS"]
_REGISTRY_NAMES = frozenset({*__all__, "RULES", "Rule"})


def __getattr__(name: str) -> Any:
    if name in _REGISTRY_NAMES:
        return getattr(importlib.import_module("reuselens.analyzer.patterns.registry"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
