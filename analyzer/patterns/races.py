"""Race candidates, paper section 6.3 ("Beyond performance"): conflicting cross-thread reuse edges.

"A cross-thread reuse edge with a write on either endpoint is a pair of conflicting accesses, and its
Topological Distance names the synchronization scope that must order the pair: any such edge not separated
by a barrier of at least that scope is a potential race." Edges whose both ends are atomics are not
conflicts. Intra-Warp-Same-Inst edges are left out: they pair lanes of one instruction, which no barrier can
separate (a store whose lanes collide on one address is a value question, not an ordering one).

Which accesses a barrier separated comes from the edge's `synced` count (docs/report-format.md: lane
accesses whose prior access lies before a barrier of at least the edge's scope; the engine computes it from
per-warp barrier counters). An edge's accesses all have one kind, since both endpoint PCs have fixed types,
so its unsynchronized conflicting accesses are `accesses − synced`. Without `synced` the kernel's barrier
list decides only the clear case: a scope that no executed
barrier of the kernel can order (no __syncthreads() for block edges, neither __syncthreads() nor
__syncwarp() for warp edges) leaves every conflicting access unsynchronized; otherwise the edge is not
judged. No barrier orders blocks of one grid, so every conflicting grid edge is a candidate; those are
reported as information, since atomics with fences or flags can order them out of the profile's sight.
One finding per PC, with all the PCs it conflicts with as origins; its scope is the widest scope a barrier
could fix (block over warp), or grid when only blocks conflict, or when the conflicts within a block are at most
1% of its unsynchronized accesses (IN_BLOCK_REMAINDER): a __syncthreads() would order that remainder and leave the
conflict as it is (SHOC BFS's frontier costs: 20 accesses within a block against 532,565 between blocks made it a
warning to insert a barrier; session 47's review). The message still counts the remainder.

Orders the profile cannot see, within a block or across blocks (said as hints, with the reason: session 55's review
of the breadth set's 68 candidates found all 50 sub-word and mbarrier ones false, the reads against atomics benign):
- mbarriers. A kernel that executed mbarrier operations (cuda::barrier, cuda::pipeline, bulk copies waited on)
  hands the data of its asynchronous copies between threads through them, and the engine counts them but orders
  nothing by them (docs/engine.md, "Barriers"): cuda-samples globalToShmemAsyncCopy's two cuda::barrier kernels,
  correct code, got 4 warnings each with millions of "unsynchronized" accesses (session 45, breadth set), every
  conflict with an asynchronous copy into shared memory at one end. So in such a kernel a shared-memory pair with
  an asynchronous copy (cp.async, a bulk copy) at one end may be ordered by an mbarrier wait, and so may a pair of
  plain accesses with an mbarrier arrive or wait at a PC between theirs in their function (cuda-samples
  simpleAWBarrier: thread 0 of each warp stores its partial sum, the block arrives and waits on a cuda::barrier,
  warp 0 reads the sums: 2 warnings, session 58's third breadth set). A race between plain accesses with no mbarrier
  operation between them stays a warning.
- Sub-word accesses. The engine tracks 4-byte granules, so threads that each access their own byte or
  half-word of one word (cuda-samples simpleVoteIntrinsics: one bool per thread in a bool array; eigenvalues: a
  scan tree of unsigned short) look like one location accessed twice. When every conflict has accesses narrower
  than 4 bytes at both ends, they may be to different bytes. Session 45 kept reads against such stores a
  warning; session 46's review of the breadth set found all 5 of those (eigenvalues' unsigned short scan tree,
  thread t's element sharing a word with thread t+1's, the tree levels ordered by cg::sync) false: a read next
  to a neighbour's half-word store looks exactly like a read of it. The price: a real race on half-precision
  (`__half`, `bfloat16`) or byte data in shared memory is a hint too, with the reason said.
- Atomics against an earlier plain read (`atomic_load`): a read that comes before the atomic in the code sees one
  value or the other whatever the order, as an optimistic pre-check of a counter does (Parboil mri-gridding);
  a read after the atomics, or a plain store against them (it loses updates), stays a warning.

Cooperative groups' grid-wide sync (`grid_group::sync()`, `this_grid().sync()`) does order blocks: a grid pair in
one function with such a sync between the two accesses in program order (straight-line code: the origin's PC,
then the sync's barrier, then the access) is ordered, and the accesses inside the sync's own implementation (its
arrival counter and flag) are the barrier, not data (cuda-samples reductionMultiBlockCG, session 46's review).
Neither is a candidate. A pair carried around a loop is not judged by program order and stays one.

One missing barrier, one finding: a pair of accesses that race in both orders (a buffer reused across iterations
of a loop without a barrier at the end: each iteration's stores overwrite what slower warps still read, WAR, and a
few reads come after a faster warp's next stores, RAW) is one conflict seen from each end, and the barrier that
orders one direction orders the other. When every access a PC group races with lies in another group, that group
races with it in the other direction, and the first has at most a tenth of the second's unsynchronized accesses (a
faster warp running ahead; two orders of like size can need two barriers), the two are one finding: the larger's message and partners, both counts (Parboil tpacf's `gen_hists`: 75,736 WAR
accesses at line 105 against the reads at 137-139, and 13 RAW accesses of those reads against 105, were four
warnings; session 46's review).

Warps that repeat one another's work: stores racing write-after-write between warps of a block, on lines whose global
loads read what the block's other warps read at the same instruction (view.warps_repeat_work, which hierarchical's
duplicated-warps test shares: PolyBench mvt and ATAX, 8 warps per block indexed by threadIdx.x alone), are no missing
barrier: the finding stays a warning and says to index with every dimension of the block (session 48's review of
ATAX). Such a kernel repeats its other stores too: once one race is judged so, stores racing write-after-write only
with copies of themselves (ATAX's `tmp[i] = 0`, a line with no load to test) get the same advice.

Uniform stores (and reads of them, and atomicExch flags): when the only conflicts are stores against stores and,
at both ends, every execution has all its lanes store to one address (`*flag = true` by every thread; or one end is
an atomicExch always updating one address, the other a one-address store: `atomicExch(&flag, 1)` against
`flag = 1`), the stores most likely write one value, and concurrent stores of one value to a flag are the standard
benign idiom. Without values such a finding is kept but said as information: benign if every store writes the same
value. A run profiled with values (`profile --values`, docs/engine.md "Value redundancy") settles it: when every
execution of the stores stored one value and most stores found that value already there (silent), the finding says
so, measured; when the lanes stored different values, the race is real and stays a warning.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from reuselens.analyzer.patterns.barriers import inside_grid_sync
from reuselens.analyzer.patterns.finding import TIER_CORRECTNESS, TIER_INFORMATION, Draft
from reuselens.analyzer.patterns.text import count, format_bytes, format_share, where
from reuselens.analyzer.patterns.view import (
    Edge,
    KernelView,
    Node,
    group_by_line,
    line_key,
    merge_groups,
    warps_repeat_work,
)
from reuselens.analyzer.toolkit_paths import atomic_intrinsic

PATTERNS = {"race-candidate": "Possible data race (conflicting accesses without a barrier)"}

_ORDERING_BARRIERS = {"warp_diff_inst": ("warp", "block"), "block": ("block",)}
_KIND_WORDS = {
    "raw": "reads data another thread wrote",
    "war": "overwrites data another thread read",
    "waw": "overwrites data another thread wrote",
}
_FIXES = {
    "warp_diff_inst": "Lanes of the same warp access this data at different instructions and at least one of "
    "them writes. Since Volta, lanes of a warp are not guaranteed to run in lockstep, so "
    "put __syncwarp() (or use a *_sync warp primitive) between the write and the other "
    "access; warp-synchronous code that relies on implicit lockstep is a race.",
    "block": "Warps of the same block access this data and at least one access writes, with no "
    "__syncthreads() between the two. Insert __syncthreads() (or a named barrier over the "
    "participating warps) between the producer and the consumer; for a reused buffer also between "
    "the last read and the next overwrite (write-after-read).",
    "grid": "Different blocks of one grid access this data and at least one writes. No barrier orders blocks, "
    "so the result depends on scheduling unless the accesses are atomics or ordered by a "
    "__threadfence() plus a flag or counter. Split the phases into separate kernels, use "
    "cooperative_groups::this_grid().sync() in a cooperative launch, or make the updates atomic.",
}
_PLACE_WORDS = {"warp_diff_inst": " in the same warp", "block": " in the same block", "grid": " in other blocks"}
_UNIFORM_NOTE = (
    "Every lane of each execution stores to the same single address, and other executions of stores like it "
    "do too: the pattern of a flag (`*flag = true`) set by many threads. Concurrent stores of one value leave "
    "that value whatever the order, so this is benign when every store writes the same value; ReuseLens does "
    "not record values and cannot check it. If the values can differ, the last store wins at random: "
)
_MEASURED_BENIGN_NOTE = (
    "Every lane of each execution stores to the same single address, and the run's values show that every such "
    "store wrote one value, most of them onto that very value already there (silent stores): the standard flag "
    "idiom, benign whatever the order. If other inputs can make the values differ, the last store wins at random: "
)
_MBARRIER_NOTE = (
    "This kernel synchronizes through mbarriers (cuda::barrier, cuda::pipeline, bulk copies waited on), which "
    "order data between threads in ways this profile does not model: the pair may be ordered by an mbarrier "
    "arrive and wait between them (an asynchronous copy's completion, or a cuda::barrier arrive/wait that every "
    "thread of the block takes part in, as __syncthreads() would). If no arrive/wait of one mbarrier lies between "
    "the two accesses, it is a race: "
)
_ATOMIC_READ_NOTE = (
    "One end of every conflict is an atomic and the other a plain read of the same location: the read sees the "
    "value from before or after the atomic, whatever the order, which is benign when the code re-checks what the "
    "atomic returns (an optimistic pre-check of a counter). Make the read a relaxed atomic load "
    "(cuda::atomic_ref<T, cuda::thread_scope_device>(x).load(cuda::memory_order_relaxed)) to say so. If the "
    "read's value must be the final one, it needs an order: "
)
# Stores of warps that repeat one another's work race write after write: at least this share of the conflicts (mvt's
# 536 M WAW accesses come with 6,944 WAR of the accumulator's first load).
DUPLICATED_WAW_SHARE = 0.99
_DUPLICATED_NOTE = (
    "The warps of each block store to the same addresses, with no barrier between, because they repeat one "
    "another's work: the loads on these lines read, at the same instruction, what the other warps of the block read "
    "(an index leaves out a dimension of the block, e.g. threadIdx.y of a 2-D block used as if 1-D, or more threads "
    "are launched than the work has items). A __syncthreads() would only order the repeated stores. Index with "
    "every dimension of the block, or launch one thread per item: the race and the repeated loads go together."
)
_DUPLICATED_STORES_NOTE = (
    "The warps of each block store to the same addresses at this same instruction, with no barrier between: the "
    "kernel's warps repeat one another's work, as its other racing stores show (their lines' loads read, at the "
    "same instruction, what the block's other warps read). A __syncthreads() would only order the repeated stores. "
    "Index with every dimension of the block, or launch one thread per item: then each store is made once."
)
_SUB_WORD_NOTE = (
    "Both accesses are narrower than the 4-byte word this profile tracks, so they may be to different bytes of one "
    "word (a bool, char or short per thread), which is no race. If they can be to the same bytes, it is one: "
)
_SCOPE_WORDS = {
    "warp_diff_inst": "with no __syncwarp()",
    "block": "with no __syncthreads()",
    "grid": "from another block, which no barrier orders",
}


def _atomic_against_reads_only(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Every conflict pairs an atomic with a plain read: the read sees the value before or after the atomic,
    whatever the order, and code that reads a counter optimistically re-checks what the atomic returned
    (Parboil mri-gridding's binning: a plain pre-check of a bin's count, then atomicAdd, undone if full)."""
    for edge, _k, _u in items:
        u, v = view.nodes[edge.src], view.nodes[edge.dst]
        if {u.type, v.type} != {"atomic", "read"}:
            return False
        read, atomic = (u, v) if u.type == "read" else (v, u)
        # the pre-check shape only: the read comes before the atomic in the code; a read after the atomics (of the
        # sum they built, with no barrier between) is the classic missing-barrier race
        if read.function != atomic.function or read.pc >= atomic.pc:
            return False
    return True


