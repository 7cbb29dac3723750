"""PCDepGraph as a networkx MultiDiGraph, with the paper's graph metrics (cuVein, sections 3.2-3.3).

Input is one kernel dict of the engine result / report.json (docs/report-format.md). Node 0 is the Cold Miss
node ("untracked memory", 3.2.1); every other node is a memory PC; each edge points from the current PC to its
reuse origin and carries ``label`` and ``weight`` (= bytes, the paper's w(e)).

Public API: :func:`build_graph`, :func:`w_out`, :func:`w_total`, :func:`closed_subgraphs`,
:func:`reuse_intensity`, :func:`reuse_ratio`, :func:`r_coal`, :func:`r_conf`, :func:`annotate_kernel`; and the
same metrics from a kernel dict without a networkx graph (the report's and the pattern rules' path: building one
cost most of a large kernel's analysis): :func:`kernel_closed_subgraphs`, :func:`weights_by_node`,
:func:`bytes_by_label`, :func:`intensity`, :func:`ratio`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # imported where a graph is built: `reuselens` starts without it (0.1-0.2 s)
    import networkx as nx

COLD_NODE = 0
LABELS = ("cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid")
# Labels r(l) is defined for: W-hat(v) drops the Warp_same_inst and ColdMiss components (section 3.3 I).
REUSE_LABELS = ("thread", "warp_diff_inst", "block", "grid")
_NODE_SCALARS = ("function", "function_id", "pc", "space", "type", "size", "async_copy", "executions", "bytes")


def build_graph(kernel: dict[str, Any]) -> nx.MultiDiGraph:
    """One MultiDiGraph per kernel: node attributes as in the report, one edge per report edge."""
    import networkx as nx

    g = nx.MultiDiGraph(kernel=kernel.get("mangled"), id=kernel.get("id"))
    g.add_node(COLD_NODE, cold=True, label="untracked memory")
    for node in kernel.get("nodes", []):
        if node["id"] == COLD_NODE:
            continue
        g.add_node(node["id"], cold=False, **{k: node.get(k) for k in _NODE_SCALARS}, data=node)
    for i, edge in enumerate(kernel.get("edges", [])):
        g.add_edge(edge["from"], edge["to"], key=i, label=edge["label"], weight=edge["bytes"], data=edge)
    return g


def w_out(g: nx.MultiDiGraph, v: int, label: str) -> int:
    """W_out(v, l): bytes on v's outgoing edges labelled l (section 3.2.2, Weighted Out-Degree)."""
    return sum(d["weight"] for _, _, d in g.out_edges(v, data=True) if d["label"] == label)


def w_total(g: nx.MultiDiGraph, v: int) -> int:
    """W_total(v) = sum over labels of W_out(v, l)."""
    return sum(d["weight"] for _, _, d in g.out_edges(v, data=True))


def closed_subgraphs(g: nx.MultiDiGraph) -> list[list[int]]:
    """Closed subgraphs (section 3.2.1): connected components over the non-cold edges, Cold Miss excluded.

    A component is closed by construction: every non-cold edge of a member stays inside it. PCs with only cold
    edges form single-node subgraphs. Sorted by first (smallest) node id.
    """
    return _components(g.nodes, ((a, b, d["label"]) for a, b, d in g.edges(data=True)))


def kernel_closed_subgraphs(kernel: dict[str, Any]) -> list[list[int]]:
    """closed_subgraphs(build_graph(kernel)) from the kernel dict itself, without building a networkx graph."""
    nodes = (node["id"] for node in kernel.get("nodes", []))
    return _components(nodes, ((e["from"], e["to"], e["label"]) for e in kernel.get("edges", [])))


