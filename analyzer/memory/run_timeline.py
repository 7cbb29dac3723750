"""A run directory's memory timeline: run.json's allocations and `memory_operations`, with the objects each kernel
touched from `object_touches.json`, turned into a :class:`Timeline` (docs/run-directory.md, docs/memory.md).

The collector writes operations in host issue order, already a topological order across streams, and names the
bytes a copy or memset touched by address: an address belongs to the allocation live at that moment that holds
it (a host address belongs to none). A kernel whose launch has no entry in object_touches.json (not
instrumented, filtered out, file missing) has unknown touches: it is drawn as reading and writing every live
object, so the analysis never claims a gap, an unused object or a dead write across it.

The document is built in the timeline format and read with :func:`timeline.from_built_document`, which checks
the lifetime rules again (the field types were checked in run.json; tests check every recorded run's document
with the full :func:`timeline.from_document`); problems of run.json itself are reported first, with run.json's own
field names.

Public API: :class:`MemoryRunError`, :class:`NoMemoryOperations`, :class:`RunMemory`, :data:`RUNTIME_LIBRARIES`, :func:`load_run_memory`.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.lineinfo.demangle import demangle
from reuselens.analyzer.memory import object_touches
from reuselens.analyzer.memory.object_touches import ObjectProfile, ObjectTouch, RecordedTouches, slices_bytes
from reuselens.analyzer.memory.symbols import Symbolizer
from reuselens.analyzer.memory.timeline import FORMAT, VERSION, Timeline, TimelineError, from_built_document
from reuselens.analyzer.reportview import short_kernel_name
from reuselens.analyzer.rundir import MANIFEST, RunDirectory, open_run
from reuselens.analyzer.schema import U64, Enum, Int, List, Maybe, Obj, PathText, SchemaError, Str, check, field_error
from reuselens.analyzer.toolkit_paths import is_toolkit_header

# Frames in these libraries are the CUDA stack and ReuseLens itself, never the line a user would change.
COLLECTOR_ALLOCATION_CAP = 100_000  # run.json lists at most this many allocations (collector run_state.h)
RUNTIME_LIBRARIES = ("libcuda", "libsanitizer", "libreuselens", "libnvidia", "libcupti", "libnvrtc")
# nvcc links the CUDA runtime statically by default: its frames then sit in the application's own module, without
# debug info, under these names (the API entry points and the runtime's hash-named internals).
STATIC_RUNTIME_FUNCTIONS = ("libcudart_static_", "cudart::", "__cuda", "cuda", "cuMem")
DIRECTIONS = ("htod", "dtoh", "dtod", "htoh", "unknown")
KINDS = ("alloc", "free", "memcpy", "memset", "kernel")
# Fields each kind must carry besides `kind` (docs/run-directory.md).
NEEDS = {
    "alloc": ("allocation",),
    "free": ("allocation",),
    "memcpy": ("src", "dst", "bytes", "direction", "stream"),
    "memset": ("dst", "bytes", "stream"),
    "kernel": ("launch", "stream"),
}


class MemoryRunError(ReuseLensError):
    """A run directory's memory records are absent (an older collector) or malformed."""


class NoMemoryOperations(MemoryRunError):
    """The run was recorded by a collector older than the memory analysis: nothing is wrong with it, there is
    just nothing to analyse (the editor then shows no memory surface and no error)."""


def _needs(op: dict[str, Any]) -> SchemaError | None:
    for name in NEEDS[op["kind"]]:
        if name not in op:
            return field_error(name, f"missing: a {op['kind']} operation has {', '.join(NEEDS[op['kind']])}")
    return None


RAW_FRAME = Obj({"module": PathText(), "offset": Int()}, required=("module", "offset"))
ALLOCATION = Obj(
    {"address": Int(), "size": Int(0, U64 - 1), "call_path": Maybe(List(RAW_FRAME)), "api": Maybe(Str())},
    required=("address", "size"),
)
OPERATION = Obj(
    {
        "kind": Enum(*KINDS),
        "allocation": Int(),
        "stream": Maybe(Int()),
        "src": Int(),
        "dst": Int(),
        "bytes": Int(),
        "direction": Enum(*DIRECTIONS),
        "launch": Int(),
    },
    required=("kind",),
    rule=_needs,
)
SCHEMA = Obj({"allocations": List(ALLOCATION), "memory_operations": List(OPERATION)}, required=("allocations",))


