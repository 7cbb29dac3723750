"""Value redundancy (LoadSpy, seeds/001 section 3; issue 19): only runs recorded with `profile --values` have the
engine's value counts (docs/engine.md, "Value redundancy"); without them this rule finds nothing.

- value-reload: a load PC whose loads found again the value their location's last load returned, for at least the
  `valueRedundancy` share of its load lane-granules (temporal redundancy, LoadSpy's definition). The edges say
  where the previous load was (the Topological Distance of the reuse): in the same thread (keep the value in a
  register), in the warp or block (load once, share it through a shuffle or shared memory), in the grid, or in an
  earlier launch (the value came back unchanged across launches: hoist or cache it across launches). Lanes of
  one instruction on one address (warp_same_inst) are left out: they find one value by construction. The finding's
  scope is the label that holds most of the redundant loads; its metrics split them by label. When nearly all of
  them (READ_ONLY_SHARE) follow a read of the same launch, nothing wrote the location in between: the value is the
  same because the data is read-only there, which the reuse rules already report on the line (a GEMM's inputs
  read by every block), so the finding ranks as information; a value that survived a store, or came back across
  launches, stays a performance finding.
- approx-reload: a load PC of floats (doubles) whose loads found a value within the run's share of their location's
  last loaded one (`profile --values-approx`, 1% by default: LoadSpy's approximate redundancy) for at least that
  share, counting the exact repeats, when the exact repeats alone are not enough for value-reload: the value
  drifts slowly, and work on it could be memoised within a stated error. Only loads whose SASS uses the value as a
  float (double) of the load's width count (value_types.py): an integer's small steps are no approximation.
- silent-store: a store PC whose lanes wrote the value their location already held (read by the device patch
  before the store) for at least that share: guard the store.
- zero-operands: a load PC whose lanes loaded 0 for at least that share: skip the work on zero operands.
- value-uniform: a load PC whose executions had one value in every lane for at least that share, with lanes at
  different addresses (a broadcast of one address is the reuse rules' matter): load it once per warp.

Waste: the bytes of the redundant lane-granules (4 per granule) for value-reload, the lanes' bytes for the
others. Zeros and warp-uniform values describe the data more than they waste traffic (a sort's keys, a sparse
input): they rank after the performance findings, as information (hints below 10% of the kernel's traffic).
"""

from __future__ import annotations

from collections import defaultdict

from reuselens.analyzer.patterns.finding import TIER_INFORMATION, TIER_PERFORMANCE, Draft, predicted_removal
from reuselens.analyzer.patterns.text import format_bytes, format_share
from reuselens.analyzer.patterns.view import KernelView, Node, group_by_line
from reuselens.analyzer.value_types import approximate_applies
from reuselens.analyzer.values import PRIOR_LAUNCH, approximate, read_only_loads, temporal

PATTERNS = {
    "value-reload": "Load returns the value its location already returned",
    "approx-reload": "Load returns nearly the value its location already returned",
    "silent-store": "Store writes the value its location already holds",
    "zero-operands": "Load returns zero for most lanes",
    "value-uniform": "Every lane of a warp loads the same value from different addresses",
}

# Where the previous load of a redundant one was, by scope, as the message says it: every scope a redundant load
# can have (a first touch, cold without a prior kernel, never finds a remembered value; warp_same_inst is left out).
READ_ONLY_SHARE = 0.9  # of the redundant loads, following a read of the same launch: information only

_WHERE = {
    "thread": "the same thread",
    "warp_diff_inst": "another instruction of the warp",
    "block": "another warp of the block",
    "grid": "another block",
    PRIOR_LAUNCH: "an earlier launch",
}

