"""What the barriers of one kernel must keep ordering: one `Order` per cross-thread reuse that a barrier orders.

An Order is a pair of accesses by different threads that a barrier separates in this profile, with `between`,
the barriers that lie between its two ends and can order its scope (a warp pair is ordered by __syncwarp or
__syncthreads, a block pair only by __syncthreads). Keeping any one of `between` keeps the pair ordered.
barriers.py keeps a set of barriers that meets every Order and reports the rest as removable together.

The engine records, per barrier, the edges it separated (`spans`), but credits each separated access only to
the last barrier before it (docs/engine.md, "Barriers"); which other barriers lay between the two accesses is
not recorded. It is inferred from program order: in one function, a barrier whose PC lies between the two
accesses' PCs, when the credited barrier lies there too (straight-line code, not a pair carried around a loop)
and it executed at least as often as the credited one (a barrier skipped by a uniform branch executes less) but
not in a loop: more often than once per warp launched, a barrier sits in a loop, whose last pass may leave it
before reaching that barrier. Parboil tpacf's merge loop writes `warp_hists[..][0]` and exits to the
__syncthreads() after the loop, skipping the loop's own, and the reads after the loop are ordered by the later
barrier alone (session 55's review: the later one was called removable, "also ordered by" the loop's).

Orders come from two sources:
  - every span of every barrier (an edge it separated, of any kind: keeping read-after-read pairs ordered
    costs little and a read may pass on data that a write before it produced);
  - hand-overs hidden by the shadow, which keeps only the last access (paper 3.1): when one thread writes and
    many threads read after a barrier, the later readers' edges point at the first read (read after read,
    often between lanes of one instruction), not at the write, and no edge spans the barrier. Every
    cross-thread read-after-read edge that no barrier separated and whose origin read, through reads, a write
    is such a hand-over from that write to the reader. Its barriers are those between the write and the
    reader by PC. Where program order cannot tell (the reader comes first: a loop carries the data; the two
    lie in different functions; or the barriers between ran different numbers of times, _ordered_by_pcs),
    every barrier that may lie between is kept (`unsure`);
  - hand-overs between blocks through a signal. No barrier orders two blocks, but a block that writes data,
    then __syncthreads(), then lets one thread signal (an atomic on a semaphore, a flag store) publishes its
    whole block's writes to the block that sees the signal (PyTorch's reduce_kernel: reduce_buffer stores,
    __threadfence, __syncthreads, atomicAdd on a semaphore; the last block reads the buffer). For every
    conflicting cross-block edge whose two ends enclose, in program order, a global store or atomic that
    another block accessed after it (a signal), a barrier must stay between the first access and the signal
    (release) and between the signal and the second access (acquire).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from reuselens.analyzer.patterns.view import KernelView, Node

BarrierKey = tuple[str, int]  # (function, pc)

# Which barrier kinds order a pair of each scope.
ORDERING_KINDS = {"warp": ("warp", "block"), "block": ("block",)}
# Edge labels by the narrowest barrier scope that orders them; grid pairs no barrier orders.
_SCOPE_OF_LABEL = {"thread": "warp", "warp_same_inst": "warp", "warp_diff_inst": "warp", "block": "block"}
_WIDTH = {"warp": 0, "block": 1}


def barrier_key(barrier: dict[str, Any]) -> BarrierKey:
    return (str(barrier.get("function") or ""), int(barrier.get("pc") or 0))


@dataclass(frozen=True)
class Order:
    """One cross-thread reuse that must stay ordered; `between` are the barriers any one of which orders it."""

    origin: int  # node id of the earlier access (the write, for a hidden hand-over)
    access: int  # node id of the later access
    scope: str  # "warp" or "block"
    between: frozenset[BarrierKey]
    unsure: frozenset[BarrierKey] = frozenset()  # kept as a whole: program order could not place the pair


class BarrierIndex:
    """The kernel's executed block and warp barriers, by key and by function."""

    def __init__(self, barriers: Iterable[dict[str, Any]], warps: int = 0) -> None:
        """`warps`: the warps the kernel's launches ran (configurations.warps_launched; 0: not known)."""
        self.warps = warps
        self.by_key: dict[BarrierKey, dict[str, Any]] = {}
        for barrier in barriers:
            if barrier.get("kind") in ORDERING_KINDS["warp"] and int(barrier.get("executions") or 0) > 0:
                self.by_key[barrier_key(barrier)] = barrier
        # ordering() per (scope, function): asked once per span of every barrier, and a fully unrolled kernel
        # (sortingNetworks' bitonicSortShared1: 56 barriers, thousands of spans) sorted the barriers each time.
        self._ordering: dict[tuple[str, str | None], tuple[BarrierKey, ...]] = {}

    def executions(self, key: BarrierKey) -> int:
        return int(self.by_key[key].get("executions") or 0)

    def ordering(self, scope: str, function: str | None = None) -> tuple[BarrierKey, ...]:
        """Barriers able to order `scope`, of one function or of the whole kernel, sorted."""
        known = self._ordering.get((scope, function))
        if known is None:
            kinds = ORDERING_KINDS[scope]
            known = self._ordering[(scope, function)] = tuple(
                sorted(
                    key
                    for key, barrier in self.by_key.items()
                    if barrier.get("kind") in kinds and (function is None or key[0] == function)
                )
            )
        return known

    def outside_loops(self, key: BarrierKey) -> bool:
        """Whether the barrier ran at most once per warp launched: in no loop (a branch may have skipped it)."""
        return 0 < self.executions(key) <= self.warps

    def strictly_between(self, scope: str, function: str, first_pc: int, last_pc: int) -> list[BarrierKey]:
        return [key for key in self.ordering(scope, function) if first_pc < key[1] < last_pc]


