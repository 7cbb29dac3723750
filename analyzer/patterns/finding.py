"""A finding under construction (Draft) and its conversion to the report-format `findings` shape.

Rules produce Drafts; `finalize` gives them stable ids, shares, severities and ranks. Nothing here depends on
the order in which the engine listed nodes or edges: ids hash (function, pc) pairs, never node ids or list
positions, and ranks sort on (tier, benefit, id).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from reuselens.analyzer.patterns.view import SECTOR_BYTES, KernelView, Node
from reuselens.analyzer.reportview import MIN_SHARE_EXEMPT_PATTERNS

# Severity by waste: a finding wasting at least this share of the kernel's traffic is a warning.
WARNING_SHARE = 0.10

# Ranking tiers: correctness first, then the performance findings by estimated benefit, then information.
TIER_CORRECTNESS, TIER_PERFORMANCE, TIER_INFORMATION = 0, 1, 2

# Nsight Compute metrics a fix changes (names as `ncu --metrics` takes them); used by metrics["predicted"].
NCU = {
    ("global", "ld", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    ("global", "ld", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ("global", "st", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    ("global", "st", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ("shared", "ld", "requests"): "smsp__inst_executed_op_shared_ld.sum",
    ("shared", "ld", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ("shared", "st", "requests"): "smsp__inst_executed_op_shared_st.sum",
    ("shared", "st", "wavefronts"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ("local", "ld", "requests"): "smsp__inst_executed_op_local_ld.sum",
    ("local", "ld", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    ("local", "st", "requests"): "smsp__inst_executed_op_local_st.sum",
    ("local", "st", "sectors"): "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
}


def predicted_removal(
    node: Node, fraction: float, *, requests: bool = True, sectors: bool = True, wavefronts: bool = True
) -> dict[str, int]:
    """Counter decrements if `fraction` of this PC's executions disappear (one request per warp instruction).

    A cp.async (LDGSTS) counts, as measured on sm_90 (benchmarks/fidelity.py), as a global load request with its
    sectors, and its shared-write half adds no store and no wavefront: the global half carries the decrements, the
    shared half (pc + 1) none. ncu also counts a 16-byte LDGSTS as a shared *load* instruction, but not a 4- or
    8-byte one, nor one whose SASS carries a zero-fill operand (CUTLASS's and cuBLAS's predicated tile loads), a
    form the trace does not show: the 16-byte copies are predicted in that counter as the plain form.
    """
    if node.space not in ("global", "shared", "local") or node.type not in ("read", "write"):
        return {}
    if node.raw.get("async_copy"):
        if node.space != "global":
            return {}
        counts = predicted_removal_plain(node, fraction, requests=requests, sectors=sectors)
        if requests and node.size == 16:
            counts[NCU[("shared", "ld", "requests")]] = round(node.executions * fraction)
        return counts
    return predicted_removal_plain(node, fraction, requests=requests, sectors=sectors, wavefronts=wavefronts)


def predicted_removal_plain(
    node: Node, fraction: float, *, requests: bool = True, sectors: bool = True, wavefronts: bool = True
) -> dict[str, int]:
    op = "ld" if node.type == "read" else "st"
    counts: dict[str, int] = {}
    if requests:
        counts[NCU[(node.space, op, "requests")]] = round(node.requests * fraction)
    if node.space == "shared" and wavefronts:
        counts[NCU[("shared", op, "wavefronts")]] = round(node.wavefronts_total() * fraction)
    if node.space != "shared" and sectors:
        counts[NCU[(node.space, op, "sectors")]] = round(node.sectors_total() * fraction)
    return counts


def predicted_excess(members: list[Node], space: str, counter: str, excess: Callable[[Node], float]) -> dict[str, int]:
    """Counter decrements of a layout fix (poor-coalescing's sectors, bank-conflict's wavefronts): each PC's
    `excess`, loads and stores apart (a read-modify-write's store joins its load's finding)."""
    predicted: dict[str, int] = {}
    for op, kind in (("ld", "read"), ("st", "write")):
        of_kind = [m for m in members if m.type == kind]
        if of_kind:
            predicted[NCU[(space, op, counter)]] = round(sum(max(0.0, excess(m)) for m in of_kind))
    return predicted


def add_counts(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    for key, value in more.items():
        total[key] = total.get(key, 0) + value
    return total


@dataclass
class Draft:
    """What a rule found; `finalize` turns it into the report's finding object."""

    pattern: str
    nodes: list[Node]
    scope: str | None
    fix_kind: str
    explanation: str
    message: str
    waste_bytes: float = 0.0
    instructions: float = 0.0
    wavefronts: float = 0.0
    origins: list[Node] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    predicted: dict[str, int] = field(default_factory=dict)
    tier: int = TIER_PERFORMANCE
    severity: str | None = None  # fixed by the rule (correctness findings); else derived from share
    # What the waste is measured in: "bytes" (share of the kernel's traffic), "wavefronts" (share of its
    # shared-memory wavefronts: a bank conflict moves no extra byte, it serializes cycles) or "sectors" (excess
    # sectors, waste_bytes / 32, as a share of the sectors its global accesses requested: a lane's 4 bytes
    # fetching a whole sector is 28 bytes of waste against 4 of lane traffic, a share that saturated at 1 for
    # any uncoalesced access, however small its part of the kernel).
    basis: str = "bytes"
    extra_keys: list[tuple[str, int]] = field(default_factory=list)  # identity beyond nodes (barrier PCs)
    extra: dict[str, Any] = field(default_factory=dict)  # extra top-level fields
    context: Any = None  # what a rule needs to rebuild the draft during overlap removal; never emitted

    def pc_keys(self) -> list[tuple[str, int]]:
        return sorted({node.key for node in self.nodes} | set(self.extra_keys))


