"""One kernel's PCDepGraph as GraphML text (input: one kernel dict of report.json, docs/report-format.md).

Node 0 is untracked memory; edge attributes label, bytes, accesses, rar/raw/war/waw and, for a cold edge whose
data a prior kernel wrote, prior_kernel/prior_pc. Attributes are scalars only: that is what GraphML holds.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from reuselens.analyzer.graph import COLD_NODE
from reuselens.analyzer.reporters.graph_text import node_title


def to_graphml(kernel: dict[str, Any]) -> str:
    return "\n".join(nx.generate_graphml(_plain_graph(kernel))) + "\n"


def _plain_graph(kernel: dict[str, Any]) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    g.add_node(COLD_NODE, label="untracked memory", cold=True)
    for node in kernel.get("nodes", []):
        if node["id"] != COLD_NODE:
            g.add_node(node["id"], **_node_attributes(node))
    for i, e in enumerate(kernel.get("edges", [])):
        g.add_edge(e["from"], e["to"], key=i, label=e["label"], **_edge_attributes(e))
    return g


def _node_attributes(node: dict[str, Any]) -> dict[str, Any]:
    attrs = {
        "label": node_title(node),
        "cold": False,
        "pc": int(node["pc"]),
        "function": node.get("function") or "",
        "space": node.get("space") or "",
        "type": node.get("type") or "",
        "size": int(node.get("size") or 0),
        "executions": int(node.get("executions") or 0),
        "bytes": int(node.get("bytes") or 0),
    }
    source = node.get("source") or {}
    if source.get("file"):
        attrs["source"] = f"{source['file']}:{source.get('line', 0)}"
    return attrs


def _edge_attributes(edge: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {k: int(edge.get(k) or 0) for k in ("bytes", "accesses", "rar", "raw", "war", "waw")}
    prior = edge.get("prior_kernel") or {}
    if prior:
        attrs["prior_kernel"] = str(prior.get("kernel") or prior.get("kernel_function_id"))
        attrs["prior_pc"] = int(prior.get("pc", 0))
    return attrs
