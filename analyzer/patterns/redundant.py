"""Redundant Access, paper section 3.3 III: RAR, RAW and WAW on intra-thread edges between two different PCs.

For an edge e = (u -> v), u the current PC and v its reuse origin, with Φ(e) = Thread:
  RAR: Type(u) = Type(v) = Read           -> u re-reads a value the same thread already read;
  RAW: Type(u) = Read, Type(v) = Write    -> u re-reads a value the same thread produced;
  WAW: Type(u) = Type(v) = Write          -> v is a dead store (overwritten by the same thread, no reuse between).
The paper defines Redundant Access "on two different nodes", so self-loops are left out here (a loop-invariant
re-read shows up as thread-dominant hierarchical reuse instead). One finding per redundant PC: a read PC with
both RAR and RAW edges gets one finding (they share one fix) under the pattern that carries more bytes.

Aliasing: at -O3 the compiler keeps a loaded value in a register unless a store in between may write the same
address through another pointer (or keeps a store it could drop unless a load in between may read it). So
when, in straight-line code of one function, a global store lies between a global load and its reload (a
global load between a store and its overwrite), and no barrier lies there too (a barrier forces the reload by
itself), the finding names that access and the fix: `__restrict__` on the pointer parameters. The engine
records only each reuse's two ends, not what executed between them; program order (PCs of the same function)
stands in for it.

Narrower than a word: the engine's shadow keeps one last access per 4-byte granule, so an edge says that the
same word was accessed, not the same bytes. When the access that would have to cover the bytes (a read's
origin, a dead store's overwriter) is narrower than 4 bytes, the two may be different bytes of one word
(threads' bytes of a bool array, a char2's halves): cuda-samples simpleVoteIntrinsics' `s[3t+1]` store was
"overwritten" by the store of `s[3t]`, and deleting it as the fix says would change the results (session 46's
review of the breadth set). Such a finding is information, with no fix, and says so.

Asynchronous copies: a value a cp.async or bulk copy moved (at either end of a read's edge) never sat in a
register of the thread, so "keep it in a register" does not apply; those edges are left out.

Lane-dependent reuse: a shared-memory load whose same instruction also reads other threads' data of its block
(at least SPLIT_SHARE of its bytes labelled warp or block) re-reads its own data only in some lanes or warps, by the
thread index: a sorting
network's comparator `s_key[pos]`, `pos = 2 * tid - (tid & (stride - 1))`, finds its own element in half the
lanes of a step and a neighbour's in the other half (cuda-samples sortingNetworks: 50/50, 25/75, 12/88 per
unrolled step). A register cannot stand in for such a load; keeping the own elements needs the algorithm
restructured (each thread owning its elements through the steps where they stay its own). Those PCs form a
finding of their own, information without a fix; PCs of the same line whose re-reads are their own keep theirs
(a stencil's rows swept down a column: each PC either all own or all neighbours').

Earlier loops: a load in one loop that re-reads what the same thread loaded or stored in an earlier loop (two
sibling loops of one function, neither holding the other's PC: the report's `loops`, decoded from the CUBIN's
branches by analyzer/loops.py) would need one register per iteration of that earlier loop. When at least
EARLIER_LOOP_SHARE of a load's re-read bytes come from such origins and those origins ran at least
EARLIER_LOOP_VALUES times per warp of the kernel's launches (the values a thread would have to keep), the load's
re-reads form a finding of their own, information without a fix, saying so: only fusing the loops (where the
dependences allow) or keeping the data on chip removes them (PolyBench gramschmidt's second pass over a column the
first pass summed was told to keep 2,048 values in a register; session 47's review). A reload in the same loop as
its origin (an aliased reload, a loop-invariant re-read) keeps the register advice; without `loops` nothing changes.

Calls that were not inlined: a called function's register restores (the node's `frame`, analyzer/frame_saves.py)
and local loads whose every re-read value another function stored (a variable whose address crosses the call, a
structure passed on the stack) are the call's traffic, which no register can keep: each is a finding of its own with
no fix, naming the functions and saying to inline, return the value or make a recursion iterative (session 56's
review of cuda-samples interval and newdelete).
"""

