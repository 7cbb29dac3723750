"""Bank Conflict, paper section 3.3 II: R_conf(v) = E(Wave_v) / E(Wave_ideal_v) for shared-memory PCs.

A warp instance with wavefront count k is serialized into k shared-memory cycles; the ideal count is
ceil(footprint words / 32) per lane group. The waste is the excess wavefronts, Σ Wave − Σ Wave_ideal, which
the `padding` fix removes without removing any instruction (the paper validates these fixes by wavefronts).
waste.bytes converts them at 128 bytes (one full-width wavefront) so they rank against traffic findings.

Shared atomics on data-dependent addresses (a histogram's `atomicAdd(&hist[bin], 1)`) conflict where the data's
bins collide: no padding or swizzle spreads random bins over the banks. When an atomic's wavefront counts have no
mode covering DATA_DEPENDENT_MODE of its executions, the finding is information with no fix, saying so (Parboil
histo's 24 KB histogram: 1 to 6 wavefronts per access; session 46's review).

Words chosen by the data: one word of padding fixes lanes whose words are a fixed function of the lane index. Were the
words set by the active lanes alone, the executions at the commonest lane count would share one word count, and the
`addresses` mode would cover at least the `lanes` mode's share; the shortfall bounds from below the share of
executions whose words follow the data. At DATA_INDEXED_SHARE or more the words are data-indexed (a histogram's bin, a
binary search's probe), and padding only moves the collisions: fix `none`, the bound in `metrics.data_indexed`. They
are data-indexed too where the SASS computes every copy's address from loaded values (`address_from`,
analyzer/address_origin.py): a scatter to the ranks a binary search found touches all 32 words like a strided store
(mergeSort's `baseKey[posA] = keyA`), and the explanation names the lines the values were loaded at. Without the
bound, such words are data-dependent whatever their wavefront counts: 92% of mergeSort's scatters cost 2 wavefronts,
because 32 ranks among 64 words rarely miss a bank twice, not because a layout pairs lanes.
- When the wavefront counts vary (no mode covers DATA_DEPENDENT_MODE), the data decides the collisions, as for the
  atomics above: information (cuda-samples mergeSort's binary-search probes at :78 and :97).
- When they do not, lanes that can pick different words share a bank whatever the data: a layout to redo so that each
  lane keeps to its own bank, at the finding's usual severity (cuda-samples histogram64's per-thread byte histograms,
  laid out for 16 banks: 2 wavefronts on 99.99% of accesses to 28-32 words; Parboil tpacf's two lanes per
  sub-histogram column; session 48's review).

Warps that span rows: in a block narrower than a warp (blockDim.x 16, 8, ...), a warp covers 32 / blockDim.x rows of
the block, and when every execution has exactly that many times its ideal wavefronts, the rows start on the same
bank. One word of padding then shifts the next row by one bank and leaves the conflict (cuda-samples
convolutionSeparable's 16-wide blocks: `[4][160]` needs a row of 176 words, and its column tile `[16][81]` is
padded by one already; session 48's review). Such a finding says so, with fix `none` (the padding quick fix adds one
word) and `metrics.warp_rows`.

One layout, one finding, as for poor-coalescing (view.groups_with_followers): a store at least 90% of whose bytes
the same thread last read at a flagged load of another line writes the element that load read, through the same
layout, so padding the array fixes both (cuda-samples shfl_scan's `sums[tx][ty]`, read at line 298 and written back
at 307: two warnings until session 48). A helper's access inlined at several call sites of the kernel is one access
too (its line without the inline chain, within one closed subgraph and one line of the app's code: a helper handed
two arrays keeps two findings, and so do atomics the app inlines at two lines): histogram64's `addByte`, inlined
through `addWord` at four call sites, was eight findings, the warning a quarter of the conflict (session 49).
"""

from __future__ import annotations

import math
from typing import Callable

from reuselens.analyzer.configurations import configurations
from reuselens.analyzer.patterns.finding import TIER_INFORMATION, TIER_PERFORMANCE, Draft, predicted_excess
from reuselens.analyzer.patterns.text import count, loaded_values
from reuselens.analyzer.patterns.view import (
    KernelView,
    Node,
    dist_mode,
    groups_with_followers,
    line_key,
    merged_node,
    mode_share,
    origins_of,
)
from reuselens.analyzer.toolkit_paths import user_frame