def _components(nodes: Iterable[int], edges: Iterable[tuple[int, int, str]]) -> list[list[int]]:
    """Connected components (union-find) over the non-cold edges, the Cold Miss node left out; an edge's ends are
    nodes even when `nodes` lacks them (as networkx's add_edge makes them). Each sorted, ordered by first node."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for v in nodes:
        if v != COLD_NODE:
            parent.setdefault(v, v)
    for a, b, label in edges:
        for end in (a, b):
            if end != COLD_NODE:
                parent.setdefault(end, end)
        if label != "cold" and COLD_NODE not in (a, b):
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[ra] = rb
    members: dict[int, list[int]] = defaultdict(list)
    for v in parent:
        members[root(v)].append(v)
    return sorted((sorted(c) for c in members.values()), key=lambda c: c[0])


def weights_by_node(edges: Iterable[dict[str, Any]]) -> dict[int, dict[str, int]]:
    """node -> label -> W_out(node, label): the bytes on each node's outgoing edges (a kernel's edge dicts, with
    "from", "label", "bytes"), in one pass."""
    weights: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for edge in edges:
        weights[edge["from"]][edge["label"]] += edge["bytes"]
    return weights


def _graph_weights(g: nx.MultiDiGraph) -> dict[int, dict[str, int]]:
    return weights_by_node({"from": v, "label": d["label"], "bytes": d["weight"]} for v, _, d in g.edges(data=True))


def bytes_by_label(weights: dict[int, dict[str, int]], nodes: Iterable[int]) -> dict[str, int]:
    """Bytes per label over the outgoing edges of `nodes` (for a closed subgraph: all its edges)."""
    total: dict[str, int] = defaultdict(int)
    for v in nodes:
        for label, bytes_ in weights.get(v, {}).items():
            total[label] += bytes_
    return total


def intensity(by_label: dict[str, int]) -> float | None:
    """RI(G') = total edge weight / cold-miss edge weight over the edges of G' (section 3.2.2).

    None when G' has no cold traffic (its data was first touched outside the analysed launches)."""
    cold = by_label.get("cold", 0)
    return sum(by_label.values()) / cold if cold else None


def ratio(by_label: dict[str, int], label: str) -> float | None:
    """r(l) = sum W_out(v, l) / sum W-hat(v) over V(G'), W-hat excluding Warp_same_inst and ColdMiss (3.3 I).

    None when the denominator is zero (nothing but cold and broadcast traffic)."""
    if label not in REUSE_LABELS:
        raise ValueError(f"r(l) is defined for {REUSE_LABELS}, not {label!r}")
    denom = sum(by_label.get(other, 0) for other in REUSE_LABELS)
    return by_label.get(label, 0) / denom if denom else None


def reuse_intensity(g: nx.MultiDiGraph, nodes: Iterable[int]) -> float | None:
    """RI of the subgraph on `nodes` of a networkx graph (intensity)."""
    return intensity(bytes_by_label(_graph_weights(g), nodes))


def reuse_ratio(g: nx.MultiDiGraph, nodes: Iterable[int], label: str) -> float | None:
    """r(l) of the subgraph on `nodes` of a networkx graph (ratio)."""
    return ratio(bytes_by_label(_graph_weights(g), nodes), label)


def _mean(dist: Iterable[Iterable[int]] | None) -> float:
    pairs = list(dist or ())
    n = sum(c for _, c in pairs)
    return sum(v * c for v, c in pairs) / n if n else 0.0


def r_coal(node: dict[str, Any]) -> float | None:
    """R_coal(v) = E(Sector_v) / S_opt(v) (section 3.3 II), S_opt = ceil(lanes * size / 32) per instance,
    averaged over the same instances. Global nodes only."""
    ideal = _mean(node.get("sectors_ideal"))
    return _mean(node.get("sectors")) / ideal if node.get("space") == "global" and ideal else None


def r_conf(node: dict[str, Any]) -> float | None:
    """R_conf(v) = E(Wave_v) / E(Wave_ideal_v) (section 3.3 II, Bank Conflict). Shared nodes only."""
    ideal = _mean(node.get("wavefronts_ideal"))
    return _mean(node.get("wavefronts")) / ideal if node.get("space") == "shared" and ideal else None


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def subgraph_summary(weights: dict[int, dict[str, int]], nodes: list[int]) -> dict[str, Any]:
    """A closed subgraph's footprint, bytes by label, RI and r(l) (section 3.2.2, 3.3 I), from its nodes' W_out."""
    by_label = bytes_by_label(weights, nodes)
    return {
        "nodes": nodes,
        "closed": True,
        "footprint_bytes": by_label.get("cold", 0),
        "bytes": sum(by_label.values()),
        "reuse_intensity": _finite(intensity(by_label)),
        "bytes_by_label": {label: by_label[label] for label in LABELS if by_label.get(label)},
        "reuse_ratio": {label: ratio(by_label, label) for label in REUSE_LABELS},
    }


def annotate_kernel(kernel: dict[str, Any]) -> dict[str, Any]:
    """Fill ``kernel["subgraphs"]`` and each node's ``metrics`` (W_out per label, W_total, R_coal, R_conf, the
    index of its subgraph) in place; returns the kernel. The edge weights are summed per node and label once: a
    fully unrolled kernel (sortingNetworks' bitonicSortShared1: 417 nodes, 4,623 edges) walked each node's edges
    once per label and metric through networkx's views, most of its report's analysis time."""
    weights = weights_by_node(kernel.get("edges", []))
    subgraphs = kernel_closed_subgraphs(kernel)
    kernel["subgraphs"] = [subgraph_summary(weights, nodes) for nodes in subgraphs]
    member = {v: i for i, nodes in enumerate(subgraphs) for v in nodes}
    for node in kernel.get("nodes", []):
        v = node["id"]
        if v == COLD_NODE:
            continue
        mine = weights.get(v, {})
        node["metrics"] = {
            "W_out": {label: mine.get(label, 0) for label in LABELS},  # w_out()
            "W_total": sum(mine.values()),  # w_total()
            "R_coal": r_coal(node),
            "R_conf": r_conf(node),
            "subgraph": member.get(v),
        }
    return kernel
