"""Small, Read-Only Broadcast Region, paper section 3.3 IV.

A subgraph G' qualifies when (1) every node of G' exhibits the Broadcasting pattern and (2) its cold-miss
footprint fits the constant cache:  Σ_{v∈V(G')} W_out(v, ColdMiss) ≤ C_const  (`constantCapacityBytes`).
G' is taken as a closed subgraph of global-memory PCs, so no PC of the kernel writes the region. Such a
region is a candidate for __constant__ promotion, most beneficial when RI(G') is high.

The capacity bounds what one launch reads: a report entry merges every launch of the kernel with the same
configuration, and each launch's first touches are cold again, so the summed cold bytes are divided by the
number of launches (a 2 KB table read by 200 launches is 400 KB of cold traffic, and still fits).

"Read-only" must hold across the run, not only inside the kernel: a __constant__ copy is made once, and no
kernel can write it. A cold access whose data an earlier launch wrote (a RAW cold edge with a prior-kernel
origin) shows the region produced on the device. Produced once before the kernel reads it, this is still a
candidate (one device-to-device copy); rewritten between this kernel's launches (a blocked LU's pivot row,
updated by the other kernel of each step) it is not. With L launches reading one table, a table produced once
makes at most one launch's cold bytes follow a write (every later launch's first touch follows a read), about
1/L of the cold bytes; a table rewritten before each launch makes all of them follow a write. More than half
of them following a write, with two or more launches, is taken as rewritten during the run.

What a __constant__ copy saves is counted in sectors (section 3.2.2's sector rule, the `sectors` basis of
finding.py): a warp-uniform global load is one request and one sector through L1 whatever its lane-bytes, and an
LDC takes its place one for one, so the waste is the sectors these loads take of all the kernel's global sectors.
Counted in lane-bytes (128 per warp load of 4 bytes), a table read beside a coalesced stream was a third of the
kernel's traffic; in sectors it is the 1 in 9 or 1 in 33 it is (session 54's review of the breadth set: 7 warnings
whose gain was overstated so). A region of which each warp reads a sliver of its own (on average less than
SLIVER_SHARE of its bytes: PolyBench gemver's `u1[i]`, one element a warp of a 16 KB vector) is no candidate: the
warps share no table that a constant cache could keep, and each warp's one read is served by L1 as well (session
55's review). A lookup table that every warp reads whole, in a loop or unrolled (8 coefficients, a warp reading
all 8), and a vector every warp walks (PolyBench atax's `x[j]`) are.

A region read through strong (volatile) loads (the node's `strong`, analyzer/memory_order.py) is no candidate
either: the program asks to see writes made while the kernel runs (a flag the host sets in mapped memory, a value
another kernel or block publishes), which a __constant__ copy, written once before the launch, would hide.
"""

from __future__ import annotations

from reuselens.analyzer.configurations import warps_launched
from reuselens.analyzer.patterns.finding import Draft, add_counts, predicted_removal
from reuselens.analyzer.patterns.text import count, format_bytes, places
from reuselens.analyzer.patterns.view import (
    COLD,
    SECTOR_BYTES,
    KernelView,
    Node,
    merge_sets_sharing_lines,
    reuse_intensity,
)
from reuselens.analyzer.patterns.warp_sharing import is_broadcasting

PATTERNS = {"constant-region": "Small read-only broadcast region (__constant__ candidate)"}

# A region of which a warp reads less than this share is no table the warps share (module docstring).
SLIVER_SHARE = 1 / 32

_FIX = (
    "Every access to this data reads one address per warp, nothing in the kernel writes it, and its whole "
    "footprint fits the 64 KB constant bank. Declare it as __constant__ (e.g. __constant__ float table[N]) "
    "and fill it with cudaMemcpyToSymbol (cudaMemcpyToSymbolAsync with cudaMemcpyDeviceToDevice if a kernel "
    "produces it), or pass a small table by value as a kernel parameter. Warp-uniform reads are then served "
    "by the constant cache instead of global loads through L1/L2 (paper 3.3 IV). Keep the index "
    "warp-uniform: divergent indices into __constant__ memory serialize. What it saves: each of these loads "
    "is one request and one sector through L1, which the constant cache then serves instead; the DRAM and L2 "
    "traffic of the kernel's other accesses stays as it is."
)


