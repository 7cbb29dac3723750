"""Redundant Access, paper section 3.3 III: RAR, RAW and WAW on intra-thread edges between two different PCs.

For an edge e = (u -> v), u the current PC and v its reuse origin, with Φ(e) = Thread:
  RAR: Type(u) = Type(v) = Read           -> u re-reads a value the same thread already read;
  RAW: Type(u) = Read, Type(v) = Write    -> u re-reads a value the same thread produced;
  WAW: Type(u) = Type(v) = Write          -> v is a dead store (overwritten by the same thread, no reuse between).
The paper defines Redundant Access "on two different nodes", so self-loops are left out here (a loop-invariant
re-read shows up as thread-dominant hierarchical reuse instead). One finding per redundant PC: a read PC with
both RAR and RAW edges gets one finding (they share one fix) under the pattern that carries more bytes.
"""

from __future__ import annotations

from collections import defaultdict

from analyzer.patterns.finding import Draft, predicted_removal
from analyzer.patterns.text import format_bytes, format_share, places
from analyzer.patterns.view import Edge, KernelView, Node, group_by_line, merged_node

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


def _thread_edges(view: KernelView) -> list[Edge]:
    return [e for e in view.edges if e.label == "thread" and e.src != e.dst and view.is_memory(e.dst)]


def _read_draft(view: KernelView, node: Node, by_kind: dict[str, float], origins: list[Node]) -> Draft:
    rar, raw = by_kind.get("rar", 0.0), by_kind.get("raw", 0.0)
    wasted = rar + raw
    fraction = min(1.0, wasted / node.w_total()) if node.w_total() else 0.0
    pattern = "redundant-rar" if rar >= raw else "redundant-raw"
    parts = []
    if rar:
        parts.append(f"{format_bytes(rar)} already read by the same thread (RAR)")
    if raw:
        parts.append(f"{format_bytes(raw)} the same thread wrote itself (RAW)")
    message = (f"re-reads {' and '.join(parts)}{places(origins)} — keep it in a register "
               f"({format_share(fraction)} of this PC's traffic)")
    explanation = _READ_FIX + (_LOCAL_NOTE if node.space == "local" else "")
    return Draft(pattern, [node], "thread", "register-promotion", explanation, message,
                 waste_bytes=wasted, instructions=node.executions * fraction,
                 wavefronts=node.wavefronts_total() * fraction if node.space == "shared" else 0.0,
                 origins=origins, predicted=predicted_removal(node, fraction),
                 metrics={"rar_bytes": rar, "raw_bytes": raw, "redundant_fraction": fraction})


def _waw_draft(view: KernelView, node: Node, dead: float, overwriters: list[Node]) -> Draft:
    fraction = min(1.0, dead / node.w_total()) if node.w_total() else 0.0
    what = "a dead store" if fraction >= 0.999 else f"{format_share(fraction)} of its bytes are dead"
    message = (f"stores {format_bytes(dead)} that the same thread overwrites{places(overwriters)} before any "
               f"read (WAW, {what}) — keep the value in a register and store once")
    return Draft("redundant-waw", [node], "thread", "register-promotion", _WAW_FIX, message,
                 waste_bytes=dead, instructions=node.executions * fraction,
                 wavefronts=node.wavefronts_total() * fraction if node.space == "shared" else 0.0,
                 origins=overwriters, predicted=predicted_removal(node, fraction),
                 metrics={"waw_bytes": dead, "dead_fraction": fraction})


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    reads: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    read_origins: dict[int, set[int]] = defaultdict(set)
    dead: dict[int, float] = defaultdict(float)
    overwriters: dict[int, set[int]] = defaultdict(set)
    for edge in _thread_edges(view):
        u, v = view.nodes[edge.src], view.nodes[edge.dst]
        if u.type == "read" and v.type in ("read", "write"):
            reads[u.id]["rar" if v.type == "read" else "raw"] += edge.bytes
            read_origins[u.id].add(v.id)
        elif u.type == "write" and v.type == "write":
            dead[v.id] += edge.bytes          # the finding sits on v, the store whose value died
            overwriters[v.id].add(u.id)
    drafts = []
    for group in group_by_line(view.nodes[i] for i in reads):  # unrolled copies of one load: one finding
        by_kind: dict[str, float] = defaultdict(float)
        for member in group:
            for kind, value in reads[member.id].items():
                by_kind[kind] += value
        origins = sorted({view.nodes[i] for m in group for i in read_origins[m.id]}, key=lambda n: n.key)
        draft = _read_draft(view, merged_node(group), by_kind, origins)
        draft.nodes = group
        drafts.append(draft)
    for group in group_by_line(view.nodes[i] for i in dead):
        later = sorted({view.nodes[i] for m in group for i in overwriters[m.id]}, key=lambda n: n.key)
        draft = _waw_draft(view, merged_node(group), sum(dead[m.id] for m in group), later)
        draft.nodes = group
        drafts.append(draft)
    return drafts
