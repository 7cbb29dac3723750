"""Finding rows (findings_rows) as CSV, one line per finding, every column of the row but the display ones."""

from __future__ import annotations

import csv
import io
from typing import Any

FIELDS = [
    "rank",
    "severity",
    "file",
    "line",
    "kernel",
    "pattern",
    "waste_bytes",
    "waste_wavefronts",
    "waste_basis",
    "share",
    "fix",
    "message",
    "id",
]


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