@dataclass(frozen=True)
class RunMemory:
    run: RunDirectory
    timeline: Timeline
    unknown_touch_kernels: int  # kernel operations whose touches were not recorded
    stray_touches: int  # recorded kernel touches of an address no live allocation holds (left out)
    # For the intra-object patterns (intra.py): each object's profile, and per kernel operation (timeline index)
    # the slices of each object it touched; both empty for runs recorded before the engine wrote them.
    profiles: dict[int, ObjectProfile] = dataclass_field(default_factory=dict)
    kernel_slices: dict[int, dict[int, int]] = dataclass_field(default_factory=dict)


def load_run_memory(path: str | Path) -> RunMemory:
    """The run's memory timeline; MemoryRunError (one line naming the file and field) when the run has no memory
    operations or they are malformed."""
    run = open_run(path)
    manifest_path = run.path / MANIFEST
    if "memory_operations" not in run.manifest:
        if run.manifest.get("collector") is None:  # the launcher finished a run its collector never wrote
            why = run.manifest.get("partial_reason") or "the collector did not start in the application"
            raise NoMemoryOperations(f"{run.path}: the collector recorded nothing in this run ({why})")
        raise NoMemoryOperations(
            f"{run.path}: this run has no memory operations (run.json lacks memory_operations); re-profile it with "
            "a newer ReuseLens collector to analyse its memory"
        )
    try:
        check(run.manifest, SCHEMA)
    except SchemaError as error:
        raise MemoryRunError(f"{manifest_path}: {error}") from None
    if run.manifest.get("memory_operations_truncated") is True:
        # Objects alive where the list stops would look leaked and idle: no finding could be trusted.
        raise MemoryRunError(
            f"{manifest_path}: the collector listed only the first {len(run.manifest['memory_operations']):,} memory "
            "operations of this run (memory_operations_truncated); the memory analysis needs all of them: profile a "
            "shorter run"
        )
    touches = object_touches.load(run.path, MemoryRunError)
    builder = _Builder(run, touches)
    try:
        for index, op in enumerate(run.manifest["memory_operations"]):
            builder.add(index, op)
    except SchemaError as error:
        raise MemoryRunError(f"{manifest_path}: {error}") from None
    with Symbolizer(_start_seconds(run.manifest.get("start_time"))) as symbolizer:
        document = builder.document(symbolizer)
    try:
        timeline = from_built_document(document, f"{run.path}: memory timeline")
    except TimelineError as error:  # run.json passed the checks above, so this is a builder bug shown plainly
        raise MemoryRunError(str(error)) from None
    unknown = sum(op.touches_unknown for op in timeline.operations)
    profiles = _match_profiles(builder.allocations, touches.objects if touches else [])
    if (run.manifest.get("collector") or {}).get("collection") == "objects":
        # Objects without an element map (none asked for, or none fitted): what their slices show.
        profiles.update(_slice_profiles(builder.allocations, builder.kernel_slices, skip=profiles.keys()))
    return RunMemory(run, timeline, unknown, builder.stray_touches, profiles, builder.kernel_slices)


def _match_profiles(allocations: list[dict[str, Any]], objects: list[ObjectProfile]) -> dict[int, ObjectProfile]:
    """Allocation index -> the engine's profile of it. Both lists follow the order the collector saw the
    allocations in (the engine skips those of 0 bytes, and run.json lists at most 100,000), so each profile
    pairs with the next allocation of its address and size."""
    matched: dict[int, ObjectProfile] = {}
    at = 0
    for profile in objects:
        for index in range(at, len(allocations)):
            allocation = allocations[index]
            if (allocation["address"], allocation["size"]) == (profile.address, profile.size):
                matched[index] = profile
                at = index + 1
                break
    return matched


