"""Finding rows (findings_rows) as a JSON document, format `reuselens-findings` version 1."""

from __future__ import annotations

import json
from typing import Any

FORMAT = "reuselens-findings"
VERSION = 1


def to_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION, "findings": rows}, indent=2)
