"""A self-contained HTML page (inline SVG, no scripts, no network) of one kernel's PCDepGraph.

Drawn like the paper's Figure 1 (section 3.2): one column per closed subgraph, the Cold Miss node on top,
edge colour = Topological Distance, edge width = log of bytes, self-loops allowed.
"""

from __future__ import annotations

import html
import math
from typing import Any

from reuselens.analyzer.reportview import kernel_label
from reuselens.analyzer.units import format_bytes

LABEL_COLORS = {
    "cold": "#4c78a8",
    "thread": "#54a24b",
    "warp_same_inst": "#eeca3b",
    "warp_diff_inst": "#f58518",
    "block": "#e45756",
    "grid": "#b279a2",
}
LABEL_TEXT = {
    "cold": "cold miss",
    "thread": "intra-thread",
    "warp_same_inst": "intra-warp-same-inst",
    "warp_diff_inst": "intra-warp-diff-inst",
    "block": "intra-block",
    "grid": "intra-grid",
}
NODE_W, NODE_H, COL_GAP, ROW_GAP, TOP = 190, 42, 70, 34, 120


def _groups(kernel: dict[str, Any]) -> list[list[int]]:
    memory_nodes = [int(n["id"]) for n in kernel.get("nodes", []) if int(n["id"]) != 0]
    placed: set[int] = set()
    groups = []
    for subgraph in kernel.get("subgraphs", []):
        members = [int(v) for v in subgraph.get("nodes", []) if int(v) != 0 and int(v) not in placed]
        if members:
            groups.append(sorted(members))
            placed.update(members)
    rest = [v for v in memory_nodes if v not in placed]
    groups.extend([v] for v in rest)
    return groups


def _node_text(node: dict[str, Any]) -> tuple[str, str]:
    source = node.get("source") or {}
    where = (
        f"{source.get('file', '').rsplit('/', 1)[-1]}:{source.get('line')}" if source.get("file") else "no line info"
    )
    kind = f"{node.get('type', '?')} {node.get('space', '?')} {node.get('size', '?')}B"
    return f"0x{int(node.get('pc', 0)):x} {kind}", where


def render_html(kernel: dict[str, Any]) -> str:
    groups = _groups(kernel)
    positions = _layout(groups)
    width = max(600, 80 + len(groups) * (NODE_W + COL_GAP))
    height = TOP + 120 + max((len(g) for g in groups), default=1) * (NODE_H + ROW_GAP)
    positions[0] = (width / 2 - NODE_W / 2, 30)
    nodes = {int(n["id"]): n for n in kernel.get("nodes", [])}
    parts = _edge_paths(kernel.get("edges", []), positions) + _node_boxes(nodes, positions)
    return _page(kernel_label(kernel), width, height, parts)


def _layout(groups: list[list[int]]) -> dict[int, tuple[float, float]]:
    """Top-left corner of each memory node: one column per group, its members top to bottom."""
    positions: dict[int, tuple[float, float]] = {}
    for column, members in enumerate(groups):
        for row, node_id in enumerate(members):
            positions[node_id] = (40 + column * (NODE_W + COL_GAP), TOP + 60 + row * (NODE_H + ROW_GAP))
    return positions


def _edge_paths(edges: list[dict[str, Any]], positions: dict[int, tuple[float, float]]) -> list[str]:
    max_bytes = max((float(e.get("bytes", 0)) for e in edges), default=1.0) or 1.0
    parts: list[str] = []
    for edge in edges:
        source, target = int(edge["from"]), int(edge["to"])
        if source not in positions or target not in positions:
            continue
        label = edge.get("label", "cold")
        stroke = 1 + 5 * math.log1p(float(edge.get("bytes", 0))) / math.log1p(max_bytes)
        path = _edge_path(positions[source], positions[target], source == target, label)
        tip = (
            f"{LABEL_TEXT.get(label, label)}: {format_bytes(edge.get('bytes', 0))}, {edge.get('accesses', 0)} accesses"
        )
        parts.append(
            f'<path d="{path}" fill="none" stroke="{LABEL_COLORS.get(label, "#888")}" '
            f'stroke-width="{stroke:.2f}" stroke-opacity="0.8" marker-end="url(#arrow)">'
            f"<title>{html.escape(tip)}</title></path>"
        )
    return parts


