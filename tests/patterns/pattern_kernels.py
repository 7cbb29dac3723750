"""Hand-made report.json kernels (docs/report-format.md) for the pattern rules.

A KernelBuilder adds memory PCs with per-instance distributions and out-edges given as fractions of the PC's
bytes, and checks that every PC's out-edges add up to its bytes (W_total(v) = bytes, as the engine writes).
"""

from __future__ import annotations

import math
from typing import Any

KIND = {
    ("read", "read"): "rar",
    ("read", "write"): "raw",
    ("write", "read"): "war",
    ("write", "write"): "waw",
    ("read", "atomic"): "raw",
    ("atomic", "read"): "war",
    ("atomic", "atomic"): "waw",
    ("write", "atomic"): "waw",
    ("atomic", "write"): "waw",
}


class KernelBuilder:
    def __init__(self, mangled: str = "_Z6kernelPfS_i", grid=(64, 1, 1), block=(256, 1, 1)) -> None:
        self.kernel: dict[str, Any] = {
            "id": "k0",
            "mangled": mangled,
            "name": mangled,
            "module": "0" * 64,
            "grid": list(grid),
            "block": list(block),
            "dynamic_shared_bytes": 0,
            "launches": [0],
            "nodes": [
                {
                    "id": 0,
                    "function": None,
                    "pc": None,
                    "space": None,
                    "type": None,
                    "size": 0,
                    "async_copy": False,
                    "executions": 0,
                    "lanes": [],
                    "addresses": [],
                    "bytes": 0,
                    "source": None,
                    "sass": None,
                }
            ],
            "edges": [],
            "barriers": [],
            "subgraphs": [],
            "findings": [],
        }
        self._pc = 0x100

    def node(
        self,
        space: str,
        type_: str,
        *,
        executions: int = 1024,
        lanes: int = 32,
        addresses: int | None = None,
        size: int = 4,
        sectors: int | None = None,
        wavefronts: int | None = None,
        wavefronts_ideal: int | None = None,
        line: int | None = None,
        pc: int | None = None,
        function: str | None = None,
    ) -> int:
        """Add a PC whose every execution has the same lane/address/sector/wavefront counts; returns its id."""
        node_id = len(self.kernel["nodes"])
        pc = self._pc if pc is None else pc
        self._pc = pc + 0x10
        addresses = lanes if addresses is None else addresses
        entry: dict[str, Any] = {
            "id": node_id,
            "function": function or self.kernel["mangled"],
            "pc": pc,
            "space": space,
            "type": type_,
            "size": size,
            "async_copy": False,
            "executions": executions,
            "lanes": [[lanes, executions]],
            "addresses": [[addresses, executions]],
            "bytes": lanes * size * executions,
            "source": {"file": "/src/app.cu", "line": line, "column": 0, "inline": []} if line else None,
            "sass": None,
        }
        if space == "global":
            ideal = math.ceil(lanes * size / 32)
            entry["sectors"] = [[ideal if sectors is None else sectors, executions]]
            entry["sectors_ideal"] = [[ideal, executions]]
        if space == "shared":
            ideal = math.ceil(addresses * max(size, 4) / 4 / 32) if wavefronts_ideal is None else wavefronts_ideal
            entry["wavefronts"] = [[ideal if wavefronts is None else wavefronts, executions]]
            entry["wavefronts_ideal"] = [[ideal, executions]]
        self.kernel["nodes"].append(entry)
        return node_id

    def edge(self, src: int, dst: int, label: str, fraction: float = 1.0, **extra: Any) -> None:
        """An out-edge of `src` carrying `fraction` of its bytes; kind counts follow the endpoint types."""
        node = self.kernel["nodes"][src]
        nbytes = round(node["bytes"] * fraction)
        accesses = nbytes // node["size"]
        counts = {"rar": 0, "raw": 0, "war": 0, "waw": 0}
        if dst != 0:
            counts[KIND[(node["type"], self.kernel["nodes"][dst]["type"])]] = accesses
        entry = {
            "from": src,
            "to": dst,
            "label": label,
            "bytes": nbytes,
            "accesses": accesses,
            **counts,
            "prior_kernel": None,
        }
        # synced: accesses a barrier of the edge's scope separates from their origin (none across blocks)
        if label in ("warp_diff_inst", "block"):
            entry["synced"] = accesses
            entry["synced_bytes"] = nbytes
        elif label != "cold":
            entry["synced"] = 0
            entry["synced_bytes"] = 0
        entry.update(extra)
        self.kernel["edges"].append(entry)

    def barrier(
        self,
        pc: int,
        *,
        kind: str = "block",
        executions: int = 512,
        spanned: int = 10,
        line: int | None = None,
        spans: list[tuple[int, int]] | None = None,
    ) -> None:
        """A barrier; `spans` lists the (current, origin) node pairs whose edges the engine credited to it."""
        entry: dict[str, Any] = {
            "function": self.kernel["mangled"],
            "pc": pc,
            "kind": kind,
            "executions": executions,
            "spanned_cross_thread_edges": spanned,
            "source": {"file": "/src/app.cu", "line": line, "column": 0, "inline": []} if line else None,
        }
        if spans is not None:
            entry["spanned_cross_thread_edges"] = len(spans)
            entry["spans"] = []
            for src, dst in spans:
                edge = next(e for e in self.kernel["edges"] if e["from"] == src and e["to"] == dst)
                entry["spans"].append(
                    {
                        "from": src,
                        "to": dst,
                        "label": edge["label"],
                        "accesses": edge["accesses"],
                        "bytes": edge["bytes"],
                    }
                )
        self.kernel["barriers"].append(entry)

    def background(self) -> int:
        """A well-behaved global load: coalesced, 94% first touch, its reuse split between block and grid."""
        node = self.node("global", "read", executions=4096)
        self.edge(node, 0, "cold", 0.94)
        self.edge(node, node, "block", 0.03)
        self.edge(node, node, "grid", 0.03)
        return node

    def build(self) -> dict[str, Any]:
        for node in self.kernel["nodes"][1:]:
            out = sum(e["bytes"] for e in self.kernel["edges"] if e["from"] == node["id"])
            assert abs(out - node["bytes"]) <= len(self.kernel["edges"]), (
                f"node {node['id']}: out-edges carry {out} bytes, node has {node['bytes']}"
            )
        return self.kernel
