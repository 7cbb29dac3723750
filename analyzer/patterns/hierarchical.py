"""Hierarchical Reuse, paper section 3.3 I, over the closed subgraphs of global-memory PCs.

    r(l) = Σ_{v∈V(G')} W_out(v, l) / Σ_{v∈V(G')} Ŵ(v),   Ŵ(v) = W_total(v) − W_out(v, Warp_same_inst) − W_out(v, ColdMiss)

G' exhibits a dominant reuse pattern at scope l when r(l) > δ. l = Grid: reuse crosses blocks and leans on
L2 (fix: an L2 access-policy window, or restructure so a block owns its data). l ∈ {Thread, Warp_diff_inst,
Block}: reuse stays within a block and on-chip storage can serve it; the fix follows the mechanism that
section 3.3 assigns to the scope (registers for intra-thread, warp shuffles for intra-warp, shared memory
for intra-block). Shared- and local-memory subgraphs are left out: their reuse is already on chip, and
thread-private shared memory is Abuse SMEM.

r(l) decides dominance exactly as the paper defines it, over all edges. Where no scope passes delta alone, reuse
between warps does when r(Block) + r(Grid) > delta: which of the two labels an access gets is which block touched the
element last, the block scheduler's choice (PolyBench LU's row k, read by the warps of each block and by every block
of its column: 32% block, 68% grid). The finding then takes the larger of the two as its scope, counts both as its
reuse (a tile in shared memory serves both), and names both shares (`metrics.across_warps`). The finding itself names only the PCs
whose reuse the scope's mechanism can serve (`served`): a store reads nothing, so a store after a load of the
same element by the same thread (write after read, `x[i] = f(x[i])`) or stores of other threads to the same
element (`*flag = true` by every lane) are no reuse to keep in a register, a shuffle or shared memory. A store
that overwrites its own earlier value in a loop (write after write by the same thread, same PC) is: accumulate
in a register and store once; the same between two store PCs is the redundant-waw rule's.

Grid reuse of data that fits in L2 many times over, in a kernel whose whole footprint does too (at most half the L2
of the GPU the run used, per launch, where run.json says its size; else FITS_IN_L2: every NVIDIA data-centre GPU
since Volta has 4 MB or more, an A100 40 MB, an H100 50 MB) is what L2 is for: an access-policy window cannot keep
it more resident than it is. Such a finding is information (a hint below 10% of the traffic) with no fix
(SobolQRNG's 12.8 KB tables, globalToShmemAsyncCopy's 65 KB tiles, stencil2d's 1-2 MB grids were told to pin
their data in L2; session 46's review of the breadth set).

Atomics shared by blocks are told to privatize a per-block copy in shared memory, which needs the object to fit
there: at most the shared memory one block can have on the run's GPU (_BLOCK_SHARED_BYTES). SHOC BFS (UIUC)'s
atomicMin over a graph's distances (664 KB per launch) was told to; a larger object's finding is information with no
fix, saying that its atomics resolve in L2 (session 53).

Where the program uses the old values the atomics return (the node's `returns`, analyzer/atomic_results.py: a slot
or a ticket, `out[atomicAdd(&count, 1)] = x`), a per-block copy merged at the end would hand out indices that other
blocks get too: such a finding tells to reserve a range per block (a count in shared memory, one global atomicAdd
for the block's base) instead (cuda-samples warpAggregatedAtomicsCG's compaction; session 55's review).

Thread-scope reuse through a strong load (the node's `strong`, analyzer/memory_order.py: a volatile pointer, a
relaxed or acquire atomic_ref load) is the program's: the compiler must issue every read, and a loop polling a flag or
re-reading a value other threads update needs them. Such a finding is information with no fix, saying so.

Warp-scope reuse at addresses that follow the data (Node.addresses_follow_data, Parboil spmv's `x_vec[d_index[j]]`):
which lane holds a value that other lanes need is known only at run time, so no shuffle pattern can pass it, and
the lane that loaded it first already brought its sector into L1. Such a finding is information (a hint below 10%)
with no fix, and says why (session 46's and 47's reviews of the Parboil apps).

Block-scope reuse of no more than one sector per block (a per-block scalar, which L1 serves to the block's other
warps) gets no shared-memory advice, and thread-scope reuse of 256 bytes or more per thread (beyond what registers
can hold) no register advice: information with no fix, and a finding with no fix that says to reorder or tile the
loops (ONE_SECTOR_PER_BLOCK, REGISTER_BUDGET_BYTES; session 56's review of Tango ResNet and SqueezeNet).

Warps that repeat one another's work (PolyBench mvt launched with 8 warps per block but indexed by threadIdx.x
alone: all 8 read the same row at the same instruction and store the same result): block-scope reuse that is at
least 90% between copies of one access (the same line's PCs), on a line whose stores race with each other between
warps of the block (unsynchronized write-after-write for at least half their bytes), is no tile to share but
duplicated work. Staging it in shared memory would only share the repetition; the finding says to index with every
dimension of the block (or launch fewer threads), with no quick fix (session 47's review).
"""

