"""report.json (docs/report-format.md, version 1): load and save with format/version checks.

Public API: :data:`FORMAT`, :data:`VERSION`, :func:`load`, :func:`parse`, :func:`save`. Problems reach the user
as one ReportError sentence naming the file. Only this module parses report.json: the language server reads the
bytes itself (size cap, regular files only) and hands them to :func:`parse`.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import ReportError

FORMAT = "reuselens-report"
VERSION = 1


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a report: JSON object, ``format`` = reuselens-report, ``version`` = 1, a kernel list."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"{path}: no such report (analyse the run first)") from None
    except OSError as error:
        raise _unreadable(path, error) from None
    return parse(raw, path)


def parse(raw: bytes, path: str | os.PathLike[str]) -> dict[str, Any]:
    """The report in ``raw`` (the bytes of ``path``) if it is one this build reads; ReportError naming ``path``
    otherwise."""
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise _unreadable(path, error) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReportError(f"{path}: not a ReuseLens report (format is not {FORMAT!r})")
    if data.get("version") != VERSION:
        raise ReportError(f"{path}: report version {data.get('version')!r}, this build reads version {VERSION}")
    if not isinstance(data.get("kernels"), list):
        raise ReportError(f"{path}: report has no kernel list")
    return data


def _unreadable(path: str | os.PathLike[str], error: Exception) -> ReportError:
    return ReportError(f"{path}: not readable as JSON ({error})")


def save(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write atomically (temporary file in the same directory, then rename), so readers never see half a file.

    The report must carry the current format and version; anything else is a programming error."""
    if report.get("format") != FORMAT or report.get("version") != VERSION:
        raise ReportError(f"{path}: refusing to write a report without format {FORMAT!r} version {VERSION}")
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except (OSError, ValueError) as error:
        raise ReportError(f"{path}: cannot write report ({error})") from None
    return path