def _span_orders(view: KernelView, index: BarrierIndex) -> list[Order]:
    orders = []
    for key, barrier in sorted(index.by_key.items()):
        for span in barrier.get("spans") or ():
            label = span.get("label")
            origin, access = int(span.get("to") or 0), int(span.get("from") or 0)
            if label not in _SCOPE_OF_LABEL or not view.is_memory(origin) or not view.is_memory(access):
                continue
            scope = _SCOPE_OF_LABEL[label]
            first, last = view.nodes[origin], view.nodes[access]
            between = {key}
            if first.function == last.function == key[0] and first.pc < key[1] < last.pc:
                runs = index.executions(key)
                between.update(
                    other
                    for other in index.strictly_between(scope, key[0], first.pc, last.pc)
                    if index.executions(other) == runs
                    or (index.executions(other) > runs and index.outside_loops(other))
                )
            orders.append(Order(origin, access, scope, frozenset(between)))
    return orders


def _writes_behind(view: KernelView, node: int) -> dict[int, str]:
    """write node -> the widest scope along the chain of reads through which `node` read its data, for every
    write that `node` read directly or through reads (each read's own reuse origin). Chains through another
    block ('grid') are left out: no barrier orders them."""
    writes: dict[int, str] = {}
    best: dict[int, str] = {node: "warp"}
    todo = [node]
    while todo:
        current = todo.pop()
        for edge in view.out_edges.get(current, ()):
            scope = _SCOPE_OF_LABEL.get(edge.label)
            if scope is None or not view.is_memory(edge.dst):
                continue
            wide = max(scope, best[current], key=_WIDTH.__getitem__)
            if edge.kind_count("raw") > 0 and _WIDTH[wide] > _WIDTH.get(writes.get(edge.dst, ""), -1):
                writes[edge.dst] = wide
            if edge.kind_count("rar") > 0 and _WIDTH[wide] > _WIDTH.get(best.get(edge.dst, ""), -1):
                best[edge.dst] = wide
                todo.append(edge.dst)
    return writes