_RELOAD_FIX = {
    "thread": (
        "The same thread loads this location again and finds the value it loaded before: nothing changed it in "
        "between. Keep the first load's value in a register (a local variable) and drop the reload; if the "
        "compiler reloads because a store through another pointer might alias, mark the pointers __restrict__."
    ),
    "warp_diff_inst": (
        "Another instruction of the same warp loaded this unchanged value before. Load it once per warp and "
        "pass it on in registers (__shfl_sync between lanes)."
    ),
    "block": (
        "Another warp of the block loaded this unchanged value before. Load it once per block into shared memory "
        "and read it from there after a __syncthreads()."
    ),
    "grid": (
        "Another block loaded this unchanged value before. If it is read-only for the kernel, __constant__ memory "
        "(broadcast to every block) or the read-only cache (const __restrict__, __ldg) serves it; if blocks "
        "recompute it, compute it once in an earlier kernel."
    ),
    PRIOR_LAUNCH: (
        "An earlier launch loaded this location and the value is unchanged: the data did not change between the "
        "launches. Hoist the work that depends on it out of the launch loop, or cache its result across launches "
        "(and keep it resident in L2 with an access policy window if it is reloaded anyway)."
    ),
}
_APPROX_FIX = (
    "The value drifts by less than {share} from one load of the location to the next. Work that depends only on "
    "it can be memoised: keep the last input and its result, and reuse the result while the input stays within a "
    "tolerance, recomputing when it moves further. The error is bounded by that tolerance (here at most {share} "
    "relative change per reuse of the input), so state it and check the result against it; if the value settles "
    "(an iterative solver converging), stop iterating once the change stays below it."
)
_SILENT_FIX = (
    "Most lanes store the value their location already holds. Guard the store (if (a[i] != v) a[i] = v): a load "
    "that hits in cache instead of a store that dirties the line and takes write bandwidth; the saving is largest "
    "for flags and counters written by many threads. For floating-point data compare the bits "
    "(__float_as_uint(a[i]) != __float_as_uint(v)): a float comparison stores NaN over the same NaN anyway (NaN != "
    "NaN), and skips -0.0 over 0.0, which changes the bits."
)
_ZERO_FIX = (
    "Most lanes load 0. If the value is an operand of a product or a sum, test it and skip the work for zero "
    "operands (a sparsity check), or store the data in a sparse format (CSR, a bitmap of non-zero blocks)."
)
_UNIFORM_FIX = (
    "Every lane of a warp loads the same value, each from its own address. Load it once per warp (one lane, then "
    "__shfl_sync), or store the data once instead of replicated per element."
)


def _reload_split(view: KernelView, nodes: list[Node]) -> tuple[float, dict[str, float]]:
    """Load lane-granules with a value of the group, and the redundant ones per scope (analyzer.values.temporal)."""
    valued = 0.0
    same: dict[str, float] = defaultdict(float)
    for node in nodes:
        node_valued, _redundant, scopes = temporal(edge.raw for edge in view.out_edges.get(node.id, ()))
        valued += node_valued
        for scope, n in scopes.items():
            same[scope] += n
    return valued, dict(same)


def _value_reload(view: KernelView, group: list[Node], threshold: float) -> Draft | None:
    valued, same = _reload_split(view, group)
    redundant = sum(same.values())
    if valued <= 0 or redundant / valued < threshold:
        return None
    # the share of them that follow a read of the same launch (values.read_only_loads)
    read_only = sum(read_only_loads(edge.raw for edge in view.out_edges.get(node.id, ())) for node in group) / redundant
    scope = max(sorted(same), key=lambda label: same[label])
    share = redundant / valued
    where = ", ".join(
        f"{_WHERE[label]} ({format_share(n / redundant)})"
        for label, n in sorted(same.items(), key=lambda item: -item[1])
        if n
    )
    message = (
        f"{format_share(share)} of its loads ({format_bytes(4 * redundant)}) return the value their location's "
        f"last load returned, loaded before by {where}"
    )
    if read_only >= READ_ONLY_SHARE:
        message += "; nothing wrote it between the loads (read-only data: the reuse findings say how to serve it)"
    return Draft(
        "value-reload",
        group,
        scope,
        "register-promotion" if scope == "thread" else "value-reuse",
        _RELOAD_FIX[scope],
        message,
        waste_bytes=4 * redundant,
        predicted=predicted_removal(group[0], share) if scope == "thread" and len(group) == 1 else {},
        metrics={
            "redundant_fraction": share,
            "redundant_valued": redundant,
            "read_only_fraction": read_only,
            "by_scope": {label: n / redundant for label, n in sorted(same.items()) if n},
        },
        tier=TIER_INFORMATION if read_only >= READ_ONLY_SHARE else TIER_PERFORMANCE,
    )


