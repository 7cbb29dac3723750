"""One kernel's PCDepGraph as Graphviz DOT text (input: one kernel dict of report.json, docs/report-format.md).

Edge colour = Topological Distance label, pen width grows with log2 of the bytes (the paper's Figure 1).
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.graph import COLD_NODE, build_graph
from reuselens.analyzer.reporters.graph_text import node_title, source_line

# Graphviz colours per Topological Distance label (legend order of the paper's Figure 1).
LABEL_COLOURS = {
    "cold": "#1f77b4",
    "thread": "#2ca02c",
    "warp_same_inst": "#9467bd",
    "warp_diff_inst": "#8c564b",
    "block": "#ff7f0e",
    "grid": "#d62728",
}


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(kernel: dict[str, Any]) -> str:
    g = build_graph(kernel)
    name = kernel.get("name") or kernel.get("mangled") or kernel.get("id") or "kernel"
    lines = [f"digraph {_dot_quote(str(name))} {{", "  rankdir=LR;", "  node [shape=box, fontname=monospace];"]
    lines.append('  0 [label="untracked memory", shape=ellipse, style=filled, fillcolor="#aec7e8"];')
    for v, d in g.nodes(data=True):
        if v != COLD_NODE:
            label = f"{node_title(d['data'])}\n{source_line(d['data'])}"
            lines.append(f"  {v} [label={_dot_quote(label)}];")
    for a, b, d in g.edges(data=True):
        width = 1 + max(0, int(d["weight"]).bit_length() - 10) / 4
        label = f"{d['label']} {d['weight']} B"
        lines.append(
            f'  {a} -> {b} [label={_dot_quote(label)}, color="{LABEL_COLOURS[d["label"]]}", penwidth={width:.2f}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