from __future__ import annotations

from collections import defaultdict

from reuselens.analyzer.configurations import warps_launched
from reuselens.analyzer.loops import MIN_VALUES, innermost
from reuselens.analyzer.patterns.finding import TIER_INFORMATION, Draft, predicted_removal
from reuselens.analyzer.patterns.text import format_bytes, format_share, places
from reuselens.analyzer.patterns.view import Edge, KernelView, Node, group_by_line, merged_node

PATTERNS = {
    "redundant-rar": "Redundant read after read by the same thread",
    "redundant-raw": "Redundant read after write by the same thread",
    "redundant-waw": "Dead store: overwritten by the same thread before any read",
}

_READ_FIX = (
    "The same thread loads this value more than once. Load it once into a local variable (a register) and "
    "reuse that copy; if the compiler reloads because it cannot prove that no store in between aliases the "
    "address, mark the pointers __restrict__ (and const for read-only inputs) or hoist the load by hand. "
    "Keeping values in registers raises register pressure: check that occupancy does not drop (paper 3.3 III)."
)
_LOCAL_NOTE = (
    " This PC accesses local memory, which holds register spills and dynamically indexed per-thread arrays: "
    "reduce register pressure (__launch_bounds__, smaller tiles) or index the array with compile-time "
    "constants (unrolled loops) so the compiler can keep it in registers."
)
_WAW_FIX = (
    "Every value this store writes is overwritten by the same thread before anybody reads it, so the first "
    "store is dead. Accumulate the value in a register and store it once, after the last update; if the "
    "intermediate stores exist for another thread or a later kernel, that reader did not run in this profile."
)


_ALIAS_READ_FIX = (
    "The compiler reloads this value because a store between the two loads goes through another pointer that "
    "it cannot prove points elsewhere. Declare the pointer parameters __restrict__ (const __restrict__ for "
    "read-only inputs) when they never overlap; the compiler then keeps the first load in a register. "
)
_ALIAS_WAW_FIX = (
    "The compiler keeps this store because a load between it and the overwrite goes through another pointer "
    "that it cannot prove points elsewhere. Declare the pointer parameters __restrict__ (const __restrict__ for "
    "read-only inputs) when they never overlap; the compiler then drops the dead store. "
)
_ALIAS_TYPES = {"read": ("write", "atomic"), "write": ("read", "atomic")}


def alias_suspects(view: KernelView, first: Node, last: Node, between_type: str) -> list[Node]:
    """Global accesses of `between_type`'s opposite kind (stores between two loads, loads between two stores)
    that lie between `first` and `last` in straight-line code of one function, with no barrier there too."""
    if first.space != "global" or last.space != "global" or first.function != last.function or not first.pc < last.pc:
        return []
    for barrier in view.barriers:
        if (
            str(barrier.get("function") or "") == first.function
            and int(barrier.get("executions") or 0) > 0
            and first.pc < int(barrier.get("pc") or 0) < last.pc
        ):
            return []
    kinds = _ALIAS_TYPES[between_type]
    return [
        node
        for node in view.memory_nodes()
        if node.function == first.function
        and node.space == "global"
        and node.type in kinds
        and node.executions > 0
        and first.pc < node.pc < last.pc
    ]


def _alias_text(suspects: list[Node], what: str) -> str:
    return (
        f" — the {what}{places(suspects)} in between may alias it for the compiler: mark the pointer "
        f"parameters __restrict__ (const __restrict__ for read-only inputs)"
    )


_SUB_WORD_NOTE = (
    "The profile tracks 4-byte words, and the access that would cover this one's bytes is narrower than a word, so "
    "the two may be different bytes of one word (neighbouring elements of a char, bool or short array): check "
    "the indices before acting on this. "
)
_SUB_WORD_WORDS = " — narrower than a 4-byte word: may be different bytes of it, check before acting"