def _approx_reload(view: KernelView, group: list[Node], threshold: float) -> Draft | None:
    share_limit = float(view.raw.get("value_approx") or 0.0)
    if share_limit <= 0 or not all(approximate_applies(node.raw) for node in group):
        return None
    valued, same = _reload_split(view, group)
    exact = sum(same.values())
    near: dict[str, float] = defaultdict(float)
    for node in group:
        for scope, n in approximate(edge.raw for edge in view.out_edges.get(node.id, ())).items():
            near[scope] += n
    close = sum(near.values())
    if valued <= 0 or close <= 0 or exact / valued >= threshold or (exact + close) / valued < threshold:
        return None
    scope = max(sorted(near), key=lambda label: near[label])
    where = ", ".join(
        f"{_WHERE[label]} ({format_share(n / close)})" for label, n in sorted(near.items(), key=lambda item: -item[1])
    )
    limit = format_share(share_limit)
    message = (
        f"{format_share((exact + close) / valued)} of its loads ({format_bytes(4 * (exact + close))}) return a value "
        f"within {limit} of their location's last load ({format_share(exact / valued)} exactly); the near ones "
        f"were loaded before by {where}"
    )
    return Draft(
        "approx-reload",
        group,
        scope,
        "memoise",
        _APPROX_FIX.format(share=limit),
        message,
        waste_bytes=4 * (exact + close),
        metrics={
            "approximate_fraction": close / valued,
            "exact_fraction": exact / valued,
            "approximate_valued": close,
            "error_bound": share_limit,
            "by_scope": {label: n / close for label, n in sorted(near.items())},
        },
    )


def _lane_share(group: list[Node], field: str) -> tuple[float, float]:
    lanes = sum(node.raw["values"]["lanes"] for node in group)
    hits = sum(node.raw["values"][field] for node in group)
    return hits, lanes


def _lane_draft(
    pattern: str,
    fix_kind: str,
    group: list[Node],
    field: str,
    threshold: float,
    fix: str,
    describe: str,
    tier: int = TIER_PERFORMANCE,
) -> Draft | None:
    hits, lanes = _lane_share(group, field)
    if lanes <= 0 or hits / lanes < threshold:
        return None
    size = max(node.size for node in group)
    return Draft(
        pattern,
        group,
        None,
        fix_kind,
        fix,
        f"{format_share(hits / lanes)} of its lanes {describe} ({format_bytes(hits * size)})",
        waste_bytes=hits * size,
        metrics={"fraction": hits / lanes, "lanes": hits},
        tier=tier,
    )


def _uniform(group: list[Node], threshold: float) -> Draft | None:
    executions = sum(node.executions for node in group)
    uniform = sum(node.raw["values"]["uniform"] for node in group)
    if executions <= 0 or uniform / executions < threshold or min(node.address_mode() for node in group) < 2:
        return None
    lanes = sum(node.raw["values"]["lanes"] for node in group)
    size = max(node.size for node in group)
    share = uniform / executions
    return Draft(
        "value-uniform",
        group,
        None,
        "warp-broadcast",
        _UNIFORM_FIX,
        f"{format_share(share)} of its warp loads give every lane one value, from different addresses",
        waste_bytes=share * lanes * size,
        metrics={"fraction": share, "executions": uniform},
        tier=TIER_INFORMATION,
    )


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    threshold = settings["valueRedundancy"]
    valued = [n for n in view.memory_nodes() if n.raw.get("values")]
    reads = [n for n in valued if n.type == "read"]
    writes = [n for n in valued if n.type == "write"]
    rules = (
        (reads, lambda group: _value_reload(view, group, threshold)),
        (reads, lambda group: _approx_reload(view, group, threshold)),
        (
            reads,
            lambda group: _lane_draft(
                "zero-operands", "sparsity-check", group, "zero", threshold, _ZERO_FIX, "load 0", TIER_INFORMATION
            ),
        ),
        (reads, lambda group: _uniform(group, threshold)),
        (
            writes,
            lambda group: _lane_draft(
                "silent-store", "store-guard", group, "silent", threshold, _SILENT_FIX, "store the value already there"
            ),
        ),
    )
    drafts: list[Draft] = []
    # Each PC is judged on its own (a line may hold several loads of different arrays); the PCs that fire are then
    # merged per source line (unrolled copies of one access: one finding), as the other rules do.
    for nodes, rule in rules:
        firing = [node for node in nodes if rule([node]) is not None]
        for group in group_by_line(firing):
            draft = rule(group)
            if draft is not None:
                drafts.append(draft)
    return drafts