from __future__ import annotations

from reuselens.analyzer.configurations import largest_block, threads_launched
from reuselens.analyzer.patterns.finding import TIER_INFORMATION, TIER_PERFORMANCE, Draft, add_counts, predicted_removal
from reuselens.analyzer.patterns.text import format_bytes, format_share, places, where
from reuselens.analyzer.patterns.view import (
    SECTOR_BYTES,
    Edge,
    KernelView,
    Node,
    global_on_lines,
    kept_in_l2,
    l2_reuse_distance,
    merge_sets_sharing_lines,
    reads_repeat,
    reuse_intensity,
    reuse_ratios,
)

PATTERNS = {
    "hierarchical-reuse-block": "Block-level reuse served from global memory (on-chip promotion)",
    "hierarchical-reuse-grid": "Grid-level reuse across blocks (L2 pressure)",
}

SCOPES = ("thread", "warp_diff_inst", "block", "grid")
_SCOPE_WORDS = {
    "thread": "the same thread",
    "warp_diff_inst": "other lanes of the same warp",
    "block": "other warps of the same block",
    "grid": "other blocks",
}

_ADVICE = {
    "thread": "load it once into a register",
    "warp_diff_inst": "share it with warp shuffles",
    "block": "stage it in shared memory",
    "grid": "keep it in L2 with an access-policy window",
}

_FIXES = {
    "thread": (
        "register-promotion",
        "Most of this data object's reuse happens inside one thread, often a loop that reloads a value "
        "the thread already has. Load it once into a register before the loop (mark the pointers "
        "__restrict__ so the compiler may do it) and watch register pressure.",
    ),
    "warp_diff_inst": (
        "warp-shuffle",
        "Most of this data object's reuse happens between lanes of one warp at different "
        "instructions. Load each element once per warp and pass it to the lanes that need it "
        "with __shfl_sync (or stage it in shared memory when the pattern is irregular).",
    ),
    "block": (
        "shared-promotion",
        "Most of this data object's reuse happens between warps of the same block, served by L1/L2 "
        "today. Stage the block's tile in shared memory once (cooperative, coalesced loads, then "
        "__syncthreads()) and read it from there; that removes the repeated global loads.",
    ),
    "grid": (
        "l2-window",
        "Most of this data object's reuse crosses block boundaries, so it is served by L2 and competes "
        "with everything else there. Keep it resident with an L2 access-policy window "
        "(cudaStreamSetAttribute with cudaStreamAttributeAccessPolicyWindow, hitProp "
        "cudaAccessPropertyPersisting, after cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)), or "
        "reorder the grid (tile swizzling) so blocks sharing data run together.",
    ),
}


_KEPT_FIX = (
    "Most of this data object's reuse crosses block boundaries and is served by L2. The kernel's data does not fit "
    "in L2, but other blocks read each line of this object again long before the kernel's other data could fill the "
    "L2 (the message says after how much), so the L2 keeps it as it is: an access-policy window "
    "would not make it more resident. Only if L2 bandwidth itself limits this kernel, reorder the grid so that "
    "blocks sharing data run at the same time, or stage the shared part in shared memory per block."
)
_FITS_FIX = (
    "Most of this data object's reuse crosses block boundaries and is served by L2, but the object, and all the "
    "kernel touches beside it, are small enough (per launch) to stay in the L2 of the GPU it ran on anyway: an "
    "access-policy window would not keep it more resident. Only if L2 bandwidth itself limits this kernel, reorder the grid so that blocks sharing data "
    "run at the same time (tile swizzling), or stage the shared part in shared memory per block."
)

