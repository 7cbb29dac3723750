"""Broadcasting / Multicasting / Atomic Contention, paper section 3.3 II (per-node, from Lane_v and Addr_v).

  Broadcasting:      Type(v) = Read, Lane_v > 1, Mode(Addr_v) = 1      (one address for the whole warp)
  Multicasting:      Type(v) = Read, Mode(Addr_v) ∈ (1, Lane_v)         (a few addresses shared by lanes)
  Atomic Contention: Type(v) = Atomic, Mode(Addr_v) ∈ (1, Lane_v)
Lane_v is read as Mode(Lane_v). For atomics the rule also takes Mode(Addr_v) = 1: the paper's broadcasting
case requires a read, which leaves a warp whose lanes all update one address unclassified although it is the
extreme of contention. Broadcasting and multicasting are informational (hardware serves them in one request)
and reported for global memory only: shared-memory broadcasts cost no extra wavefront by design.

Atomics that do not combine: warp aggregation (one update per address for the warp's lanes) holds for commutative
updates. atomicExch, atomicCAS and the wrapping atomicInc/atomicDec give each lane a result that depends on the
order of the others, so aggregating them changes the results. When the source frames name one of those
intrinsics, the contention is information with no fix (cuda-samples simpleAtomicIntrinsics: its exchange, CAS,
increment and decrement were the four warnings, each with the advice to aggregate; session 47's review). An atomicCAS
inside a helper of the app's own keeps the advice: a CAS loop is how atomicMax on floats or a double atomicAdd are
built, commutative updates the warp can combine first.
"""

from __future__ import annotations

from reuselens.analyzer.patterns.finding import TIER_INFORMATION, TIER_PERFORMANCE, Draft
from reuselens.analyzer.patterns.text import count, format_bytes
from reuselens.analyzer.patterns.view import KernelView, Node, dist_mean, group_by_line, merged_node
from reuselens.analyzer.toolkit_paths import atomic_intrinsic_call, is_toolkit_header

PATTERNS = {
    "broadcasting": "Warp-wide broadcast read",
    "multicasting": "Multicast read (few addresses per warp)",
    "atomic-contention": "Atomic contention within a warp",
}

_BROADCAST_NOTE = (
    "All active lanes of the warp read one address. The hardware serves this in a single request, so it is "
    "not a problem by itself; it marks a value that is uniform across the warp. If the data is small and "
    "read-only for the whole kernel, __constant__ memory (or a kernel parameter) serves it from the constant "
    "cache; see the constant-region finding when one is reported."
)
_MULTICAST_NOTE = (
    "A few distinct addresses are shared by groups of lanes in each warp access. The hardware coalesces the "
    "duplicates, so this is informational: it usually comes from index arithmetic such as i / k, and the "
    "shared values could be loaded once per group and passed with __shfl_sync if the loads matter."
)
_ATOMIC_FIX = (
    "Many lanes of the same warp update the same few addresses atomically, and the memory system serializes "
    "updates to one address. Aggregate within the warp first (__reduce_add_sync, or a __shfl_xor_sync "
    "reduction, or cooperative_groups::reduce over coalesced_threads()) and let one lane per distinct "
    "address issue the atomic; for histograms, accumulate privately in shared memory per block and merge. "
    "This holds for commutative updates whose old value the lanes do not use (atomicAdd, atomicSub, atomicMin, "
    "atomicMax, atomicAnd, atomicOr, atomicXor as a statement). atomicExch, atomicCAS and the wrapping "
    "atomicInc/atomicDec, or any atomic whose returned old value each lane uses (a ticket, a slot index), do not "
    "combine that way: aggregating them changes the results unless the lanes' values are recomputed from one "
    "update (e.g. one atomicAdd of the warp's count, then each lane's offset from a prefix of the ballot)."
)


def is_broadcasting(node: Node) -> bool:
    return node.type == "read" and node.lane_mode() > 1 and node.address_mode() == 1


def is_multicasting(node: Node) -> bool:
    return node.type == "read" and 1 < node.address_mode() < node.lane_mode()


def is_atomic_contention(node: Node) -> bool:
    return node.type == "atomic" and node.lane_mode() > 1 and 1 <= node.address_mode() < node.lane_mode()


def _informational(pattern: str, node: Node, note: str, what: str) -> Draft:
    duplicate = node.w_out.get("warp_same_inst", 0.0)
    message = (
        f"{what}: {format_bytes(node.w_total())} read, {format_bytes(duplicate)} of it served to "
        f"lanes by the same warp access"
    )
    return Draft(
        pattern,
        [node],
        "warp_same_inst",
        "none",
        note,
        message,
        waste_bytes=duplicate,
        tier=TIER_INFORMATION,
        metrics={"lanes_mode": node.lane_mode(), "addresses_mode": node.address_mode()},
    )


