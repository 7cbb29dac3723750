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


def read_only_loads(edges: Iterable[dict[str, Any]]) -> float:
    """Of a load PC's redundant loads (temporal()), those whose previous access of the location, in this very
    launch, was a read (rar edges of the in-launch labels): nothing wrote the location between the two loads, so
    the value could not but be the same, and the reuse graph (the reuse rules) already says the load repeats. The
    rest is news only values tell: a value unchanged though stored to (raw edges), or across launches."""
    return sum(
        float(edge.get("same_value") or 0)
        for edge in edges
        if edge.get("label") != "warp_same_inst"
        and scope_of(edge) != PRIOR_LAUNCH
        and not edge.get("raw")
        and not edge.get("waw")
    )


def approximate(edges: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Over a load PC's out-edges, per scope: the load lane-granules that did not return their location's last
    loaded value but one within the run's share of it (LoadSpy's approximate redundancy; meaningful only for a load
    value_types.approximate_applies to). warp_same_inst left out as in temporal()."""
    near: dict[str, float] = defaultdict(float)
    for edge in edges:
        if edge.get("label") != "warp_same_inst" and edge.get("approx_value"):
            near[scope_of(edge)] += float(edge["approx_value"])
    return dict(near)


def approx_share(kernels: Iterable[dict[str, Any]]) -> float:
    """The share within which the run counted approximate redundancy (run.json collector.values_approx, copied to
    each kernel of the report); 0 when it did not."""
    return max((float(k.get("value_approx") or 0.0) for k in kernels), default=0.0)


def program_summary(kernels: Iterable[dict[str, Any]]) -> dict[str, float] | None:
    """Program-wide shares (LoadSpy's program metrics): redundant loads among load lane-granules with a value,
    zero lanes among loaded lanes, silent lanes among stored lanes; None without values. A run that counted
    approximate redundancy adds `approximate_loads`: the loads of floats and doubles within its share of their
    location's last loaded value (not exactly it) among all loads with a value."""
    from reuselens.analyzer.value_types import approximate_applies

    loads = redundant = loaded = zero = stored = silent = near = 0.0
    seen = approx_run = False
    for kernel in kernels:
        types = {node.get("id"): node.get("type") for node in kernel.get("nodes", [])}
        floating = {node.get("id") for node in kernel.get("nodes", []) if approximate_applies(node)}
        approx_run = approx_run or bool(kernel.get("value_approx"))
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
        for node_id, edges in by_node.items():
            accesses, same, _scopes = temporal(edges)
            loads += accesses
            redundant += same
            if node_id in floating:
                near += sum(approximate(edges).values())
    if not seen:
        return None
    share = lambda part, whole: part / whole if whole else 0.0  # noqa: E731
    summary = {
        "redundant_loads": share(redundant, loads),
        "zero_loads": share(zero, loaded),
        "silent_stores": share(silent, stored),
    }
    if approx_run:
        summary["approximate_loads"] = share(near, loads)
    return summary
