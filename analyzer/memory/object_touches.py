"""`object_touches.json` (docs/memory.md): per instrumented launch, the allocations its kernel read and wrote.

The engine knows them exactly from its shadow memory; the collector writes one entry per launch it instrumented.
A launch absent from the file has unknown touches, and the timeline builder treats it conservatively.

Since session 7 the engine also writes, per touch, which of the object's slices the launch touched (`slices`),
and per object (`objects`, in allocation order) its exact touched bytes and per-slice accesses: the input of the
intra-object patterns (intra.py). Files without them still read; those patterns then have nothing to say.
Version 2 adds `touched_unit_bytes` to an object (absent: 4, exact): an object-level run's element map coarser
than one bit per 4-byte granule, whose touched bytes are then whole units, at least what was touched. A run
profiled with values adds, per object, `value_loads` and `same_value` (absent: 0): its load lane-granules with a
value and those that returned what their granule's last load returned (docs/engine.md, "Value redundancy").

Public API: :data:`FILE`, :data:`FORMAT`, :data:`VERSION`, :class:`ObjectTouch`, :class:`ObjectProfile`,
:class:`RecordedTouches`, :func:`load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from reuselens.analyzer.engine_result import OBJECT_TOUCHES
from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.schema import Bool, Enum, Int, JsonError, List, Obj, SchemaError, check, decode, describe

FILE = OBJECT_TOUCHES  # written by the engine: the collector online, replay otherwise
FORMAT = "reuselens-object-touches"
VERSION = 2
READABLE_VERSIONS = (1, 2)

TOUCH = Obj(
    {"address": Int(), "read": Bool(), "write": Bool(), "slices": Int(0, (1 << 64) - 1)},
    required=("address", "read", "write"),
)
LAUNCH = Obj({"launch": Int(), "touches": List(TOUCH)}, required=("launch", "touches"))
OBJECT = Obj(
    {
        "address": Int(),
        "size": Int(1),
        "slice_bytes": Int(1),
        "touched_bytes": Int(0),
        "slice_accesses": List(Int(0)),
        "touched_unit_bytes": Int(4),
        "value_loads": Int(0),
        "same_value": Int(0),
    },
    required=("address", "size", "slice_bytes", "touched_bytes", "slice_accesses"),
    rule=lambda o: (
        "slice_accesses: one count per slice of the object, at most 64"
        if len(o["slice_accesses"]) != min(64, -(-o["size"] // o["slice_bytes"]))
        else ("touched_bytes: more than the object's size" if o["touched_bytes"] > o["size"] else None)
    ),
)
SCHEMA = Obj(
    {"format": Enum(FORMAT), "version": Enum(*READABLE_VERSIONS), "launches": List(LAUNCH), "objects": List(OBJECT)},
    required=("format", "version", "launches"),
)


class ObjectTouch(NamedTuple):
    address: int  # the base address of the allocation touched
    read: bool
    write: bool
    slices: int | None = None  # bit k: the launch touched slice k of the object; None when not recorded


class ObjectProfile(NamedTuple):
    """One allocation's whole life as the engine saw it: slice k covers bytes [k, k + 1) * slice_bytes (the last
    one also the rest, when the object has more than 64 slices' worth)."""

    address: int
    size: int
    slice_bytes: int
    touched_bytes: int  # bytes of the object any kernel access touched (4-byte words, exact; see touched_unit)
    slice_accesses: tuple[int, ...]  # lane-granule accesses per slice
    # An object-level run's profile, made from the slices its kernels touched (run_timeline.py): their mask.
    # touched_bytes is then the bytes of those slices, at least what was touched, and there are no access counts.
    # None: a profile the engine or an element map counted.
    touched_slices: int | None = None
    # What touched_bytes counts in: 4, exact; more for a coarse element map (whole units, at least what was touched)
    touched_unit: int = 4
    # Runs with values: load lane-granules of the object with a value, and those that found their granule's last
    # loaded value again (the object's temporal value redundancy); 0 otherwise.
    value_loads: int = 0
    same_value: int = 0


def slices_bytes(size: int, slice_bytes: int, slices: list[int]) -> int:
    """Bytes of an object of `size` bytes that the slices cover (the last of 64 also holds the rest of a large
    object)."""
    last = min(64, -(-size // slice_bytes)) - 1
    total = 0
    for k in slices:
        start = k * slice_bytes
        end = size if k == last else min(size, start + slice_bytes)
        total += max(0, end - start)
    return total


class RecordedTouches(NamedTuple):
    launches: dict[int, list[ObjectTouch]]  # launch id -> its kernel's touches
    objects: list[ObjectProfile]  # in allocation order; empty in files written before profiles existed


def load(run_dir: Path, error: type[ReuseLensError]) -> RecordedTouches | None:
    """The recorded touches, or None when the run has no such file (every launch is then unknown). A launch
    listed twice has its touches joined. Malformed content raises `error`, one line naming the field."""
    path = run_dir / FILE
    if not path.is_file():
        return None
    try:
        document = decode(path.read_bytes())
        if (
            isinstance(document, dict)
            and document.get("format") == FORMAT
            and document.get("version") not in READABLE_VERSIONS
        ):
            raise SchemaError(
                f"object touches version {describe(document.get('version'))}, this build reads "
                f"{' and '.join(map(str, READABLE_VERSIONS))}"
            )
        check(document, SCHEMA)
    except OSError as problem:
        raise error(f"{path}: unreadable ({problem.strerror})") from None
    except (JsonError, SchemaError) as problem:
        raise error(f"{path}: {problem}") from None
    touches: dict[int, list[ObjectTouch]] = {}
    for launch in document["launches"]:
        marks = touches.setdefault(launch["launch"], [])
        marks.extend(ObjectTouch(t["address"], t["read"], t["write"], t.get("slices")) for t in launch["touches"])
    objects = [
        ObjectProfile(
            o["address"],
            o["size"],
            o["slice_bytes"],
            o["touched_bytes"],
            tuple(o["slice_accesses"]),
            touched_unit=o.get("touched_unit_bytes", 4),
            value_loads=o.get("value_loads", 0),
            same_value=o.get("same_value", 0),
        )
        for o in document.get("objects", [])
    ]
    return RecordedTouches(touches, objects)
