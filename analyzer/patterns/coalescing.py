"""Poor Coalescing, paper section 3.3 II: R_coal(v) = E(Sector_v) / S_opt(v), S_opt = ceil(Lane·AccSize/32).

R_coal > 1 means the active lanes touch more 32-byte sectors than their bytes need; the worst case is
SecSize/AccSize (8 for 4-byte accesses). Reported above the `coalescing` threshold for global-memory PCs
(local memory is interleaved per lane by the hardware, shared memory has no sectors). The waste is the excess
sector traffic, Σ sectors − Σ S_opt over all executions, in bytes (× 32), and its share is of the sectors the
kernel's global accesses requested (basis "sectors"): as a share of lane-bytes, one uncoalesced 4-byte access
wastes 7 times its own traffic and saturated the share at 1 in kernels where it is a sideline (the breadth set's
review, session 46: ten coalescing warnings at the cap, a 224-byte kernel among them).

Addresses that follow the data (at least 90% of an access's requests with lanes on no stride, the engine's
`irregular`: a gather through an index array, a graph's neighbours, a slot an atomic returned) cannot be made
consecutive by indexing with threadIdx.x: the finding says so and what does help (a warp per row or vertex, so that
its lanes walk consecutive entries; data reordered for locality), `metrics.addresses_follow_data` true
(session 47's review: SHOC BFS's atomicMin on neighbours' costs and warpAggregatedAtomicsCG's scatter through the
slots an atomic returned were told to re-index).

One layout, one finding: a PC at least 90% of whose bytes the same thread last touched at other flagged PCs of
other lines fetches the sectors those PCs fetched, so coalescing them fixes it too. Such a follower joins the
finding of the origin that gave it most bytes, its sectors counted there: a reload (SHOC BFS's volatile
`cost[node_to_process]`, loaded at line 594 and again at 596, two warnings until session 47) and the store of a
read-modify-write (`X[i][j] = X[i][j] - ...`, PolyBench adi: the load and the store of one element, each a warning
of its own). A PC whose re-reads come from itself (a loop's next iteration) keeps its own finding: it is the first
touch of its data too; so does a reload of coalesced data (nothing else reports its sectors), and a store that
overwrites a flagged store (the overwritten one is dead, redundant-waw's to report, and goes; the overwrite stays).

One element, split into narrow accesses: a structure with no alignment beyond its widest member (cuda-samples
alignedTypes' `RGBA8_misaligned`, four unsigned chars) is loaded and stored one field at a time, so each field's PC
has lanes an element apart and looks uncoalesced (4 sectors for 1 byte a lane), although consecutive lanes access
consecutive elements and the fields together use every byte of those sectors. Evidence that PCs are fields of one
element: they belong to one statement (function, line, inline chain; any width), run the same requests with the same
lanes, and at least 90% of each one's bytes, but the first's, are the same thread's last access at another of them
(the rest of the 4-byte word the engine tracks); and each touches no more sectors than one access of their summed
width would (one more where an element straddles a sector). Such a finding tells to align the element type
(`__align__` of its size rounded up to a power of two) or use a vector type, counting what the one wide access
saves (`metrics.element_bytes`, `aligned_bytes`, `element_accesses`), not to re-index: session 48's review judged
the re-indexing advice wrong. A char column walk (lanes a row apart) touches more sectors than the wide access and
keeps it. Fields of a word or wider (LA32_misaligned's two ints) share no word, so nothing in the report tells
them from two arrays read at the same stride: they keep the general advice (a structure of arrays fixes them too).
The shadow is per word, so in practice the element is one word of narrower fields: a 2- or 3-byte element's fields
find their word last touched by a neighbouring lane, and a wider one splits into words that fail the sector test.
The SASS tells the others: where nodes carry their `address` (analyzer/operands.py), members of one element are
addressed from one base register at consecutive offsets (_addressed_elements), whatever their width; an element
wider than the widest access (a double4's two 16-byte halves) wastes nothing and gets no finding.
"""

from __future__ import annotations

import math

from reuselens.analyzer.patterns.finding import Draft, predicted_excess
from reuselens.analyzer.patterns.text import count, format_bytes, loaded_values
from reuselens.analyzer.patterns.view import (
    COLD,
    SECTOR_BYTES,
    KernelView,
    Node,
    dist_mean,
    groups_with_followers,
    line_key,
    merge_groups,
    merged_node,
    origins_of,
)

PATTERNS = {"poor-coalescing": "Poorly coalesced global access"}

