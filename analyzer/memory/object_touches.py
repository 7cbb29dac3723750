"""`object_touches.json` (docs/memory.md): per instrumented launch, the allocations its kernel read and wrote.

The engine knows them exactly from its shadow memory; the collector writes one entry per launch it instrumented.
A launch absent from the file has unknown touches, and the timeline builder treats it conservatively.

Public API: :data:`FILE`, :data:`FORMAT`, :data:`VERSION`, :class:`ObjectTouch`, :func:`load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from reuselens.analyzer.engine_result import OBJECT_TOUCHES
from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.schema import Bool, Enum, Int, JsonError, List, Obj, SchemaError, check, decode, describe

FILE = OBJECT_TOUCHES  # written by the engine: the collector online, replay otherwise
FORMAT = "reuselens-object-touches"
VERSION = 1

TOUCH = Obj({"address": Int(), "read": Bool(), "write": Bool()}, required=("address", "read", "write"))
LAUNCH = Obj({"launch": Int(), "touches": List(TOUCH)}, required=("launch", "touches"))
SCHEMA = Obj(
    {"format": Enum(FORMAT), "version": Enum(VERSION), "launches": List(LAUNCH)},
    required=("format", "version", "launches"),
)


class ObjectTouch(NamedTuple):
    address: int  # the base address of the allocation touched
    read: bool
    write: bool


def load(run_dir: Path, error: type[ReuseLensError]) -> dict[int, list[ObjectTouch]] | None:
    """Launch id -> its kernel's touches, or None when the run has no such file (every launch is then unknown).
    A launch listed twice has its touches joined. Malformed content raises `error`, one line naming the field."""
    path = run_dir / FILE
    if not path.is_file():
        return None
    try:
        document = decode(path.read_bytes())
        if isinstance(document, dict) and document.get("format") == FORMAT and document.get("version") != VERSION:
            raise SchemaError(f"object touches version {describe(document.get('version'))}, this build reads {VERSION}")
        check(document, SCHEMA)
    except OSError as problem:
        raise error(f"{path}: unreadable ({problem.strerror})") from None
    except (JsonError, SchemaError) as problem:
        raise error(f"{path}: {problem}") from None
    touches: dict[int, list[ObjectTouch]] = {}
    for launch in document["launches"]:
        marks = touches.setdefault(launch["launch"], [])
        marks.extend(ObjectTouch(t["address"], t["read"], t["write"]) for t in launch["touches"])
    return touches