def _as_sub_word(draft: Draft) -> Draft:
    """The finding when its bytes may be another access's neighbours (module docstring): information, no fix."""
    draft.message += _SUB_WORD_WORDS
    draft.explanation = _SUB_WORD_NOTE + draft.explanation
    draft.fix_kind = "none"
    draft.tier = TIER_INFORMATION
    draft.metrics["sub_word"] = True
    return draft


def _may_be_other_bytes(covering: Node) -> bool:
    """Whether the access that must cover the other's bytes (a read's origin, a dead store's overwriter) is
    narrower than the engine's 4-byte granule."""
    return 0 < covering.size < 4


# Share of a load's bytes reused across threads from which its re-reads count as lane-dependent (module docstring).
SPLIT_SHARE = 0.1
_CROSS_THREAD = ("warp_diff_inst", "block")
_SPLIT_NOTE = (
    "The same instruction reads other threads' data in other lanes or warps, so which lanes find their own "
    "value depends on the thread index, and a register cannot replace the load. Keeping the own elements "
    "needs the algorithm restructured: let each thread own its elements through the steps where they stay "
    "its own (a sorting network's small strides, done in registers or with warp shuffles), then exchange."
)
_SPLIT_WORDS = " — lane-dependent: the same load reads other threads' data ({share}), no register can stand in"
# Other threads only read the element between this thread's accesses (every cross-thread edge a read after read): a
# Hillis-Steele scan's `s_data[idx] += t`, whose element the thread itself stored while the neighbour `offset` above
# only read it. The shadow keeps one last access per word, so a write by a third thread before that read would look
# the same: the register is offered as a condition, with no fix (session 54's review of SHOC sort).
_READ_BETWEEN_NOTE = (
    "Between this thread's accesses, other threads of the block read the same element (the shadow records each "
    "word's last access, which was their read). If no other thread writes it in between, as in a scan step where "
    "a neighbour only reads this thread's partial sum, the value is still this thread's own: keep it in a local "
    "variable (a register) across the steps and store it, instead of reloading it from shared memory. If another "
    "thread may write it, the reload is needed."
)
_READ_BETWEEN_WORDS = (
    " — other threads read this element in between ({share}): if none of them writes it, a register can stand in"
)


def _lane_dependent(node: Node) -> bool:
    """Whether the shared-memory load's same instruction reads other threads' data of its block for at least
    SPLIT_SHARE of its bytes (module docstring). Global loads are left out: their labels say only who touched a value
    last, and a reload of the thread's own element that other blocks' halo reads touched in between still fits a
    register."""
    total = node.w_total()
    cross = sum(node.w_out.get(label, 0.0) for label in _CROSS_THREAD)
    return node.space == "shared" and total > 0 and cross >= SPLIT_SHARE * total


def _only_read_by_others(view: KernelView, members: list[Node]) -> bool:
    """Whether the loads read a slot of each lane's own (one word a lane, at an address not computed from loaded
    data: a scan's s_data[idx], not a binary search's probe that lanes share) whose cross-thread edges are all reads
    after reads: other threads read those elements between this thread's accesses, and none wrote them last."""
    if any(m.raw.get("address_from") or m.address_mode() < m.lane_mode() for m in members):
        return False
    edges = [e for m in members for e in view.out_edges.get(m.id, ()) if e.label in _CROSS_THREAD]
    return bool(edges) and all(e.kind_count("raw") == 0 and e.kind_count("rar") > 0 for e in edges)


def _as_lane_dependent(draft: Draft, members: list[Node], view: KernelView) -> Draft:
    """The finding of loads whose re-reads depend on the lane (module docstring): information, no fix. Its
    explanation replaces the register advice, which it contradicts."""
    total = sum(m.w_total() for m in members)
    cross = sum(m.w_out.get(label, 0.0) for m in members for label in _CROSS_THREAD)
    share = format_share(cross / total if total else 0.0) + " of its bytes"
    draft.message = draft.message.replace(" — keep it in a register", "", 1)  # what the note below says cannot be
    if _only_read_by_others(view, members):
        draft.message += _READ_BETWEEN_WORDS.format(share=share)
        draft.explanation = _READ_BETWEEN_NOTE
        draft.metrics["read_between"] = True
    else:
        draft.message += _SPLIT_WORDS.format(share=share)
        draft.explanation = _SPLIT_NOTE
    draft.fix_kind = "none"
    draft.tier = TIER_INFORMATION
    draft.metrics["lane_dependent"] = True
    return draft