def _slice_profiles(
    allocations: list[dict[str, Any]], kernel_slices: dict[int, dict[int, int]], skip: Any = ()
) -> dict[int, ObjectProfile]:
    """An object-level run's profiles (it records no access counts): per object any kernel touched, the slices
    its kernels touched, by the collector's slice rule (reuselens/object_touches.h, through the engine module).
    touched_bytes is what those slices cover: at least what the kernels touched."""
    from reuselens.analyzer._engine import object_slice_bytes

    touched: dict[int, int] = {}
    for per_object in kernel_slices.values():
        for oid, mask in per_object.items():
            touched[oid] = touched.get(oid, 0) | mask
    profiles = {}
    for oid, mask in sorted(touched.items()):
        if oid in skip:  # profiled by an element map
            continue
        allocation = allocations[oid]
        size = allocation["size"]
        slice_bytes = object_slice_bytes(size)
        covered = slices_bytes(size, slice_bytes, [k for k in range(64) if mask >> k & 1])
        count = min(64, -(-size // slice_bytes))
        profiles[oid] = ObjectProfile(allocation["address"], size, slice_bytes, covered, (0,) * count, mask)
    return profiles


class _LiveObjects:
    """The allocations live at the current operation, found by any address inside them."""

    def __init__(self, allocations: list[dict[str, Any]]):
        self.allocations = allocations
        self.starts: list[tuple[int, int]] = []  # (address, allocation index), sorted
        self.largest = 0

    def add(self, index: int) -> None:
        insort(self.starts, (self.allocations[index]["address"], index))
        self.largest = max(self.largest, self.allocations[index]["size"])

    def remove(self, index: int) -> None:
        self.starts.remove((self.allocations[index]["address"], index))

    def holding(self, address: int) -> int | None:
        """The live allocation that holds `address`: the innermost where pools nest allocations in segments."""
        at = bisect_right(self.starts, (address, 1 << 64)) - 1
        while at >= 0 and self.starts[at][0] > address - self.largest:  # no allocation further back can reach it
            start, index = self.starts[at]
            if address < start + self.allocations[index]["size"]:
                return index
            at -= 1
        return None

    def ids(self) -> list[int]:
        return sorted(index for _, index in self.starts)


class _Builder:
    """Walks memory_operations once, checking lifetimes and resolving addresses with run.json's own field names."""

    def __init__(self, run: RunDirectory, touches: RecordedTouches | None):
        self.allocations: list[dict[str, Any]] = run.manifest["allocations"]
        self.kernels = {launch["id"]: launch.get("kernel") for launch in run.manifest.get("launches", [])}
        self.touches = touches.launches if touches else {}
        self.kernel_slices: dict[int, dict[int, int]] = {}  # timeline operation index -> object -> slices
        self.live = _LiveObjects(self.allocations)
        self.state: dict[int, str] = {}  # allocation index -> "live" | "freed"
        self.operations: list[dict[str, Any]] = []
        self.stray_touches = 0

    def add(self, index: int, op: dict[str, Any]) -> None:
        where = f"memory_operations[{index}]"
        kind = op["kind"]
        if kind in ("alloc", "free"):
            self._lifetime(where, op)
        elif kind == "kernel":
            self._kernel(where, op)
        else:
            self._transfer(op)

    def _lifetime(self, where: str, op: dict[str, Any]) -> None:
        index, kind = op["allocation"], op["kind"]
        if index >= len(self.allocations):
            if len(self.allocations) >= COLLECTOR_ALLOCATION_CAP:
                raise SchemaError(
                    f"allocation {index} is past the {COLLECTOR_ALLOCATION_CAP:,} that run.json lists (the collector's "
                    "cap); the memory analysis needs every allocation: profile a shorter run",
                    where,
                )
            raise SchemaError(f"{index} is not an index of allocations (it has {len(self.allocations)})", where)
        had = self.state.get(index)
        if (kind == "alloc" and had is not None) or (kind == "free" and had != "live"):
            what = {None: "never allocated", "live": "already allocated", "freed": "already freed"}[had]
            raise SchemaError(f"{kind} of allocation {index}, which is {what}", f"{where}.allocation")
        self.state[index] = "live" if kind == "alloc" else "freed"
        if self.allocations[index]["size"] == 0:
            return  # a zero-byte allocation holds no memory and nothing can touch it
        if kind == "alloc":
            self.live.add(index)
        else:
            self.live.remove(index)
        entry = {"kind": kind, "stream": op.get("stream") or 0, "object": index}
        api = self.allocations[index].get("api")
        if kind == "alloc" and api:
            entry["name"] = api
        self.operations.append(entry)

    def _transfer(self, op: dict[str, Any]) -> None:
        """A memcpy reads its source object and writes its destination object; a memset writes its destination.
        Bytes past the end of the object are not its bytes, so a touch's size stops at the object's end."""
        ends = [("src", True, False), ("dst", False, True)] if op["kind"] == "memcpy" else [("dst", False, True)]
        marks = []
        for field, read, write in ends:
            target = self.live.holding(op[field]) if op["bytes"] else None
            if target is not None:
                allocation = self.allocations[target]
                within = allocation["address"] + allocation["size"] - op[field]
                marks.append({"object": target, "read": read, "write": write, "bytes": min(op["bytes"], within)})
        name = op.get("direction") if op["kind"] == "memcpy" else None
        entry = {"kind": op["kind"], "stream": op["stream"] or 0, "touches": marks}
        if name:
            entry["name"] = name
        self.operations.append(entry)

    def _kernel(self, where: str, op: dict[str, Any]) -> None:
        launch = op["launch"]
        if launch not in self.kernels:
            raise SchemaError(f"{launch} is not the id of a launch in launches", f"{where}.launch")
        entry: dict[str, Any] = {"kind": "kernel", "stream": op["stream"] or 0}
        mangled = self.kernels[launch]
        if mangled:
            entry["name"] = short_kernel_name({"name": demangle(mangled)})
        if launch in self.touches:
            entry["touches"] = self._recorded(self.touches[launch], len(self.operations))
        else:
            entry["touches"] = [{"object": oid, "read": True, "write": True} for oid in self.live.ids()]
            entry["touches_unknown"] = True
        self.operations.append(entry)

    def _recorded(self, touches: list[ObjectTouch], operation: int) -> list[dict[str, Any]]:
        modes: dict[int, tuple[bool, bool]] = {}
        for touch in touches:
            target = self.live.holding(touch.address)
            if target is None:
                self.stray_touches += 1
                continue
            read, write = modes.get(target, (False, False))
            modes[target] = (read or touch.read, write or touch.write)
            if touch.slices is not None and self.allocations[target]["address"] == touch.address:
                slices = self.kernel_slices.setdefault(operation, {})
                slices[target] = slices.get(target, 0) | touch.slices
        return [
            {"object": oid, "read": read, "write": write}
            for oid, (read, write) in sorted(modes.items())
            if read or write
        ]

    def document(self, symbolizer: Symbolizer) -> dict[str, Any]:
        objects = []
        for index in sorted(self.state):
            allocation = self.allocations[index]
            if allocation["size"]:
                frames = _site_frames(allocation.get("call_path") or [], symbolizer)
                objects.append(
                    {"id": index, "address": allocation["address"], "size": allocation["size"], "call_path": frames}
                )
        return {"format": FORMAT, "version": VERSION, "objects": objects, "operations": self.operations}


def _site_frames(raw: list[dict[str, Any]], symbolizer: Symbolizer) -> list[dict[str, Any]]:
    """The call path without the CUDA stack's and ReuseLens's own frames (the runtime's libraries, or the runtime
    linked into the program, whose frames have no debug info), so its first frame is the program's allocation
    site; each frame symbolised. It ends at `main`: what called main is the C library's start-up (reading the C
    library's symbols for those frames took 9-15 ms of every memory report)."""
    frames = []
    for item in raw:
        if frames and frames[-1]["function"] == "main":
            break
        if Path(item["module"]).name.startswith(RUNTIME_LIBRARIES):
            continue
        frame = symbolizer.frame(item["module"], item["offset"])
        if frame.file is None and frame.function.startswith(STATIC_RUNTIME_FUNCTIONS):
            continue
        if frame.file is not None and is_toolkit_header(frame.file):  # cuda_runtime.h's cudaMalloc<T> wrapper
            continue
        frames.append({"function": frame.function, "file": frame.file, "line": frame.line})
    return frames


def _start_seconds(start_time: Any) -> float | None:
    """run.json's start_time (ISO 8601, UTC, `Z`) in seconds since the epoch; None when absent or unreadable."""
    if not isinstance(start_time, str):
        return None
    try:
        moment = datetime.fromisoformat(start_time.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None
