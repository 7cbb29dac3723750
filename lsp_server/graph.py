"""reuselens.showGraph and reuselens.compare: plain JSON for a client to render."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from reuselens.analyzer.compare import diff_reports
from reuselens.lsp_server.model import RunResults

_SPACE = {"global": "G", "shared": "S", "local": "L"}
_TYPE = {"read": "LD", "write": "ST", "atomic": "ATOM"}


def kernel_at(results: RunResults, path: str | None, line: int | None) -> dict[str, Any] | None:
    """The kernel owning the most bytes on (path, line); else the kernel with the heaviest finding."""
    refs = results.nodes_by_line.get(path or "", {}).get(line or 0, []) if path else []
    if refs:
        return max(refs, key=lambda r: int(r.node.get("bytes", 0))).kernel
    hot = results.hot_spots()
    return hot[0].kernel if hot else (results.kernels[0] if results.kernels else None)


def pc_dep_graph(results: RunResults, kernel: dict[str, Any]) -> dict[str, Any]:
    """Nodes with labels and file:line, edges with label and weight (bytes, and share of the source node's
    W_total), and the closed subgraphs each node belongs to (paper section 3.2)."""
    membership: dict[int, list[int]] = defaultdict(list)
    subgraphs = []
    for index, sub in enumerate(kernel.get("subgraphs", []) or []):
        subgraphs.append(
            {
                "id": index,
                "nodes": sub.get("nodes", []),
                "closed": bool(sub.get("closed")),
                "bytes": sub.get("bytes", 0),
                "reuse_intensity": sub.get("reuse_intensity"),
            }
        )
        if sub.get("closed"):
            for nid in sub.get("nodes", []):
                membership[nid].append(index)
    totals = {n.get("id"): int(n.get("bytes", 0)) for n in kernel.get("nodes", [])}
    nodes = [_node(results, kernel, n, membership.get(n.get("id"), [])) for n in kernel.get("nodes", [])]
    edges = [
        {
            "from": e.get("from"),
            "to": e.get("to"),
            "label": e.get("label"),
            "bytes": e.get("bytes", 0),
            "weight": (e.get("bytes", 0) / totals[e.get("from")]) if totals.get(e.get("from")) else 0.0,
        }
        for e in kernel.get("edges", [])
    ]
    return {
        "kernel": kernel.get("id"),
        "name": kernel.get("name"),
        "mangled": kernel.get("mangled"),
        "nodes": nodes,
        "edges": edges,
        "subgraphs": subgraphs,
    }


def _node(results: RunResults, kernel: dict[str, Any], node: dict[str, Any], closed: list[int]) -> dict[str, Any]:
    if node.get("id") == 0 or node.get("space") is None:
        return {
            "id": node.get("id"),
            "label": "Cold Miss",
            "file": None,
            "line": None,
            "bytes": 0,
            "closed_subgraphs": [],
        }
    where = results.place(node.get("source"))
    op = f"{_TYPE.get(node.get('type'), node.get('type'))}.{_SPACE.get(node.get('space'), '?')}{8 * int(node.get('size', 0))}"
    loc = f"{os.path.basename(where[0])}:{where[1]}" if where else "?"
    return {
        "id": node.get("id"),
        "label": f"{op} {node.get('pc', 0):#06x} {loc}",
        "pc": node.get("pc"),
        "space": node.get("space"),
        "type": node.get("type"),
        "bytes": node.get("bytes", 0),
        "sass": results.sass.text(kernel, node),
        "file": where[0] if where else None,
        "line": where[1] if where else None,
        "closed_subgraphs": closed,
    }


def _finding_index(results: RunResults | None) -> dict[str, dict[str, Any]]:
    if results is None:
        return {}
    return {
        str(f.get("id")): {**f, "kernel": k.get("name") or k.get("mangled")}
        for k in results.kernels
        for f in k.get("findings", []) or []
    }


def _waste(finding: dict[str, Any]) -> tuple[float, str]:
    """A finding's waste in the unit its share is measured in (docs/report-format.md `basis`): bytes, or
    shared-memory wavefronts for bank conflicts (which move no extra byte)."""
    waste = finding.get("waste") or {}
    unit = "wavefronts" if waste.get("basis") == "wavefronts" else "bytes"
    return float(waste.get(unit, 0) or 0), unit


def compare(previous: RunResults | None, current: RunResults | None) -> dict[str, Any]:
    """Findings added, resolved and changed (by waste) between the previous and the current run, and per
    kernel the traffic and per-pattern waste before and after (analyzer.compare, as `reuselens diff`)."""
    if current is None:
        return {"error": "no run loaded yet"}
    before, after = _finding_index(previous), _finding_index(current)

    def brief(f: dict[str, Any]) -> dict[str, Any]:
        amount, unit = _waste(f)
        return {
            "id": f.get("id"),
            "pattern": f.get("pattern"),
            "kernel": f.get("kernel"),
            "message": f.get("message"),
            "waste": amount,
            "waste_unit": unit,
        }

    changed = [
        {**brief(after[i]), "waste_before": _waste(before[i])[0]}
        for i in sorted(set(before) & set(after))
        if _waste(before[i]) != _waste(after[i])
    ]
    return {
        "previous": previous.report_path if previous else None,
        "current": current.report_path,
        "added": [brief(after[i]) for i in sorted(set(after) - set(before))],
        "resolved": [brief(before[i]) for i in sorted(set(before) - set(after))],
        "changed": changed,
        "kernels": _kernel_diff(previous, current),
    }


def _kernel_diff(previous: RunResults | None, current: RunResults) -> list[dict[str, Any]]:
    """reuselens.analyzer.compare's per-kernel entries plus flat bytes_before/bytes_after (what the VS Code page shows)."""
    if previous is None:
        return []
    out = []
    for entry in diff_reports(previous.report, current.report):
        traffic = entry.get("traffic", {}).get("bytes", {})
        out.append(
            {
                **entry,
                "bytes_before": None if entry["status"] == "added" else traffic.get("before"),
                "bytes_after": None if entry["status"] == "removed" else traffic.get("after"),
            }
        )
    return out
