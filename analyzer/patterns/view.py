"""Read-only view of one report.json kernel (docs/report-format.md) with the paper's per-node metrics.

Every quantity here is a definition of the cuVein paper (shared/seeds/000_…): W_out(v, l) and W_total(v)
(section 3.2.2, "Weighted Out-Degree"), closed subgraphs (3.2.1), Reuse Intensity (3.2.2), r(l) (3.3 I),
R_coal (3.3 II) and R_conf (3.3 II, Bank Conflict). The formulas live in analyzer/graph.py (the PCDepGraph
as a networkx MultiDiGraph); this module delegates to it and adds what the rules need on top: stable
(function, pc) keys, a canonical order independent of the engine's listing order, and input validation.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from reuselens.analyzer import configurations, graph
from reuselens.analyzer.errors import ReportError
from reuselens.analyzer.toolkit_paths import user_frame

COLD = "cold"
LABELS = ("cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid")
# Labels whose two accesses come from different threads (section 6.3: cross-thread reuse edges).
CROSS_THREAD = ("warp_same_inst", "warp_diff_inst", "block", "grid")
SECTOR_BYTES = 32  # hardware sector size (paper 3.3 II, SecSize)


# Node.addresses_follow_data: the share of a node's requests that must follow no stride, or the share of its
# executions whose address count its active lanes do not explain (Node.data_indexed_share).
FOLLOWS_DATA = 0.9
FOLLOWS_DATA_INDEXED = 0.5


def mode_share(dist: Iterable[Iterable[float]] | None) -> float:
    """The share of executions at a distribution's commonest value (1 for an empty one)."""
    counts = [float(c) for _v, c in dist or ()]
    return max(counts) / sum(counts) if counts and sum(counts) > 0 else 1.0


def dist_total(dist: Iterable[Iterable[float]] | None) -> float:
    """Sum of value*count over a [[value, count], ...] distribution."""
    return float(sum(value * count for value, count in dist or ()))


def dist_count(dist: Iterable[Iterable[float]] | None) -> float:
    return float(sum(count for _value, count in dist or ()))


def dist_mean(dist: Iterable[Iterable[float]] | None) -> float:
    """E(X) of a distribution, 0 for an empty one."""
    pairs = list(dist or ())
    count = dist_count(pairs)
    return dist_total(pairs) / count if count else 0.0


def dist_mode(dist: Iterable[Iterable[float]] | None) -> float:
    """Mode(X); ties go to the smaller value so the result does not depend on list order."""
    pairs = sorted((float(v), float(c)) for v, c in dist or ())
    if not pairs:
        return 0.0
    return max(pairs, key=lambda vc: (vc[1], -vc[0]))[0]


