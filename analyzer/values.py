"""Value redundancy figures over the engine's value counts (runs profiled with --values; docs/engine.md "Value
redundancy"): per load PC from its out-edges, and per program. Shared by the value rule (patterns/
value_redundancy.py), the CLI's summary and the editor's hover, so that all three say the same numbers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

PRIOR_LAUNCH = "prior_launch"  # the scope of a redundant load whose previous load was in an earlier launch


def scope_of(edge: dict[str, Any]) -> str:
    return PRIOR_LAUNCH if edge.get("label") == "cold" and edge.get("prior_kernel") else str(edge.get("label"))


def temporal(edges: Iterable[dict[str, Any]]) -> tuple[float, float, dict[str, float]]:
    """Over a load PC's out-edges: its load lane-granules with a value, and the redundant ones in all and per scope
    (loads that returned what their location's last load returned). Launches sampled without values
    (`--values-every`) are in neither. warp_same_inst edges are left out: lanes of one instruction on one location
    find one value by construction, which is no redundancy over time."""
    valued = 0.0
    same: dict[str, float] = defaultdict(float)
    for edge in edges:
        if edge.get("label") == "warp_same_inst":
            continue
        valued += float(edge.get("value_loads") or 0)
        if edge.get("same_value"):
            same[scope_of(edge)] += float(edge["same_value"])
    return valued, sum(same.values()), dict(same)


def program_summary(kernels: Iterable[dict[str, Any]]) -> dict[str, float] | None:
    """Program-wide shares (LoadSpy's program metrics): redundant loads among load lane-granules with a value,
    zero lanes among loaded lanes, silent lanes among stored lanes; None without values."""
    loads = redundant = loaded = zero = stored = silent = 0.0
    seen = False
    for kernel in kernels:
        types = {node.get("id"): node.get("type") for node in kernel.get("nodes", [])}
        for node in kernel.get("nodes", []):
            values = node.get("values")
            if not values:
                continue
            seen = True
            if node.get("type") == "read":
                loaded += values["lanes"]
                zero += values["zero"]
            elif node.get("type") == "write":
                stored += values["lanes"]
                silent += values["silent"]
        by_node: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for edge in kernel.get("edges", []):
            if types.get(edge.get("from")) == "read":
                by_node[edge.get("from")].append(edge)
        for edges in by_node.values():
            accesses, same, _scopes = temporal(edges)
            loads += accesses
            redundant += same
    if not seen:
        return None
    share = lambda part, whole: part / whole if whole else 0.0  # noqa: E731
    return {
        "redundant_loads": share(redundant, loads),
        "zero_loads": share(zero, loaded),
        "silent_stores": share(silent, stored),
    }
