"""Removable barriers, paper section 6.3: "a barrier spanned by no cross-thread reuse edge orders nothing".

Removability is decided for the kernel's barriers together, not one at a time: two barriers can each look
unneeded because the other one orders the same reuse, and removing both would create a race. barrier_orders
lists every cross-thread reuse that a barrier orders in this profile, with the barriers any one of which keeps
it ordered. A hitting set of those is kept:
  1. barriers the developer cannot remove (mbarriers, which also wait for asynchronous copies; warp barriers
     another intrinsic emitted, see _written_by_user) and barriers that are the only one able to order some
     reuse, or that may lie between a hidden hand-over whose place program order cannot tell;
     In a kernel that executed mbarrier operations none is removable: the engine orders nothing by mbarriers
     (docs/engine.md, "Barriers"), so the __syncthreads() that publishes an mbarrier's initialisation to the
     block (cuda::barrier's init, then the bulk copies waited on) spans no reuse this profile sees, yet removing
     it is a race (cuda-samples globalToShmemAsyncCopy, session 46's review of the breadth set);
  2. then, while some reuse is left unordered, the barrier that orders the most of it (ties: the later one in
     (function, pc) order, the one nearest the consumers), a greedy hitting set that is deterministic.
A developer deletes source lines, not barrier instances: every copy of a line (an unrolled loop's barrier) stays
when one copy stays, and so does a line that another kernel of the run keeps (`pinned_lines`: template
instantiations share their source; reduce7<int, 32> may not need the __syncthreads that reduce7<int, 256> does,
as the GPU safety test showed on the cuda-samples reduction). Every other executed block or warp barrier is
reported as removable; together they form one set that can go at once, and each finding names the rest of the
set and the kept barriers it relies on. The finding has no memory
PC; it names the barrier in its `barrier` field.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from reuselens.analyzer.configurations import warps_launched
from reuselens.analyzer.patterns.barrier_orders import BarrierIndex, BarrierKey, Order, barrier_key, barrier_orders
from reuselens.analyzer.patterns.finding import TIER_PERFORMANCE, Draft
from reuselens.analyzer.patterns.text import count
from reuselens.analyzer.patterns.view import KernelView
from reuselens.analyzer.toolkit_paths import is_toolkit_header, source_frames, user_frame

PATTERNS = {"removable-barrier": "Barrier that orders no cross-thread reuse"}

_NAMES = {"block": "__syncthreads()", "warp": "__syncwarp()"}
_FIX = (
    "No cross-thread reuse needs this barrier: none crosses it, or every one that does is also ordered by a "
    "barrier that stays (the message names it). It only makes warps wait. Remove it, together with the other "
    "barriers the message lists (the set was chosen so that all of them can go at once), or move it to where "
    "a shared buffer is actually handed from one thread to another. The profile covers one input: check that "
    "no other input or code path relies on it (e.g. a shared buffer reused in the next loop iteration) before "
    "deleting it."
)


def _location(barrier: dict[str, Any]) -> str:
    line = source_line(barrier)  # the line the finding sits on and the fix deletes, not a toolkit header's
    if line is not None:
        return f" at {str(line[0]).rsplit('/', 1)[-1]}:{line[1]}"
    return f" at pc {int(barrier.get('pc') or 0):#x}"


def _line(barrier: dict[str, Any]) -> tuple:
    """One finding per kind and deletable line (source_line: copies of one barrier call together); without
    line info every barrier stands alone."""
    line = source_line(barrier)
    return ("pc", barrier_key(barrier)) if line is None else (barrier.get("kind"), line)


_USER_BARRIERS = ("__syncwarp", "__syncthreads", "__barrier_sync")
_GRID_GROUPS = ("grid_group", "details::grid::", "multi_grid")


def _grid_sync_frame(frame: dict[str, Any]) -> bool:
    """A frame of the CUDA toolkit's grid-wide sync (cooperative groups' grid_group::sync, cg::sync(grid), its
    details::grid::sync and sync_grids_*): a toolkit header's function, its name (no parameter list) naming a
    grid group and a sync. A user's helper that takes a `grid_group&`, or one named multi_grid_*, is none."""
    if not is_toolkit_header(str(frame.get("file") or "")):
        return False
    name = str(frame.get("function") or "").split("(", 1)[0]
    return "sync_grids" in name or ("sync" in name and any(g in name for g in _GRID_GROUPS))