@dataclass(eq=False)  # identity semantics: one Node object per PC, usable in sets
class Node:
    """One memory PC with the attributes of paper section 3.2."""

    id: int
    raw: dict[str, Any]
    w_out: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def __post_init__(self) -> None:
        raw = self.raw
        # Plain attributes, read once: the rules look at these for every node and edge many times.
        self.function: str = str(raw.get("function") or "")
        self.pc: int = int(raw.get("pc") or 0)
        self.space: str | None = raw.get("space")
        self.type: str = str(raw.get("type") or "")
        self.size: int = int(raw.get("size") or 0)
        executions = raw.get("executions")
        self.executions: int = int(executions) if executions is not None else int(dist_count(raw.get("lanes")))
        # Global requests: the executions that reached the L1, i.e. all but a cp.async's global halves whose lanes
        # were all zero fills (docs/engine.md "Node distributions"), which enter no distribution but `lanes`.
        sectors = raw.get("sectors")
        self.requests: int = (
            int(dist_count(sectors)) if self.space == "global" and sectors is not None else self.executions
        )
        # What identifies the instruction across runs: (function, pc offset). Node ids may not.
        self.key: tuple[str, int] = (self.function, self.pc)
        # A volatile, relaxed or acquire global access (the report's `strong`, analyzer/memory_order.py).
        self.strong: bool = bool(raw.get("strong"))

    def w_total(self) -> float:
        """W_total(v): the sum of W_out(v, l) over all labels (section 3.2.2)."""
        return float(sum(self.w_out.values()))

    def lane_mode(self) -> float:
        return dist_mode(self.raw.get("lanes"))

    def address_mode(self) -> float:
        return dist_mode(self.raw.get("addresses"))

    def addresses_follow_data(self) -> bool:
        """Whether the node's global addresses come from loaded values (a gather or scatter through an index array,
        which no indexing arithmetic coalesces and no shuffle pattern can serve): at least FOLLOWS_DATA of its
        requests had lanes whose addresses follow no stride (the engine's `irregular`, docs/engine.md "Node
        distributions"), or at least FOLLOWS_DATA_INDEXED of its executions touched a number of addresses their
        active lanes do not explain (data_indexed_share). The engine's test leaves lanes it cannot pair unjudged,
        so a gather whose index array repeats and clusters its columns (Parboil spmv's `x_vec[d_index[j]]`: 17 to 32
        addresses per warp, 10% judged irregular) passes only the second test. Where the report names the loads
        the address was computed from (`address_from`, analyzer/address_origin.py), the SASS has said it already:
        loaded indices that happen to follow a stride (SHOC BFS (UIUC)'s frontier) still make a gather."""
        if self.space != "global" or self.requests <= 0:
            return False
        if self.raw.get("address_from"):  # the SASS computes the address from loaded values (address_origin.py)
            return True
        irregular = self.raw.get("irregular") or 0
        return irregular >= FOLLOWS_DATA * self.requests or self.data_indexed_share() >= FOLLOWS_DATA_INDEXED

    def data_indexed_share(self) -> float:
        """A lower bound on the share of the node's executions whose address count their active lane count does not
        explain: the `lanes` mode's share less the `addresses` mode's (0 when the addresses follow the lanes). Were
        the addresses a function of the active lanes alone, the executions at the commonest lane count would share
        one address count."""
        lanes, addresses = self.raw.get("lanes"), self.raw.get("addresses")
        if not lanes or not addresses:  # a distribution the report left out says nothing either way
            return 0.0
        return max(0.0, mode_share(lanes) - mode_share(addresses))

    def sectors_total(self) -> float:
        return dist_total(self.raw.get("sectors"))

    def sectors_ideal_total(self) -> float:
        """Σ S_opt over instances, S_opt = ceil(Lane·AccSize / SecSize) (section 3.3 II)."""
        return dist_total(self.raw.get("sectors_ideal"))

    def r_coal(self) -> float:
        """R_coal(v) = E(Sector_v) / S_opt(v) (section 3.3 II); 0 when undefined."""
        return graph.r_coal(self.raw) or 0.0

    def wavefronts_total(self) -> float:
        return dist_total(self.raw.get("wavefronts"))

    def wavefronts_ideal_total(self) -> float:
        """Σ ceil(footprint words / 32) over instances, per lane group (section 3.3 II)."""
        return dist_total(self.raw.get("wavefronts_ideal"))

    def r_conf(self) -> float:
        """R_conf(v) = E(Wave_v) / E(Wave_ideal_v) (section 3.3 II, Bank Conflict); 0 when undefined."""
        return graph.r_conf(self.raw) or 0.0

    def source_text(self) -> str | None:
        """'file:line' as messages name it: the line a developer reads (toolkit_paths.user_frame: the app's call
        site of an access inlined from a toolkit header, as the editor and the CLI place findings)."""
        source = self.raw.get("source") or {}
        if not source.get("file"):
            return None
        source = user_frame(source)
        if not source.get("file"):
            return None
        name = str(source["file"]).rsplit("/", 1)[-1]
        return f"{name}:{source['line']}" if source.get("line") else name