# Reads per byte (the subgraph's reuse intensity, section 3.2.2) from which grid-scope reuse that fits in L2 costs L2
# bandwidth worth a tile in shared memory: a tiled GEMM's blocks read each input byte (side / tile side) times, an
# untiled one about the side's times. The suite and breadth set split at 8-16 (cuda-samples' and Parboil's tiled
# SGEMMs, Parboil histo) against 768-896 (PolyBench gemm and syrk, untiled); stencils reuse 1.2-2 times.
HEAVY_REUSE = 64.0
_TILE_FIX = (
    "Most of this data object's reuse crosses block boundaries. It fits in L2, so an access-policy window would not "
    "keep it more resident, but different blocks read each of its bytes many times from L2: L2 bandwidth, not its "
    "capacity, is what this reuse costs. Give each block a larger tile of the work, so that it loads each element it "
    "needs once into shared memory (cooperative, coalesced loads, then __syncthreads()) and reuses it from there, or "
    "from registers, as a tiled matrix multiplication does; each doubling of the tile's side halves those L2 reads."
)
# ... but a block of one warp or less (Tango AlexNet's fully connected layer: one thread per block) has no other warp
# to share a tile with: its threads are the block. More threads per block, sharing the tile, come first.
_SMALL_BLOCKS_FIX = (
    "Most of this data object's reuse crosses block boundaries. It fits in L2, but different blocks read each of its "
    "bytes many times, and each block has one warp or less (the launch's block size), so no shared-memory tile is "
    "shared by anyone: launch more threads per block (a multiple of 32, typically 128 to 256), give the block the "
    "work of the small blocks it replaces, and let its threads load each element they all need once into shared "
    "memory (cooperative, coalesced loads, then __syncthreads()) and reuse it from there."
)


def _one_warp_blocks(view: KernelView) -> bool:
    """Whether every configuration of the kernel launches blocks of at most one warp."""
    return 0 < largest_block(view.raw) <= 32


# An object no larger than one L1 line (a scalar or a few: SHOC BFS (UIUC)'s `*frontier_length`, which every thread
# of every block compares its index with) that blocks read many times over: every block needs all of it, so a larger
# tile would read it no less often; each warp's read is one request, which L1 and L2 serve.
READ_WHOLE_BYTES = 128
_READ_WHOLE_FIX = (
    "Most of this data object's reuse crosses block boundaries: every block reads it, and it fits in L2. It is no "
    "larger than one cache line, so each block needs all of it and a tile in shared memory would read it no less "
    "often; each warp's read is one request, which L1 and L2 serve. If the value is known before the launch, pass it "
    "as a kernel argument; otherwise nothing needs changing."
)

# Block-scope reuse of an object of which each block reads no more than one sector (a per-block scalar: Tango ResNet's
# batch-norm `mean[output]` and `scale[output]`, 8 bytes a block, read by every warp): the first warp's load brings the
# sector into L1 and the block's other warps hit it there, so a copy in shared memory would replace L1 hits by
# shared-memory reads behind a barrier (session 56's review of the second breadth set: 5 such findings, noise).
ONE_SECTOR_PER_BLOCK = SECTOR_BYTES
_ONE_SECTOR_FIX = (
    "Most of this data object's reuse happens between warps of the same block, but each block reads only a few "
    "bytes of it (one sector or less, the message says how much): the first warp's load brings them into L1 and the "
    "block's other warps read them there. Staging them in shared memory would replace those L1 hits with "
    "shared-memory reads behind a __syncthreads(), which saves nothing. If the compiler reloads the value only "
    "because it cannot rule out aliasing, read it once into a local variable (or mark the pointers __restrict__)."
)

