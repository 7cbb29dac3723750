"""A tiny builder of memory-timeline documents, so each test program reads like the CUDA host code it stands for."""

from __future__ import annotations

import json
from typing import Any

from reuselens.analyzer.memory.timeline import FORMAT, VERSION, Timeline, parse


class Program:
    """Operations append in program order; `touch` specs are (object, "r" | "w" | "rw"[, bytes])."""

    def __init__(self) -> None:
        self.objects: list[dict[str, Any]] = []
        self.operations: list[dict[str, Any]] = []

    def alloc(self, oid: int, size: int) -> Program:
        line = 10 + len(self.operations)
        frame = {"function": "main", "file": "app.cu", "line": line}
        self.objects.append({"id": oid, "address": 0x7F0000000000 + 0x100000 * oid, "size": size, "call_path": [frame]})
        self.operations.append({"kind": "alloc", "stream": 0, "object": oid})
        return self

    def free(self, oid: int) -> Program:
        self.operations.append({"kind": "free", "stream": 0, "object": oid})
        return self

    def _work(self, kind: str, name: str, touches: tuple[tuple[Any, ...], ...]) -> Program:
        marks = []
        for oid, mode, *size in touches:
            mark = {"object": oid, "read": "r" in mode, "write": "w" in mode}
            if size:
                mark["bytes"] = size[0]
            marks.append(mark)
        self.operations.append({"kind": kind, "stream": 0, "name": name, "touches": marks})
        return self

    def kernel(self, *touches: tuple[Any, ...], name: str = "step") -> Program:
        return self._work("kernel", name, touches)

    def memcpy(self, *touches: tuple[Any, ...]) -> Program:
        return self._work("memcpy", "cudaMemcpy", touches)

    def memset(self, *touches: tuple[Any, ...]) -> Program:
        return self._work("memset", "cudaMemset", touches)

    def document(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "objects": self.objects, "operations": self.operations}

    def timeline(self) -> Timeline:
        return parse(json.dumps(self.document()))
