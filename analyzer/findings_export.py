"""Findings as rows, CSV, JSON and SARIF 2.1.0 (for CI systems and GitHub code scanning)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from reuselens.analyzer import __version__
from reuselens.analyzer.reportview import finding_places, fit, places, ranked_findings, short_kernel_name
from reuselens.analyzer.units import format_bytes, format_share

DOCS_URL = "https://github.com/reuselens/reuselens/blob/main/docs/patterns.md"
SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
TABLE_NAME_WIDTH = 60  # file:line and kernel columns of the text table (CSV, JSON, SARIF keep all)
COLUMNS = ("rank", "severity", "location", "kernel", "pattern", "waste_bytes", "share", "fix", "message")


def finding_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for rank, (kernel, finding) in enumerate(ranked_findings(report), start=1):
        where = finding_places(kernel, finding)
        waste = finding.get("waste", {})
        rows.append({
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
        })
    return rows


def to_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no findings"
    header = ("#", "severity", "file:line", "kernel", "pattern", "waste", "share", "message")
    # Library kernels' names run to thousands of characters (PyTorch templates): columns stay readable.
    # A finding without a source line is placed by its kernel's id (as `reuselens graph --kernel` takes it).
    body = [(str(r["rank"]), r["severity"], fit(_table_location(r), TABLE_NAME_WIDTH), fit(r["kernel"], TABLE_NAME_WIDTH),
             r["pattern"], _waste_text(r), format_share(r["share"]), r["message"]) for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header[:-1])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header[:-1], widths)) + "  " + header[-1]]
    for b in body:
        lines.append("  ".join(v.ljust(w) for v, w in zip(b[:-1], widths)) + "  " + b[-1])
    return "\n".join(lines)


def _table_location(row: dict[str, Any]) -> str:
    if row.get("file") or row.get("kernel_id") is None:
        return row["location"]
    return f"kernel {row['kernel_id']}"


def _waste_text(row: dict[str, Any]) -> str:
    if row.get("waste_basis") == "wavefronts":
        return f"{row['waste_wavefronts']:,} wavefronts"
    return format_bytes(row["waste_bytes"])


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["rank", "severity", "file", "line", "kernel", "pattern",
                                             "waste_bytes", "waste_wavefronts", "waste_basis", "share", "fix",
                                             "message", "id"],
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def to_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps({"format": "reuselens-findings", "version": 1, "findings": rows}, indent=2)


def _artifact_uri(file: str, base: Path | None) -> dict[str, str]:
    path = Path(file)
    if base is not None:
        try:
            return {"uri": path.resolve().relative_to(base.resolve()).as_posix(), "uriBaseId": "SRCROOT"}
        except ValueError:
            pass
    return {"uri": path.as_uri() if path.is_absolute() else path.as_posix()}


def to_sarif(report: dict[str, Any], source_root: Path | None = None) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for kernel, finding in ranked_findings(report):
        pattern = finding.get("pattern", "unknown")
        rules.setdefault(pattern, {
            "id": pattern,
            "name": pattern,
            "shortDescription": {"text": pattern.replace("-", " ")},
            "helpUri": f"{DOCS_URL}#{pattern}",
        })
        where = finding_places(kernel, finding)
        origins = places(kernel, finding.get("origin_pcs", []))
        result: dict[str, Any] = {
            "ruleId": pattern,
            "level": SARIF_LEVEL.get(finding.get("severity", "information"), "note"),
            "message": {"text": f"{finding.get('message', pattern)} [kernel {short_kernel_name(kernel)}]"},
            "partialFingerprints": {"reuselensFindingId/v1": str(finding.get("id", ""))},
            "properties": {"wasteBytes": int(finding.get("waste", {}).get("bytes", 0)),
                           "share": float(finding.get("waste", {}).get("share", 0.0)),
                           "fix": (finding.get("fix") or {}).get("kind", "none")},
        }
        located = [p for p in where if p.file]
        if located:
            result["locations"] = [{"physicalLocation": {
                "artifactLocation": _artifact_uri(p.file, source_root),
                "region": {"startLine": max(1, int(p.line or 1))}}} for p in located]
        related = [p for p in origins if p.file and p not in located]
        if related:
            result["relatedLocations"] = [{"id": i, "message": {"text": "reuse origin"}, "physicalLocation": {
                "artifactLocation": _artifact_uri(p.file, source_root),
                "region": {"startLine": max(1, int(p.line or 1))}}} for i, p in enumerate(related)]
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "ReuseLens", "version": __version__, "informationUri": DOCS_URL,
                            "rules": list(rules.values())}},
        "results": results,
    }
    if source_root is not None:
        run["originalUriBaseIds"] = {"SRCROOT": {"uri": source_root.resolve().as_uri() + "/"}}
    sarif = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2)
