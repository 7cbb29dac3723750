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
import re
import signal
import time
from pathlib import Path

TYPE_CHECKING = False  # typing itself is not imported at run time: 4-5 ms of every start on the H200 host
if TYPE_CHECKING:
    from typing import Any, Mapping, Sequence

MANIFEST = "run.json"
RUN_FORMAT = "reuselens-run"
RUN_VERSION = 1


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_json_atomic(path: Path, data: Any, verbatim: Mapping[str, tuple[Any, str]] | None = None) -> str:
    """Write `data` (json_lines) to `path` by a rename; the text written."""
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    text = json_lines(data, verbatim)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return text


def json_lines(data: Any, verbatim: Mapping[str, tuple[Any, str]] | None = None) -> str:
    """JSON text of `data` laid out as the tool library lays out run.json: one member of the top object per line,
    the items of a list member one per line. Each piece goes through json's C encoder: with `indent`, json uses
    its pure-Python encoder, which took 30 ms of `profile`'s time after a 0.4 s app of a thousand launches
    (benchmarks/launcher_phases.py, session 10).

    verbatim (what read_back_members gives): members whose value is still the very object read keep the text they
    were read from, encoded by no one again: the launcher rewrites a dozen small members of a run.json whose
    launches and memory operations run to hundreds of kilobytes (7-14 ms to encode after a thousand launches)."""
    encode = _ENCODER.encode
    if not isinstance(data, dict):
        return encode(data) + "\n"
    members = []
    for key, value in data.items():
        kept = verbatim.get(key) if verbatim is not None else None
        if kept is not None and kept[0] is value:
            members.append(f"{encode(key)}: {kept[1]}")
        elif isinstance(value, list) and value:
            members.append(f"{encode(key)}: [\n  " + ",\n  ".join(map(encode, value)) + "\n ]")
        else:
            members.append(f"{encode(key)}: {encode(value)}")
    return "{\n " + ",\n ".join(members) + "\n}\n"


_ENCODER = json.JSONEncoder()
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def decode_members(text: str) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
    """A JSON object's members, and each member's value with the text it was decoded from (json's C scanner
    decodes every value; only the object's own punctuation is read here). ValueError if `text` is not one JSON
    object."""
    skip = _SPACE.match
    pos = skip(text, 0).end()
    if not text.startswith("{", pos):
        raise ValueError("not a JSON object")
    pos = skip(text, pos + 1).end()
    data: dict[str, Any] = {}
    texts: dict[str, tuple[Any, str]] = {}
    if text.startswith("}", pos):
        pos += 1
    else:
        while True:
            key, pos = _DECODER.raw_decode(text, pos)
            if not isinstance(key, str):
                raise ValueError("an object key is not a string")
            pos = skip(text, pos).end()
            if not text.startswith(":", pos):
                raise ValueError("expected ':'")
            start = skip(text, pos + 1).end()
            value, pos = _DECODER.raw_decode(text, start)
            data[key] = value
            texts[key] = (value, text[start:pos])
            pos = skip(text, pos).end()
            if text.startswith(",", pos):
                pos = skip(text, pos + 1).end()
            elif text.startswith("}", pos):
                pos += 1
                break
            else:
                raise ValueError("expected ',' or '}'")
    if skip(text, pos).end() != len(text):
        raise ValueError("text after the object")
    return data, texts


def read_back(run_dir: Path) -> dict[str, Any] | None:
    """The manifest the tool library last wrote, or None while it has written none that reads back.

    This is the writer re-reading its own file to merge what only the launcher knows: it checks nothing and
    never reports a problem to the user. Readers of runs go through the analyzer's one reader
    (reuselens.analyzer.rundir.open_run), which checks the format and the version below.
    """
    members = read_back_members(run_dir)
    return members[0] if members is not None else None


def read_back_members(run_dir: Path) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]] | None:
    """read_back's manifest, with each top-level member's text as written (for write_json_atomic's verbatim)."""
    try:
        return members_of((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def members_of(text: str) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]] | None:
    """read_back_members of run.json's text; None when it is not this format's (ValueError: not one object)."""
    data, texts = decode_members(text)
    ours = (data.get("format"), data.get("version")) == (RUN_FORMAT, RUN_VERSION)
    return (data, texts) if ours else None


def collector_finished(text: str) -> bool:
    """Whether run.json's text, as the tool library wrote it, says the tool library finished: its exit files
    (run.json, object_touches.json, analysis.json) are then complete while the app may still be tearing down.
    Only the collector member is decoded (the tool library writes one member per line), so the launcher can ask
    at each of the periodic rewrites of a large run.json."""
    found = _COLLECTOR_MEMBER.search(text)  # the tool library indents members by two spaces, json_lines by one
    if found is None:
        return False
    try:
        value, _ = _DECODER.raw_decode(text, found.end())
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("finished") is True


# A top-level member starts a line; inside a string a quote is escaped, so `"collector": ` there is a key.
_COLLECTOR_MEMBER = re.compile(r'\n[ \t]*"collector":[ \t]*')


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