_FIX = (
    "The lanes of a warp touch more 32-byte sectors than the bytes they use, so most of every fetched sector "
    "is thrown away. Make consecutive lanes access consecutive addresses: index with threadIdx.x in the "
    "fastest-varying dimension, switch an array of structures to a structure of arrays, or stage a tile "
    "through shared memory with coalesced loads and read it transposed from there. Where each thread walks a row "
    "of its own (a matrix-vector product or a row reduction: the row's index is a loop or a recurrence, which "
    "threadIdx.x cannot take), give each warp a row, its lanes reading consecutive elements and combining their "
    "partial results with __shfl_xor_sync, or store the matrix transposed so that a thread's row is a column "
    "(paper 3.3 II)."
)


_DATA_FIX = (
    "The lanes of a warp touch more 32-byte sectors than the bytes they use, and their addresses come from data "
    "the kernel loaded (an index array, a graph's neighbour list, a slot an atomic returned), so no change of "
    "the indexing arithmetic makes consecutive lanes access consecutive addresses. What helps: give a warp (or a "
    "group of lanes) one row, vertex or bucket, so that its lanes walk consecutive entries of it; reorder the data "
    "so that what neighbouring threads touch lies together (sort the keys, renumber the graph's vertices by "
    "locality, e.g. reverse Cuthill-McKee){read_only} (paper 3.3 II)."
)
_READ_ONLY_PATH = "; or, for read-only data reused nearby, load through the read-only path (const __restrict__, __ldg)"


def _written_in_kernel(view: KernelView, members: list[Node]) -> bool:
    """Whether the kernel itself writes what the members access (an atomic among them; a load of what a store or
    atomic of the same launch wrote; a store or atomic after the load at its addresses): then the read-only path
    (__ldg, const __restrict__), whose cache does not see the kernel's own writes, must not serve it (SHOC BFS
    (UIUC)'s gather of the costs its atomicMin lowers; session 54's review)."""
    if any(m.type != "read" for m in members):
        return True
    return any(
        any(e.label != COLD and e.kind_count("raw") > 0 for e in view.out_edges.get(m.id, ()))
        or any(view.nodes[e.src].type in ("write", "atomic") for e in view.in_edges.get(m.id, ()))
        for m in members
    )


_DATA_STORE_FIX = (
    "The lanes of a warp store to more 32-byte sectors than the bytes they write, and their addresses come from data "
    "the kernel loaded or computed (a slot an atomic returned, a bucket, a scatter through an index array), so no "
    "change of the indexing arithmetic makes consecutive lanes write consecutive addresses, and the read-only path "
    "does not apply to stores. What helps: group the stores by destination first, staging the block's elements in "
    "shared memory in destination order (a block-local partition or sort) and writing each destination's run with "
    "consecutive lanes, or sort the work by destination before the kernel. Where lanes of one destination already "
    "claim consecutive slots, what is left is how many destinations a warp's lanes write, which the data's order "
    "decides (paper 3.3 II)."
)


def _draft(view: KernelView, node: Node, ratio: float, members: list[Node], origins: list[Node]) -> Draft:
    excess = max(0.0, node.sectors_total() - node.sectors_ideal_total())
    predicted = predicted_excess(members, "global", "sectors", lambda m: m.sectors_total() - m.sectors_ideal_total())
    mean_sectors = dist_mean(node.raw.get("sectors"))
    ideal = node.sectors_ideal_total() / node.requests if node.requests else 0.0
    follows_data = all(m.addresses_follow_data() for m in members)
    scatter = follows_data and all(m.type == "write" for m in members)
    loaded = f" (computed from {loaded_values(origins)})" if follows_data and origins else ""
    if scatter:
        advice = (
            f"the addresses come from the data{loaded or ' (a scatter)'}: "
            "stage the stores by destination in shared memory"
        )
    elif follows_data:
        advice = f"the addresses come from loaded data{loaded}: give a warp one row or vertex, or reorder the data"
    else:
        advice = "make consecutive lanes access consecutive addresses"
    message = (
        f"touches {mean_sectors:.1f} sectors per warp access where {ideal:.1f} would do "
        f"(R_coal {ratio:.2f}): {count(excess)} extra sector requests ({format_bytes(excess * SECTOR_BYTES)}) "
        f"— {advice}"
    )
    metrics = {"R_coal": ratio, "sectors_mean": mean_sectors, "sectors_ideal_mean": ideal, "excess_sectors": excess}
    if follows_data:
        metrics["addresses_follow_data"] = True
    if loaded:
        metrics["address_from"] = sorted({origin.pc for origin in origins})
    return Draft(
        "poor-coalescing",
        [node],
        None,
        "coalescing",
        _DATA_STORE_FIX
        if scatter
        else _DATA_FIX.format(read_only="" if _written_in_kernel(view, members) else _READ_ONLY_PATH)
        if follows_data
        else _FIX,
        message,
        waste_bytes=excess * SECTOR_BYTES,
        basis="sectors",
        predicted=predicted,
        metrics=metrics,
    )