def finding_id(view: KernelView, draft: Draft) -> str:
    """Stable across runs: kernel + launch configuration + pattern + scope + the PCs, hashed."""
    keys = draft.pc_keys()
    material = json.dumps([view.config_key(), draft.pattern, draft.scope, keys], separators=(",", ":"))
    digest = hashlib.sha256(material.encode()).hexdigest()[:12]
    first = f"@{keys[0][1]:#x}" if keys else ""
    return f"{draft.pattern}{first}:{digest}"


def _severity(draft: Draft, share: float) -> str:
    if draft.severity:
        return draft.severity
    if draft.tier == TIER_INFORMATION:
        return "information" if share >= WARNING_SHARE else "hint"
    return "warning" if share >= WARNING_SHARE else "information"


def _clean(value: Any) -> Any:
    """JSON-friendly metrics: rounded floats, no NaN/inf."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def finalize(view: KernelView, drafts: list[Draft], min_share: float) -> list[dict[str, Any]]:
    """Ids, shares, severities, the minShare filter and ranks; returns the report's finding objects."""
    traffic = view.traffic_bytes()
    wavefronts = view.shared_wavefronts()
    sectors = view.global_sectors()
    built: list[tuple[tuple[int, float, str], dict[str, Any]]] = []
    seen: set[str] = set()
    for draft in drafts:
        if draft.basis == "wavefronts":
            share = min(1.0, draft.wavefronts / wavefronts) if wavefronts > 0 else 0.0
        elif draft.basis == "sectors":
            share = min(1.0, draft.waste_bytes / SECTOR_BYTES / sectors) if sectors > 0 else 0.0
        else:
            share = min(1.0, draft.waste_bytes / traffic) if traffic > 0 else 0.0
        if share < min_share and draft.pattern not in MIN_SHARE_EXEMPT_PATTERNS:
            continue
        identifier = finding_id(view, draft)
        if identifier in seen:  # the same pattern on the same PCs and scope twice: keep the first
            continue
        seen.add(identifier)
        metrics = dict(draft.metrics)
        if draft.predicted:
            metrics["predicted"] = {k: v for k, v in sorted(draft.predicted.items()) if v}
        finding = {
            "id": identifier,
            "pattern": draft.pattern,
            "severity": _severity(draft, share),
            "rank": 0,
            "pcs": sorted({node.id for node in draft.nodes}, key=lambda i: view.nodes[i].key),
            "origin_pcs": sorted({node.id for node in draft.origins}, key=lambda i: view.nodes[i].key),
            "scope": draft.scope,
            "waste": {
                "bytes": int(round(draft.waste_bytes)),
                "instructions": int(round(draft.instructions)),
                "wavefronts": int(round(draft.wavefronts)),
                "share": round(share, 6),
                "basis": draft.basis,
            },
            "fix": {"kind": draft.fix_kind, "explanation": draft.explanation},
            "message": draft.message,
            "metrics": _clean(metrics),
            **draft.extra,
        }
        built.append(((draft.tier, -draft.waste_bytes, identifier), finding))
    built.sort(key=lambda item: item[0])
    for rank, (_key, finding) in enumerate(built, start=1):
        finding["rank"] = rank
    return [finding for _key, finding in built]