def _sub_word_only(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Every conflict has accesses narrower than a 4-byte granule at both ends."""
    return all(0 < view.nodes[edge.src].size < 4 and 0 < view.nodes[edge.dst].size < 4 for edge, _k, _u in items)


def _async_copy_handoffs_only(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Every conflict in shared memory with an asynchronous copy (cp.async, a bulk copy) at one end: the hand-offs
    an mbarrier orders."""
    return all(
        view.nodes[edge.src].space == "shared"
        and bool(view.nodes[edge.src].raw.get("async_copy") or view.nodes[edge.dst].raw.get("async_copy"))
        for edge, _k, _u in items
    )


def _mbarrier_between(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Every conflict with an mbarrier operation (an arrive or a wait) between its origin and its access in
    straight-line code of one function: cuda::barrier's arrive and wait between a store and another warp's read of it
    (cuda-samples simpleAWBarrier's block reduction) order the pair as __syncthreads() would."""
    operations = _barrier_pcs(view, lambda barrier: barrier.get("kind") == "mbarrier")
    return all(_barrier_between(view.nodes[edge.src], view.nodes[edge.dst], operations) for edge, _k, _u in items)


def _conflicts(view: KernelView, edge: Edge) -> dict[str, float]:
    """Conflicting lane accesses by kind; from the edge counts, or from the node types without them."""
    counts = {kind: edge.kind_count(kind) for kind in ("raw", "war", "waw")}
    if any(edge.raw.get(k) is not None for k in ("rar", "raw", "war", "waw")):
        return counts
    u, v = view.nodes[edge.src], view.nodes[edge.dst]
    kind = {("read", "write"): "raw", ("write", "read"): "war", ("write", "write"): "waw"}.get((u.type, v.type))
    return {kind: edge.accesses} if kind else {}


def _unsynchronized(edge: Edge, conflicting: float, kinds: frozenset[str]) -> float | None:
    if edge.label == "grid":  # no barrier orders blocks
        return conflicting
    if edge.raw.get("synced") is not None:
        return max(0.0, min(conflicting, edge.accesses - float(edge.raw["synced"])))
    if not kinds & set(_ORDERING_BARRIERS[edge.label]):
        return conflicting
    return None  # barriers exist but the report does not say which accesses they separate


SCOPE_ORDER = ("warp_diff_inst", "block", "grid")

# A conflict between blocks whose in-block part is at most this share of its unsynchronized accesses is a grid
# conflict (module docstring): no barrier orders the rest.
IN_BLOCK_REMAINDER = 0.01


def _barrier_pcs(view: KernelView, chosen: Callable[[dict[str, Any]], bool]) -> dict[str, list[int]]:
    """Per function, the PCs of the executed barriers `chosen` picks."""
    pcs: dict[str, list[int]] = defaultdict(list)
    for barrier in view.barriers:
        if int(barrier.get("executions") or 0) > 0 and chosen(barrier):
            pcs[str(barrier.get("function") or "")].append(int(barrier.get("pc") or 0))
    return pcs


def _barrier_between(u: Node, v: Node, pcs: dict[str, list[int]]) -> bool:
    """One of the barriers `pcs` between the origin v and the later access u in straight-line code of one function."""
    return u.function == v.function and any(v.pc < pc < u.pc for pc in pcs.get(u.function, ()))


def _grid_sync_pcs(view: KernelView) -> dict[str, list[int]]:
    """Per function, the PCs of the executed barriers that belong to a grid-wide sync."""
    return _barrier_pcs(view, lambda barrier: inside_grid_sync(barrier.get("source")))


def _ordered_by_grid_sync(u: Node, v: Node, syncs: dict[str, list[int]]) -> bool:
    """A grid pair that a grid-wide sync orders: one between the origin v and the later access u in straight-line
    code of one function, or either access part of the sync itself."""
    if inside_grid_sync(u.raw.get("source")) or inside_grid_sync(v.raw.get("source")):
        return True
    return _barrier_between(u, v, syncs)


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    kinds = view.executed_barrier_kinds
    syncs = _grid_sync_pcs(view)
    groups: dict[int, list[tuple[Edge, dict[str, float], float]]] = defaultdict(list)
    for edge in view.edges:
        if edge.label not in SCOPE_ORDER or not view.is_memory(edge.dst):
            continue
        u, v = view.nodes[edge.src], view.nodes[edge.dst]
        if u.type == "atomic" and v.type == "atomic":
            continue
        if edge.label == "grid" and _ordered_by_grid_sync(u, v, syncs):
            continue
        by_kind = _conflicts(view, edge)
        conflicting = sum(by_kind.values())
        unsynchronized = _unsynchronized(edge, conflicting, kinds) if conflicting else None
        if unsynchronized:
            groups[u.id].append((edge, by_kind, unsynchronized))
    line_groups = _warp_idioms(group_by_line(view.nodes[i] for i in groups), groups)
    merged, absorbed = _reverse_orders(line_groups, groups)
    inputs = []
    for group in merged:
        items = [item for member in group for item in groups[member.id]]
        partners = [item for member in group if member.id not in absorbed for item in groups[member.id]]
        inputs.append((group, items, partners))
    drafts = [_draft(view, group, items, kinds, partners) for group, items, partners in inputs]
    # A kernel whose warps repeat one another's work repeats every store, its initialising ones included (ATAX's
    # `tmp[i] = 0` before the loop whose loads show the duplication): once one race is that, the stores that race
    # only with copies of themselves are told so too (module docstring).
    if any(draft.metrics.get("duplicated_warps") for draft in drafts):
        drafts = [_draft(view, group, items, kinds, partners, kernel_repeats=True) for group, items, partners in inputs]
    return drafts


# The reverse order folds into the larger one only when it is at most this share of it: the few accesses of a
# faster warp that ran ahead (tpacf: 13 against 75,736). Two orders of like size (a loop that reads a neighbour's
# element and overwrites its own with no barrier at all) can need two barriers, and stay two findings.
REVERSE_SHARE = 0.1


def _copies_of_one_store(group: list[Node], origins: list[Node]) -> bool:
    """Whether the group is stores that race only with copies of themselves (the same source access in other
    warps)."""
    keys = {line_key(node) for node in group}
    return (
        None not in keys
        and all(node.type == "write" for node in group)
        and all(line_key(node) in keys for node in origins)
    )


def _reverse_orders(
    line_groups: list[list[Node]], items: dict[int, list[tuple[Edge, dict[str, float], float]]]
) -> tuple[list[list[Node]], set[int]]:
    """Groups that race with each other in both orders merged (module docstring: one missing barrier, one finding),
    and the ids of the nodes whose own races were folded into a larger group's finding."""

    unsynchronized = [sum(u for member in group for _e, _k, u in items[member.id]) for group in line_groups]
    partners = [{edge.dst for member in group for edge, _k, _u in items[member.id]} for group in line_groups]
    ids = [{member.id for member in group} for group in line_groups]
    group_of = {node_id: index for index, members in enumerate(ids) for node_id in members}
    joined, absorbed = [], set()
    for j in range(len(line_groups)):
        holders = {group_of.get(node_id) for node_id in partners[j]}
        if len(holders) != 1:
            continue  # partners outside any racing group, or in several: not one conflict's other end
        (i,) = holders
        if (
            i is not None
            and i != j
            and partners[i] & ids[j]
            and unsynchronized[j] <= REVERSE_SHARE * unsynchronized[i]
            and (unsynchronized[j], j) < (unsynchronized[i], i)
        ):
            joined.append((i, j))
            absorbed |= ids[j]
    return merge_groups(line_groups, joined), absorbed


_IDIOM_LINES = 8  # how far apart the lines of one warp-synchronous sequence may be


def _source_line(node: Node) -> int | None:
    line = (node.raw.get("source") or {}).get("line")
    return int(line) if line else None


def _warp_idioms(
    line_groups: list[list[Node]], items: dict[int, list[tuple[Edge, dict[str, float], float]]]
) -> list[list[Node]]:
    """Line groups whose races are all within warps, in one function, file and memory space, each at most
    _IDIOM_LINES lines from the next with no other race between, as one group: a warp-synchronous sequence
    (`volatile` reduction steps relying on lockstep, each step's read racing another lane's write of the same
    step) is one idiom with one fix (__syncwarp() between the steps, or shuffles), not a warning per step (5 per
    instantiation in SHOC scan's reduce; session 46's review)."""

    def place(group: list[Node]) -> tuple | None:
        source = group[0].raw.get("source") or {}
        line = _source_line(group[0])
        return None if line is None else (group[0].function, str(source.get("file") or ""), line)

    def warp_only(group: list[Node]) -> bool:
        return all(edge.label == "warp_diff_inst" for member in group for edge, _k, _u in items[member.id])

    placed = sorted((p, i) for i, group in enumerate(line_groups) if (p := place(group)) is not None)
    joined = [
        (i, j)
        for (a, i), (b, j) in zip(placed, placed[1:])
        if a[:2] == b[:2]
        and b[2] - a[2] <= _IDIOM_LINES
        and line_groups[i][0].space == line_groups[j][0].space
        and warp_only(line_groups[i])
        and warp_only(line_groups[j])
    ]
    return merge_groups(line_groups, joined)


def _one_address(node: Node) -> bool:
    """Every execution's lanes access one location. Shared-memory `addresses` count 4-byte words, so one 8- or
    16-byte location there is 2 or 4 (cutcp's `myBinIndex` int3 stored by every thread as one STS.64)."""
    addresses = node.raw.get("addresses") or ()
    words = max(1, -(-node.size // 4)) if node.space == "shared" else 1
    return bool(addresses) and all(int(value) <= words for value, _count in addresses)


def _uniform_store(node: Node) -> bool:
    """A store whose every execution sends all its (several) lanes to one address."""
    return node.type == "write" and node.lane_mode() > 1 and _one_address(node)


def _flag_exchange(node: Node) -> bool:
    """An atomicExch whose every execution goes to one address: setting a flag, as a store does. Other atomics
    (add, inc, CAS, ...) update what is there, and a plain store racing them loses updates."""
    return node.type == "atomic" and atomic_intrinsic(node.raw.get("source")) == "atomicExch" and _one_address(node)


def _uniform_pair(u: Node, v: Node) -> bool:
    """Both ends set one flag: uniform stores, or a one-address atomicExch against a one-address store of any lane
    count (eigenvalues: `atomicExch(&flag, 1)` in some threads, `flag = 1` in one)."""
    if _uniform_store(u) and _uniform_store(v):
        return True
    exchange, other = (u, v) if u.type == "atomic" else (v, u)
    return _flag_exchange(exchange) and other.type == "write" and _one_address(other)


def _reads_of_uniform_stores(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Every conflict pairs a uniform store (every lane to one location) with another, or with a read of one
    location: threads that all store one block-uniform value to a shared scalar and read it back (Parboil cutcp's
    `myBinIndex`, stored by all 128 threads, read before the next barrier)."""

    def one_location_read(node: Node) -> bool:
        return node.type == "read" and _one_address(node)

    store = _uniform_store
    return all(
        (store(u) and (store(v) or one_location_read(v))) or (store(v) and one_location_read(u))
        for u, v in ((view.nodes[edge.src], view.nodes[edge.dst]) for edge, _k, _u in items)
    )


def _stores_agree(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    """Unless a run's values show the stores of these conflicts writing different values (then it is a race)."""
    stores = {n for edge, _k, _u in items for n in (view.nodes[edge.src], view.nodes[edge.dst]) if n.type == "write"}
    verdict = _value_evidence(stores)
    return verdict is None or (verdict[0] and verdict[1] >= _SILENT_BENIGN)


def _uniform_stores_only(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> bool:
    return all(
        not kinds.get("raw") and not kinds.get("war") and _uniform_pair(view.nodes[edge.src], view.nodes[edge.dst])
        for edge, kinds, _u in items
    )


_SILENT_BENIGN = 0.5  # with one value per store, this share of silent stores makes racing stores the benign idiom


def _value_evidence(stores: set[Node]) -> tuple[bool, float] | None:
    """Whether every execution of every store stored one value, and the share of their lanes that stored the value
    already there (runs with values); None when a store has no values."""
    if not stores or not all(node.raw.get("values") for node in stores):
        return None
    lanes = sum(node.raw["values"]["lanes"] for node in stores)
    silent = sum(node.raw["values"]["silent"] for node in stores)
    one_value = all(node.raw["values"]["uniform"] >= node.executions for node in stores)
    return one_value, silent / lanes if lanes else 0.0


def _stored_values(view: KernelView, items: list[tuple[Edge, dict[str, float], float]]) -> tuple[bool, float] | None:
    """Value evidence for stores racing stores, at both ends of every conflict (_value_evidence)."""
    return _value_evidence(
        {view.nodes[edge.src] for edge, _k, _u in items} | {view.nodes[edge.dst] for edge, _k, _u in items}
    )


def _draft(
    view: KernelView,
    group: list[Node],
    items: list[tuple[Edge, dict[str, float], float]],
    kinds: frozenset[str],
    partners: list[tuple[Edge, dict[str, float], float]],
    kernel_repeats: bool = False,
) -> Draft:
    """One finding per PC: its scope is the widest one a barrier could fix (grid only when nothing else). Its origins
    are the accesses `partners` (the group's items but those folded in from the reverse order) race with."""
    origins = sorted({view.nodes[edge.dst] for edge, _k, _u in partners}, key=lambda n: n.key)
    accesses = sum(unsync for _e, _k, unsync in items)
    wasted = sum(edge.bytes * min(1.0, unsync / max(1.0, sum(k.values()))) for edge, k, unsync in items)
    by_kind: dict[str, float] = defaultdict(float)
    per_scope: dict[str, float] = defaultdict(float)
    for edge, kind_counts, unsync in items:
        per_scope[edge.label] += unsync
        for kind, value in kind_counts.items():
            by_kind[kind] += value
    fixable = [s for s in SCOPE_ORDER[:2] if per_scope.get(s)]
    in_block = sum(per_scope.get(s, 0.0) for s in fixable)
    remainder = bool(fixable) and per_scope.get("grid", 0.0) > 0 and in_block <= IN_BLOCK_REMAINDER * accesses
    scope = fixable[-1] if fixable and not remainder else "grid"
    main_kind = max(sorted(by_kind), key=lambda k: by_kind[k])
    message = (
        f"{_KIND_WORDS[main_kind]} ({main_kind.upper()}) {_SCOPE_WORDS[scope]} in between: "
        f"{count(accesses)} unsynchronized lane accesses ({format_bytes(wasted)}) against "
        f"{where(origins)}"
    )
    if remainder:
        message += f" ({count(in_block)} of them within one block)"
    uniform = _uniform_stores_only(view, items)
    explanation = _FIXES[scope]
    values = _stored_values(view, items) if uniform else None
    measured: dict[str, float | bool] = {}
    if values is not None:
        one_value, silent_share = values
        measured = {"one_value_per_store": one_value, "silent_store_share": silent_share}
        benign = one_value and silent_share >= _SILENT_BENIGN
        if benign:
            message = (
                f"every lane stores to one address that other threads also store to{_PLACE_WORDS[scope]} "
                f"({count(accesses)} unsynchronized lane stores against {where(origins)}): benign — each store "
                f"wrote one value and {format_share(silent_share)} of them found it already there"
            )
            explanation = _MEASURED_BENIGN_NOTE + explanation
        else:
            message = (
                f"every lane stores to one address that other threads also store to{_PLACE_WORDS[scope]} "
                f"({count(accesses)} unsynchronized lane stores against {where(origins)}), and the stored values "
                f"differ: the last store wins at random"
            )
        uniform = benign
    elif uniform:
        message = (
            f"every lane stores to one address that other threads also store to{_PLACE_WORDS[scope]} "
            f"({count(accesses)} unsynchronized lane stores against {where(origins)}): benign if all "
            f"store the same value, as a flag does — the profile does not record values"
        )
        explanation = _UNIFORM_NOTE + explanation
    elif _reads_of_uniform_stores(view, items) and _stores_agree(view, items):
        uniform = True
        what = (
            "threads read one location that every lane stores to"
            if all(node.type == "read" for node in group)
            else "every lane stores to one location that other threads read"
        )
        message = (
            f"{what}{_PLACE_WORDS[scope]} ({count(accesses)} unsynchronized lane accesses against {where(origins)}): "
            f"benign if all store the same value (a block-uniform value kept in shared memory) — the profile does "
            f"not record values; a register would hold it without the race"
        )
        explanation = _UNIFORM_NOTE + explanation
    # Stores racing between warps that repeat one another's work (module docstring): a barrier is not the fix.
    overwrites = (
        scope == "block"
        and not uniform
        and not measured
        and by_kind.get("waw", 0) >= DUPLICATED_WAW_SHARE * sum(by_kind.values())
    )
    repeated_loads = overwrites and warps_repeat_work(view, [*group, *origins])
    repeated_stores = overwrites and not repeated_loads and kernel_repeats and _copies_of_one_store(group, origins)
    duplicated = repeated_loads or repeated_stores
    if duplicated:
        message += " — the warps repeat one another's work: index with every dimension of the block"
        explanation = _DUPLICATED_NOTE if repeated_loads else _DUPLICATED_STORES_NOTE
    # Orders the profile cannot see (module docstring): mbarriers in the kernel, or accesses narrower than a granule.
    unseen = ""
    if not uniform and not measured:  # (values that show a real race settle it)
        if "mbarrier" in kinds and (_async_copy_handoffs_only(view, items) or _mbarrier_between(view, items)):
            unseen = "mbarrier"
            message += " — this kernel synchronizes through mbarriers, which may order the pair"
            explanation = _MBARRIER_NOTE + explanation
        elif _atomic_against_reads_only(view, items):
            unseen = "atomic_load"
            message += " — a plain read against atomics sees one value or the other, whatever the order"
            explanation = _ATOMIC_READ_NOTE + explanation
        elif _sub_word_only(view, items):
            unseen = "sub_word"
            message += " — both accesses are narrower than a 4-byte word and may be to different bytes"
            explanation = _SUB_WORD_NOTE + explanation
    quiet = scope == "grid" or uniform or bool(unseen)
    metrics = {
        "unsynchronized_accesses": accesses,
        "uniform_stores": uniform,
        **({"duplicated_warps": True} if duplicated else {}),
        **({"unseen_order": unseen} if unseen else {}),
        **measured,
        **{f"unsynchronized_{label}": value for label, value in sorted(per_scope.items())},
        **{f"{k}_accesses": v for k, v in sorted(by_kind.items())},
    }
    return Draft(
        "race-candidate",
        group,
        scope,
        "none",
        explanation,
        message,
        waste_bytes=wasted,
        origins=origins,
        tier=TIER_INFORMATION if quiet else TIER_CORRECTNESS,
        # an order the profile cannot see is a hint: session 55's review of the breadth set found all 50 such
        # candidates (sub-word neighbours, mbarrier hand-overs) false, and the plain reads against atomics benign
        severity="hint" if unseen else "information" if quiet else "warning",
        metrics=metrics,
    )