@dataclass(frozen=True)
class Edge:
    """e = (PC_cur -> PC_prev): `src` is the current access, `dst` its reuse origin (section 3.2.1)."""

    src: int
    dst: int
    label: str
    bytes: float
    accesses: float
    raw: dict[str, Any]

    def kind_count(self, kind: str) -> float:
        return float(self.raw.get(kind) or 0)


# Bytes per launch that stay in L2 where run.json does not give its size: half the smallest L2 of a data-centre GPU
# since Volta (T4: 4 MB). What fits in half the L2 is served from it, whatever else the kernel streams past.
FITS_IN_L2 = 2 << 20


class KernelView:
    """Nodes, edges and barriers of one kernel dict, indexed for the pattern rules."""

    def __init__(self, kernel: dict[str, Any]) -> None:
        if not isinstance(kernel, dict):
            raise ReportError("kernel entry is not an object")
        for key in ("nodes", "edges"):
            if not isinstance(kernel.get(key), list):
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: '{key}' is missing or not a list")
        self.raw = kernel
        # Barrier source lines another kernel of the run keeps (patterns.barriers, find_report_findings).
        self.pinned_barrier_lines: frozenset[tuple] = frozenset()
        # The L2 cache of the GPU the run used, where run.json says (find_report_findings); None: not known.
        self.l2_bytes: int | None = None
        # Its architecture ("sm_90"), where run.json says; None: not known.
        self.gpu_arch: str | None = None
        # The bytes of each of its PCs' first touches that a later kernel, or a later launch of this one, reads again
        # first: (function, pc) -> (bytes, the short names of those kernels) (find_report_findings, from the run's
        # cold edges that name this kernel as the data's last toucher); empty where the run is not known.
        self.read_again_later: dict[tuple[str, int], tuple[float, frozenset[str]]] = {}
        # What a rule computed once for this kernel and needs again (the barrier rule's kept set: the report pass
        # reads it to pin lines, then the rule itself).
        self.memo: dict[str, Any] = {}
        self.nodes: dict[int, Node] = {}
        for entry in kernel["nodes"]:
            node = Node(int(entry["id"]), entry)
            self.nodes[node.id] = node
        self.edges: list[Edge] = []
        self.out_edges: dict[int, list[Edge]] = defaultdict(list)
        # The edges whose origin is a memory PC: the later accesses that reused its bytes (cold edges end at node 0).
        self.in_edges: dict[int, list[Edge]] = defaultdict(list)
        for entry in kernel["edges"]:
            label = entry.get("label")
            if label not in LABELS:
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: edge label {label!r} is not one of {LABELS}")
            src, dst = int(entry["from"]), int(entry["to"])
            if src not in self.nodes or (dst not in self.nodes and dst != 0):
                raise ReportError(f"kernel {kernel.get('mangled', '?')}: edge {src}->{dst} names a missing node")
            self.edges.append(
                Edge(src, dst, label, float(entry.get("bytes") or 0), float(entry.get("accesses") or 0), entry)
            )
        # W_out(v, l) for every node and label, summed once (graph.weights_by_node); reuse_intensity reads it too
        self.weights = graph.weights_by_node(kernel["edges"])
        for src, by_label in self.weights.items():
            if src != graph.COLD_NODE:
                self.nodes[src].w_out.update((label, float(b)) for label, b in by_label.items())
        # A canonical order independent of how the engine listed nodes and edges (stability across runs).
        self.edges.sort(key=lambda e: (self.nodes[e.src].key, self._key_of(e.dst), e.label))
        for edge in self.edges:
            self.out_edges[edge.src].append(edge)
            if edge.dst != 0:
                self.in_edges[edge.dst].append(edge)
        self.barriers: list[dict[str, Any]] = list(kernel.get("barriers") or [])

    def _key_of(self, node_id: int) -> tuple[str, int]:
        node = self.nodes.get(node_id)
        return node.key if node is not None and node.space is not None else ("", -1)

    def memory_nodes(self) -> list[Node]:
        """All memory PCs (not the Cold Miss node), in (function, pc) order."""
        return sorted((n for n in self.nodes.values() if n.space is not None and n.id != 0), key=lambda n: n.key)

    def traffic_bytes(self) -> float:
        """The kernel's traffic: Σ W_total(v) over memory PCs = Σ w(e) (lane-bytes)."""
        return float(sum(node.w_total() for node in self.memory_nodes()))

    def l2_room(self) -> int:
        """The bytes per launch the GPU's L2 keeps: half of it where run.json gives its size, else FITS_IN_L2."""
        return self.l2_bytes // 2 if self.l2_bytes else FITS_IN_L2

    def footprint_per_launch(self, nodes: Iterable[Node]) -> float:
        """The unique bytes `nodes` touch in one launch: their cold bytes over the merged launches, per launch
        (cold edges count first touches per launch, docs/engine.md)."""
        return sum(node.w_out.get(COLD, 0.0) for node in nodes) / self.launch_count()

    @functools.cached_property
    def global_footprint_per_launch(self) -> float:
        """The global bytes one launch of the kernel first touches, all its objects together."""
        return self.footprint_per_launch(n for n in self.memory_nodes() if n.space == "global")

    @functools.cached_property
    def executed_barrier_kinds(self) -> frozenset[str]:
        """The kinds of the kernel's barriers that executed (block, warp, mbarrier, ...)."""
        return frozenset(str(b.get("kind")) for b in self.barriers if int(b.get("executions") or 0) > 0)

    def global_sectors(self) -> float:
        """The 32-byte sectors the kernel's global accesses requested, the basis of sector-measured waste."""
        return float(sum(node.sectors_total() for node in self.memory_nodes() if node.space == "global"))

    def shared_wavefronts(self) -> float:
        """The kernel's shared-memory wavefronts (section 3.2.2 rule), the basis of wavefront-measured waste."""
        return float(sum(node.wavefronts_total() for node in self.memory_nodes() if node.space == "shared"))

    def is_memory(self, node_id: int) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and node.space is not None and node_id != 0

    @functools.cached_property
    def _subgraphs(self) -> list[list[Node]]:
        groups = [
            sorted((self.nodes[i] for i in ids if self.is_memory(i)), key=lambda n: n.key)
            for ids in graph.kernel_closed_subgraphs(self.raw)
        ]
        return sorted((members for members in groups if members), key=lambda members: members[0].key)

    def closed_subgraphs(self) -> list[list[Node]]:
        """Minimal closed subgraphs (section 3.2.1), each in (function, pc) order, ordered by first member.

        graph.closed_subgraphs gives the connected components of the non-Cold-Miss edges: a set is closed when
        every non-Cold-Miss edge of its nodes stays inside it, and the smallest such sets are these components.
        """
        return [list(members) for members in self._subgraphs]

    def subgraph_edges(self, members: Iterable[Node]) -> list[Edge]:
        """The out-edges of the given nodes (for a closed subgraph: all its edges), in canonical order."""
        return [edge for node in sorted(members, key=lambda n: n.key) for edge in self.out_edges.get(node.id, ())]

    def config_key(self) -> str:
        """Kernel identity across runs: mangled name plus launch configuration (configurations.identity)."""
        return f"{self.raw.get('mangled') or self.raw.get('name') or '?'}|{configurations.identity(self.raw)}"

    def launch_count(self) -> int:
        """Launches merged into this entry (the kernel's launches, of any configuration). Cold edges count first
        touches per launch (docs/engine.md), so a footprint summed over the entry is this many times one
        launch's (of a launch of average size, when grids differ)."""
        return max(len(self.raw.get("launches") or ()), 1)

    def block_instances(self) -> int:
        """Thread blocks run over the merged launches, whatever their grids."""
        return configurations.block_instances(self.raw)


