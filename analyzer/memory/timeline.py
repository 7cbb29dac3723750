"""The memory timeline: device data objects and the totally ordered GPU operations over them (docs/memory.md).

DrGPUM (seed 002) states every object-level pattern as a predicate over one picture: a timeline of GPU
operations with each data object drawn under it and a mark wherever an operation touched it. This module is
that picture and its reader. Whoever builds the document (the collector, a test) has already put the operations
of all streams into one topological order, so an operation's position in the list is its global index.

Public API: :data:`FORMAT`, :data:`VERSION`, :class:`TimelineError`, :class:`Frame`, :class:`DataObject`,
:class:`Touch`, :class:`Operation`, :class:`Timeline`, :func:`parse`, :func:`load`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.schema import (
    U64,
    Bool,
    Enum,
    Int,
    JsonError,
    List,
    Maybe,
    Obj,
    SchemaError,
    Str,
    check,
    decode,
    describe,
    field_error,
)

FORMAT = "reuselens-memory-timeline"
VERSION = 1
LIFETIME_KINDS = ("alloc", "free")
WORK_KINDS = ("memcpy", "memset", "kernel")  # the operations that touch an object's contents
NO_DEBUG_INFO = "no debug info; build with -g"
# The symboliser names a frame `<module>+0x<offset>` when it found no symbol: the module is not on this machine
# (a run analysed elsewhere), it has neither symbols nor debug info, or it changed after the run (rebuilt: its
# lines would be another build's). "build with -g" would then mislead.
UNSYMBOLISED = re.compile(r"[^\s]+\+0x[0-9a-f]+")
NOT_SYMBOLISED = "not symbolised: the module is not on this machine, has no symbols, or changed after the run"


class TimelineError(ReuseLensError):
    """A memory timeline document is unreadable, of another format or version, or inconsistent."""


@dataclass(frozen=True)
class Frame:
    function: str
    file: str | None
    line: int | None

    def where(self) -> str:
        if self.file is None:
            why = NOT_SYMBOLISED if UNSYMBOLISED.fullmatch(self.function) else NO_DEBUG_INFO
            return f"{self.function} ({why})"
        return f"{self.file}:{self.line} ({self.function})" if self.line else f"{self.file} ({self.function})"


@dataclass(frozen=True)
class DataObject:
    id: int
    address: int
    size: int
    call_path: tuple[Frame, ...] = ()  # innermost frame first: the allocation call itself

    def label(self) -> str:
        """How a sentence names the object: where the program allocated it, else its id and address."""
        origin = f"allocated at {self.call_path[0].where()}" if self.call_path else f"at {self.address:#x}"
        return f"object {self.id} ({self.size} bytes, {origin})"


@dataclass(frozen=True)
class Touch:
    object_id: int
    read: bool
    write: bool
    bytes: int | None = None  # None: not measured; only a measured whole-object write can make another dead


@dataclass(frozen=True)
class Operation:
    index: int
    kind: str
    stream: int
    object_id: int | None = None  # the object an alloc or free creates or releases
    touches: tuple[Touch, ...] = ()
    name: str | None = None  # a kernel's or API call's name, for sentences
    # The touches were not recorded (kernel not instrumented): `touches` then marks every live object read and
    # written, so no gap, unused object or dead write is ever claimed across this operation.
    touches_unknown: bool = False

    def label(self) -> str:
        what = f"{self.kind} {self.name}" if self.name else self.kind
        return f"op {self.index} ({what}, stream {self.stream})"


@dataclass(frozen=True)
class Timeline:
    objects: dict[int, DataObject]
    operations: tuple[Operation, ...]
    allocated_at: dict[int, int] = field(init=False)  # object id -> index of its alloc
    freed_at: dict[int, int] = field(init=False)  # object id -> index of its free; absent when never freed
    touched_at: dict[int, tuple[tuple[int, Touch], ...]] = field(init=False)  # id -> (index, touch), in order
    work_before: tuple[int, ...] = field(init=False)  # [i]: work operations at indices < i, so gaps cost O(1)

    def __post_init__(self) -> None:
        allocated, freed, touched = {}, {}, {oid: [] for oid in self.objects}
        for op in self.operations:
            if op.kind == "alloc":
                allocated[op.object_id] = op.index
            elif op.kind == "free":
                freed[op.object_id] = op.index
            for touch in op.touches:
                touched[touch.object_id].append((op.index, touch))
        object.__setattr__(self, "allocated_at", allocated)
        object.__setattr__(self, "freed_at", freed)
        object.__setattr__(self, "touched_at", {oid: tuple(marks) for oid, marks in touched.items()})
        counts = [0]
        for op in self.operations:
            counts.append(counts[-1] + (op.kind in WORK_KINDS))
        object.__setattr__(self, "work_before", tuple(counts))

    def end_of(self, object_id: int) -> int:
        """The index of the object's free, or len(operations) when it lives to the end of the program."""
        return self.freed_at.get(object_id, len(self.operations))

    def work_between(self, first: int, last: int) -> int:
        """How many memcpy/memset/kernel operations lie at indices first..last inclusive."""
        first, end = max(first, 0), min(last + 1, len(self.operations))
        return self.work_before[end] - self.work_before[first] if first < end else 0