# Thread-scope reuse of more bytes per thread than registers can hold: a thread has at most 255 32-bit registers and
# needs most of them for its own work, so caching this many bytes (64 registers) or more of an object in registers
# spills to local memory, which is the same L1 the reloads hit, or cuts the warps an SM can hold (Tango SqueezeNet's 1x1 convolutions: each thread re-reads 16 to 512
# doubles of its input for every output channel; session 56's review: "load it once into a register" would spill).
REGISTER_BUDGET_BYTES = 256
_WORKING_SET_FIX = (
    "Most of this data object's reuse happens inside one thread, but each thread re-reads more of it than registers "
    "can hold (the message says how much; a thread has at most 255 registers of 4 bytes and needs most of them for "
    "its own work), so loading it once into registers would spill to local memory. Restructure the loops instead: "
    "interchange them so that the uses of each element come together (one load, then every computation that needs "
    "it), or tile the work so that a thread holds a small slice in registers while it reuses it, staging the rest "
    "in shared memory where threads of a block share it."
)

_DATA_FIX = (
    "Most of this data object's reuse happens between lanes of one warp at different instructions, but at "
    "addresses loaded from memory (an index array, a graph's neighbours): which lane holds a value other lanes "
    "need is known only at run time, so no warp shuffle pattern can pass it along, and the first lane's load "
    "already brought its sector into L1. Only a different data layout (rows or vertices renumbered so that "
    "neighbours share elements more tightly) changes this reuse."
)

_DUPLICATE_FIX = (
    "The warps of each block read these addresses at the same instruction and store the same results (their "
    "stores race, write after write, with no barrier between): they repeat one another's work instead of sharing "
    "it. Usually an index leaves out a dimension of the block (threadIdx.y in a 2-D block used as if 1-D) or more "
    "threads are launched than the work has items. Index with every dimension of the block, or launch one thread "
    "per item; staging the data in shared memory would only share the repeated loads."
)

_STORE_FIX = (
    "The same thread stores to this element again and again (a store in a loop overwriting its own earlier "
    "value), and nobody reads the intermediate values. Accumulate the value in a register and store it once "
    "after the loop (mark the pointers __restrict__ so the compiler may do it itself)."
)

_STRONG_FIX = (
    "Most of this data object's reuse happens inside one thread, but through a load that is strong in the SASS "
    "(.STRONG: a volatile access, or a relaxed or acquire one): the compiler must issue every read, so a loop "
    "re-reads memory by design. The program may rely on it to see other threads' writes (a value other threads "
    "update with atomics, a flag polled until another block sets it). Only if this thread need not see them, read "
    "the value once into a local variable before the loop, or drop the volatile qualifier."
)

# The shared memory one block can have (opt-in maximum, per compute capability): a per-block copy of an atomically
# updated object must fit there. Architectures not listed get the 48 KB any block may have without opting in.
_BLOCK_SHARED_BYTES = {
    "sm_70": 96 << 10,
    "sm_75": 64 << 10,
    "sm_80": 163 << 10,
    "sm_86": 99 << 10,
    "sm_87": 163 << 10,
    "sm_89": 99 << 10,
    "sm_90": 227 << 10,
    "sm_100": 227 << 10,
    "sm_120": 99 << 10,
}
BLOCK_SHARED_DEFAULT = 48 << 10
_UNPRIVATIZABLE_FIX = (
    "Many blocks update this data object atomically, but more of it than the shared memory of one block can hold: "
    "a per-block copy does not fit, and the updates scatter over it (a graph's distances, a large table). Global "
    "atomics execute in L2, which already serves this reuse. If the contention matters, reduce the updates "
    "instead: update only when the value changes (compare with a plain read first), or split the work so that "
    "each block updates a range of its own."
)
_FEW_UPDATES_FIX = (
    "Blocks share this data object's atomic updates, but each block issues about one of them: a per-block copy "
    "in shared memory would add a shared atomic and a merge to that one global update and save nothing. Global "
    "atomics execute in L2, which serves them; if many warps updating one address is the cost, aggregate within "
    "the warp first (one atomic per warp)."
)
# Privatizing pays when a block merges several updates into one: below this many warp-level atomic instructions per
# block there is nothing to merge (cuda-samples newdelete's containerFill: one push per block, told to privatize;
# session 56's review).
MIN_UPDATES_PER_BLOCK = 2
# Reuse among atomics is an update stream, not data to cache: the fix is privatization, whatever the scope.
_ATOMIC_FIX = (
    "shared-promotion",
    "This data object is updated atomically by many warps or blocks, so the updates queue at L2. "
    "Privatize: accumulate into a per-block copy in shared memory (shared-memory atomics, or a "
    "per-warp partial combined with shuffles), then merge each block's copy into global memory once "
    "at the end of the block.",
)
# ... except where the program uses the old values the atomics return (atomic_results.py): tickets or slots, which a
# per-block copy merged at the end would hand out twice (session 55's review: warpAggregatedAtomicsCG's compaction).
_TICKET_FIX = (
    "shared-promotion",
    "This counter is updated atomically by many warps or blocks, so the updates queue at L2, and the program uses "
    "the old value each atomic returns (a slot or a ticket: out[atomicAdd(&count, 1)] = x). A per-block copy "
    "merged at the end would hand out indices that other blocks also get. Reserve a range per block instead: "
    "count the block's items in shared memory (a shared atomic, or a warp's __ballot_sync and __popc), let one "
    "thread take the block's base with one global atomicAdd of that count, __syncthreads(), then each thread "
    "uses base + its offset within the block.",
)

