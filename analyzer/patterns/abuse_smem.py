"""Abuse SMEM, paper section 3.3 III: a closed subgraph of shared-memory PCs whose reuse is all intra-thread.

"A closed subgraph G' is identified as exhibiting only thread-private SMEM use when all nodes in G' are
shared-memory instructions and all edges in G' are intra-thread reuse edges." Cold Miss edges are the first
touches every buffer has, so "all edges" is read as all non-Cold-Miss edges, and at least one must exist (a
buffer nobody re-reads has no reuse to judge). The control case is the paper's Figure 1 Group 2: the
broadcast buffer of a block reduction carries intra-warp and intra-block edges and is not reported.
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import Draft, add_counts, predicted_removal
from reuselens.analyzer.patterns.text import count, format_bytes, places
from reuselens.analyzer.patterns.view import COLD, KernelView, Node, merge_sets_sharing_lines, reuse_intensity

PATTERNS = {"abuse-smem": "Thread-private data kept in shared memory"}

_FIX = (
    "Every value these shared-memory instructions store is read back only by the thread that stored it, so "
    "the buffer needs no block-wide visibility. Keep the values in registers (a per-thread array indexed with "
    "compile-time constants, e.g. a fixed-size cache filled in an unrolled loop, with the shared buffer as "
    "fallback only when the size is not known at compile time). This removes the shared loads and stores, "
    "frees shared memory (more blocks per SM or a larger L1, which shares the same array) and often removes "
    "barriers that only existed for the buffer (paper 3.3 III and 6.1)."
)


def is_thread_private(view: KernelView, members: list[Node]) -> bool:
    if not members or any(node.space != "shared" for node in members):
        return False
    reuse = [e for e in view.subgraph_edges(members) if e.label != COLD]
    return bool(reuse) and all(e.label == "thread" for e in reuse)


def _draft(view: KernelView, members: list[Node]) -> Draft:
    traffic = sum(node.w_total() for node in members)
    footprint = sum(node.w_out.get(COLD, 0.0) for node in members)
    per_block = footprint / view.block_instances()
    instructions = sum(node.executions for node in members)
    wavefronts = sum(node.wavefronts_total() for node in members)
    predicted: dict[str, int] = {}
    for node in members:
        add_counts(predicted, predicted_removal(node, 1.0))
    message = (
        f"shared buffer of about {format_bytes(per_block)} per block is reused only by the thread that "
        f"wrote it ({len(members)} PCs{places(members)}): {format_bytes(traffic)} of shared traffic in "
        f"{count(instructions)} warp instructions — keep it in registers"
    )
    metrics = {
        "footprint_bytes": footprint,
        "footprint_bytes_per_block": per_block,
        "reuse_intensity": reuse_intensity(view, members),
        "r_thread": 1.0,
    }
    return Draft(
        "abuse-smem",
        members,
        "thread",
        "shared-demotion",
        _FIX,
        message,
        waste_bytes=traffic,
        instructions=instructions,
        wavefronts=wavefronts,
        predicted=predicted,
        metrics=metrics,
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    private = [members for members in view.closed_subgraphs() if is_thread_private(view, members)]
    # The union of thread-private subgraphs is thread-private too; unrolled copies of one buffer's accesses
    # (the same source lines) are reported as one buffer.
    return [_draft(view, members) for members in merge_sets_sharing_lines(private)]