# Split elements (module docstring): a field's PC joins its siblings when at least this share of its bytes are the
# same thread's last access at them, and one access per lane moves at most WIDEST_ACCESS bytes (LDG.128, STG.128).
SIBLING_SHARE = 0.9
WIDEST_ACCESS = 16

_ELEMENT_FIX = (
    "Each thread {verb} one small structure field by field: its type is aligned only to its widest member (a struct "
    "of chars or shorts), so the compiler splits every copy of it into one narrow load or store per field. "
    "Consecutive lanes already access consecutive elements, and the fields together use every byte of the sectors "
    "they fetch, but each field requests all of them again. Align the type to its size rounded up to a power of two "
    "(`typedef struct __align__(4) {{ unsigned char r, g, b, a; }} RGBA8;`) or use a built-in vector type (uchar4, "
    "short2, int4, ...), so that one access moves the whole element; re-indexing or a structure of arrays is not "
    "needed (paper 3.3 II)."
)


def _wide_sectors(node: Node, width: int) -> float:
    """Σ S_opt of the PC's executions were each lane's access `width` bytes wide."""
    return float(sum(math.ceil(lanes * width / SECTOR_BYTES) * n for lanes, n in node.raw.get("lanes") or ()))


def _split_elements(view: KernelView, firing: list[Node]) -> list[list[Node]]:
    """Sets of firing PCs that access one element field by field (module docstring), each in (function, pc) order."""
    nodes = [n for n in firing if n.type in ("read", "write") and line_key(n, sized=False) is not None]
    shape = {n.id: (line_key(n, sized=False), n.requests, n.raw.get("lanes")) for n in nodes}
    index = {n.id: i for i, n in enumerate(nodes)}
    joined = []
    for i, node in enumerate(nodes):
        by_sibling: dict[int, float] = {}
        for edge in view.out_edges.get(node.id, ()):
            if edge.label == "thread" and edge.dst != node.id and shape.get(edge.dst) == shape[node.id]:
                by_sibling[index[edge.dst]] = by_sibling.get(index[edge.dst], 0.0) + edge.bytes
        if by_sibling and sum(by_sibling.values()) >= SIBLING_SHARE * node.w_total():
            joined += [(i, j) for j in by_sibling]
    elements = []
    for members in merge_groups([[n] for n in nodes], joined):
        width = sum(m.size for m in members)
        # one access of the whole element touches what each field touches: the lanes' stride is the element's
        if (
            len(members) > 1
            and width <= WIDEST_ACCESS
            and all(m.sectors_total() <= _wide_sectors(m, width) + m.requests for m in members)
        ):
            elements.append(members)
    return elements


def _element_draft(node: Node, ratio: float, members: list[Node], elements: list[list[Node]]) -> Draft:
    """The finding of split elements: align the type; what it saves is the sectors and requests beyond one aligned
    access per element."""
    sizes = [m.size for m in elements[0]]
    width = sum(sizes)
    aligned = 1 << (width - 1).bit_length()  # __align__ takes a power of two; the type's size rounds up to it
    fields = {m.id: len(e) for e in elements for m in e}
    wide = sum(_wide_sectors(e[0], aligned) for e in elements)
    excess = max(0.0, node.sectors_total() - wide)
    predicted = predicted_excess(
        members, "global", "sectors", lambda m: m.sectors_total() - _wide_sectors(m, aligned) / fields[m.id]
    )
    predicted.update(predicted_excess(members, "global", "requests", lambda m: m.requests * (1 - 1 / fields[m.id])))
    verb = "reads" if node.type == "read" else "writes"
    message = (
        f"{verb} each {width}-byte element in {len(sizes)} accesses ({'+'.join(map(str, sizes))} bytes), each "
        f"touching the same {dist_mean(node.raw.get('sectors')):.1f} sectors per warp access (R_coal {ratio:.2f}): "
        f"{count(excess)} extra sector requests ({format_bytes(excess * SECTOR_BYTES)}) against one aligned "
        f"{aligned}-byte access — align the element's type (`__align__({aligned})`) or use a {aligned}-byte vector "
        "type; its lanes are consecutive already"
    )
    metrics = {
        "R_coal": ratio,
        "sectors_mean": dist_mean(node.raw.get("sectors")),
        "excess_sectors": excess,
        "element_bytes": width,
        "aligned_bytes": aligned,
        "element_accesses": len(sizes),
    }
    return Draft(
        "poor-coalescing",
        members,
        None,
        "coalescing",
        _ELEMENT_FIX.format(verb=verb),
        message,
        waste_bytes=excess * SECTOR_BYTES,
        basis="sectors",
        predicted=predicted,
        metrics=metrics,
    )