# ... and where they are no adds but a min, max, or or exchange whose old value the program reads (Parboil bfs's
# atomicMin(&g_cost[id], cost) compared with cost, atomicOr(x, 0) as a read; session 56's review): a per-block copy
# would answer with the block's own view, not the value other blocks left.
_ACTED_ON_FIX = (
    "none",
    "This data is updated atomically by many warps or blocks, and the program reads the old value each atomic "
    "returns (a minimum, an exchange or a bit set whose result decides what the thread does next). A per-block copy "
    "merged at the end would answer with the block's own view, not the value other blocks left, so it changes the "
    "program's decisions; the atomics resolve in L2, which serves them. Only where the decisions may use a "
    "block's own view (a relaxation step that is repeated until nothing changes) can a per-block copy help.",
)


def _dominant(view: KernelView, members: list[Node], delta: float) -> tuple[str | None, dict[str, float]]:
    ratios = reuse_ratios(view, members, SCOPES)
    above = [label for label in SCOPES if ratios[label] > delta]
    if not above and across_warps(members, ratios, delta):
        return max(CROSS_WARP, key=lambda label: ratios[label]), ratios
    if not above:
        return None, ratios
    return max(above, key=lambda label: (ratios[label], -SCOPES.index(label))), ratios


# Reuse between warps is labelled block or grid by which block touched the element last (section 3.2.1's scope of
# the previous access), and that is the block scheduler's choice, not the program's: PolyBench LU's row k, read by
# the 8 warps of each block and by every block of its column, came out 32% block and 68% grid, and untiled GEMMs'
# operands alike, so neither passed delta alone and the reuse that a shared-memory tile serves went unreported
# (session 58; the answer key's lu2-row-col-reuse). When no scope passes delta alone, the two together may, where the
# data is read again between warps at least as much as it is first touched: each element about twice or more, the
# reuse a tile in shared memory pays for. A stream whose few re-read lines split between the labels (a stencil's
# halo, 6% of its bytes) is no tile's.
CROSS_WARP = ("block", "grid")


def across_warps(members: list[Node], ratios: dict[str, float], delta: float) -> bool:
    """Whether reuse between warps (block and grid together) dominates where no one scope does, and is at least
    half of the subgraph's bytes but its lanes' same-instruction shares (one request each)."""
    if any(ratios[label] > delta for label in SCOPES) or sum(ratios[label] for label in CROSS_WARP) <= delta:
        return False
    between = sum(node.w_out.get(label, 0.0) for node in members for label in CROSS_WARP)
    requested = sum(node.w_total() - node.w_out.get("warp_same_inst", 0.0) for node in members)
    return between >= requested / 2


def _served_share(view: KernelView, node: Node, edge: Edge) -> float:
    """The share of an edge's accesses that the scope's mechanism could serve (see the module note)."""
    if node.type != "write":
        return 1.0  # a load re-reading data, or an atomic update stream
    if edge.label != "thread" or edge.dst != edge.src:
        return 0.0
    kinds = {kind: edge.kind_count(kind) for kind in ("raw", "war", "waw", "rar")}
    counted = sum(kinds.values())
    return kinds["waw"] / counted if counted else 1.0  # a store PC's self-edge without kind counts is WAW


