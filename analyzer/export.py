"""Exports of one kernel's PCDepGraph: GraphML, Graphviz DOT, and an AccelProf-style per-kernel JSON.

Input is one kernel dict of report.json (docs/report-format.md). Public API: :func:`to_graphml`,
:func:`to_dot`, :func:`to_accelprof`. The AccelProf-style layout (docs/engine.md, "Exports") lets scripts
written for that tool's per-launch JSON read ours: one node per PC with flag string and the three histograms
keyed by value, one edge per (current PC, origin PC) with per-scope counts.
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from reuselens.analyzer.graph import COLD_NODE, build_graph

# Graphviz colours per Topological Distance label (legend order of the paper's Figure 1).
LABEL_COLOURS = {"cold": "#1f77b4", "thread": "#2ca02c", "warp_same_inst": "#9467bd", "warp_diff_inst": "#8c564b",
                 "block": "#ff7f0e", "grid": "#d62728"}
# AccelProf's scope names for our labels (research/accelprof.md, section 2.3).
ACCELPROF_SCOPES = {"thread": "intra_thread", "warp_same_inst": "intra_instance_launch",
                    "warp_diff_inst": "intra_warp", "block": "intra_block", "grid": "intra_grid"}


def _node_title(node: dict[str, Any]) -> str:
    async_tag = " async" if node.get("async_copy") else ""
    return f"0x{node['pc']:x} {node.get('type')} {node.get('space')} {node.get('size')}B{async_tag}"


def _source_line(node: dict[str, Any]) -> str:
    """`file.cu:LINE` of the node's instruction (the file's name only: labels stay short; GraphML keeps the path)."""
    source = node.get("source") or {}
    if not source.get("file"):
        return "no line info"
    return f"{source['file'].rsplit('/', 1)[-1]}:{source.get('line')}"


def _plain_graph(kernel: dict[str, Any]) -> nx.MultiDiGraph:
    """The kernel graph with scalar attributes only (what GraphML can hold)."""
    g = nx.MultiDiGraph()
    g.add_node(COLD_NODE, label="untracked memory", cold=True)
    for node in kernel.get("nodes", []):
        if node["id"] == COLD_NODE:
            continue
        attrs = {"label": _node_title(node), "cold": False, "pc": int(node["pc"]),
                 "function": node.get("function") or "", "space": node.get("space") or "",
                 "type": node.get("type") or "", "size": int(node.get("size") or 0),
                 "executions": int(node.get("executions") or 0), "bytes": int(node.get("bytes") or 0)}
        source = node.get("source") or {}
        if source.get("file"):
            attrs["source"] = f"{source['file']}:{source.get('line', 0)}"
        g.add_node(node["id"], **attrs)
    for i, e in enumerate(kernel.get("edges", [])):
        attrs = {k: int(e.get(k) or 0) for k in ("bytes", "accesses", "rar", "raw", "war", "waw")}
        prior = e.get("prior_kernel") or {}
        if prior:
            attrs["prior_kernel"] = str(prior.get("kernel") or prior.get("kernel_function_id"))
            attrs["prior_pc"] = int(prior.get("pc", 0))
        g.add_edge(e["from"], e["to"], key=i, label=e["label"], **attrs)
    return g


def to_graphml(kernel: dict[str, Any]) -> str:
    """GraphML text (node 0 = untracked memory; edge attributes label, bytes, accesses, rar/raw/war/waw)."""
    return "\n".join(nx.generate_graphml(_plain_graph(kernel))) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(kernel: dict[str, Any]) -> str:
    """Graphviz DOT text; edge colour = label, pen width grows with log2 of the bytes (paper Figure 1)."""
    g = build_graph(kernel)
    name = kernel.get("name") or kernel.get("mangled") or kernel.get("id") or "kernel"
    lines = [f"digraph {_dot_quote(str(name))} {{", "  rankdir=LR;", "  node [shape=box, fontname=monospace];"]
    lines.append('  0 [label="untracked memory", shape=ellipse, style=filled, fillcolor="#aec7e8"];')
    for v, d in g.nodes(data=True):
        if v != COLD_NODE:
            label = f"{_node_title(d['data'])}\n{_source_line(d['data'])}"
            lines.append(f"  {v} [label={_dot_quote(label)}];")
    for a, b, d in g.edges(data=True):
        width = 1 + max(0, int(d["weight"]).bit_length() - 10) / 4
        label = f"{d['label']} {d['weight']} B"
        lines.append(f"  {a} -> {b} [label={_dot_quote(label)}, color=\"{LABEL_COLOURS[d['label']]}\", "
                     f"penwidth={width:.2f}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _flags(node: dict[str, Any]) -> str:
    kind = {"read": "READ", "write": "WRITE", "atomic": "READWRITE"}.get(node.get("type") or "", "")
    return f"{kind} {(node.get('space') or '').upper()}".strip()


def _keyed(dist: list[list[int]] | None) -> dict[str, int]:
    return {str(v): c for v, c in dist or []}


def to_accelprof(kernel: dict[str, Any]) -> dict[str, Any]:
    """AccelProf-style per-kernel JSON: pc-keyed nodes and edges with per-scope counts (accesses).

    Differences, by design: counts come from every 4-byte granule of every lane (AccelProf counts broadcast
    lanes once per lane), cp.async halves keep their pc / pc + 1, and cold edges with a prior-kernel origin
    say so in ``prior_kernel``."""
    by_id = {n["id"]: n for n in kernel.get("nodes", [])}
    nodes = []
    for n in kernel.get("nodes", []):
        if n["id"] == COLD_NODE:
            continue
        nodes.append({"pc": n["pc"], "pc_hex": f"0x{n['pc']:x}", "function": n.get("function"),
                      "flags": _flags(n), "access_size": n.get("size"),
                      "distinct_sector_count": _keyed(n.get("sectors") or n.get("wavefronts")),
                      "active_lane_count": _keyed(n.get("lanes")),
                      "distinct_address_count": _keyed(n.get("addresses"))})
    merged: dict[tuple[int, int | None], dict[str, Any]] = {}
    for e in kernel.get("edges", []):
        cur = by_id[e["from"]]
        origin = None if e["label"] == "cold" else by_id[e["to"]]["pc"]
        row = merged.setdefault((cur["pc"], origin), {
            "current_pc": cur["pc"], "current_pc_hex": f"0x{cur['pc']:x}",
            "ancient_pc": origin, "ancient_pc_hex": None if origin is None else f"0x{origin:x}",
            "cold_miss": origin is None, "current_flags": _flags(cur), "current_access_size": cur.get("size"),
            "dist": {scope: 0 for scope in ACCELPROF_SCOPES.values()}, "cold": 0, "prior_kernel": []})
        if origin is None:
            row["cold"] += e["accesses"]
            if e.get("prior_kernel"):
                row["prior_kernel"].append(e["prior_kernel"])
        else:
            row["dist"][ACCELPROF_SCOPES[e["label"]]] += e["accesses"]
    return {"tool": "reuselens", "format": "accelprof-pc-dependency",
            "kernel": {"kernel_name": kernel.get("name") or kernel.get("mangled"), "mangled": kernel.get("mangled"),
                       "grid_dim": kernel.get("grid"), "block_dim": kernel.get("block"),
                       "launches": kernel.get("launches")},
            "shadow_memory_granularity_bytes": 4, "sample_stride_bytes": 4,
            "nodes": nodes, "edges": sorted(merged.values(), key=lambda r: (r["current_pc"], r["ancient_pc"] or -1))}


def accelprof_json(kernel: dict[str, Any]) -> str:
    return json.dumps(to_accelprof(kernel), indent=1) + "\n"
