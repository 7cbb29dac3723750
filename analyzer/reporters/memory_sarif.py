"""A run's memory findings (memory_json's document) as SARIF 2.1.0: one rule per pattern, one result per
finding, located on the line that allocated the object, so code scanning shows it where the fix goes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reuselens.analyzer.reporters.sarif import physical_location, rule, sarif_log

DOCS_URL = "https://github.com/reuselens/reuselens/blob/main/docs/memory.md"


def to_sarif(document: dict[str, Any], source_root: Path | None = None) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for finding in document["findings"]:
        rules.setdefault(finding["pattern"], rule(finding["pattern"], DOCS_URL))
        results.append(_result(finding, source_root))
    return sarif_log(list(rules.values()), results, DOCS_URL, source_root)


def _result(finding: dict[str, Any], source_root: Path | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding["pattern"],
        # a finding that lowers the peak is worth acting on; one that does not (a dead write) is advice
        "level": "warning" if finding["peak_reduction"] > 0 else "note",
        "message": {"text": finding["fix"]},
        "partialFingerprints": {"reuselensMemoryFinding/v1": f"{finding['pattern']}:{_site_key(finding)}"},
        "properties": {
            "bytes": finding["bytes"],
            "operations": finding["operations"],
            "peakReduction": finding["peak_reduction"],
            "object": finding["object"],
        },
    }
    site = finding["site"]
    if site and site["file"]:
        result["locations"] = [physical_location(site["file"], site["line"], source_root)]
    return result


def _site_key(finding: dict[str, Any]) -> str:
    """Stable across runs of one program, unlike object ids and addresses: the allocation site."""
    site = finding["site"]
    if not site:
        return f"object-{finding['object']}"
    return f"{site['file'] or site['function']}:{site['line'] or 0}"