def reuse_ratios(view: KernelView, members: Iterable[Node], labels: Iterable[str]) -> dict[str, float]:
    """r(l) over the subgraph's nodes (section 3.3 I, graph.ratio) for several labels at once; 0 without reuse."""
    by_label = graph.bytes_by_label(view.weights, (node.id for node in members))
    return {label: graph.ratio(by_label, label) or 0.0 for label in labels}


def l2_reuse_distance(view: KernelView, members: Iterable[Node]) -> float | None:
    """The distinct bytes the kernel touches in L2 between two reads of one line of `members` by other blocks, per
    launch, when each line's reads are spread evenly over the launch: the object's other lines (its footprint F,
    each read about as often) and the share of the kernel's other first touches that arrive in between, (S - F) / t,
    where S is the kernel's global first touches per launch and t = 1 + W_out(grid) / W_out(cold) the reads each
    byte of the object gets. None without cold bytes. Only other blocks' reads count: a block's own reuse may hit in
    its SM's L1 and refresh no L2 line."""
    members = list(members)
    cold = sum(node.w_out.get(COLD, 0.0) for node in members)
    if cold <= 0:
        return None
    grid = sum(node.w_out.get("grid", 0.0) for node in members)
    footprint = view.footprint_per_launch(members)
    others = max(0.0, view.global_footprint_per_launch - footprint)
    return footprint + others / (1.0 + grid / cold)


