"""Reading report.json: through analyzer.report when that module is present, otherwise a small local reader
of the same contract (docs/report-format.md, version 1), raising the same ReportError."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from analyzer.errors import ReportError

FORMAT = "reuselens-report"
VERSION = 1


def _local_load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ReportError(f"{path}: no report.json (profile first, or point reuselens.runDirectory at a run)") from None
    except (OSError, ValueError) as error:
        raise ReportError(f"{path}: not readable as JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReportError(f"{path}: not a ReuseLens report (format is not {FORMAT!r})")
    if data.get("version") != VERSION:
        raise ReportError(f"{path}: report version {data.get('version')!r}, this build reads version {VERSION}")
    if not isinstance(data.get("kernels"), list):
        raise ReportError(f"{path}: report has no kernel list")
    return data


def load(path: str | Path) -> tuple[dict[str, Any], str]:
    """(report, sha256 of the file's bytes). The digest tells a re-written but identical report from a new one."""
    path = Path(path)
    try:
        from analyzer import report as shared  # the analyzer's reader, when it exists
        loader = getattr(shared, "load", None)
    except ImportError:
        loader = None
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        raise ReportError(f"{path}: no report.json (profile first, or point reuselens.runDirectory at a run)") from None
    except OSError as error:
        raise ReportError(f"{path}: not readable ({error.strerror})") from None
    report = loader(path) if loader else _local_load(path)
    return report, digest
