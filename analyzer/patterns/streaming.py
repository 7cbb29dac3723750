"""Streaming Access, paper section 3.3 IV: W_out(v, ColdMiss) / W_total(v) above the `streaming` threshold.

First-touch traffic with negligible temporal locality. Informational: a stream cannot be made cheaper than
one pass, but it can be kept from evicting data that other PCs reuse. Global-memory PCs only (a shared-
memory store is always a first touch of its buffer, which says nothing about locality).

When the cache-streaming advice applies (fix kind l2-window: __ldcs/__stcs, an access-policy window): only where a
stream can push out what the kernel reuses, so when the kernel has global reuse between warps or blocks, at least
PROTECT_SHARE of its global traffic, of objects the L2 does not keep anyway (view.kept_in_l2: read again before the
kernel's other data could fill the L2), and its data per launch does not fit in the L2 (KernelView.l2_room, as
hierarchical-reuse-grid decides); and only on a line whose bytes no other access of the kernel reads again
(REREAD_SHARE), since those reads are the reuse an evict-first hint would cost, nor on one whose bytes a later
kernel, or a later launch of this one, reads again (REREAD_SHARE of them, from the run's cold edges that name this
PC as the data's last toucher: cuda-samples warpAggregatedAtomicsCG's 40 MB source array, which the next kernel
reads again, was told evict-first; session 55's review). The 12 suite applications' review (session 54) found the
advice on 26 streams that cannot evict anything or whose lines come back: cuda-samples mergeSort's rank and limit arrays (786 KB and 1.5 MB a launch) that the next
kernel reads, SHOC BFS (UIUC)'s frontier copies, and stencil rows that the neighbouring row's load reads again
(PolyBench fdtd2d's hz[i] and hz[i - 1]). Their findings keep the first-touch figures (the paper's definition) with
no fix, and say why.
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import TIER_INFORMATION, Draft
from reuselens.analyzer.patterns.text import format_bytes, format_share
from reuselens.analyzer.patterns.view import COLD, KernelView, Node, group_by_line, kept_in_l2, line_key, merged_node

PATTERNS = {"streaming-access": "Streaming access (first touch, no reuse)"}

# Share of a line's first-touch bytes that other accesses of the kernel read again, from which its lines are reuse a
# cache-streaming hint would evict rather than a stream.
REREAD_SHARE = 0.1
# Share of the kernel's global traffic that its reuse between warps and blocks must reach for a stream's eviction of
# it to matter: were all of it evicted, the kernel would fetch at most that share more, which bounds what a
# cache-streaming hint can save (cuda-samples mergeSort's merge kernel: 3.1 MB of reuse beside 812 MB of streams).
PROTECT_SHARE = 0.05

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
_FITS = (
    "This PC touches almost every byte for the first time and never again, but everything the kernel touches in "
    "a launch fits in the L2 of the GPU it ran on, so the stream cannot push out what other accesses reuse, and a "
    "cache-streaming hint (__ldcs/__stcs) would only make a later launch that reads the same data miss in L2. "
    "Nothing to change on this PC; if a later kernel reads the same data, fusing the kernels would turn this "
    "stream into on-chip reuse."
)
_MINOR = (
    "This PC touches almost every byte for the first time and never again. The kernel's reuse between warps and "
    "blocks that the stream could push out of L2 is a small part of its global traffic, so a cache-streaming hint "
    "(__ldcs/__stcs) could save little, and would make a later launch that reads the same data miss in L2. Nothing "
    "to change on this PC; if a later kernel reads the same data, fusing the kernels would turn this stream into "
    "on-chip reuse."
)
_LATER = (
    "This PC touches almost every byte for the first time in this kernel, but a later kernel (or a later launch of "
    "this one) reads the same bytes again: what the L2 still holds of them then is reuse that a cache-streaming hint "
    "(__ldcs/__stcs, evict-first) on this PC would cost. Nothing to change on this PC; fusing the kernels would "
    "turn that second pass into on-chip reuse."
)
_KEPT = (
    "This PC touches almost every byte for the first time and never again. What the kernel reuses between blocks "
    "is read again long before the stream could fill the L2, so the L2 keeps it as it is: a cache-streaming hint "
    "(__ldcs/__stcs) would save nothing, and would make a later launch that reads the same data miss in L2. "
    "Nothing to change on this PC."
)
_REREAD = (
    "This PC is the first to touch almost every byte it accesses, but other accesses of this kernel read the same "
    "bytes again afterwards (a stencil's neighbouring row, a search over what was just loaded): they are the reuse "
    "that a cache-streaming hint (__ldcs/__stcs, evict-first) on this PC would cost. Nothing to change on this PC."
)


def _cache_reuse(view: KernelView) -> tuple[float, float]:
    """Global bytes served by reuse from another warp or block, which L1/L2 hold and a stream may evict: all of them,
    and those of the objects (closed subgraphs) that the L2 does not keep anyway (view.kept_in_l2: a small table that
    every block reads again long before the stream could fill the L2 is in no danger, SobolQRNG's directions)."""
    every = at_risk = 0.0
    for members in view.closed_subgraphs():
        reuse = sum(
            node.w_out.get("block", 0.0) + node.w_out.get("grid", 0.0) for node in members if node.space == "global"
        )
        every += reuse
        if reuse and not kept_in_l2(view, members):
            at_risk += reuse
    return every, at_risk


def _rereaders(view: KernelView, group: list[Node]) -> dict[int, float]:
    """The other PCs that reuse the group's bytes (a stencil's hz[i - 1] of the row hz[i] touched first, on another
    line or the same one), with the bytes each reuses."""
    readers: dict[int, float] = {}
    for member in group:
        for edge in view.in_edges.get(member.id, ()):
            if edge.src != edge.dst:
                readers[edge.src] = readers.get(edge.src, 0.0) + edge.bytes
    return readers


def _names(kernels: frozenset[str]) -> str:
    shown = sorted(kernels)
    return ", ".join(shown[:2]) + (f" and {len(shown) - 2} more kernels" if len(shown) > 2 else "")


def _draft(
    view: KernelView,
    group: list[Node],
    kind: str,
    readers: dict[int, float] | None = None,
    later_readers: frozenset[str] = frozenset(),
) -> Draft:
    """kind: "protect" (the cache-streaming advice), "reread" (other accesses read its bytes again), "later" (a
    later kernel reads them again), "fits" (the kernel's data fits in L2), "kept" (the L2 keeps what the kernel reuses
    anyway, view.kept_in_l2), "minor" (the reuse it could evict is under PROTECT_SHARE of the kernel's traffic) or
    "pure" (the kernel has no reuse to evict); `readers`, for "reread", the PCs that reuse its bytes;
    `later_readers`, for "later", the kernels that read them again."""
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
    if kind == "later":
        message += (
            f"; {_names(later_readers)} read{'s' if len(later_readers) == 1 else ''} it again later: keep it cached"
        )
    if kind == "reread":
        places = (view.nodes[i].source_text() for i in sorted(readers or (), key=lambda i: view.nodes[i].key))
        lines = list(dict.fromkeys(place for place in places if place))
        shown = ", ".join(lines[:3]) + (f" and {len(lines) - 3} more" if len(lines) > 3 else "")
        message += f"; other accesses read it again{' at ' + shown if shown else ''}: keep it cached"
    elif kind == "fits":
        message += f"; the kernel's {format_bytes(view.global_footprint_per_launch)} a launch fit in L2"
    elif kind == "kept":
        message += "; the data the kernel reuses is read again long before it could be evicted"
    explanation = {
        "protect": _WITH_REUSE,
        "reread": _REREAD,
        "later": _LATER,
        "fits": _FITS,
        "kept": _KEPT,
        "minor": _MINOR,
        "pure": _PURE,
    }[kind]
    return Draft(
        "streaming-access",
        group,
        "cold",
        "l2-window" if kind == "protect" else "none",
        explanation,
        message,
        waste_bytes=cold,
        tier=TIER_INFORMATION,
        metrics={"cold_ratio": ratio, "prior_kernel_bytes": earlier},
    )


def _by_function_and_direction(nodes: list[Node]) -> list[list[Node]]:
    groups: dict[tuple, list[Node]] = {}
    for node in sorted(nodes, key=lambda n: n.key):
        groups.setdefault((node.key[0], node.type), []).append(node)
    return list(groups.values())


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [
        n
        for n in view.memory_nodes()
        if n.space == "global"
        and n.type in ("read", "write")
        and n.w_total() > 0
        and n.w_out.get(COLD, 0.0) / n.w_total() > settings["streaming"]
    ]
    if not firing:
        return []
    global_traffic = sum(n.w_total() for n in view.memory_nodes() if n.space == "global")
    every, at_risk = _cache_reuse(view)
    reuse = every > 0
    fits = view.global_footprint_per_launch <= view.l2_room()
    minor = at_risk < PROTECT_SHARE * global_traffic
    # A stream that cannot evict anything (no reuse in the kernel, or all of its data fits in L2) has nothing to
    # change line by line: one finding per function and direction, its PCs on every line (Parboil lbm's D3Q19 update:
    # 39 findings, one per distribution, each "reads 69.1 MB once"; session 46's review). Otherwise each line can
    # be marked streaming (__ldcs/__stcs) and gets its own.
    if not reuse or fits or minor:
        kind = "fits" if reuse and fits else "kept" if reuse and not at_risk else "minor" if reuse else "pure"
        return [_draft(view, group, kind) for group in _by_function_and_direction(firing)]
    # Without a source line (library kernels built without -lineinfo) each PC would be a finding of its own,
    # 32 for one unrolled softmax kernel: there, one finding per function and direction.
    lined = [n for n in firing if line_key(n) is not None]
    groups = group_by_line(lined) + _by_function_and_direction([n for n in firing if line_key(n) is None])
    drafts = []
    for group in sorted(groups, key=lambda g: g[0].key):
        cold = sum(member.w_out.get(COLD, 0.0) for member in group)
        readers = _rereaders(view, group)
        reread = sum(readers.values()) >= REREAD_SHARE * cold
        later = [view.read_again_later.get(member.key, (0.0, frozenset())) for member in group]
        if reread:
            drafts.append(_draft(view, group, "reread", readers))
        elif sum(nbytes for nbytes, _k in later) >= REREAD_SHARE * cold:
            drafts.append(_draft(view, group, "later", later_readers=frozenset().union(*(k for _b, k in later))))
        else:
            drafts.append(_draft(view, group, "protect"))
    return drafts