def kept_in_l2(view: KernelView, members: Iterable[Node]) -> bool:
    """Whether the L2 keeps the object's lines between their reads without help: fewer distinct bytes than the L2
    room come between two reads of a line (l2_reuse_distance; an LRU cache keeps what is read again before that
    much else is). SobolQRNG's 12.8 KB direction table, read by every block while 40 MB of results stream out, is
    read again every ~50 KB (session 55's review: it was told to take an access-policy window, and its streams to go
    evict-first to protect it)."""
    distance = l2_reuse_distance(view, members)
    return distance is not None and distance <= view.l2_room()


def reuse_intensity(view: KernelView, members: Iterable[Node]) -> float | None:
    """RI(G') = Σ w(e) / Σ_{cold} w(e) over the subgraph's edges (section 3.2.2); None without cold traffic."""
    return graph.intensity(graph.bytes_by_label(view.weights, (node.id for node in members)))


# --- One finding per source line ------------------------------------------------------------------------------
# At -O3 the compiler unrolls loops, so one source access becomes several PCs with the same line and behavior.
# The rules decide per PC, exactly as the paper defines them; PCs that fire and share a line key are then
# reported as one finding over all of them (an editor shows one diagnostic per line, not one per copy).

_DISTRIBUTIONS = ("lanes", "addresses", "sectors", "sectors_ideal", "wavefronts", "wavefronts_ideal")


def line_key(node: Node, sized: bool = True, call_sites: bool = True) -> tuple | None:
    """What makes two PCs copies of one source access: same function, space, type, size and source position
    (with its inline chain). None without line info: such a PC is never merged. sized=False leaves the size out:
    the fields of one structure, accessed one by one, differ in width (poor-coalescing's split elements).
    call_sites=False leaves the inline chain out: a helper's access inlined at several call sites of one kernel is
    one source access (bank-conflict: the layout the helper's line indexes). A statement written over several lines
    is one position: its first line (`statement_line`, analyzer/statements.py), as for one written on one line."""
    source = node.raw.get("source") or {}
    if not source.get("file") or not source.get("line"):
        return None
    inline = source.get("inline") or ()
    chain = tuple((i.get("function"), i.get("file"), i.get("line")) for i in inline) if call_sites else ()
    return (
        node.function,
        node.space,
        node.type,
        node.size if sized else None,
        bool(node.raw.get("async_copy")),
        source["file"],
        source.get("statement_line") or source["line"],
        chain,
    )


def group_by_line(nodes: Iterable[Node], key: Callable[[Node], Any] = line_key) -> list[list[Node]]:
    """Nodes grouped by `key` (line_key; singletons without one), each group in (function, pc) order."""
    groups: dict[Any, list[Node]] = defaultdict(list)
    for node in sorted(nodes, key=lambda n: n.key):
        found = key(node)
        groups[found if found is not None else ("pc", node.key)].append(node)
    return sorted(groups.values(), key=lambda members: members[0].key)