PATTERNS = {"bank-conflict": "Shared-memory bank conflict"}

WAVEFRONT_BYTES = 128

_FIX = (
    "Several lanes of a warp hit different 32-bit words in the same bank, so the access is split into "
    "serialized wavefronts. Pad the row length of 2-D shared arrays by one word (e.g. tile[32][33] instead of "
    "tile[32][32]) or swizzle the column index (col ^ row) so the lanes of a warp spread over all 32 banks. A 1-D "
    "array read in butterflies or a tree scan (a sorting network's, an FFT's or a Blelloch scan's pairs a[p] and "
    "a[p + s], s a power of two) has no row to pad: insert one word every 32 instead (index a[i + (i >> 5)], the "
    "conflict-free offset of the classic scan; size the array for it), which breaks up most conflicts of strides of 32 "
    "and more; the steps with s below 32 pair lanes of one warp, so exchange those elements in registers with "
    "__shfl_xor_sync instead of through shared memory. For 8- and 16-byte accesses make the lanes of each lane "
    "group cover distinct banks (paper 3.3 II)."
)


DATA_DEPENDENT_MODE = 0.9
_DATA_DEPENDENT_FIX = (
    "The lanes of this atomic hit banks that depend on the data (a histogram's bins), so how many collide changes "
    "from one access to the next and no padding or swizzle removes it. If the conflicts matter, give each warp or "
    "lane group its own copy of the array (privatised sub-histograms, merged at the end) where shared memory "
    "allows, or aggregate equal bins within the warp first (__match_any_sync)."
)


def _data_dependent(members: list[Node], data_indexed: bool) -> bool:
    """Atomics, or data-indexed PCs, whose wavefront counts vary with the data: for every copy, no value covers
    DATA_DEPENDENT_MODE of its executions (copies steady at different counts, 2 and 4, vary only when pooled). (A
    layout conflict whose active lanes vary, as partial warps' do, also varies its wavefronts; measured shared
    atomics with varying lanes were histograms whose lanes follow the data too, Parboil histo's 1 to 25.)"""
    varies = all(mode_share(m.raw.get("wavefronts")) < DATA_DEPENDENT_MODE for m in members)
    return varies and (all(m.type == "atomic" for m in members) or data_indexed)


# A PC's words are data-indexed when at least this share of its executions touch a number of words that their active
# lanes do not explain (module docstring). Recorded strided PCs give 0 (sortingNetworks, transpose, mri-gridding's
# partial warps: their words follow their lanes exactly); data-indexed ones 0.2 to 0.75.
DATA_INDEXED_SHARE = 0.1
_DATA_INDEXED_FIX = (
    "The lanes' words come from the data (a lookup or a search through loaded values: {evidence}), so how many of them "
    "share a bank changes from one access to the next, and padding or a swizzle only moves the collisions. If they matter, "
    "keep the looked-up values in registers, give each lane group its own copy of a small table, or order the work "
    "so that a warp's lanes look up nearby words (sorted keys)."
)
_DATA_SCATTER_FIX = (
    "The lanes store to words the data chose (ranks a search found, slots computed from loaded values: {evidence}), so "
    "how many of them share a bank changes from one access to the next, and padding or a swizzle only moves the "
    "collisions. They are the price of the scatter: if they matter, let each thread produce a contiguous run of the "
    "output (a merge path: each thread merges its own range of output positions), so that lanes write words in lane "
    "order, or scatter into a staging buffer in lane order and let one coalesced pass put the elements in place."
)
_DATA_INDEXED_LAYOUT_FIX = (
    "The lanes' words come from the data ({evidence}: a histogram's bin, a looked-up index), yet {wave_share} of the "
    "accesses cost {wavefronts} wavefronts. So the layout, not the data, puts lanes that can pick different words in "
    "one bank: two lanes sharing one sub-histogram or row, or per-thread storage laid out for 16 banks, where lanes l "
    "and l + 16 share a bank. One word of padding does not fix it: the words are no fixed stride of the lane index, "
    "and padding moves the collisions elsewhere. Lay the array out so that each lane keeps to its own bank whatever "
    "word it picks: lane l's entries at words l + 32·k (per-thread storage interleaved by the warp's 32 lanes, one "
    "sub-histogram per lane rather than per two lanes), within the shared memory a block may use (paper 3.3 II)."
)


