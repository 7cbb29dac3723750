"""Poor Coalescing, paper section 3.3 II: R_coal(v) = E(Sector_v) / S_opt(v), S_opt = ceil(Lane·AccSize/32).

R_coal > 1 means the active lanes touch more 32-byte sectors than their bytes need; the worst case is
SecSize/AccSize (8 for 4-byte accesses). Reported above the `coalescing` threshold for global-memory PCs
(local memory is interleaved per lane by the hardware, shared memory has no sectors). The waste is the excess
sector traffic, Σ sectors − Σ S_opt over all executions, in bytes (× 32), and its share is of the sectors the
kernel's global accesses requested (basis "sectors"): as a share of lane-bytes, one uncoalesced 4-byte access
wastes 7 times its own traffic and saturated the share at 1 in kernels where it is a sideline (the breadth set's
review, session 46: ten coalescing warnings at the cap, a 224-byte kernel among them).

A reload is not a layout of its own: a load whose bytes were nearly all last touched by the same thread at other
PCs that this rule flags (SHOC BFS's volatile `cost[node_to_process]`, loaded at line 594 and again at 596) fetches
the sectors those PCs fetched; coalescing them fixes both, and the reload itself is redundant's to report. Its own
finding would count the same layout twice, so it gets none. A PC whose re-reads come from itself (a loop's next
iteration) keeps its finding: it is the first touch of its data too.
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import NCU, Draft
from reuselens.analyzer.patterns.text import count, format_bytes
from reuselens.analyzer.patterns.view import (
    SECTOR_BYTES,
    KernelView,
    Node,
    dist_mean,
    group_by_line,
    line_key,
    merged_node,
)

PATTERNS = {"poor-coalescing": "Poorly coalesced global access"}

_FIX = (
    "The lanes of a warp touch more 32-byte sectors than the bytes they use, so most of every fetched sector "
    "is thrown away. Make consecutive lanes access consecutive addresses: index with threadIdx.x in the "
    "fastest-varying dimension, switch an array of structures to a structure of arrays, or stage a tile "
    "through shared memory with coalesced loads and read it transposed from there (paper 3.3 II)."
)


def _draft(node: Node, ratio: float) -> Draft:
    excess = max(0.0, node.sectors_total() - node.sectors_ideal_total())
    op = "ld" if node.type == "read" else "st"
    predicted = {NCU[("global", op, "sectors")]: round(excess)} if node.type in ("read", "write") else {}
    mean_sectors = dist_mean(node.raw.get("sectors"))
    ideal = node.sectors_ideal_total() / node.requests if node.requests else 0.0
    message = (
        f"touches {mean_sectors:.1f} sectors per warp access where {ideal:.1f} would do "
        f"(R_coal {ratio:.2f}): {count(excess)} extra sector requests ({format_bytes(excess * SECTOR_BYTES)}) "
        f"— make consecutive lanes access consecutive addresses"
    )
    return Draft(
        "poor-coalescing",
        [node],
        None,
        "coalescing",
        _FIX,
        message,
        waste_bytes=excess * SECTOR_BYTES,
        basis="sectors",
        predicted=predicted,
        metrics={"R_coal": ratio, "sectors_mean": mean_sectors, "sectors_ideal_mean": ideal, "excess_sectors": excess},
    )


# Share of a load's bytes that must be same-thread re-reads of flagged PCs for it to count as their reload.
RELOAD_SHARE = 0.9


def _reloads(view: KernelView, firing: list[Node]) -> set[int]:
    """The firing loads whose bytes are at least RELOAD_SHARE same-thread re-reads whose origins are all other
    firing PCs (none of them on the load's own line: one line's copies are one finding)."""
    flagged = {node.id for node in firing}
    reloads = set()
    for node in firing:
        if node.type != "read" or node.w_total() <= 0:
            continue
        thread = [e for e in view.out_edges.get(node.id, ()) if e.label == "thread"]
        origins = {e.dst for e in thread}
        if not origins or not origins <= flagged - {node.id}:
            continue
        if any(line_key(view.nodes[o]) == line_key(node) for o in origins):
            continue
        if sum(e.bytes for e in thread) >= RELOAD_SHARE * node.w_total():
            reloads.add(node.id)
    return reloads


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [n for n in view.memory_nodes() if n.space == "global" and n.r_coal() > settings["coalescing"]]
    reloads = _reloads(view, firing)
    firing = [n for n in firing if n.id not in reloads]
    drafts = []
    for group in group_by_line(firing):  # unrolled copies of one access: one finding
        node = merged_node(group)
        draft = _draft(node, node.r_coal())
        draft.nodes = group
        drafts.append(draft)
    return drafts
