"""Finding rows (findings_rows) as a plain-text table for a terminal."""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.reportview import fit
from reuselens.analyzer.units import format_share, format_waste

TABLE_NAME_WIDTH = 60  # file:line and kernel columns of the text table (CSV, JSON, SARIF keep all)
HEADER = ("#", "severity", "file:line", "kernel", "pattern", "waste", "share", "message")


def to_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no findings"
    # Library kernels' names run to thousands of characters (PyTorch templates): columns stay readable.
    # A finding without a source line is placed by its kernel's id (as `reuselens graph --kernel` takes it).
    body = [
        (
            str(r["rank"]),
            r["severity"],
            fit(_table_location(r), TABLE_NAME_WIDTH),
            fit(r["kernel"], TABLE_NAME_WIDTH),
            r["pattern"],
            _waste_text(r),
            format_share(r["share"]),
            r["message"],
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(HEADER[:-1])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADER[:-1], widths)) + "  " + HEADER[-1]]
    for b in body:
        lines.append("  ".join(v.ljust(w) for v, w in zip(b[:-1], widths)) + "  " + b[-1])
    return "\n".join(lines)


def _table_location(row: dict[str, Any]) -> str:
    if row.get("file") or row.get("kernel_id") is None:
        return row["location"]
    return f"kernel {row['kernel_id']}"


def _waste_text(row: dict[str, Any]) -> str:
    basis = row.get("waste_basis", "bytes")
    return format_waste(row["waste_wavefronts"] if basis == "wavefronts" else row["waste_bytes"], basis)