_STRONG_READ_NOTE = (
    "This load is strong in the SASS (.STRONG: a volatile access, or a relaxed or acquire one): the compiler must "
    "issue every read, and __restrict__ does not change that. The program may rely on it to see other threads' "
    "writes (a value other threads update with atomics, a flag polled in a loop), and then the reload is the point. "
    "Only if this thread need not see writes made in between, read the value once into a local variable and reuse "
    "it, or drop the volatile qualifier. "
)
_STRONG_WAW_NOTE = (
    "This store is strong in the SASS (.STRONG: a volatile access, or a relaxed or release one): the compiler must "
    "issue every store, and __restrict__ does not change that. Another thread may read the intermediate value "
    "while this one runs (a progress flag, a value published to other blocks), which this profile cannot see as a "
    "reuse. Only if nobody reads it in between, keep the value in a register and store it once. "
)
_STRONG_WORDS = " — a volatile (strong) {what}: every {verb} reaches memory by design, whatever the pointers alias"


def _as_strong(draft: Draft, read: bool) -> Draft:
    """The finding of a strong (volatile) access's re-reads or overwritten stores (memory_order.py): they are the
    program's to keep unless it needs no other thread's view in between: information, no fix. Its message was
    built without the register or __restrict__ advice (_read_draft, _waw_draft)."""
    draft.explanation = _STRONG_READ_NOTE if read else _STRONG_WAW_NOTE
    draft.fix_kind = "none"
    draft.tier = TIER_INFORMATION
    draft.metrics["strong"] = True
    return draft


# A reload's re-reads count as an earlier loop's when at least this share of its bytes come from origins in a sibling
# loop that ran at least this many times per warp (module docstring).
EARLIER_LOOP_SHARE = 0.9
EARLIER_LOOP_VALUES = MIN_VALUES
_EARLIER_LOOP_NOTE = (
    "This load re-reads values the same thread loaded or stored in an earlier loop, one per iteration of that loop, "
    "so a register cannot keep them between the two loops. Fusing the loops removes the re-reads where the "
    "dependences allow it (the second pass must not need the first pass's result); otherwise, if the values of a "
    "block fit, keep them on chip (shared memory) between the passes, or accept the second pass's traffic. "
)
_EARLIER_LOOP_WORDS = (
    " — an earlier loop loaded them (about {values:.0f} values per thread): no register can keep them between the loops"
)


def _earlier_loop_origins(view: KernelView, node: Node, origins: dict[int, float]) -> list[Node] | None:
    """The origins, in a loop beside the load's own, that gave `node` at least EARLIER_LOOP_SHARE of its re-read
    bytes; None when the report has no loops for its function or they gave less."""
    loops = (view.raw.get("loops") or {}).get(node.function)
    own = innermost(loops, node.pc) if loops else None
    if own is None:
        return None
    found, moved = [], 0.0
    for origin_id, moved_bytes in origins.items():
        origin = view.nodes[origin_id]
        theirs = innermost(loops, origin.pc) if origin.function == node.function else None
        if theirs is None or own[0] <= origin.pc <= own[1] or theirs[0] <= node.pc <= theirs[1]:
            continue
        found.append(origin)
        moved += moved_bytes
    total = sum(origins.values())
    return found if total > 0 and moved >= EARLIER_LOOP_SHARE * total else None


def _as_earlier_loop(draft: Draft, values: float) -> Draft:
    """The finding of loads re-reading an earlier loop's values (module docstring): information, no fix."""
    draft.message = draft.message.replace(" — keep it in a register", "", 1) + _EARLIER_LOOP_WORDS.format(values=values)
    draft.explanation = _EARLIER_LOOP_NOTE + draft.explanation
    draft.fix_kind = "none"
    draft.tier = TIER_INFORMATION
    draft.metrics["earlier_loop_values"] = values
    return draft