# Intrinsics whose lanes' results depend on the order of the others' updates: no warp aggregation applies.
ORDER_DEPENDENT_ATOMICS = frozenset({"atomicExch", "atomicCAS", "atomicInc", "atomicDec"})
_ORDER_DEPENDENT_NOTE = (
    "Many lanes of the same warp update the same few addresses with {op}, and the memory system serializes "
    "updates to one address. {op} gives each lane a result that depends on the updates before it, so the lanes "
    "cannot be combined into one update per warp without changing what each one gets. If the program only needs "
    "one lane's update to win (a flag, a lock), let one elected lane (e.g. the lowest in __ballot_sync of those "
    "that would update) issue it; otherwise the serialization is what the algorithm asks for."
)


# Lanes on mostly distinct addresses: the definition's atomic contention (Mode(Addr) < Lane, 3.2.2), but warp
# aggregation would not even halve the updates, and matching the lanes' addresses (__match_any_sync, a leader per
# address) costs more than the few it saves (cuda-samples histogram256: 30 addresses for 32 lanes; Parboil tpacf's
# lane pairs; session 55's review).
_NEAR_DISTINCT_NOTE = (
    "The lanes of a warp update mostly distinct addresses: a few of them share one, and the memory system "
    "serializes those. Aggregating within the warp would not even halve the updates, and finding the lanes that "
    "share an address (__match_any_sync, a leader per address) costs more than the few updates it saves: nothing "
    "to change for this contention."
)


def _order_dependent_intrinsic(source: dict | None) -> str | None:
    """The atomic intrinsic the instruction was inlined from, except an atomicCAS inside a helper of the app's own
    (a CAS loop building atomicMax on floats, or a double atomicAdd: a commutative update the warp can combine
    before the loop); an exchange, increment or decrement stays what it is inside any helper."""
    found = atomic_intrinsic_call(source)
    if found is None or found[0] != "atomicCAS":
        return found[0] if found else None
    callers = [f for f in found[1] if f.get("file") and not is_toolkit_header(str(f["file"]))]
    return None if len(callers) > 1 else "atomicCAS"  # the kernel itself, and a helper between


def _atomic(node: Node, intrinsic: str | None) -> Draft:
    collisions = max(0.0, node.executions * (dist_mean(node.raw.get("lanes")) - dist_mean(node.raw.get("addresses"))))
    addresses = int(node.address_mode())
    # (advice in the message, the fix's explanation), or None where warp aggregation is the fix
    no_aggregation = (
        (
            f"{intrinsic} results depend on the order, no warp aggregation applies",
            _ORDER_DEPENDENT_NOTE.format(op=intrinsic),
        )
        if intrinsic in ORDER_DEPENDENT_ATOMICS
        else ("mostly distinct addresses: aggregating in the warp would save little", _NEAR_DISTINCT_NOTE)
        if 2 * node.address_mode() > node.lane_mode()
        else None
    )
    advice, explanation = no_aggregation or ("aggregate in the warp first", _ATOMIC_FIX)
    message = (
        f"{node.lane_mode():.0f} lanes update {addresses} address{'es' if addresses != 1 else ''} "
        f"per warp atomic: "
        f"{count(collisions)} serialized lane updates ({format_bytes(collisions * node.size)}) — {advice}"
    )
    return Draft(
        "atomic-contention",
        [node],
        "warp_same_inst",
        "none" if no_aggregation else "warp-shuffle",
        explanation,
        message,
        waste_bytes=collisions * node.size,
        tier=TIER_INFORMATION if no_aggregation else TIER_PERFORMANCE,
        metrics={
            "lanes_mode": node.lane_mode(),
            "addresses_mode": node.address_mode(),
            "serialized_updates": collisions,
            **({"atomic": intrinsic} if intrinsic else {}),
        },
    )


def _category(node: Node) -> str | None:
    if is_atomic_contention(node):
        return "atomic-contention"
    if node.space != "global":
        return None
    if is_broadcasting(node):
        return "broadcasting"
    return "multicasting" if is_multicasting(node) else None


def _build(pattern: str, node: Node) -> Draft:
    if pattern == "atomic-contention":
        return _atomic(node, _order_dependent_intrinsic(node.raw.get("source")))
    if pattern == "broadcasting":
        return _informational(
            pattern, node, _BROADCAST_NOTE, f"all {node.lane_mode():.0f} active lanes read one address"
        )
    return _informational(
        pattern,
        node,
        _MULTICAST_NOTE,
        f"{node.lane_mode():.0f} lanes read {node.address_mode():.0f} distinct addresses per warp access",
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    by_pattern: dict[str, list[Node]] = {}
    for node in view.memory_nodes():
        pattern = _category(node)
        if pattern:
            by_pattern.setdefault(pattern, []).append(node)
    drafts = []
    for pattern in sorted(by_pattern):
        for group in group_by_line(by_pattern[pattern]):  # unrolled copies of one access: one finding
            draft = _build(pattern, merged_node(group))
            draft.nodes = group
            drafts.append(draft)
    return drafts