def _percent(share: float) -> str:
    """A share rounded down to 0.1% (99.99% of accesses is not all of them): '99.9%', '100%'."""
    return f"{math.floor(share * 1000 + 1e-9) / 10:g}%"


# A warp of a block narrower than 32 threads spans several rows of it (module docstring); the conflict is that span's
# when at least this share of the executions have exactly `rows` times their ideal wavefronts.
ROW_SPAN_SHARE = 0.9
_ROW_SPAN_FIX = (
    "Each warp of this block spans {rows} rows of {width} threads, and its lanes hit the same banks once per row: "
    "the rows a warp touches start on the same bank. One word of padding shifts the next row by one bank only, "
    "which leaves the conflict when a row's {width} lanes cover {width} consecutive banks. Make the rows of one warp "
    "fall in different banks: when threadIdx.x indexes the columns (tile[ty][tx]), a row stride of {width} (mod 32) "
    "words (e.g. {width} words of padding instead of one); when it indexes the rows (tile[tx][ty]), a stride of "
    "{rows} (mod 32); or a block {full} threads wide, or an XOR swizzle of the column (paper 3.3 II)."
)


def warp_rows(view: KernelView) -> int:
    """How many rows of the block one warp spans: 32 / blockDim.x for every launch of a block narrower than a warp
    (whose width divides 32); 1 otherwise."""
    widths = {int((config.get("block") or [0])[0]) for config in configurations(view.raw)}
    if len(widths) != 1:
        return 1
    (width,) = widths
    return 32 // width if 0 < width < 32 and 32 % width == 0 else 1


def _spans_rows(node: Node, rows: int) -> bool:
    """Whether the PC's executions have `rows` times their ideal wavefronts (ROW_SPAN_SHARE of them): the conflict
    of a warp spanning `rows` rows that start on the same bank."""
    ideal = node.raw.get("wavefronts_ideal") or []
    if rows <= 1 or len(ideal) != 1:
        return False
    want = int(ideal[0][0]) * rows
    counts = {int(value): float(count) for value, count in node.raw.get("wavefronts") or ()}
    total = sum(counts.values())
    return total > 0 and counts.get(want, 0.0) >= ROW_SPAN_SHARE * total


def _evidence(indexed: float, origins: list[Node]) -> str:
    """Why the words are said to come from the data: the trace's lower bound, or the SASS's origins when the bound
    alone would not say so."""
    if indexed >= DATA_INDEXED_SHARE or not origins:
        return (
            f"on at least {_percent(indexed)} of the executions the lanes touch a number of words that their active "
            "lanes do not explain"
        )
    return f"the SASS computes the address from {loaded_values(origins)}"


def _layout_advice(node: Node, evidence: str) -> tuple[str, str]:
    """The message's tail and the explanation for data-indexed words that collide alike whatever the data."""
    wavefronts = node.raw.get("wavefronts")
    share, mode = _percent(mode_share(wavefronts)), int(dist_mode(wavefronts))
    tail = (
        f" — the data picks the words, yet {share} of accesses cost {mode} wavefronts: lanes that can pick different "
        "words share a bank whatever the data; lay the array out so that each lane keeps to its own bank (one word of "
        "padding does not)"
    )
    return tail, _DATA_INDEXED_LAYOUT_FIX.format(evidence=evidence, wave_share=share, wavefronts=mode)