_FRAME_NOTE = (
    "These loads restore registers that a called function saved to its stack frame (local memory) on entry and "
    "loads back before it returns: the ABI's callee-saved registers, stored because the function is called rather "
    "than inlined (recursion, a virtual or indirect call, a call into another file under -rdc) and uses them. No "
    "register can keep them: they are spilled because registers are in use. What removes them is fewer calls: "
    "let the compiler inline the function (__forceinline__; across files, link-time optimization with -dlto), make "
    "a recursion iterative with an explicit stack, or devirtualize the call."
)
_TOOLKIT_FRAME_NOTE = (
    "These loads restore registers that one of CUDA's own routines (a slow path of its math library, such as "
    "double-precision division with directed rounding) saved to its stack frame on entry. Nothing in the program's "
    "source writes them; only calling that routine less often removes them."
)
_TOOLKIT_ROUTINES = ("__cuda_", "__internal_")


def _callee_name(function: str) -> str:
    """A called function's short name from its line-info name (`kernel$callee(args)` for a clone placed after its
    kernel): the callee, without parameters or return type."""
    name = function.rsplit("$", 1)[-1].split("(", 1)[0]
    depth, start = 0, 0
    for index, char in enumerate(name):
        depth += (char == "<") - (char == ">")
        if char == " " and depth == 0:
            start = index + 1
    return name[start:] or function


def _source_function(node: Node) -> str:
    """The function an access belongs to as its line info names it (demangled), else its symbol."""
    return str((node.raw.get("source") or {}).get("function") or node.function)


def _as_frame_restores(draft: Draft, members: list[Node]) -> Draft:
    """The finding of a called function's register restores (analyzer/frame_saves.py): the call's cost, no fix."""
    # the saves' line info names the function (a restore's may name a helper inlined at its return)
    saves = [o for o in draft.origins if o.raw.get("frame") == "save"] or members
    callee = _callee_name(min(_source_function(n) for n in saves))
    toolkit = callee.startswith(_TOOLKIT_ROUTINES)
    draft.message = draft.message.replace(
        " — keep it in a register",
        f" — {len(members)} register{'s' if len(members) > 1 else ''} that {callee} saves on entry and restores "
        "before it returns (a call, not inlined)",
        1,
    )
    draft.explanation = _TOOLKIT_FRAME_NOTE if toolkit else _FRAME_NOTE
    draft.fix_kind = "none"
    if toolkit:
        draft.tier = TIER_INFORMATION
    draft.metrics["frame_restores"] = len(members)
    return draft


_ACROSS_CALL_NOTE = (
    "This load reads, from local memory, a value the same thread stored in another function: one side of a call "
    "that was not inlined. A variable lives in local memory when its address crosses such a call (an out-parameter "
    "or a reference the callee writes, `bool pop(T &e)`) or when a structure is passed by value on the stack, and no "
    "register can keep it across the call. Return the value instead of writing it through a pointer, pass the "
    "structure's fields as separate arguments, or let the compiler inline the function (__forceinline__; across "
    "files, link-time optimization with -dlto)."
)


def _function_name(node: Node) -> str:
    """The short name of the function an access belongs to."""
    return _callee_name(_source_function(node))


def _across_call(view: KernelView, node: Node, origins: dict[int, float]) -> bool:
    """A local load every one of whose re-read values another function stored (module docstring)."""
    return (
        node.space == "local"
        and bool(origins)
        and all(view.nodes[o].space == "local" and view.nodes[o].function != node.function for o in origins)
    )


def _as_across_call(draft: Draft, members: list[Node]) -> Draft:
    """The finding of local re-reads of values another function stored: a call's argument traffic, no fix."""
    others = sorted({_function_name(o) for o in draft.origins} - {_function_name(m) for m in members})
    where = f"{_function_name(members[0])} and {', '.join(others) or 'a function it calls'}"
    draft.message = draft.message.replace(
        " — keep it in a register", f" — a value passed through the stack between {where} (a call, not inlined)", 1
    )
    draft.explanation = _ACROSS_CALL_NOTE
    draft.fix_kind = "none"
    draft.metrics["across_call"] = True
    return draft


