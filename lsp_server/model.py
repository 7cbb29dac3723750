"""One loaded run, indexed by source line: memory-instruction nodes, findings and barriers per (file, line).

Lines are 1-based here, as in report.json; conversion to LSP's 0-based positions happens in the builders.
Node and finding references keep their kernel so hovers, graphs and comparisons can name it.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from reuselens.analyzer.sass_lookup import RunSass
from reuselens.analyzer.toolkit_paths import user_frame
from reuselens.lsp_server.paths import map_path


@dataclass
class NodeRef:
    kernel: dict[str, Any]
    node: dict[str, Any]
    path: str
    line: int


@dataclass
class FindingRef:
    kernel: dict[str, Any]
    finding: dict[str, Any]
    path: str
    line: int
    also: list[tuple[str, int]] = field(default_factory=list)  # other responsible lines
    origins: list[NodeRef] = field(default_factory=list)  # reuse-origin instructions
    barriers: list[dict[str, Any]] = field(default_factory=list)  # for barrier findings


@dataclass
class LineStats:
    """Per source line: W_total of its nodes and their out-edge bytes per Topological Distance label."""

    total_bytes: int = 0
    bytes_by_label: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class RunResults:
    """A report.json indexed for the editor features."""

    def __init__(self, report: dict[str, Any], report_path: str, digest: str, prefix_map: dict[str, str]):
        self.report, self.report_path, self.digest = report, report_path, digest
        self.prefix_map = prefix_map
        self._paths: dict[str, str] = {}
        self.base_dir = (report.get("run") or {}).get("cwd") or os.path.dirname(report_path)
        self.nodes_by_line: dict[str, dict[int, list[NodeRef]]] = defaultdict(lambda: defaultdict(list))
        self.stats: dict[str, dict[int, LineStats]] = defaultdict(lambda: defaultdict(LineStats))
        self.findings_by_file: dict[str, list[FindingRef]] = defaultdict(list)
        self.findings_by_id: dict[str, FindingRef] = {}
        self.barriers_by_line: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        self.kernels = [k for k in report.get("kernels", []) if isinstance(k, dict)]
        self.sass = RunSass(os.path.dirname(report_path), self.kernels)  # nvdisasm on first use, per module
        self.unplaced_findings = 0
        # kernel id -> node id -> out-edges (edges point from the access to its reuse origin)
        self.out_edges: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        self.node_index: dict[str, dict[int, dict[str, Any]]] = {}
        for kernel in self.kernels:
            self._index_kernel(kernel)

    def map_source(self, source: dict[str, Any] | None) -> tuple[str, int] | None:
        if not source or not source.get("file") or not source.get("line"):
            return None
        path = self._paths.get(source["file"])
        if path is None:
            path = self._paths[source["file"]] = map_path(source["file"], self.prefix_map, self.base_dir)
        return path, int(source["line"])

    def place(self, source: dict[str, Any] | None) -> tuple[str, int] | None:
        """Where the editor shows an instruction or barrier: the line a developer reads (analyzer.toolkit_paths,
        user_frame: the app's innermost call site when the line is in a CUDA toolkit header it inlined; until
        session 45 every finding on an inlined atomicAdd or cg::sync sat in device_atomic_functions.hpp or
        sm_30_intrinsics.hpp, where no user's workspace shows it), mapped like any path (docs/lsp.md)."""
        return self.map_source(user_frame(source)) if source else None

    def _index_kernel(self, kernel: dict[str, Any]) -> None:
        nodes = {n["id"]: n for n in kernel.get("nodes", []) if isinstance(n, dict) and "id" in n}
        self.node_index[kernel.get("id")] = nodes
        refs: dict[int, NodeRef] = {}
        for nid, node in nodes.items():
            where = self.place(node.get("source"))
            if nid == 0 or node.get("space") is None or where is None:
                continue
            ref = refs[nid] = NodeRef(kernel, node, *where)
            self.nodes_by_line[ref.path][ref.line].append(ref)
            self.stats[ref.path][ref.line].total_bytes += int(node.get("bytes", 0))
        out_edges = self.out_edges[kernel.get("id")]
        for edge in kernel.get("edges", []):
            out_edges[edge.get("from")].append(edge)
            ref = refs.get(edge.get("from"))
            if ref is not None:
                self.stats[ref.path][ref.line].bytes_by_label[edge.get("label", "cold")] += int(edge.get("bytes", 0))
        for barrier in kernel.get("barriers", []) or []:
            where = self.place(barrier.get("source"))
            if where:
                self.barriers_by_line[where[0]][where[1]].append(barrier)
        for finding in kernel.get("findings", []) or []:
            self._index_finding(kernel, finding, refs)

    def _index_finding(self, kernel: dict[str, Any], finding: dict[str, Any], refs: dict[int, NodeRef]) -> None:
        """Place a finding on the line of its heaviest instruction (`pcs` are node ids, report-format.md);
        a removable-barrier finding has no memory PC and names its barrier in `barrier` instead."""
        barrier = finding.get("barrier")
        if isinstance(barrier, dict):
            where = self.place(barrier.get("source"))
            if where is None:
                self.unplaced_findings += 1
                return
            ref = FindingRef(kernel, finding, *where, barriers=[barrier])
        else:
            members = sorted(
                (refs[p] for p in finding.get("pcs", []) or [] if p in refs), key=lambda r: -int(r.node.get("bytes", 0))
            )
            if not members:
                self.unplaced_findings += 1
                return
            ref = FindingRef(kernel, finding, members[0].path, members[0].line)
            ref.also = sorted({(m.path, m.line) for m in members[1:]} - {(ref.path, ref.line)})
            ref.origins = [refs[p] for p in finding.get("origin_pcs", []) or [] if p in refs]
        self.findings_by_file[ref.path].append(ref)
        self.findings_by_id[str(finding.get("id"))] = ref

    def node(self, kernel: dict[str, Any], node_id: int) -> dict[str, Any] | None:
        return self.node_index.get(kernel.get("id"), {}).get(node_id)

    def edges_from(self, kernel: dict[str, Any], node_id: int) -> list[dict[str, Any]]:
        return self.out_edges.get(kernel.get("id"), {}).get(node_id, [])

    def files(self) -> set[str]:
        return set(self.nodes_by_line) | set(self.findings_by_file) | set(self.barriers_by_line)

    def kernel(self, kernel_id: str) -> dict[str, Any] | None:
        return next((k for k in self.kernels if k.get("id") == kernel_id or k.get("mangled") == kernel_id), None)

    def hot_spots(self) -> list[FindingRef]:
        """Findings ordered by wasted bytes (then rank), one per line: the order of "next hot spot"."""
        ordered = sorted(
            (f for refs in self.findings_by_file.values() for f in refs),
            key=lambda f: (-_waste(f.finding), f.finding.get("rank", 0), f.path, f.line),
        )
        seen, out = set(), []
        for ref in ordered:
            if (ref.path, ref.line) not in seen:
                seen.add((ref.path, ref.line))
                out.append(ref)
        return out


def _waste(finding: dict[str, Any]) -> float:
    waste = finding.get("waste") or {}
    return float(waste.get("bytes", 0) or 0) + float(waste.get("instructions", 0) or 0)