def _draft(node: Node, ratio: float, members: list[Node], rows: int = 1, origins: list[Node] | None = None) -> Draft:
    excess = max(0.0, node.wavefronts_total() - node.wavefronts_ideal_total())
    worst = max((int(v) for v, _c in node.raw.get("wavefronts") or ()), default=0)
    message = (
        f"{ratio:.1f}-way bank conflict on average (up to {worst} wavefronts per warp access): "
        f"{count(excess)} extra shared-memory wavefronts — pad or swizzle the array"
    )
    predicted = predicted_excess(
        members, "shared", "wavefronts", lambda m: m.wavefronts_total() - m.wavefronts_ideal_total()
    )
    indexed = min(m.data_indexed_share() for m in members)  # every copy's words follow the data
    # or the SASS computes every copy's address from loaded values (address_from, analyzer/address_origin.py)
    loaded = list(origins or []) if all(m.raw.get("address_from") for m in members) else []
    data_indexed = indexed >= DATA_INDEXED_SHARE or bool(loaded)
    evidence = _evidence(indexed, loaded)
    # A layout to redo needs the trace's sign that lanes pick among shared words (the bound); lanes on 32 distinct
    # words the data chose (a merge's ranks) collide as the data falls, however steady the count.
    data_dependent = _data_dependent(members, data_indexed) or (bool(loaded) and indexed < DATA_INDEXED_SHARE)
    layout = data_indexed and not data_dependent  # data-indexed words that collide alike for any data
    row_span = not data_dependent and not layout and all(_spans_rows(m, rows) for m in members)
    explanation = _DATA_DEPENDENT_FIX if data_dependent else _FIX
    if data_dependent and node.type != "atomic":
        picks = " — data-dependent: the data picks the words"
        if loaded:
            picks += f" (computed from {loaded_values(loaded)})"
        message = message.replace(" — pad or swizzle the array", picks)
        scatter = all(m.type == "write" for m in members)
        explanation = (_DATA_SCATTER_FIX if scatter else _DATA_INDEXED_FIX).format(evidence=evidence)
    elif data_dependent:
        message = message.replace(" — pad or swizzle the array", " — data-dependent: the bins collide, not the layout")
    elif layout:
        tail, explanation = _layout_advice(node, evidence)
        message = message.replace(" — pad or swizzle the array", tail)
    elif row_span:
        width = 32 // rows
        message = message.replace(
            " — pad or swizzle the array",
            f" — each warp spans {rows} rows of the {width}-thread-wide block: one word of padding does not separate "
            f"them, pad so that its rows start {width} banks apart (or {rows} when threadIdx.x picks the row) or swizzle",
        )
        explanation = _ROW_SPAN_FIX.format(rows=rows, width=width, full=32)
    return Draft(
        "bank-conflict",
        [node],
        None,
        "none" if data_dependent or layout or row_span else "padding",  # the padding quick fix adds one word
        explanation,
        message,
        waste_bytes=excess * WAVEFRONT_BYTES,
        wavefronts=excess,
        predicted=predicted,
        basis="wavefronts",
        metrics={
            "R_conf": ratio,
            "excess_wavefronts": excess,
            "max_wavefronts": worst,
            **({"data_dependent": True} if data_dependent else {}),
            **({"data_indexed": round(indexed, 6)} if indexed >= DATA_INDEXED_SHARE else {}),
            **({"address_from": sorted({o.pc for o in loaded})} if loaded else {}),
            **({"warp_rows": rows} if row_span else {}),
        },
        tier=TIER_INFORMATION if data_dependent else TIER_PERFORMANCE,
    )


def _access_key(view: KernelView) -> Callable[[Node], tuple | None]:
    """What makes shared PCs copies of one access to one array: their line without its inline chain (a helper's
    access inlined at several call sites of the kernel), within one closed subgraph (the copies touch the same data:
    a helper handed two arrays by two call sites stays two findings) and one frame of the app's code (every shared
    atomicAdd is the toolkit header's line, whichever line of the app inlined it)."""
    subgraph_of = {node.id: index for index, members in enumerate(view.closed_subgraphs()) for node in members}

    def key(node: Node) -> tuple | None:
        line = line_key(node, call_sites=False)
        if line is None:
            return None
        frame = user_frame(node.raw.get("source") or {})
        return (line, subgraph_of.get(node.id), frame.get("file"), frame.get("line"))

    return key


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [n for n in view.memory_nodes() if n.space == "shared" and n.r_conf() > settings["bankConflict"]]
    drafts = []
    rows = warp_rows(view)
    # copies (unrolled, or a helper's inlined at several call sites) and an RMW's store: one finding
    for group in groups_with_followers(view, firing, stores_only=True, key=_access_key(view)):
        node = merged_node(group)
        draft = _draft(node, node.r_conf(), group, rows, origins_of(view, group))
        draft.nodes = group
        drafts.append(draft)
    return drafts
