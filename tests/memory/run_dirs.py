"""Writes run directories as the collector does (docs/run-directory.md), with memory operations and
object_touches.json, so each test reads like the host program it stands for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BASE = 0x7F0000000000


class RunWriter:
    """Operations append in host issue order. Allocation i lies at BASE + i * 1 MiB; `touches=None` on a kernel
    leaves its launch out of object_touches.json (unknown touches)."""

    def __init__(self) -> None:
        self.allocations: list[dict[str, Any]] = []
        self.launches: list[dict[str, Any]] = []
        self.operations: list[dict[str, Any]] = []
        self.touches: list[dict[str, Any]] = []
        self.profiles: list[dict[str, Any]] = []

    def address(self, index: int) -> int:
        return self.allocations[index]["address"]

    def alloc(self, size: int, call_path: list[dict[str, Any]] | None = None, api: str | None = "cudaMalloc") -> int:
        index = len(self.allocations)
        entry = {"address": BASE + index * (1 << 20), "size": size, "kind": "device", "api": api}
        entry.update({"allocated_before_launch": len(self.launches), "freed_after_launch": None})
        if call_path is not None:
            entry["call_path"] = call_path
        self.allocations.append(entry)
        self.operations.append({"kind": "alloc", "allocation": index, "stream": None})
        return index

    def free(self, index: int) -> RunWriter:
        self.allocations[index]["freed_after_launch"] = len(self.launches)
        self.operations.append({"kind": "free", "allocation": index, "stream": None})
        return self

    def memcpy(self, src: int, dst: int, size: int, direction: str, stream: int = 0) -> RunWriter:
        self.operations.append(
            {"kind": "memcpy", "src": src, "dst": dst, "bytes": size, "direction": direction, "stream": stream}
        )
        return self

    def memset(self, dst: int, size: int, stream: int = 0) -> RunWriter:
        self.operations.append({"kind": "memset", "dst": dst, "bytes": size, "stream": stream})
        return self

    def kernel(
        self, name: str, touches: list[tuple[int, str]] | None, stream: int = 0, slices: dict[int, int] | None = None
    ) -> RunWriter:
        """`touches`: (allocation index, "r" | "w" | "rw"); None: the launch was not instrumented. `slices`:
        allocation index -> which of its slices the launch touched (object_touches.json's `slices`)."""
        launch = len(self.launches)
        self.launches.append(
            {"id": launch, "kernel": name, "stream": stream, "instrumented": touches is not None, "status": "complete"}
        )
        self.operations.append({"kind": "kernel", "launch": launch, "stream": stream})
        if touches is not None:
            marks = [{"address": self.address(i), "read": "r" in m, "write": "w" in m} for i, m in touches]
            for (i, _), mark in zip(touches, marks):
                if slices and i in slices:
                    mark["slices"] = slices[i]
            self.touches.append({"launch": launch, "touches": marks})
        return self

    def profile(self, index: int, touched_bytes: int, slice_accesses: list[int], slice_bytes: int) -> RunWriter:
        """The engine's profile of allocation `index` (object_touches.json's `objects`, in allocation order)."""
        allocation = self.allocations[index]
        self.profiles.append(
            {
                "address": allocation["address"],
                "size": allocation["size"],
                "slice_bytes": slice_bytes,
                "touched_bytes": touched_bytes,
                "slice_accesses": slice_accesses,
            }
        )
        return self

    def manifest(self) -> dict[str, Any]:
        return {
            "format": "reuselens-run",
            "version": 1,
            "status": "complete",
            "launches": self.launches,
            "allocations": self.allocations,
            "memory_operations": self.operations,
        }

    def write(self, path: Path, manifest: dict[str, Any] | None = None, touches: bool = True) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        (path / "run.json").write_text(json.dumps(manifest or self.manifest()), encoding="utf-8")
        if touches:
            document = {"format": "reuselens-object-touches", "version": 1, "launches": self.touches}
            if self.profiles:
                document["objects"] = self.profiles
            (path / "object_touches.json").write_text(json.dumps(document), encoding="utf-8")
        return path


def touches_by_allocation(run: Path) -> dict[int, set[tuple[int, bool, bool, int | None]]]:
    """Per launch of a recorded run, its touches named by allocation index (addresses may differ between two runs
    of one program): the allocation with that base live during the launch (docs/run-directory.md); slices None in
    files written before the engine recorded them."""
    manifest = json.loads((run / "run.json").read_text())
    allocations = manifest["allocations"]
    touches = json.loads((run / "object_touches.json").read_text())
    named: dict[int, set[tuple[int, bool, bool, int | None]]] = {}
    for launch in touches["launches"]:
        i = launch["launch"]
        live = {
            a["address"]: n
            for n, a in enumerate(allocations)
            if a["allocated_before_launch"] <= i and (a["freed_after_launch"] is None or i < a["freed_after_launch"])
        }
        named[i] = {(live[t["address"]], t["read"], t["write"], t.get("slices")) for t in launch["touches"]}
    return named