def served(view: KernelView, node: Node, scope: str) -> float:
    """Bytes of `node`'s reuse at `scope` that registers, shuffles, shared memory or L2 could serve."""
    return sum(
        edge.bytes * _served_share(view, node, edge) for edge in view.out_edges.get(node.id, ()) if edge.label == scope
    )


# Duplicated warps (module docstring): the share of the line's store bytes that race between warps (unsynchronized
# write after write); the loads' share is view.DUPLICATE_REUSE_SHARE.
DUPLICATE_RACING_STORES = 0.5


def _racing_stores(view: KernelView, carriers: list[Node]) -> list[Node]:
    """The stores on the carriers' lines whose bytes mostly race between warps of a block (write after write, no
    barrier between): the signature of warps that repeat one another's work; [] when the reuse is a real tile."""
    if not reads_repeat(view, carriers):
        return []
    stores = global_on_lines(view, carriers, "write")
    racing = 0.0
    for store in stores:
        for edge in view.out_edges.get(store.id, ()):
            waw = edge.kind_count("waw")
            # without `synced` the report does not say which accesses a barrier separated: not judged, as races does
            if edge.label != "block" or waw <= 0 or edge.accesses <= 0 or edge.raw.get("synced") is None:
                continue
            unsynchronized = max(0.0, edge.accesses - float(edge.raw["synced"]))
            racing += edge.bytes * min(waw, unsynchronized) / edge.accesses
    written = sum(store.w_total() for store in stores)
    return stores if written > 0 and racing >= DUPLICATE_RACING_STORES * written else []


