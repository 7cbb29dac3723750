"""run.json, written (docs/run-directory.md): the manifest the launcher starts, the tool library rewrites while
the application runs, and the launcher finishes with the exit status and, for a partial run, the reason.

The collector writes this format and the analyzer reads it (reuselens.analyzer.rundir, its one reader); each
side names the format it writes or accepts, and tests/test_architecture.py checks that the two agree, so
neither package imports the other. The tool library writes the same name and version
(collector/native/src, the manifest writer).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Sequence

MANIFEST = "run.json"
RUN_FORMAT = "reuselens-run"
RUN_VERSION = 1


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    tmp.write_text(json_lines(data), encoding="utf-8")
    os.replace(tmp, path)


def json_lines(data: Any) -> str:
    """JSON text of `data` laid out as the tool library lays out run.json: one member of the top object per line,
    the items of a list member one per line. Each piece goes through json's C encoder: with `indent`, json uses
    its pure-Python encoder, which took 30 ms of `profile`'s time after a 0.4 s app of a thousand launches
    (benchmarks/launcher_phases.py, session 10)."""
    encode = _ENCODER.encode
    if not isinstance(data, dict):
        return encode(data) + "\n"
    members = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            members.append(f"{encode(key)}: [\n  " + ",\n  ".join(map(encode, value)) + "\n ]")
        else:
            members.append(f"{encode(key)}: {encode(value)}")
    return "{\n " + ",\n ".join(members) + "\n}\n"


_ENCODER = json.JSONEncoder()


def read_back(run_dir: Path) -> dict[str, Any] | None:
    """The manifest the tool library last wrote, or None while it has written none that reads back.

    This is the writer re-reading its own file to merge what only the launcher knows: it checks nothing and
    never reports a problem to the user. Readers of runs go through the analyzer's one reader
    (reuselens.analyzer.rundir.open_run), which checks the format and the version below.
    """
    try:
        data = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ours = isinstance(data, dict) and (data.get("format"), data.get("version")) == (RUN_FORMAT, RUN_VERSION)
    return data if ours else None


def initial_manifest(
    command: Sequence[str], cwd: Path, start_time: str, kernel_filter: dict, tool_version: str
) -> dict[str, Any]:
    return {
        "format": RUN_FORMAT,
        "version": RUN_VERSION,
        "tool": {"name": "reuselens", "version": tool_version},
        "command": list(command),
        "cwd": str(cwd),
        "start_time": start_time,
        "end_time": None,
        "gpu": {"name": "", "arch": "", "driver": ""},
        "status": "partial",
        "partial_reason": "starting",
        "exit_code": None,
        "kernel_filter": kernel_filter,
        "modules": [],
        "functions": [],
        "launches": [],
        "allocations": [],
        "errors": [],
    }


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def finalize_manifest(
    manifest: dict[str, Any] | None, base: dict[str, Any], returncode: int | None, stop_reason: str | None, wall: float
) -> dict[str, Any]:
    """Merge the tool's manifest (if it wrote one) with what only the launcher knows, and decide status."""
    data = dict(manifest) if manifest is not None else dict(base)
    for key in ("command", "cwd", "start_time"):
        data[key] = base[key]
    data["exit_code"] = returncode
    data["end_time"] = utc_now()
    errors = list(data.get("errors") or [])
    collector = data.get("collector")
    tool_finished = bool(collector and collector.get("finished"))
    tool_reason = data.get("partial_reason")
    if stop_reason is not None:
        status, reason = "partial", stop_reason
    elif returncode is not None and returncode < 0:
        status, reason = "partial", f"app crashed ({signal_name(-returncode)})"
    elif collector is None:
        status = "partial"
        reason = (
            "the collector did not start in the application (it used no CUDA, or the tool library "
            "could not be preloaded)"
        )
    elif not tool_finished:
        status = "partial"
        if tool_reason and tool_reason not in ("running", "starting"):
            reason = tool_reason
        else:
            reason = f"app exited before the collector finished (exit code {returncode})"
    else:
        status = data.get("status", "partial")
        reason = tool_reason if status != "complete" else None
    data["status"] = status
    data["partial_reason"] = reason
    data["errors"] = errors
    data["launcher"] = {"wall_seconds": round(wall, 6), "stop_reason": stop_reason}
    return data
