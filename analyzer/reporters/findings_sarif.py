"""A report's findings as SARIF 2.1.0, for CI systems and GitHub code scanning: one rule per pattern, one result
per finding, located at its source lines, with its reuse origins as related locations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reuselens.analyzer.reporters.sarif import physical_location, rule, sarif_log
from reuselens.analyzer.reportview import Place, finding_places, places, ranked_findings, short_kernel_name

DOCS_URL = "https://github.com/reuselens/reuselens/blob/main/docs/patterns.md"
SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def to_sarif(report: dict[str, Any], source_root: Path | None = None) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for kernel, finding in ranked_findings(report):
        pattern = finding.get("pattern", "unknown")
        rules.setdefault(pattern, rule(pattern, DOCS_URL))
        results.append(_result(kernel, finding, pattern, source_root))
    return sarif_log(list(rules.values()), results, DOCS_URL, source_root)


def _result(kernel: dict[str, Any], finding: dict[str, Any], pattern: str, source_root: Path | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": pattern,
        "level": SARIF_LEVEL.get(finding.get("severity", "information"), "note"),
        "message": {"text": f"{finding.get('message', pattern)} [kernel {short_kernel_name(kernel)}]"},
        "partialFingerprints": {"reuselensFindingId/v1": str(finding.get("id", ""))},
        "properties": {
            "wasteBytes": int(finding.get("waste", {}).get("bytes", 0)),
            "share": float(finding.get("waste", {}).get("share", 0.0)),
            "fix": (finding.get("fix") or {}).get("kind", "none"),
        },
    }
    located = [p for p in finding_places(kernel, finding) if p.file]
    if located:
        result["locations"] = [_physical(p, source_root) for p in located]
    related = [p for p in places(kernel, finding.get("origin_pcs", [])) if p.file and p not in located]
    if related:
        result["relatedLocations"] = [
            {"id": i, "message": {"text": "reuse origin"}, **_physical(p, source_root)} for i, p in enumerate(related)
        ]
    return result


def _physical(place: Place, source_root: Path | None) -> dict[str, Any]:
    return physical_location(place.file or "", place.line, source_root)