def _draft(
    view: KernelView,
    members: list[Node],
    scope: str,
    ratios: dict[str, float],
    exclude: frozenset[int] = frozenset(),
    joint: bool = False,
) -> Draft | None:
    """`joint`: the scope was chosen by across_warps, so the other scope between warps is this finding's reuse too
    (a tile in shared memory serves both), and the message names both shares."""
    other = next(label for label in CROSS_WARP if label != scope) if joint else None
    at_scope = {node.id: served(view, node, scope) for node in members if node.id not in exclude}
    reuse = {
        node_id: bytes_ + (served(view, view.nodes[node_id], other) if other else 0.0)
        for node_id, bytes_ in at_scope.items()
    }
    carriers = [node for node in members if reuse.get(node.id, 0.0) > 0]
    if not carriers:
        return None
    ids = {node.id for node in carriers}
    origins = sorted(
        {
            view.nodes[e.dst]
            for e in view.subgraph_edges(carriers)
            if e.label == scope and e.src in ids and view.is_memory(e.dst)
        }
        - set(carriers),
        key=lambda n: n.key,
    )
    reused = sum(reuse[node.id] for node in carriers)
    predicted: dict[str, int] = {}
    instructions = 0.0
    if scope != "grid":  # on-chip promotion removes the reuse share of each PC's global requests
        for node in carriers:
            fraction = at_scope[node.id] / node.w_total()
            instructions += node.executions * fraction
            add_counts(predicted, predicted_removal(node, fraction))
    pattern = "hierarchical-reuse-grid" if scope == "grid" else "hierarchical-reuse-block"
    atomic = any(n.type == "atomic" for n in carriers) and scope != "thread"
    returning = [n for n in carriers if n.type == "atomic" and n.raw.get("returns")] if atomic else []
    # a report without the operation (fetch_add absent: before session 56) keeps the ticket advice
    tickets = any(n.raw.get("fetch_add") is not False for n in returning)
    acted_on = bool(returning) and not tickets  # a min, max, or or exchange whose old value the program reads
    kind, explanation = (
        (_TICKET_FIX if tickets else _ACTED_ON_FIX if acted_on else _ATOMIC_FIX) if atomic else _FIXES[scope]
    )
    advice = (
        (
            "its atomics return slots the program uses: reserve a range per block with one global atomic"
            if tickets
            else "the program reads the old values its atomics return, which no per-block copy can give"
            if acted_on
            else "privatize it per block in shared memory"
        )
        if atomic
        else _ADVICE[scope]
    )
    if all(n.type == "write" for n in carriers):  # only stores overwriting their own values (thread scope)
        explanation, advice = _STORE_FIX, "accumulate it in a register and store it once"
    # Per launch, as constant_region's: cold edges count first touches per launch, and a report entry merges the
    # kernel's launches (PolyBench 3dconv: "66.1 MB" summed over 254 launches of 256 KB planes, session 46).
    launches = view.launch_count()
    footprint = view.footprint_per_launch(members)
    per_launch = f" per launch, {launches} launches" if launches > 1 else ""
    # ... and the kernel's whole footprint too: beside a stream of its own, even a small object can be evicted,
    # which is what a persisting window prevents
    room = view.l2_room()
    fits = scope == "grid" and not atomic and footprint <= room and view.global_footprint_per_launch <= room
    intensity = reuse_intensity(view, members)
    if fits and (intensity or 0.0) >= HEAVY_REUSE and footprint <= READ_WHOLE_BYTES:
        kind, explanation = "none", _READ_WHOLE_FIX
        advice = f"every block reads all {format_bytes(footprint)} of it, which no tile reads less often; L2 serves it"
    elif fits and (intensity or 0.0) >= HEAVY_REUSE and _one_warp_blocks(view):
        kind, explanation = "shared-promotion", _SMALL_BLOCKS_FIX
        advice = (
            f"it fits in L2, but blocks read each byte about {intensity:.0f} times from it, and blocks of one warp or "
            "less share nothing: launch more threads per block and let them share a tile in shared memory"
        )
    elif fits and (intensity or 0.0) >= HEAVY_REUSE:
        kind, explanation = "shared-promotion", _TILE_FIX
        advice = (
            f"it fits in L2, but blocks read each byte about {intensity:.0f} times from it: give each block a larger "
            "tile in shared memory"
        )
    elif fits:
        kind, explanation, advice = "none", _FITS_FIX, "it fits in L2, which already serves it"
    # Kept though the kernel's data does not fit: a small object every block needs whole (SobolQRNG's table), not
    # operands a larger tile would read less often, so no HEAVY_REUSE tile advice here.
    elif scope == "grid" and not atomic and kept_in_l2(view, members):
        distance = l2_reuse_distance(view, members) or 0.0
        kind, explanation = "none", _KEPT_FIX
        advice = (
            f"other blocks read each line again after about {format_bytes(distance)} of other data, so the L2 keeps "
            "it without a window"
        )
    # a per-block scalar or a per-thread working set beyond the registers: no on-chip copy of the scope's kind helps
    per_block = footprint * launches / view.block_instances()
    threads = threads_launched(view.raw)
    per_thread = footprint * launches / threads if threads else 0.0
    one_sector = scope == "block" and not atomic and per_block <= ONE_SECTOR_PER_BLOCK
    if one_sector:
        kind, explanation = "none", _ONE_SECTOR_FIX
        advice = f"each block reads about {format_bytes(per_block)} of it, which L1 serves to the block's other warps"
    too_many = scope == "thread" and explanation is _FIXES["thread"][1] and per_thread >= REGISTER_BUDGET_BYTES
    if too_many:
        kind, explanation = "none", _WORKING_SET_FIX
        advice = (
            f"each thread re-reads about {format_bytes(per_thread)} of it, more than registers can hold: reorder or "
            "tile the loops instead"
        )
    block_shared = _BLOCK_SHARED_BYTES.get(view.gpu_arch or "", BLOCK_SHARED_DEFAULT)
    unprivatizable = atomic and scope == "grid" and footprint > block_shared
    if unprivatizable:
        kind, explanation = "none", _UNPRIVATIZABLE_FIX
        advice = (
            f"more than a block's {format_bytes(block_shared)} of shared memory can privatize: "
            "the atomics resolve in L2, which serves them"
        )
    privatizing = atomic and scope == "grid" and not (tickets or acted_on or unprivatizable)
    updates_per_block = (
        sum(n.executions for n in carriers if n.type == "atomic") / max(1, view.block_instances()) if privatizing else 0
    )
    few_updates = privatizing and updates_per_block < MIN_UPDATES_PER_BLOCK
    if few_updates:
        kind, explanation = "none", _FEW_UPDATES_FIX
        advice = (
            f"each block updates it about {updates_per_block:.1f} times, which a per-block copy cannot merge: "
            "the atomics resolve in L2"
        )
    follows_data = (
        scope == "warp_diff_inst"
        and not atomic
        and all(n.type == "read" and n.addresses_follow_data() for n in carriers)
    )
    if follows_data:
        kind, explanation = "none", _DATA_FIX
        advice = "its addresses come from loaded data, so no shuffle can pass it; the first load's sector is in L1"
    # a volatile (strong) load in a loop: the reloads are the program's (memory_order.py), no register keeps them
    strong = scope == "thread" and all(n.type == "read" and n.strong for n in carriers)
    if strong:
        kind, explanation = "none", _STRONG_FIX
        advice = "a volatile (strong) load: every read reaches memory by design"
    duplicates = _racing_stores(view, carriers) if scope == "block" and all(n.type == "read" for n in carriers) else []
    if duplicates:
        kind, explanation = "none", _DUPLICATE_FIX
        advice = (
            f"the warps repeat one another's work (their stores at {where(duplicates)} race): index with every "
            f"dimension of the block, or launch fewer threads"
        )
    sources = f"{format_share(ratios[scope])} of this data object's reuse"
    if other:
        sources = (
            f"{sources} comes from {_SCOPE_WORDS[scope]} and {format_share(ratios[other])} from "
            f"{_SCOPE_WORDS[other]} ({format_bytes(reused)} together, which block scheduling splits)"
        )
    else:
        sources = f"{sources} ({format_bytes(reused)}) comes from {_SCOPE_WORDS[scope]}"
    message = f"{sources}{places(carriers)} (footprint {format_bytes(footprint)}{per_launch}) — {advice}"
    metrics = {f"r_{label}": ratios[label] for label in SCOPES}
    metrics.update({"footprint_bytes": footprint, "reuse_intensity": intensity, "subgraph_pcs": len(members)})
    if other:
        metrics["across_warps"] = True
    if follows_data:
        metrics["addresses_follow_data"] = True
    if strong:
        metrics["strong"] = True
    if duplicates:
        metrics["duplicated_warps"] = True
    if tickets:
        metrics["returns"] = True
    if one_sector:
        metrics["bytes_per_block"] = per_block
    if few_updates:
        metrics["updates_per_block"] = updates_per_block
    if too_many:
        metrics["bytes_per_thread"] = per_thread
    return Draft(
        pattern,
        carriers,
        scope,
        kind,
        explanation,
        message,
        waste_bytes=reused,
        instructions=instructions,
        origins=origins,
        predicted=predicted,
        metrics=metrics,
        tier=(
            TIER_INFORMATION
            if fits or follows_data or unprivatizable or few_updates or strong or one_sector
            else TIER_PERFORMANCE
        ),
        context=(view, members, ratios, joint),
    )


def without(draft: Draft, covered: set[int]) -> Draft | None:
    """The same finding restricted to PCs not in `covered` (reported by another finding); None if empty."""
    view, members, ratios, joint = draft.context
    return _draft(view, members, draft.scope, ratios, frozenset(covered), joint)


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    by_scope: dict[str, list[list[Node]]] = {}
    for members in view.closed_subgraphs():
        if any(node.space != "global" for node in members):
            continue
        scope, _ratios = _dominant(view, members, settings["delta"])
        if scope is not None:
            by_scope.setdefault(scope, []).append(members)
    drafts = []
    for scope in SCOPES:
        # subgraphs on the same source lines (unrolled copies) with the same dominant scope: one object; the
        # union's r(scope) is a mediant of values above delta, so it stays above delta (or, with across_warps'
        # subgraphs among them, r(block) + r(grid) does)
        for union in merge_sets_sharing_lines(by_scope.get(scope, [])):
            ratios = reuse_ratios(view, union, SCOPES)
            draft = _draft(view, union, scope, ratios, joint=across_warps(union, ratios, settings["delta"]))
            if draft is not None:
                drafts.append(draft)
    return drafts