FRAME = Obj({"function": Str(nonempty=True), "file": Maybe(Str()), "line": Maybe(Int(0))}, required=("function",))
OBJECT = Obj(
    {"id": Int(), "address": Int(), "size": Int(1, U64 - 1), "call_path": List(FRAME)},
    required=("id", "address", "size"),
)
TOUCH = Obj(
    {"object": Int(), "read": Bool(), "write": Bool(), "bytes": Maybe(Int(1, U64 - 1))},
    required=("object", "read", "write"),
    rule=lambda t: None if t["read"] or t["write"] else "a touch must read, write or both",
)


def _operation_rule(op: dict[str, Any]) -> SchemaError | None:
    if op["kind"] in LIFETIME_KINDS and "object" not in op:
        return field_error("object", f"missing: an {op['kind']} names the object it creates or releases")
    if op["kind"] in WORK_KINDS and "touches" not in op:
        return field_error("touches", f"missing: a {op['kind']} lists the objects it touched (may be empty)")
    return None


OPERATION = Obj(
    {
        "kind": Enum(*LIFETIME_KINDS, *WORK_KINDS),
        "stream": Int(),
        "object": Int(),
        "touches": List(TOUCH),
        "name": Str(),
        "touches_unknown": Bool(),
    },
    required=("kind", "stream"),
    rule=_operation_rule,
)
SCHEMA = Obj(
    {"format": Enum(FORMAT), "version": Enum(VERSION), "objects": List(OBJECT), "operations": List(OPERATION)},
    required=("format", "version", "objects", "operations"),
)


def _lifetime_problem(objects: list[dict[str, Any]], operations: list[dict[str, Any]]) -> SchemaError | None:
    """Each object is allocated once, freed at most once after that, and touched only while allocated."""
    ids: set[int] = set()
    for index, obj in enumerate(objects):
        if obj["id"] in ids:
            return SchemaError(f"{obj['id']} is the id of an earlier object too", f"objects[{index}].id")
        ids.add(obj["id"])
    state: dict[int, str] = {}  # id -> "live" | "freed"
    for index, op in enumerate(operations):
        where = f"operations[{index}]"
        if op["kind"] in LIFETIME_KINDS:
            oid = op["object"]
            if oid not in ids:
                return SchemaError(f"{oid} is not the id of an object", f"{where}.object")
            wanted = None if op["kind"] == "alloc" else "live"
            if state.get(oid) != wanted:
                had = {None: "never allocated", "live": "already allocated", "freed": "already freed"}[state.get(oid)]
                return SchemaError(f"{op['kind']} of object {oid}, which is {had}", f"{where}.object")
            state[oid] = "live" if op["kind"] == "alloc" else "freed"
        for t, touch in enumerate(op.get("touches") or []):
            if state.get(touch["object"]) != "live":
                return SchemaError(f"object {touch['object']} is not allocated here", f"{where}.touches[{t}].object")
    for index, obj in enumerate(objects):
        if obj["id"] not in state:
            return SchemaError("no operation allocates this object", f"objects[{index}]")
    return None


def _build(document: dict[str, Any]) -> Timeline:
    objects = {
        o["id"]: DataObject(
            o["id"],
            o["address"],
            o["size"],
            tuple(Frame(f["function"], f.get("file"), f.get("line")) for f in o.get("call_path", [])),
        )
        for o in document["objects"]
    }
    operations = tuple(
        Operation(
            index,
            op["kind"],
            op["stream"],
            op.get("object"),
            tuple(Touch(t["object"], t["read"], t["write"], t.get("bytes")) for t in op.get("touches", [])),
            op.get("name"),
            op.get("touches_unknown", False),
        )
        for index, op in enumerate(document["operations"])
    )
    return Timeline(objects, operations)


def parse(raw: bytes | str, source: str = "memory timeline") -> Timeline:
    """A timeline from JSON text; TimelineError, one line beginning with `source`, for anything malformed."""
    try:
        document = decode(raw)
    except JsonError as error:
        raise TimelineError(f"{source}: {error}") from None
    return from_document(document, source)


def from_document(document: Any, source: str = "memory timeline") -> Timeline:
    """A timeline from a decoded document (what a builder in this process made: no JSON text in between), with
    every check parse() makes; TimelineError, one line beginning with `source`, for anything malformed."""
    try:
        if isinstance(document, dict) and document.get("format") == FORMAT and document.get("version") != VERSION:
            # a known format of another version: say which, rather than only that the field is wrong
            raise SchemaError(
                f"memory timeline version {describe(document.get('version'))}, this build reads {VERSION}"
            )
        check(document, SCHEMA)
        problem = _lifetime_problem(document["objects"], document["operations"])
        if problem is not None:
            raise problem
    except SchemaError as error:
        raise TimelineError(f"{source}: {error}") from None
    return _build(document)


def from_built_document(document: dict[str, Any], source: str = "memory timeline") -> Timeline:
    """A timeline from a document a builder of this package made out of checked input (run_timeline's, from
    run.json): the lifetime rules are checked again, the field types are not (they were checked where the
    builder read them, and tests/memory check every recorded run's document with from_document: 2-4 ms of the
    memory report after a thousand launches)."""
    problem = _lifetime_problem(document["objects"], document["operations"])
    if problem is not None:
        raise TimelineError(f"{source}: {problem}")
    return _build(document)


def load(path: str | os.PathLike[str]) -> Timeline:
    """The timeline in the file at `path`; TimelineError naming the file when it is unreadable or malformed."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TimelineError(f"{path}: unreadable memory timeline ({error.strerror})") from None
    return parse(raw, str(path))