def inside_grid_sync(source: dict[str, Any] | None) -> bool:
    """Whether an instruction's line info (its inline chain included) passes through a grid-wide sync."""
    return any(_grid_sync_frame(f) for f in source_frames(source))


def _written_by_user(barrier: dict[str, Any]) -> bool:
    """A warp barrier that the line table places inside another intrinsic (the WARPSYNC that __shfl_sync,
    __ballot_sync or a cooperative-groups call emits under divergence) is not one the developer can delete;
    neither is one with no line information to tell. Block barriers come only from __syncthreads and kin. No
    barrier inside a grid-wide sync (cooperative groups' grid_group::sync, the multi-grid one: its bar.sync and
    WARPSYNC) is the developer's: it is part of a barrier over blocks, whose order the profile never sees, so it
    would look removable on the user's grid.sync() line (session 45: reductionMultiBlockCG's `cg::sync(grid)`)."""
    source = barrier.get("source") or {}
    if inside_grid_sync(source):
        return False  # a bar.sync or WARPSYNC inside a grid-wide sync: part of a barrier over blocks
    if barrier.get("kind") == "block":
        return True
    function = str(source.get("function") or "")
    if not source.get("file"):
        return False
    if not function:
        return True
    name = function.split("(", 1)[0].rsplit("::", 1)[-1]
    inlined = bool(source.get("inline"))
    return not inlined or name.startswith(_USER_BARRIERS)


def source_line(barrier: dict[str, Any]) -> tuple | None:
    """The line a developer deletes to remove this barrier: its innermost frame outside the CUDA toolkit's
    headers, as (file, line). The same for every copy of it: an unrolled loop's, every inlined call of a helper
    that holds it (block_sum's __syncthreads inlined for two reductions), every template instantiation. None
    without line info."""
    source = barrier.get("source") or {}
    if not source.get("file") or not source.get("line"):
        return None
    frame = user_frame(source)
    return frame["file"], frame["line"]


def _user_written(barrier: dict[str, Any]) -> bool:
    return barrier.get("kind") in _NAMES and _written_by_user(barrier)


def _plan(view: KernelView) -> tuple[BarrierIndex, list[Order], set[BarrierKey]]:
    """The kernel's barriers, the orders they keep and the ones that stay before other kernels pin lines;
    computed once per view (the report pass and the rule both need it)."""
    if "barriers" not in view.memo:
        index = BarrierIndex(view.barriers, warps_launched(view.raw))
        orders = barrier_orders(view, index)
        kept = set(index.by_key) if "mbarrier" in view.executed_barrier_kinds else _kept(index, orders)
        view.memo["barriers"] = (index, orders, kept)
    return view.memo["barriers"]


def kept_lines(view: KernelView) -> set[tuple]:
    """The source lines of the user-written barriers this kernel keeps, to pin them in the run's other kernels."""
    index, _orders, kept = _plan(view)
    return {
        line
        for key in kept
        if _user_written(index.by_key[key]) and (line := source_line(index.by_key[key])) is not None
    }


def _kept(index: BarrierIndex, orders: list[Order]) -> set[BarrierKey]:
    """The barriers that stay: those that are not the developer's to remove, those the profile cannot judge,
    every barrier an order needs alone or may need where program order cannot tell, then a greedy hitting set
    over the orders still unmet."""
    kept = set()
    for key, barrier in index.by_key.items():
        spanned = barrier.get("spanned_cross_thread_edges")
        if barrier.get("kind") not in _NAMES or not _written_by_user(barrier):
            kept.add(key)
        elif spanned != 0 and not barrier.get("spans"):  # spanned, but which reuse it orders is not listed
            kept.add(key)
    for order in orders:
        kept.update(order.unsure)
        if len(order.between) == 1:
            kept.update(order.between)
    pending = [order for order in orders if order.between and not order.between & kept]
    while pending:
        tally: dict[BarrierKey, int] = defaultdict(int)
        for order in pending:
            for key in order.between:
                tally[key] += 1
        best = max(tally, key=lambda key: (tally[key], key))
        kept.add(best)
        pending = [order for order in pending if best not in order.between]
    return _whole_lines(index, kept)


