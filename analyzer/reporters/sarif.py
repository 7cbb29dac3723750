"""What every SARIF 2.1.0 writer of ReuseLens shares: the log around its rules and results, and a result's
location on a source line (relative to `--source-root` when it lies under it, so code scanning can match files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reuselens.analyzer import __version__

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif_log(
    rules: list[dict[str, Any]], results: list[dict[str, Any]], information_uri: str, source_root: Path | None
) -> str:
    run: dict[str, Any] = {
        "tool": {
            "driver": {"name": "ReuseLens", "version": __version__, "informationUri": information_uri, "rules": rules}
        },
        "results": results,
    }
    if source_root is not None:
        run["originalUriBaseIds"] = {"SRCROOT": {"uri": source_root.resolve().as_uri() + "/"}}
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2)


def rule(pattern: str, docs_url: str) -> dict[str, Any]:
    return {
        "id": pattern,
        "name": pattern,
        "shortDescription": {"text": pattern.replace("-", " ").replace("_", " ")},
        "helpUri": f"{docs_url}#{pattern}",
    }


def physical_location(file: str, line: int | None, source_root: Path | None) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": artifact_uri(file, source_root),
            "region": {"startLine": max(1, int(line or 1))},
        }
    }


def artifact_uri(file: str, base: Path | None) -> dict[str, str]:
    path = Path(file)
    if base is not None:
        try:
            return {"uri": path.resolve().relative_to(base.resolve()).as_posix(), "uriBaseId": "SRCROOT"}
        except ValueError:
            pass
    return {"uri": path.as_uri() if path.is_absolute() else path.as_posix()}
