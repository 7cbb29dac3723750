"""Bank Conflict, paper section 3.3 II: R_conf(v) = E(Wave_v) / E(Wave_ideal_v) for shared-memory PCs.

A warp instance with wavefront count k is serialized into k shared-memory cycles; the ideal count is
ceil(footprint words / 32) per lane group. The waste is the excess wavefronts, Σ Wave − Σ Wave_ideal, which
the `padding` fix removes without removing any instruction (the paper validates these fixes by wavefronts).
waste.bytes converts them at 128 bytes (one full-width wavefront) so they rank against traffic findings.
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import NCU, Draft
from reuselens.analyzer.patterns.text import count
from reuselens.analyzer.patterns.view import KernelView, Node, group_by_line, merged_node

PATTERNS = {"bank-conflict": "Shared-memory bank conflict"}

WAVEFRONT_BYTES = 128

_FIX = (
    "Several lanes of a warp hit different 32-bit words in the same bank, so the access is split into "
    "serialized wavefronts. Pad the row length of 2-D shared arrays by one word (e.g. tile[32][33] instead of "
    "tile[32][32]) or swizzle the column index (col ^ row) so the lanes of a warp spread over all 32 banks; "
    "for 8- and 16-byte accesses make the lanes of each lane group cover distinct banks (paper 3.3 II)."
)


def _draft(node: Node, ratio: float) -> Draft:
    excess = max(0.0, node.wavefronts_total() - node.wavefronts_ideal_total())
    op = "ld" if node.type == "read" else "st"
    worst = max((int(v) for v, _c in node.raw.get("wavefronts") or ()), default=0)
    message = (
        f"{ratio:.1f}-way bank conflict on average (up to {worst} wavefronts per warp access): "
        f"{count(excess)} extra shared-memory wavefronts — pad or swizzle the array"
    )
    predicted = {NCU[("shared", op, "wavefronts")]: round(excess)} if node.type in ("read", "write") else {}
    return Draft(
        "bank-conflict",
        [node],
        None,
        "padding",
        _FIX,
        message,
        waste_bytes=excess * WAVEFRONT_BYTES,
        wavefronts=excess,
        predicted=predicted,
        basis="wavefronts",
        metrics={"R_conf": ratio, "excess_wavefronts": excess, "max_wavefronts": worst},
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [n for n in view.memory_nodes() if n.space == "shared" and n.r_conf() > settings["bankConflict"]]
    drafts = []
    for group in group_by_line(firing):  # unrolled copies of one access: one finding
        node = merged_node(group)
        draft = _draft(node, node.r_conf())
        draft.nodes = group
        drafts.append(draft)
    return drafts
