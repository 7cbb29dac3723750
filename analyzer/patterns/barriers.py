"""Removable barriers, paper section 6.3: "a barrier spanned by no cross-thread reuse edge orders nothing".

A block (__syncthreads) or warp (__syncwarp) barrier that executed but whose `spanned_cross_thread_edges`
is 0 separated no pair of accesses by different threads in this profile, so removing it changes no result
that the profile can see. mbarriers are left out: they also wait for asynchronous copies and TMA
transfers; so are warp barriers that another intrinsic emitted (see _written_by_user). The finding has no memory PC; it names the barrier in its `barrier` field.

A shadow entry remembers only the last access (section 3.1), so a write handed to many readers through a
barrier shows one cross-thread edge at most: when the writer's own warp reads first, every later reader's edge
points at that read (read after read, after the barrier), and the write-to-reader dependence the barrier
protects is invisible. A barrier is therefore not reported when it may lie between the two ends of such a
chain — a cross-thread read-after-read edge of the barrier's scope, not separated by a barrier, whose origin
read (through reads) a write — judged by program counters (see _may_be_needed). This can hide a truly
removable barrier; it does not advise removing one that hands data over.
"""

from __future__ import annotations

from typing import Any

from analyzer.patterns.finding import TIER_PERFORMANCE, Draft
from analyzer.patterns.text import count
from analyzer.patterns.view import KernelView

PATTERNS = {"removable-barrier": "Barrier that orders no cross-thread reuse"}

_NAMES = {"block": "__syncthreads()", "warp": "__syncwarp()"}
_FIX = (
    "No access before this barrier is reused by another thread after it (no cross-thread reuse edge spans "
    "it), so it only makes warps wait. Remove it, or move it to where a shared buffer is actually handed "
    "from one thread to another. The profile covers one input: check that no other input or code path "
    "relies on it (e.g. a shared buffer reused in the next loop iteration) before deleting it."
)


def _location(barrier: dict[str, Any]) -> str:
    source = barrier.get("source") or {}
    if source.get("file"):
        return f" at {str(source['file']).rsplit('/', 1)[-1]}:{source.get('line')}"
    return f" at pc {int(barrier.get('pc') or 0):#x}"


def _line(barrier: dict[str, Any]) -> tuple:
    """Barrier copies (an unrolled loop's __syncthreads) share function, kind and source line; without line
    info every barrier stands alone."""
    source = barrier.get("source") or {}
    key = (str(barrier.get("function") or ""), int(barrier.get("pc") or 0))
    if not source.get("file") or not source.get("line"):
        return ("pc", key)
    return (key[0], barrier.get("kind"), source["file"], source["line"])


# Edge labels that cross threads within a barrier's scope.
_CROSS = {"block": ("warp_diff_inst", "block"), "warp": ("warp_diff_inst",)}


def _writes_read_by(view: KernelView, node: int) -> list[int]:
    """Nodes of the writes whose data the access at `node` read, directly or through a chain of reads (each
    read's own reuse origin)."""
    writes, seen, todo = [], {node}, [node]
    while todo:
        for edge in view.out_edges.get(todo.pop(), []):
            if edge.kind_count("raw") > 0 and edge.dst != 0:
                writes.append(edge.dst)
            if edge.kind_count("rar") > 0 and edge.dst not in seen and edge.dst != 0:
                seen.add(edge.dst)
                todo.append(edge.dst)
    return writes


def _possible_handovers(view: KernelView, kind: str) -> list[tuple[str, int, int]]:
    """(function, write pc, reader pc) of every write that may reach a reader of another thread through a chain
    of reads that hides it (see the module note)."""
    out = []
    writes_of: dict[int, list[int]] = {}  # one walk per origin read, however many edges land on it
    for edge in view.edges:
        unsynced = edge.accesses - float(edge.raw.get("synced") or 0)
        if edge.label in _CROSS[kind] and edge.kind_count("rar") > 0 and unsynced > 0:
            reader = view.nodes[edge.src].key
            if edge.dst not in writes_of:
                writes_of[edge.dst] = _writes_read_by(view, edge.dst)
            for write in writes_of[edge.dst]:
                key = view.nodes[write].key
                out.append((key[0] if key[0] == reader[0] else "", key[1], reader[1]))
    return out


def _may_be_needed(barrier: dict[str, Any], handovers: list[tuple[str, int, int]]) -> bool:
    """Whether the barrier may sit between a hidden write and its reader: between their PCs in straight-line
    code, or anywhere in the function when the reader comes first (a loop carries the data), or anywhere when
    they lie in different functions."""
    function, pc = str(barrier.get("function") or ""), int(barrier.get("pc") or 0)
    for where, write_pc, read_pc in handovers:
        if where == "" or (where == function and (read_pc <= write_pc or write_pc < pc < read_pc)):
            return True
    return False


_USER_BARRIERS = ("__syncwarp", "__syncthreads", "__barrier_sync")


def _written_by_user(barrier: dict[str, Any]) -> bool:
    """A warp barrier that the line table places inside another intrinsic (the WARPSYNC that __shfl_sync,
    __ballot_sync or a cooperative-groups call emits under divergence) is not one the developer can delete;
    neither is one with no line information to tell. Block barriers come only from __syncthreads and kin."""
    if barrier.get("kind") == "block":
        return True
    source = barrier.get("source") or {}
    function = str(source.get("function") or "")
    if not source.get("file"):
        return False
    if not function:
        return True
    name = function.split("(", 1)[0].rsplit("::", 1)[-1]
    inlined = bool(source.get("inline"))
    return not inlined or name.startswith(_USER_BARRIERS)


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    handovers: dict[str, list[tuple[str, int, int]]] = {}
    for barrier in sorted(view.barriers, key=lambda b: (str(b.get("function") or ""), int(b.get("pc") or 0))):
        kind = barrier.get("kind")
        if kind in _NAMES and int(barrier.get("executions") or 0) > 0 \
                and barrier.get("spanned_cross_thread_edges") == 0 and _written_by_user(barrier):
            if kind not in handovers:
                handovers[kind] = _possible_handovers(view, kind)
            if not _may_be_needed(barrier, handovers[kind]):
                groups.setdefault(_line(barrier), []).append(barrier)
    return [_draft(group) for group in sorted(groups.values(), key=lambda g: (str(g[0].get("function") or ""),
                                                                             int(g[0].get("pc") or 0)))]


def _draft(group: list[dict[str, Any]]) -> Draft:
    first = group[0]
    kind = first["kind"]
    keys = [(str(b.get("function") or ""), int(b.get("pc") or 0)) for b in group]
    executions = sum(int(b.get("executions") or 0) for b in group)
    copies = f" ({len(group)} copies)" if len(group) > 1 else ""
    message = (f"{_NAMES[kind]}{_location(first)}{copies} executed {count(executions)} times but no "
               f"cross-thread reuse crosses it — it orders nothing and can be removed")
    return Draft("removable-barrier", [], kind, "barrier-removal", _FIX, message,
                 instructions=executions, tier=TIER_PERFORMANCE, severity="information",
                 exempt_from_min_share=True, extra_keys=keys,
                 extra={"barrier": {"function": keys[0][0], "pc": keys[0][1], "kind": kind,
                                    "source": first.get("source")}},
                 metrics={"executions": executions, "barrier_pcs": [pc for _f, pc in keys]})