def merge_groups(groups: list[list[Node]], joined: Iterable[tuple[int, int]]) -> list[list[Node]]:
    """The unions of node groups that `joined` pairs (by index, transitively), each in (function, pc) order, the
    unions in the order of their first node."""
    parent = list(range(len(groups)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in joined:
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)
    merged: dict[int, list[Node]] = defaultdict(list)
    for index, members in enumerate(groups):
        merged[root(index)].extend(members)
    return sorted((sorted(m, key=lambda n: n.key) for m in merged.values()), key=lambda m: m[0].key)


def merge_sets_sharing_lines(sets: Iterable[list[Node]]) -> list[list[Node]]:
    """Unions of node sets (e.g. closed subgraphs) that share a line key, each in (function, pc) order."""
    sets = [list(s) for s in sets]
    owner: dict[tuple, int] = {}
    joined = []
    for index, members in enumerate(sets):
        for node in members:
            key = line_key(node)
            if key is None:
                continue
            if key in owner:
                joined.append((owner[key], index))
            else:
                owner[key] = index
    return merge_groups(sets, joined)


def _merge_distributions(dists: Iterable[Iterable[Iterable[float]] | None]) -> list[list[float]]:
    counts: dict[float, float] = defaultdict(float)
    for dist in dists:
        for value, count in dist or ():
            counts[value] += count
    return [[value, counts[value]] for value in sorted(counts)]


def merged_node(members: list[Node]) -> Node:
    """One Node standing for several copies of an access: distributions, executions, bytes and W_out summed.

    Every ratio the rules take (R_coal, R_conf, cold share, …) is then the traffic-weighted value over the copies,
    and every total (sectors, wavefronts, executions) is their sum. It keeps the first member's id and key.
    """
    if len(members) == 1:
        return members[0]
    raw = dict(members[0].raw)
    for name in _DISTRIBUTIONS:
        raw[name] = _merge_distributions(m.raw.get(name) for m in members)
    raw["executions"] = sum(m.executions for m in members)
    raw["bytes"] = sum(int(m.raw.get("bytes") or 0) for m in members)
    node = Node(members[0].id, raw)
    for member in members:
        for label, weight in member.w_out.items():
            node.w_out[label] += weight
    return node


# Share of a PC's bytes that must be same-thread reuse of flagged PCs for it to follow them (groups_with_followers).
FOLLOWER_SHARE = 0.9


def _followers(view: KernelView, firing: list[Node], stores_only: bool) -> dict[int, int]:
    """Follower PC id -> the flagged PC of another line that gave it most of its same-thread bytes, for the firing
    PCs whose bytes are at least FOLLOWER_SHARE same-thread reuse of other firing PCs, none on their own line (with
    stores_only, only stores whose origins are all loads)."""
    flagged = {node.id for node in firing}
    followers = {}
    for node in firing:
        if node.w_total() <= 0 or (stores_only and node.type != "write"):
            continue
        by_origin: dict[int, float] = {}
        for edge in view.out_edges.get(node.id, ()):
            if edge.label == "thread":
                by_origin[edge.dst] = by_origin.get(edge.dst, 0.0) + edge.bytes
        if not by_origin or not set(by_origin) <= flagged - {node.id}:
            continue
        if any(line_key(view.nodes[o]) == line_key(node) for o in by_origin):
            continue
        if node.type == "write" and any(view.nodes[o].type == "write" for o in by_origin):
            continue  # an overwrite outlives the store it kills (redundant-waw's dead store): a layout of its own
        if stores_only and any(view.nodes[o].type != "read" for o in by_origin):
            continue  # a store after a shared atomic: the atomic's conflicts may follow the data, the store's not
        if sum(by_origin.values()) >= FOLLOWER_SHARE * node.w_total():
            followers[node.id] = max(sorted(by_origin), key=lambda o: by_origin[o])
    return followers


def groups_with_followers(
    view: KernelView, firing: list[Node], stores_only: bool = False, key: Callable[[Node], Any] = line_key
) -> list[list[Node]]:
    """The firing PCs of a layout rule (poor-coalescing, bank-conflict) as findings: unrolled copies of one access
    are one group, and a follower (a PC at least FOLLOWER_SHARE of whose bytes the same thread last touched at other
    firing PCs of other lines: a reload, the store of a read-modify-write) joins the group of the origin that gave it
    most bytes, since fixing the origin's layout fixes it too. A reload of a reload ends at the first load, and
    followers that follow each other round a loop (a load and its store, each the other's last access) are one group
    of their own. A PC whose re-reads come from itself (a loop's next iteration) keeps its own group, as does a store
    overwriting a firing store (the overwritten one is dead: redundant-waw's). With stores_only, only the store of a
    read-modify-write follows (shared memory, where a whole kernel's loop reads back what its threads stored: chains
    of reloads would make one finding of every array the loop touches). `key`: what makes PCs copies of one access
    (line_key; bank-conflict also joins a helper's copies inlined at several call sites)."""
    followers = _followers(view, firing, stores_only)
    groups = group_by_line((n for n in firing if n.id not in followers), key)
    groups += [[view.nodes[follower]] for follower in sorted(followers)]
    group_of = {node.id: index for index, group in enumerate(groups) for node in group}
    return merge_groups(groups, [(group_of[f], group_of[o]) for f, o in sorted(followers.items())])


# Warps that repeat one another's work (patterns/hierarchical.py and races.py): the share of loads' block-scope reuse
# that must lie between copies of one access (the same line's PCs).
DUPLICATE_REUSE_SHARE = 0.9


def origins_of(view: KernelView, members: list[Node]) -> list[Node]:
    """The loads and atomics whose values the members' addresses were computed from (their `address_from`,
    analyzer/address_origin.py), in code order."""
    wanted = {(m.function, pc) for m in members for pc in m.raw.get("address_from") or ()}
    if not wanted:
        return []
    return sorted((n for n in view.memory_nodes() if n.key in wanted), key=lambda n: n.key)


def _source_place(node: Node) -> tuple | None:
    source = node.raw.get("source") or {}
    return (node.function, source.get("file"), source.get("line")) if source.get("line") else None


def reads_repeat(view: KernelView, loads: list[Node]) -> bool:
    """Whether the loads' block-scope reuse is at least DUPLICATE_REUSE_SHARE between copies of one access (the same
    line's PCs): other warps of the block read the same addresses at the same instruction."""
    same_access = 0.0
    block_reuse = 0.0
    for node in loads:
        for edge in view.out_edges.get(node.id, ()):
            if edge.label == "block":
                block_reuse += edge.bytes
                other = view.nodes.get(edge.dst)
                if other is not None and line_key(other) is not None and line_key(other) == line_key(node):
                    same_access += edge.bytes
    return block_reuse > 0 and same_access >= DUPLICATE_REUSE_SHARE * block_reuse


def global_on_lines(view: KernelView, nodes: list[Node], kind: str) -> list[Node]:
    """The global accesses of type `kind` on the source lines of `nodes` (by function, file and line; the view's
    index of them is made once, since every draft of a large kernel asks)."""
    index = view.memo.get("global_by_place")
    if index is None:
        index = {}
        for node in view.memory_nodes():
            if node.space == "global":
                index.setdefault((_source_place(node), node.type), []).append(node)
        view.memo["global_by_place"] = index
    lines = sorted({_source_place(node) for node in nodes} - {None})
    return [found for line in lines for found in index.get((line, kind), ())]


def warps_repeat_work(view: KernelView, nodes: list[Node]) -> bool:
    """Whether the global loads on these nodes' source lines read what other warps of the block read at the same
    instruction (the race rule's test for stores racing between warps that repeat one another's work)."""
    loads = global_on_lines(view, nodes, "read")
    return bool(loads) and reads_repeat(view, loads)
