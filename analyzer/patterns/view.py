"""Read-only view of one report.json kernel (docs/report-format.md) with the paper's per-node metrics.

Every quantity here is a definition of the cuVein paper (shared/seeds/000_…): W_out(v, l) and W_total(v)
(section 3.2.2, "Weighted Out-Degree"), closed subgraphs (3.2.1), Reuse Intensity (3.2.2), r(l) (3.3 I),
R_coal (3.3 II) and R_conf (3.3 II, Bank Conflict). When analyzer/graph.py (the engine's networkx view)
offers the same helpers, this module should delegate to it; until then it reads the report contract only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from analyzer.errors import ReportError

COLD = "cold"
LABELS = ("cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid")
# Labels whose two accesses come from different threads (section 6.3: cross-thread reuse edges).
CROSS_THREAD = ("warp_same_inst", "warp_diff_inst", "block", "grid")
SECTOR_BYTES = 32  # hardware sector size (paper 3.3 II, SecSize)


def dist_total(dist: Iterable[Iterable[float]] | None) -> float:
    """Sum of value*count over a [[value, count], ...] distribution."""
    return float(sum(value * count for value, count in dist or ()))


def dist_count(dist: Iterable[Iterable[float]] | None) -> float:
    return float(sum(count for _value, count in dist or ()))


def dist_mean(dist: Iterable[Iterable[float]] | None) -> float:
    """E(X) of a distribution, 0 for an empty one."""
    pairs = list(dist or ())
    count = dist_count(pairs)
    return dist_total(pairs) / count if count else 0.0


def dist_mode(dist: Iterable[Iterable[float]] | None) -> float:
    """Mode(X); ties go to the smaller value so the result does not depend on list order."""
    pairs = sorted((float(v), float(c)) for v, c in dist or ())
    if not pairs:
        return 0.0
    return max(pairs, key=lambda vc: (vc[1], -vc[0]))[0]


@dataclass(eq=False)  # identity semantics: one Node object per PC, usable in sets
class Node:
    """One memory PC with the attributes of paper section 3.2."""

    id: int
    raw: dict[str, Any]
    w_out: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @property
    def function(self) -> str:
        return str(self.raw.get("function") or "")

    @property
    def pc(self) -> int:
        return int(self.raw.get("pc") or 0)

    @property
    def space(self) -> str | None:
        return self.raw.get("space")

    @property
    def type(self) -> str:
        return str(self.raw.get("type") or "")

    @property
    def size(self) -> int:
        return int(self.raw.get("size") or 0)

    @property
    def executions(self) -> int:
        value = self.raw.get("executions")
        return int(value) if value is not None else int(dist_count(self.raw.get("lanes")))

    @property
    def key(self) -> tuple[str, int]:
        """What identifies the instruction across runs: (function, pc offset). Node ids may not."""
        return (self.function, self.pc)

    def w_total(self) -> float:
        """W_total(v): the sum of W_out(v, l) over all labels (section 3.2.2)."""
        return float(sum(self.w_out.values()))

    def w_hat(self) -> float:
        """Ŵ(v) of section 3.3 I: W_total(v) without its warp_same_inst and Cold Miss components."""
        return self.w_total() - self.w_out.get("warp_same_inst", 0.0) - self.w_out.get(COLD, 0.0)

    def lane_mode(self) -> float:
        return dist_mode(self.raw.get("lanes"))

    def address_mode(self) -> float:
        return dist_mode(self.raw.get("addresses"))

    def sectors_total(self) -> float:
        return dist_total(self.raw.get("sectors"))

    def sectors_ideal_total(self) -> float:
        """Σ S_opt over instances, S_opt = ceil(Lane·AccSize / SecSize) (section 3.3 II)."""
        if self.raw.get("sectors_ideal"):
            return dist_total(self.raw["sectors_ideal"])
        size = self.size
        return float(sum(-(-int(lanes) * size // SECTOR_BYTES) * count
                         for lanes, count in self.raw.get("lanes") or ()))

    def r_coal(self) -> float:
        """R_coal(v) = E(Sector_v) / S_opt(v) (section 3.3 II); 0 when undefined."""
        ideal = self.sectors_ideal_total()
        return self.sectors_total() / ideal if ideal else 0.0

    def wavefronts_total(self) -> float:
        return dist_total(self.raw.get("wavefronts"))

    def wavefronts_ideal_total(self) -> float:
        """Σ ceil(footprint words / 32) per lane group; approximated from the word counts if absent."""
        if self.raw.get("wavefronts_ideal"):
            return dist_total(self.raw["wavefronts_ideal"])
        return float(sum(-(-int(words) // 32) * count for words, count in self.raw.get("addresses") or ()))

    def r_conf(self) -> float:
        """R_conf(v) = E(Wave_v) / E(Wave_ideal_v) (section 3.3 II, Bank Conflict); 0 when undefined."""
        ideal = self.wavefronts_ideal_total()
        return self.wavefronts_total() / ideal if ideal else 0.0

    def source_text(self) -> str | None:
        source = self.raw.get("source") or {}
        if not source.get("file"):
            return None
        name = str(source["file"]).rsplit("/", 1)[-1]
        return f"{name}:{source['line']}" if source.get("line") else name


@dataclass(frozen=True)
class Edge:
    """e = (PC_cur -> PC_prev): `src` is the current access, `dst` its reuse origin (section 3.2.1)."""

    src: int
    dst: int
    label: str
    bytes: float
    accesses: float
    raw: dict[str, Any]

    def kind_count(self, kind: str) -> float:
        return float(self.raw.get(kind) or 0)


class KernelView:
    """Nodes, edges and barriers of one kernel dict, indexed for the pattern rules."""

    def __init__(self, kernel: dict[str, Any]) -> None:
        if not isinstance(kernel, dict):
            raise ReportError("kernel entry is not an object")
        for key in ("nodes", "edges"):
            if not isinstance(kernel.get(key), list):
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: '{key}' is missing or not a list")
        self.raw = kernel
        self.nodes: dict[int, Node] = {}
        for entry in kernel["nodes"]:
            node = Node(int(entry["id"]), entry)
            self.nodes[node.id] = node
        self.edges: list[Edge] = []
        for entry in kernel["edges"]:
            label = entry.get("label")
            if label not in LABELS:
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: edge label {label!r} is not one of {LABELS}")
            src, dst = int(entry["from"]), int(entry["to"])
            if src not in self.nodes or (dst not in self.nodes and dst != 0):
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: edge {src}->{dst} names a missing node")
            edge = Edge(src, dst, label, float(entry.get("bytes") or 0), float(entry.get("accesses") or 0), entry)
            self.edges.append(edge)
            self.nodes[src].w_out[label] += edge.bytes
        # A canonical order independent of how the engine listed nodes and edges (stability across runs).
        self.edges.sort(key=lambda e: (self.nodes[e.src].key, self._key_of(e.dst), e.label))
        self.barriers: list[dict[str, Any]] = list(kernel.get("barriers") or [])

    def _key_of(self, node_id: int) -> tuple[str, int]:
        node = self.nodes.get(node_id)
        return node.key if node is not None and node.space is not None else ("", -1)

    def memory_nodes(self) -> list[Node]:
        """All memory PCs (not the Cold Miss node), in (function, pc) order."""
        return sorted((n for n in self.nodes.values() if n.space is not None and n.id != 0), key=lambda n: n.key)

    def traffic_bytes(self) -> float:
        """The kernel's traffic: Σ W_total(v) over memory PCs = Σ w(e) (lane-bytes)."""
        return float(sum(node.w_total() for node in self.memory_nodes()))

    def is_memory(self, node_id: int) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and node.space is not None and node_id != 0

    def closed_subgraphs(self) -> list[list[Node]]:
        """Minimal closed subgraphs (section 3.2.1): the connected components of the non-Cold-Miss edges.

        A set is closed when every non-Cold-Miss edge of its nodes stays inside it; the smallest such sets
        are exactly the components of the undirected graph of those edges (the Cold Miss node excluded).
        """
        parent = {node.id: node.id for node in self.memory_nodes()}

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for edge in self.edges:
            if edge.label != COLD and self.is_memory(edge.dst):
                a, b = find(edge.src), find(edge.dst)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        groups: dict[int, list[Node]] = defaultdict(list)
        for node in self.memory_nodes():
            groups[find(node.id)].append(node)
        return sorted(groups.values(), key=lambda members: members[0].key)

    def subgraph_edges(self, members: Iterable[Node]) -> list[Edge]:
        ids = {node.id for node in members}
        return [edge for edge in self.edges if edge.src in ids]

    def config_key(self) -> str:
        """Kernel identity across runs: mangled name plus launch configuration."""
        grid = "x".join(str(v) for v in self.raw.get("grid") or [])
        block = "x".join(str(v) for v in self.raw.get("block") or [])
        return f"{self.raw.get('mangled') or self.raw.get('name') or '?'}|{grid}|{block}|" \
               f"{self.raw.get('dynamic_shared_bytes') or 0}"

    def block_count(self) -> int:
        count = 1
        for value in self.raw.get("grid") or [1]:
            count *= int(value)
        return max(count, 1)


def reuse_ratio(members: Iterable[Node], label: str) -> float:
    """r(l) = Σ W_out(v, l) / Σ Ŵ(v) over the subgraph's nodes (section 3.3 I); 0 without reuse."""
    members = list(members)
    denominator = sum(node.w_hat() for node in members)
    if denominator <= 0:
        return 0.0
    return sum(node.w_out.get(label, 0.0) for node in members) / denominator


def reuse_intensity(members: Iterable[Node]) -> float | None:
    """RI(G') = Σ w(e) / Σ_{cold} w(e) over the subgraph's edges (section 3.2.2); None without cold traffic."""
    members = list(members)
    total = sum(node.w_total() for node in members)
    cold = sum(node.w_out.get(COLD, 0.0) for node in members)
    return total / cold if cold else None
