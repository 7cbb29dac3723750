"""A report's findings as flat rows, most wasteful first: what the table, CSV and JSON writers print."""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.reportview import finding_places, ranked_findings, short_kernel_name


def finding_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [_row(rank, kernel, finding) for rank, (kernel, finding) in enumerate(ranked_findings(report), start=1)]


def _row(rank: int, kernel: dict[str, Any], finding: dict[str, Any]) -> dict[str, Any]:
    where = finding_places(kernel, finding)
    waste = finding.get("waste", {})
    return {
        "rank": rank,
        "severity": finding.get("severity", "information"),
        "location": str(where[0]) if where else f"kernel {short_kernel_name(kernel)}",
        "file": where[0].file if where else None,
        "line": where[0].line if where else None,
        "kernel": short_kernel_name(kernel),
        "kernel_id": kernel.get("id"),
        "pattern": finding.get("pattern", "?"),
        "waste_bytes": int(waste.get("bytes", 0)),
        "waste_wavefronts": int(waste.get("wavefronts", 0)),
        "waste_basis": waste.get("basis", "bytes"),
        "share": float(waste.get("share", 0.0)),
        "fix": (finding.get("fix") or {}).get("kind", "none"),
        "message": finding.get("message", ""),
        "id": finding.get("id"),
    }
