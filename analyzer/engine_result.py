"""The engine's result document (format `reuselens-engine`, docs/engine.md and docs/report-format.md).

Two sources: RUN/analysis.json, which the collector's online engine writes at exit, and the same JSON from
the engine binding after a replay. Only this module parses it.

Public API: :data:`FORMAT`, :data:`VERSION`, :data:`ONLINE_ANALYSIS`, :func:`load`, :func:`from_engine`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import TraceError

FORMAT = "reuselens-engine"
VERSION = 1  # the C++ side's RL_ENGINE_JSON_VERSION (tests/engine/test_format_readers.py keeps them equal)
ONLINE_ANALYSIS = "analysis.json"


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """RUN/analysis.json, checked: a JSON object of format reuselens-engine, version 1, with a kernel list.

    Raises TraceError naming the file otherwise; without the file the analyzer replays the traces instead,
    which the message says."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TraceError(f"{path}: unreadable online analysis ({error}); delete it to replay traces") from error
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or data.get("version") != VERSION
        or not isinstance(data.get("kernels"), list)
    ):
        raise TraceError(f"{path}: not a version-{VERSION} ReuseLens engine result; delete it to replay traces")
    return data


def from_engine(engine: Any) -> dict[str, Any]:
    """The result of a replay engine (an `_engine.Engine` after its last launch). Not checked like a file: the
    binding is part of this build, and its JSON version is tested against :data:`VERSION`."""
    return json.loads(engine.to_json())
