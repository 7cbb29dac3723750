"""Reading report.json for the server: the bytes are read here, within the server's limits (regular files only,
a size cap), and parsed by the analyzer's one report reader (analyzer.report.parse: format and version checks,
ReportError); plus a digest of those bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import ReportError
from reuselens.analyzer.report import FORMAT, VERSION, parse
from reuselens.lsp_server.source_files import MAX_REPORT_BYTES, UnreadableFile, read_capped

__all__ = ["FORMAT", "VERSION", "load"]


def load(path: str | Path, loaded_digest: str | None = None) -> tuple[dict[str, Any] | None, str]:
    """(report, sha256 of the file's bytes). The digest tells a re-written but identical report from a new one:
    when it equals `loaded_digest` the report is not parsed again and comes back None (parsing and checking a
    real application's report took 0.18 s, and the server reloads at start-up twice, and at every watcher
    event)."""
    path = Path(path)
    try:
        raw = read_capped(path, MAX_REPORT_BYTES)  # the workspace may make it a FIFO or a link to /dev/zero
    except FileNotFoundError:
        raise ReportError(f"{path}: no report.json (profile first, or point reuselens.runDirectory at a run)") from None
    except UnreadableFile as error:
        raise ReportError(f"{path}: not read: {error}") from None
    except OSError as error:
        raise ReportError(f"{path}: not readable ({error.strerror})") from None
    # One read: the digest and the report come from the same bytes even if the file is replaced meanwhile.
    digest = hashlib.sha256(raw).hexdigest()
    return (None if digest == loaded_digest else parse(raw, path)), digest