def _thread_edges(view: KernelView) -> list[Edge]:
    return [e for e in view.edges if e.label == "thread" and e.src != e.dst and view.is_memory(e.dst)]


def _read_draft(
    view: KernelView,
    node: Node,
    by_kind: dict[str, float],
    origins: list[Node],
    suspects: list[Node],
    strong: bool = False,
) -> Draft:
    rar, raw = by_kind.get("rar", 0.0), by_kind.get("raw", 0.0)
    wasted = rar + raw
    fraction = min(1.0, wasted / node.w_total()) if node.w_total() else 0.0
    pattern = "redundant-rar" if rar >= raw else "redundant-raw"
    parts = []
    if rar:
        parts.append(f"{format_bytes(rar)} already read by the same thread (RAR)")
    if raw:
        parts.append(f"{format_bytes(raw)} the same thread wrote itself (RAW)")
    advice = _alias_text(suspects, "store") if suspects else " — keep it in a register"
    if strong:
        advice = _STRONG_WORDS.format(what="load", verb="read")
    message = f"re-reads {' and '.join(parts)}{places(origins)}{advice} ({format_share(fraction)} of this PC's traffic)"
    aliased = suspects and not strong  # __restrict__ does nothing for a volatile access
    explanation = (_ALIAS_READ_FIX if aliased else "") + _READ_FIX + (_LOCAL_NOTE if node.space == "local" else "")
    return Draft(
        pattern,
        [node],
        "thread",
        "register-promotion",
        explanation,
        message,
        waste_bytes=wasted,
        instructions=node.executions * fraction,
        wavefronts=node.wavefronts_total() * fraction if node.space == "shared" else 0.0,
        origins=origins,
        predicted=predicted_removal(node, fraction),
        metrics={
            "rar_bytes": rar,
            "raw_bytes": raw,
            "redundant_fraction": fraction,
            "alias_pcs": [] if strong else [n.pc for n in suspects],
        },
    )


def _waw_draft(
    view: KernelView, node: Node, dead: float, overwriters: list[Node], suspects: list[Node], strong: bool = False
) -> Draft:
    fraction = min(1.0, dead / node.w_total()) if node.w_total() else 0.0
    what = "a dead store" if fraction >= 0.999 else f"{format_share(fraction)} of its bytes are dead"
    advice = _alias_text(suspects, "load") if suspects else " — keep the value in a register and store once"
    if strong:
        advice = _STRONG_WORDS.format(what="store", verb="store")
    message = (
        f"stores {format_bytes(dead)} that the same thread overwrites{places(overwriters)} before any "
        f"read (WAW, {what}){advice}"
    )
    explanation = (_ALIAS_WAW_FIX if suspects and not strong else "") + _WAW_FIX
    return Draft(
        "redundant-waw",
        [node],
        "thread",
        "register-promotion",
        explanation,
        message,
        waste_bytes=dead,
        instructions=node.executions * fraction,
        wavefronts=node.wavefronts_total() * fraction if node.space == "shared" else 0.0,
        origins=overwriters,
        predicted=predicted_removal(node, fraction),
        metrics={
            "waw_bytes": dead,
            "dead_fraction": fraction,
            "alias_pcs": [] if strong else [n.pc for n in suspects],
        },
    )