def warps_read_slivers(view: KernelView, members: list[Node], footprint: float) -> bool:
    """True when a warp reads on average less than SLIVER_SHARE of the region's bytes per launch: the warps read
    slivers of their own (a row's one element), not a table they share."""
    warps = warps_launched(view.raw)
    if warps <= 0:
        return False
    per_warp = sum(node.executions * node.size for node in members) / warps
    return per_warp < SLIVER_SHARE * footprint


def _draft(view: KernelView, members: list[Node], footprint: float) -> Draft:
    """`footprint`: the region's unique bytes in one launch."""
    sectors = sum(node.sectors_total() for node in members)
    instructions = sum(node.executions for node in members)
    predicted: dict[str, int] = {}
    for node in members:
        add_counts(predicted, predicted_removal(node, 1.0))
    earlier = sum(
        e.raw["prior_kernel"].get("bytes", 0)
        for e in view.subgraph_edges(members)
        if e.label == COLD and e.raw.get("prior_kernel")
    )
    ri = reuse_intensity(view, members)
    launches = view.launch_count()
    per = f" per launch, {launches} launches" if launches > 1 else ""
    message = (
        f"read-only region of {format_bytes(footprint)}{per} read warp-uniformly "
        f"{count(instructions)} times ({count(sectors)} sectors, reuse intensity "
        f"{ri or 0:.0f}){places(members)} — move it to __constant__ memory"
    )
    return Draft(
        "constant-region",
        members,
        "grid",
        "constant-promotion",
        _FIX,
        message,
        waste_bytes=sectors * SECTOR_BYTES,
        instructions=instructions,
        basis="sectors",
        predicted=predicted,
        metrics={
            "footprint_bytes": footprint,
            "launches": launches,
            "reuse_intensity": ri,
            "prior_kernel_bytes": earlier,
        },
    )


def written_before_bytes(view: KernelView, members: list[Node]) -> tuple[float, float]:
    """(cold bytes whose last prior access, by an earlier launch, wrote the data; all cold bytes)."""
    written = cold = 0.0
    for edge in view.subgraph_edges(members):
        if edge.label != COLD:
            continue
        nbytes = float(edge.raw.get("bytes") or 0)
        cold += nbytes
        accesses = edge.raw.get("accesses") or 0
        if edge.raw.get("prior_kernel") and accesses:
            written += nbytes * (edge.raw.get("raw", 0) + edge.raw.get("waw", 0)) / accesses
    return written, cold


def rewritten_during_the_run(view: KernelView, members: list[Node]) -> bool:
    """True when the region's data is written again between this kernel's launches (module docstring)."""
    if view.launch_count() < 2:
        return False
    written, cold = written_before_bytes(view, members)
    return cold > 0 and written > cold / 2


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    capacity = settings["constantCapacityBytes"]
    candidates = [
        members
        for members in view.closed_subgraphs()
        if all(node.space == "global" and is_broadcasting(node) and not node.strong for node in members)
        and 0 < view.footprint_per_launch(members) <= capacity
        and not rewritten_during_the_run(view, members)
    ]
    # Unrolled copies of one table access read disjoint entries, so one table can be several closed subgraphs
    # on the same source lines: one region when their footprints together still fit the constant bank, and none
    # when they do not. A __constant__ declaration is an edit of the array the line reads, not of the slice one
    # unrolled copy reads: PolyBench 2mm's `A[i][k]`, unrolled 16 times, read 16 slices of 16 KB each (every 16th
    # column of a 256 KB matrix), and each was called a 16 KB candidate (session 48's review: 16 findings per
    # kernel). Two separate small tables read on one line by accesses of one type and size, too large together,
    # are missed so (none in the recorded reports).
    regions = []
    for union in merge_sets_sharing_lines(candidates):
        footprint = view.footprint_per_launch(union)
        if footprint <= capacity and not warps_read_slivers(view, union, footprint):
            regions.append(_draft(view, union, footprint))
    return regions
