"""Streaming Access, paper section 3.3 IV: W_out(v, ColdMiss) / W_total(v) above the `streaming` threshold.

First-touch traffic with negligible temporal locality. Informational: a stream cannot be made cheaper than
one pass, but it can be kept from evicting data that other PCs reuse. Global-memory PCs only (a shared-
memory store is always a first touch of its buffer, which says nothing about locality).
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import TIER_INFORMATION, Draft
from reuselens.analyzer.patterns.text import format_bytes, format_share
from reuselens.analyzer.patterns.view import COLD, KernelView, Node, group_by_line, line_key, merged_node

PATTERNS = {"streaming-access": "Streaming access (first touch, no reuse)"}

_WITH_REUSE = (
    "This PC touches almost every byte for the first time and never again: nothing can be saved on it, but "
    "its lines still enter L1/L2 and can evict data that other PCs of this kernel reuse. Mark it as "
    "streaming: __ldcs()/__stcs() (cache-streaming, evict-first) for these accesses, or an L2 access-policy "
    "window with hitProp/missProp cudaAccessPropertyStreaming over the streamed buffer."
)
_PURE = (
    "This PC touches almost every byte for the first time and never again, and the kernel has no global "
    "reuse that the stream could evict: it is already as cheap as it can be (one pass, well coalesced when "
    "no coalescing finding is reported). If a later kernel reads the same data, fusing the kernels would "
    "turn this stream into on-chip reuse."
)


def _cache_reuse(view: KernelView) -> float:
    """Global bytes served by reuse from another warp or block, which L1/L2 hold and a stream may evict."""
    return sum(n.w_out.get("block", 0.0) + n.w_out.get("grid", 0.0) for n in view.memory_nodes() if n.space == "global")


def _draft(view: KernelView, group: list[Node], protect: bool) -> Draft:
    node = merged_node(group)
    ratio = node.w_out.get(COLD, 0.0) / node.w_total()
    cold = node.w_out.get(COLD, 0.0)
    earlier = sum(
        e.raw["prior_kernel"].get("bytes", 0)
        for member in group
        for e in view.out_edges.get(member.id, ())
        if e.label == COLD and e.raw.get("prior_kernel")
    )
    verb = "reads" if node.type == "read" else "writes"
    lines = {line_key(member) for member in group} - {None}
    spread = f" over {len(lines)} lines" if len(lines) > 1 else ""
    message = f"streams: {verb} {format_bytes(cold)} once{spread} ({format_share(ratio)} first touch)"
    if earlier:
        message += f"; {format_bytes(earlier)} of it was last touched by an earlier kernel"
    return Draft(
        "streaming-access",
        group,
        "cold",
        "l2-window" if protect else "none",
        _WITH_REUSE if protect else _PURE,
        message,
        waste_bytes=cold,
        tier=TIER_INFORMATION,
        metrics={"cold_ratio": ratio, "prior_kernel_bytes": earlier},
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    protect = _cache_reuse(view) > 0
    firing = [
        n
        for n in view.memory_nodes()
        if n.space == "global"
        and n.type in ("read", "write")
        and n.w_total() > 0
        and n.w_out.get(COLD, 0.0) / n.w_total() > settings["streaming"]
    ]
    # A pure stream (no reuse in the kernel for it to evict) has nothing to change line by line: one finding per
    # function and direction, its PCs on every line (Parboil lbm's D3Q19 update: 39 findings, one per
    # distribution, each "reads 69.1 MB once"; session 46's review). Otherwise each line can be marked
    # streaming (__ldcs/__stcs) and gets its own.
    if not protect:
        streams: dict[tuple, list[Node]] = {}
        for node in sorted(firing, key=lambda n: n.key):
            streams.setdefault((node.key[0], node.type), []).append(node)
        return [_draft(view, group, protect) for group in streams.values()]
    # Without a source line (library kernels built without -lineinfo) each PC would be a finding of its own,
    # 32 for one unrolled softmax kernel: there, one finding per function and direction.
    lined = [n for n in firing if line_key(n) is not None]
    lineless: dict[tuple, list[Node]] = {}
    for node in sorted((n for n in firing if line_key(n) is None), key=lambda n: n.key):
        lineless.setdefault((node.key[0], node.type), []).append(node)
    groups = group_by_line(lined) + list(lineless.values())
    return [_draft(view, group, protect) for group in sorted(groups, key=lambda g: g[0].key)]