def _suspects(view: KernelView, pairs: list[tuple[Node, Node]], between_type: str) -> list[Node]:
    """Alias suspects over (earlier, later) access pairs; none unless every pair has one (a pair without a
    suspect is redundant for another reason, which __restrict__ would not fix)."""
    found: dict[int, Node] = {}
    for first, last in pairs:
        suspects = alias_suspects(view, first, last, between_type)
        if not suspects:
            return []
        found.update((node.id, node) for node in suspects)
    return sorted(found.values(), key=lambda n: n.key)


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    reads: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    read_from: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))  # load -> origin -> bytes
    dead: dict[int, float] = defaultdict(float)
    overwriters: dict[int, set[int]] = defaultdict(set)
    covered: set[int] = set()  # findings' PCs with an edge whose covering access spans the whole word
    for edge in _thread_edges(view):
        u, v = view.nodes[edge.src], view.nodes[edge.dst]
        if u.type == "read" and v.type in ("read", "write"):
            if u.raw.get("async_copy") or v.raw.get("async_copy"):
                continue
            reads[u.id]["rar" if v.type == "read" else "raw"] += edge.bytes
            read_from[u.id][v.id] += edge.bytes
            if not _may_be_other_bytes(v):
                covered.add(u.id)
        elif u.type == "write" and v.type == "write":
            dead[v.id] += edge.bytes  # the finding sits on v, the store whose value died
            overwriters[v.id].add(u.id)
            if not _may_be_other_bytes(u):
                covered.add(v.id)
    drafts = []
    earlier = {i: found for i in reads if (found := _earlier_loop_origins(view, view.nodes[i], read_from[i]))}
    warps = warps_launched(view.raw)
    for line in group_by_line(view.nodes[i] for i in reads):  # unrolled copies of one load: one finding
        split = [m for m in line if _lane_dependent(m)]
        beside = [m for m in line if m.id in earlier and not _lane_dependent(m)]
        # what a thread would have to keep between the loops: the earlier loop's loads per warp
        values = sum({o.id: o.executions for m in beside for o in earlier[m.id]}.values()) / warps if warps else 0.0
        if values < EARLIER_LOOP_VALUES:
            beside = []  # a few values: registers can hold them, as for a reload in its origin's loop
        apart = {m.id for m in split} | {m.id for m in beside}
        # a called function's register restores: the call's cost, which no register or __restrict__ removes
        restores = [m for m in line if m.id not in apart and m.raw.get("frame") == "restore"]
        apart |= {m.id for m in restores}
        # ... and values passed through the stack between a caller and a function it calls, not inlined
        passed = [m for m in line if m.id not in apart and _across_call(view, m, read_from[m.id])]
        apart |= {m.id for m in passed}
        own = [m for m in line if m.id not in apart]
        for group in (own, split, beside, restores, passed):
            if not group:
                continue
            by_kind: dict[str, float] = defaultdict(float)
            for member in group:
                for kind, value in reads[member.id].items():
                    by_kind[kind] += value
            origins = sorted({view.nodes[i] for m in group for i in read_from[m.id]}, key=lambda n: n.key)
            # an earlier loop's values are too many for registers, whatever a store in between may alias
            pairs = (
                []
                if group is beside or group is restores or group is passed
                else [(view.nodes[i], m) for m in group for i in read_from[m.id]]
            )
            suspects = _suspects(view, pairs, "read") if pairs else []
            strong = all(m.strong for m in group)
            draft = _read_draft(view, merged_node(group), by_kind, origins, suspects, strong)
            if not any(m.id in covered for m in group):
                draft = _as_sub_word(draft)
            elif strong:
                draft = _as_strong(draft, read=True)
            elif group is beside:
                draft = _as_earlier_loop(draft, values)
            elif group is restores:
                draft = _as_frame_restores(draft, group)
            elif group is passed:
                draft = _as_across_call(draft, group)
            elif group is split and not suspects:  # a reload aliasing forces is __restrict__'s, whatever the lanes
                draft = _as_lane_dependent(draft, group, view)
            draft.nodes = group
            drafts.append(draft)
    for group in group_by_line(view.nodes[i] for i in dead):
        later = sorted({view.nodes[i] for m in group for i in overwriters[m.id]}, key=lambda n: n.key)
        suspects = _suspects(view, [(m, view.nodes[i]) for m in group for i in overwriters[m.id]], "write")
        strong = all(m.strong for m in group)
        draft = _waw_draft(view, merged_node(group), sum(dead[m.id] for m in group), later, suspects, strong)
        if not any(m.id in covered for m in group):
            draft = _as_sub_word(draft)
        elif strong:
            draft = _as_strong(draft, read=False)
        draft.nodes = group
        drafts.append(draft)
    return drafts