def _contiguous_runs(nodes: list[Node]) -> list[list[Node]]:
    """PCs of one base register as elements: in program order, an offset met again starts another element (the
    register was set anew: an unrolled copy's element), and within one, runs of offsets each where the last ends."""
    offset_of = {node.id: node.raw["address"]["offset"] for node in nodes}
    chunks: list[list[Node]] = [[]]
    seen: set[int] = set()
    for node in sorted(nodes, key=lambda n: n.key):
        if offset_of[node.id] in seen:
            chunks.append([])
            seen = set()
        chunks[-1].append(node)
        seen.add(offset_of[node.id])
    runs = []
    for chunk in chunks:
        chunk.sort(key=lambda n: offset_of[n.id])
        runs.append([chunk[0]])
        for node in chunk[1:]:
            last = runs[-1][-1]
            if offset_of[node.id] == offset_of[last.id] + last.size:
                runs[-1].append(node)
            else:
                runs.append([node])
    return runs


def _addressed_elements(firing: list[Node]) -> tuple[list[list[Node]], set[int]]:
    """Elements read or written member by member, told by their SASS (the report's `address`, analyzer/operands.py):
    PCs of one statement that run the same requests with the same lanes, addressed from one base register at
    consecutive offsets (each where the one before ends), and whose lanes are one element apart (each touches the
    sectors one access of the element's width would, within one a request). Returns the elements of at most
    WIDEST_ACCESS bytes, which one aligned access could move, and the PCs of wider ones already read in accesses of
    that width (SHOC scan's double4: two 16-byte halves, which together fetch exactly the element's sectors: no
    waste). The base register must be the same number set at the same place (`defined_at`): one register number
    reused for two arrays, or for two iterations, makes no element."""
    by_base: dict[tuple, list[Node]] = {}
    for node in firing:
        address = node.raw.get("address") or {}
        key = line_key(node, sized=False)
        if key is not None and node.type in ("read", "write") and isinstance(address.get("offset"), int):
            lanes = tuple(tuple(x) for x in node.raw.get("lanes") or ())
            base = (address.get("register"), address.get("defined_at"))  # one register number, set at one place
            by_base.setdefault((key, node.requests, lanes, base), []).append(node)
    elements: list[list[Node]] = []
    wider: set[int] = set()
    for nodes in by_base.values():
        for members in _contiguous_runs(nodes):
            width = sum(m.size for m in members)
            if len(members) < 2 or any(abs(m.sectors_total() - _wide_sectors(m, width)) > m.requests for m in members):
                continue
            if width <= WIDEST_ACCESS:
                elements.append(sorted(members, key=lambda n: n.key))
            elif all(m.size >= WIDEST_ACCESS for m in members):  # already the widest accesses: nothing to save
                wider.update(m.id for m in members)
            # a wider structure read in narrower members (eight floats) keeps the general advice
    return elements, wider


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    firing = [n for n in view.memory_nodes() if n.space == "global" and n.r_coal() > settings["coalescing"]]
    addressed, wider = _addressed_elements(firing)
    firing = [n for n in firing if n.id not in wider]  # split by the hardware: their sectors are the element's
    told = {m.id for members in addressed for m in members}
    elements = addressed + _split_elements(view, [n for n in firing if n.id not in told])
    element_of = {m.id: i for i, members in enumerate(elements) for m in members}
    groups = groups_with_followers(view, firing)
    # line_key tells widths apart, so fields of different widths (a short and two chars) are separate groups: one
    # element, one finding
    first: dict[int, int] = {}
    joined = []
    for index, group in enumerate(groups):
        for member in group:
            if member.id in element_of:
                joined.append((first.setdefault(element_of[member.id], index), index))
    drafts = []
    for group in merge_groups(groups, joined):
        node = merged_node(group)
        own = {element_of.get(m.id) for m in group}
        split = [elements[i] for i in sorted(own)] if None not in own else []
        if split and len({sum(m.size for m in e) for e in split}) == 1:
            draft = _element_draft(node, node.r_coal(), group, split)
        else:
            draft = _draft(view, node, node.r_coal(), group, origins_of(view, group))
        draft.nodes = group
        drafts.append(draft)
    return drafts