def _whole_lines(index: BarrierIndex, kept: set[BarrierKey]) -> set[BarrierKey]:
    """A developer deletes a source line, not one copy of it: when one copy of a user-written barrier stays (the
    copy that hands a buffer over), every copy compiled from its line stays (source_line). A barrier that an
    intrinsic emitted (kept, not the developer's) pins nothing. Keeping more never unorders a reuse."""
    pinned = {source_line(index.by_key[key]) for key in kept if _user_written(index.by_key[key])} - {None}
    return kept | {key for key, barrier in index.by_key.items() if source_line(barrier) in pinned}


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    index, orders, kept = _plan(view)
    if view.pinned_barrier_lines:
        kept = kept | {key for key, b in index.by_key.items() if source_line(b) in view.pinned_barrier_lines}
    # a warp barrier ptxas placed itself (analyzer/pipeline.py marks it) is no edit the developer can make
    removable = sorted(
        key for key in index.by_key if key not in kept and not index.by_key[key].get("compiler_inserted")
    )
    relies_on: dict[BarrierKey, set[BarrierKey]] = defaultdict(set)
    for order in orders:
        for key in order.between & set(removable):
            relies_on[key].update(order.between & kept)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for key in removable:
        barrier = index.by_key[key]
        groups.setdefault(_line(barrier), []).append(barrier)
    ordered = sorted(groups.values(), key=lambda g: barrier_key(g[0]))
    return [
        _draft(
            group,
            [other for other in ordered if other is not group],
            sorted({k for b in group for k in relies_on[barrier_key(b)]}),
            index,
        )
        for group in ordered
    ]


def _names(barriers: list[dict[str, Any]], limit: int = 3) -> str:
    listed = [f"{_NAMES.get(str(b.get('kind')), 'barrier')}{_location(b)}" for b in barriers]
    more = f" and {len(listed) - limit} more" if len(listed) > limit else ""
    return ", ".join(dict.fromkeys(listed[:limit])) + more


def _draft(
    group: list[dict[str, Any]], others: list[list[dict[str, Any]]], relied: list[BarrierKey], index: BarrierIndex
) -> Draft:
    first = group[0]
    kind = first["kind"]
    keys = [barrier_key(b) for b in group]
    executions = sum(int(b.get("executions") or 0) for b in group)
    copies = f" ({len(group)} copies)" if len(group) > 1 else ""
    message = f"{_NAMES[kind]}{_location(first)}{copies} executed {count(executions)} times"
    if relied:
        message += (
            f" but every cross-thread reuse it orders is also ordered by "
            f"{_names([index.by_key[k] for k in relied])}, which {'stays' if len(relied) == 1 else 'stay'}"
            f" — it can be removed"
        )
    else:
        message += " but no cross-thread reuse crosses it — it orders nothing and can be removed"
    if others:
        message += f", together with {_names([g[0] for g in others])} (all {len(others) + 1} can go at once)"
    together = sorted(barrier_key(b) for g in [group, *others] for b in g)
    return Draft(
        "removable-barrier",
        [],
        kind,
        "barrier-removal",
        _FIX,
        message,
        instructions=executions,
        tier=TIER_PERFORMANCE,
        # once a warp (no loop runs it) a barrier costs each warp one wait: a hint (session 55's review: five of the
        # breadth set's ten were such, right and not worth an edit)
        severity="hint" if all(index.outside_loops(key) for key in keys) else "information",
        extra_keys=keys,
        extra={"barrier": {"function": keys[0][0], "pc": keys[0][1], "kind": kind, "source": first.get("source")}},
        metrics={
            "executions": executions,
            "barrier_pcs": [pc for _f, pc in keys],
            "relies_on_pcs": [pc for _f, pc in relied],
            "removable_together_pcs": [pc for _f, pc in together],
        },
    )
