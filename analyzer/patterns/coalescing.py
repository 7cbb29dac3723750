"""Poor Coalescing, paper section 3.3 II: R_coal(v) = E(Sector_v) / S_opt(v), S_opt = ceil(Lane·AccSize/32).

R_coal > 1 means the active lanes touch more 32-byte sectors than their bytes need; the worst case is
SecSize/AccSize (8 for 4-byte accesses). Reported above the `coalescing` threshold for global-memory PCs
(local memory is interleaved per lane by the hardware, shared memory has no sectors). The waste is the excess
sector traffic, Σ sectors − Σ S_opt over all executions, in bytes (× 32), and its share is of the sectors the
kernel's global accesses requested (basis "sectors"): as a share of lane-bytes, one uncoalesced 4-byte access
wastes 7 times its own traffic and saturated the share at 1 in kernels where it is a sideline (the breadth set's
review, session 46: ten coalescing warnings at the cap, a 224-byte kernel among them).

Addresses that follow the data (at least 90% of an access's requests with lanes on no stride, the engine's
`irregular`: a gather through an index array, a graph's neighbours, a slot an atomic returned) cannot be made
consecutive by indexing with threadIdx.x: the finding says so and what does help (a warp per row or vertex, so that
its lanes walk consecutive entries; data reordered for locality), `metrics.addresses_follow_data` true
(session 47's review: SHOC BFS's atomicMin on neighbours' costs and warpAggregatedAtomicsCG's scatter through the
slots an atomic returned were told to re-index).

One layout, one finding: a PC at least 90% of whose bytes the same thread last touched at other flagged PCs of
other lines fetches the sectors those PCs fetched, so coalescing them fixes it too. Such a follower joins the
finding of the origin that gave it most bytes, its sectors counted there: a reload (SHOC BFS's volatile
`cost[node_to_process]`, loaded at line 594 and again at 596, two warnings until session 47) and the store of a
read-modify-write (`X[i][j] = X[i][j] - ...`, PolyBench adi: the load and the store of one element, each a warning
of its own). A PC whose re-reads come from itself (a loop's next iteration) keeps its own finding: it is the first
touch of its data too; so does a reload of coalesced data (nothing else reports its sectors), and a store that
overwrites a flagged store (the overwritten one is dead, redundant-waw's to report, and goes; the overwrite stays).
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import Draft, predicted_excess
from reuselens.analyzer.patterns.text import count, format_bytes
from reuselens.analyzer.patterns.view import (
    SECTOR_BYTES,
    KernelView,
    Node,
    dist_mean,
    groups_with_followers,
    merged_node,
)

PATTERNS = {"poor-coalescing": "Poorly coalesced global access"}

_FIX = (
    "The lanes of a warp touch more 32-byte sectors than the bytes they use, so most of every fetched sector "
    "is thrown away. Make consecutive lanes access consecutive addresses: index with threadIdx.x in the "
    "fastest-varying dimension, switch an array of structures to a structure of arrays, or stage a tile "
    "through shared memory with coalesced loads and read it transposed from there (paper 3.3 II)."
)


_DATA_FIX = (
    "The lanes of a warp touch more 32-byte sectors than the bytes they use, and their addresses come from data "
    "the kernel loaded (an index array, a graph's neighbour list, a slot an atomic returned), so no change of "
    "the indexing arithmetic makes consecutive lanes access consecutive addresses. What helps: give a warp (or a "
    "group of lanes) one row, vertex or bucket, so that its lanes walk consecutive entries of it; reorder the data "
    "so that what neighbouring threads touch lies together (sort the keys, renumber the graph's vertices by "
    "locality, e.g. reverse Cuthill-McKee); or, for read-only data reused nearby, load through the read-only path "
    "(const __restrict__, __ldg) (paper 3.3 II)."
)


def _draft(node: Node, ratio: float, members: list[Node]) -> Draft:
    excess = max(0.0, node.sectors_total() - node.sectors_ideal_total())
    predicted = predicted_excess(members, "global", "sectors", lambda m: m.sectors_total() - m.sectors_ideal_total())
    mean_sectors = dist_mean(node.raw.get("sectors"))
    ideal = node.sectors_ideal_total() / node.requests if node.requests else 0.0
    follows_data = all(m.addresses_follow_data() for m in members)
    advice = (
        "the addresses come from loaded data: give a warp one row or vertex, or reorder the data"
        if follows_data
        else "make consecutive lanes access consecutive addresses"
    )
    message = (
        f"touches {mean_sectors:.1f} sectors per warp access where {ideal:.1f} would do "
        f"(R_coal {ratio:.2f}): {count(excess)} extra sector requests ({format_bytes(excess * SECTOR_BYTES)}) "
        f"— {advice}"
    )
    metrics = {"R_coal": ratio, "sectors_mean": mean_sectors, "sectors_ideal_mean": ideal, "excess_sectors": excess}
    if follows_data:
        metrics["addresses_follow_data"] = True
    return Draft(
        "poor-coalescing",
        [node],
        None,
        "coalescing",
        _DATA_FIX if follows_data else _FIX,
        message,
        waste_bytes=excess * SECTOR_BYTES,
        basis="sectors",
        predicted=predicted,
        metrics=metrics,
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [n for n in view.memory_nodes() if n.space == "global" and n.r_coal() > settings["coalescing"]]
    drafts = []
    for group in groups_with_followers(view, firing):
        node = merged_node(group)
        draft = _draft(node, node.r_coal(), group)
        draft.nodes = group
        drafts.append(draft)
    return drafts