def _handover_orders(view: KernelView, index: BarrierIndex) -> list[Order]:
    orders = []
    behind: dict[int, dict[int, str]] = {}  # one walk per origin read, however many edges land on it
    seen: set[tuple[int, int, str]] = set()
    for edge in view.edges:
        if edge.label not in ("warp_same_inst", "warp_diff_inst", "block") or edge.kind_count("rar") <= 0:
            continue
        if edge.accesses - float(edge.raw.get("synced") or 0) <= 0 or not view.is_memory(edge.dst):
            continue
        if edge.dst not in behind:
            behind[edge.dst] = _writes_behind(view, edge.dst)
        for write, chain_scope in behind[edge.dst].items():
            scope = max(chain_scope, _SCOPE_OF_LABEL[edge.label], key=_WIDTH.__getitem__)
            if (write, edge.src, scope) in seen:
                continue
            seen.add((write, edge.src, scope))
            orders.append(_handover(view, index, write, edge.src, scope))
    return orders


def _handover(view: KernelView, index: BarrierIndex, write: int, reader: int, scope: str) -> Order:
    first, last = view.nodes[write], view.nodes[reader]
    if first.function == last.function and first.pc < last.pc:
        return _ordered_by_pcs(index, scope, first, last)
    # A loop carries the data (the reader's PC comes first) or the pair spans functions: any barrier of the
    # function, or of the kernel, may be the one between them.
    unsure = index.ordering(scope, first.function if first.function == last.function else None)
    return Order(write, reader, scope, frozenset(), frozenset(unsure))


def _ordered_by_pcs(index: BarrierIndex, scope: str, first: Node, last: Node) -> Order:
    """The Order of two accesses of one function, the first at the lower PC, by the barriers between their PCs.
    Where those all ran as often, the code between is straight-line and any one of them orders the pair. Where
    the most frequent ran in no loop, the others sat in branches some passes skipped, and the most frequent surely
    ran between every such pair. Where it ran in a loop, which of them ran between the first access's last pass
    and the second, program order cannot tell (a loop that exits before its own barrier: Parboil tpacf's merge
    loop, session 55), so all of them stay (`unsure`)."""
    between = index.strictly_between(scope, first.function, first.pc, last.pc)
    counts = {index.executions(key) for key in between}
    if len(counts) <= 1:
        return Order(first.id, last.id, scope, frozenset(between))
    most = max(counts)
    surely = frozenset(key for key in between if index.executions(key) == most)
    if all(index.outside_loops(key) for key in surely):
        return Order(first.id, last.id, scope, surely)
    return Order(first.id, last.id, scope, frozenset(), frozenset(between))


def _signals(view: KernelView) -> list[Node]:
    """Global stores and atomics that another block accessed after them: what a block can signal with."""
    return sorted(
        {
            view.nodes[edge.dst]
            for edge in view.edges
            if edge.label == "grid"
            and view.is_memory(edge.dst)
            and view.nodes[edge.dst].space == "global"
            and view.nodes[edge.dst].type in ("write", "atomic")
        },
        key=lambda n: n.key,
    )


def _cross_block_orders(view: KernelView, index: BarrierIndex) -> list[Order]:
    signals = _signals(view)
    orders, seen = [], set()
    for edge in view.edges:
        if edge.label != "grid" or not view.is_memory(edge.dst):
            continue
        first, last = view.nodes[edge.dst], view.nodes[edge.src]
        if (first.type == "read" and last.type == "read") or first.type == last.type == "atomic":
            continue  # nothing to order
        if first.function != last.function or not first.pc < last.pc:
            continue
        for signal in signals:
            if signal.function != first.function or not first.pc < signal.pc < last.pc:
                continue
            for a, b in ((first, signal), (signal, last)):
                order = _ordered_by_pcs(index, "block", a, b)
                if (order.between or order.unsure) and (a.id, b.id) not in seen:
                    seen.add((a.id, b.id))
                    orders.append(order)
    return orders


def barrier_orders(view: KernelView, index: BarrierIndex) -> list[Order]:
    """Every cross-thread reuse the kernel's barriers must keep ordering, in a deterministic order."""
    return _span_orders(view, index) + _handover_orders(view, index) + _cross_block_orders(view, index)
