"""One kernel's PCDepGraph in the layout of AccelProf's per-kernel dependency JSON (docs/engine.md, "Exports").

Input is one kernel dict of report.json (docs/report-format.md). Scripts written for that tool's per-launch JSON
read ours: one node per PC with flag string and the three histograms keyed by value, one edge per (current PC,
origin PC) with per-scope counts.
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.graph import COLD_NODE

# AccelProf's scope names for our labels (research/accelprof.md, section 2.3).
ACCELPROF_SCOPES = {
    "thread": "intra_thread",
    "warp_same_inst": "intra_instance_launch",
    "warp_diff_inst": "intra_warp",
    "block": "intra_block",
    "grid": "intra_grid",
}


def to_accelprof(kernel: dict[str, Any]) -> dict[str, Any]:
    """AccelProf-style per-kernel JSON: pc-keyed nodes and edges with per-scope counts (accesses).

    Differences, by design: counts come from every 4-byte granule of every lane (AccelProf counts broadcast
    lanes once per lane), cp.async halves keep their pc / pc + 1, and cold edges with a prior-kernel origin
    say so in ``prior_kernel``."""
    nodes = [_node(n) for n in kernel.get("nodes", []) if n["id"] != COLD_NODE]
    edges = _merged_edges(kernel)
    return {
        "tool": "reuselens",
        "format": "accelprof-pc-dependency",
        "kernel": {
            "kernel_name": kernel.get("name") or kernel.get("mangled"),
            "mangled": kernel.get("mangled"),
            "grid_dim": kernel.get("grid"),
            "block_dim": kernel.get("block"),
            "launches": kernel.get("launches"),
        },
        "shadow_memory_granularity_bytes": 4,
        "sample_stride_bytes": 4,
        "nodes": nodes,
        "edges": sorted(edges, key=lambda r: (r["current_pc"], r["ancient_pc"] or -1)),
    }


def _node(n: dict[str, Any]) -> dict[str, Any]:
    return {
        "pc": n["pc"],
        "pc_hex": f"0x{n['pc']:x}",
        "function": n.get("function"),
        "flags": _flags(n),
        "access_size": n.get("size"),
        "distinct_sector_count": _keyed(n.get("sectors") or n.get("wavefronts")),
        "active_lane_count": _keyed(n.get("lanes")),
        "distinct_address_count": _keyed(n.get("addresses")),
    }


def _merged_edges(kernel: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (current PC, origin PC) with a count per scope, as AccelProf keeps them; the report keeps
    an edge per label."""
    by_id = {n["id"]: n for n in kernel.get("nodes", [])}
    merged: dict[tuple[int, int | None], dict[str, Any]] = {}
    for e in kernel.get("edges", []):
        cur = by_id[e["from"]]
        origin = None if e["label"] == "cold" else by_id[e["to"]]["pc"]
        row = merged.setdefault((cur["pc"], origin), _edge_row(cur, origin))
        if origin is None:
            row["cold"] += e["accesses"]
            if e.get("prior_kernel"):
                row["prior_kernel"].append(e["prior_kernel"])
        else:
            row["dist"][ACCELPROF_SCOPES[e["label"]]] += e["accesses"]
    return list(merged.values())


def _edge_row(cur: dict[str, Any], origin: int | None) -> dict[str, Any]:
    return {
        "current_pc": cur["pc"],
        "current_pc_hex": f"0x{cur['pc']:x}",
        "ancient_pc": origin,
        "ancient_pc_hex": None if origin is None else f"0x{origin:x}",
        "cold_miss": origin is None,
        "current_flags": _flags(cur),
        "current_access_size": cur.get("size"),
        "dist": {scope: 0 for scope in ACCELPROF_SCOPES.values()},
        "cold": 0,
        "prior_kernel": [],
    }


def _flags(node: dict[str, Any]) -> str:
    kind = {"read": "READ", "write": "WRITE", "atomic": "READWRITE"}.get(node.get("type") or "", "")
    return f"{kind} {(node.get('space') or '').upper()}".strip()


def _keyed(dist: list[list[int]] | None) -> dict[str, int]:
    return {str(v): c for v, c in dist or []}