def _edge_path(start: tuple[float, float], end: tuple[float, float], self_loop: bool, label: str) -> str:
    (x1, y1), (x2, y2) = start, end
    if self_loop:
        return (
            f"M {x1 + NODE_W} {y1 + 10} C {x1 + NODE_W + 45} {y1 - 15}, "
            f"{x1 + NODE_W + 45} {y1 + NODE_H + 15}, {x1 + NODE_W} {y1 + NODE_H - 10}"
        )
    x1c, y1c = x1 + NODE_W / 2, y1 + NODE_H / 2
    x2c, y2c = x2 + NODE_W / 2, y2 + NODE_H / 2
    # Same-column edges would lie on top of each other: bend them sideways, each label by its own
    # amount, upward edges to one side and downward ones to the other.
    offset = 30 + 14 * list(LABEL_COLORS).index(label) if label in LABEL_COLORS else 30
    bend = 0 if x1c != x2c else (offset if y1c > y2c else -offset)
    return f"M {x1c} {y1c} Q {(x1c + x2c) / 2 + 2 * bend} {(y1c + y2c) / 2}, {x2c} {y2c}"


def _node_boxes(nodes: dict[int, dict[str, Any]], positions: dict[int, tuple[float, float]]) -> list[str]:
    parts: list[str] = []
    for node_id, (x, y) in positions.items():
        if node_id == 0:
            parts.append(
                f'<g><ellipse cx="{x + NODE_W / 2}" cy="{y + NODE_H / 2}" rx="{NODE_W / 2}" '
                f'ry="{NODE_H / 2}" fill="#dbe8f6" stroke="#4c78a8"/>'
                f'<text x="{x + NODE_W / 2}" y="{y + NODE_H / 2 + 4}" text-anchor="middle">'
                f"untracked memory (cold miss)</text></g>"
            )
            continue
        node = nodes.get(node_id, {})
        head, where = _node_text(node)
        fill = {"global": "#fff5e6", "shared": "#eaf7ea", "local": "#f3e8f7"}.get(node.get("space"), "#eeeeee")
        tip = f"{head}\n{where}\n{format_bytes(node.get('bytes', 0))}, {node.get('executions', 0)} executions"
        parts.append(
            f'<g><rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" fill="{fill}" '
            f'stroke="#555"/><text x="{x + 8}" y="{y + 17}">{html.escape(head)}</text>'
            f'<text x="{x + 8}" y="{y + 33}" class="where">{html.escape(where)}</text>'
            f"<title>{html.escape(tip)}</title></g>"
        )
    return parts


def _page(kernel_name: str, width: int, height: int, parts: list[str]) -> str:
    legend = "".join(
        f'<span class="key"><span style="background:{color}"></span>{html.escape(LABEL_TEXT[label])}</span>'
        for label, color in LABEL_COLORS.items()
    )
    title = html.escape(kernel_name)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>PCDepGraph: {title}</title>
<style>
body {{ font: 13px system-ui, sans-serif; margin: 16px; }}
svg text {{ font: 12px ui-monospace, monospace; }} svg text.where {{ fill: #555; }}
.key {{ margin-right: 14px; white-space: nowrap; }}
.key span {{ display: inline-block; width: 22px; height: 4px; margin-right: 5px; vertical-align: middle; }}
</style></head><body>
<h2>PCDepGraph: {title}</h2>
<p>Edges point from an access to its reuse origin; colour = Topological Distance, width = log(bytes).
Columns are closed subgraphs. {legend}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9"
markerHeight="9" orient="auto">
<path d="M 0 0 L 10 5 L 0 10 z" fill="#666"/></marker></defs>
{chr(10).join(parts)}
</svg></body></html>
"""
