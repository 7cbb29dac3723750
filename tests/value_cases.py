"""What value mode must find in each case of tests/gpu/value_redundancy.cu (implants against their controls), as
a function of the engine's result for the case's run: shared by the GPU test (tests/collector/test_gpu_values.py)
and the replay of the recorded runs in CI (tests/engine/test_value_fixtures.py)."""

from __future__ import annotations

N = 4096  # elements per case (value_redundancy.cu)
CASES = (
    "reload",
    "reload_poked",
    "table",
    "table_rewritten",
    "flags_silent",
    "flags_changed",
    "sparse",
    "vector",
    "shared",
    "replicated",
    "approx",
    "approx_far",
    "approx_double",
    "approx_int",
)
RELAX_LAUNCHES = 4  # value_redundancy.cu: launches of each relax kernel

# The value findings (pattern, scope) each case's report must have, and no other value finding: the implants, and
# their controls with none (docs/patterns.md, value-reload to value-uniform).
FINDINGS: dict[str, set[tuple[str, str | None]]] = {
    "reload": {("value-reload", "thread")},
    "reload_poked": set(),
    # the second launch also rewrites out[] with the values it already holds
    "table": {("value-reload", "prior_launch"), ("silent-store", None)},
    "table_rewritten": set(),
    "flags_silent": {("silent-store", None)},
    "flags_changed": set(),
    "sparse": {("zero-operands", None)},  # the per-warp element: a broadcast, the reuse rules' matter
    "vector": {("value-reload", "thread"), ("silent-store", None)},
    "shared": {("value-reload", "thread")},
    "replicated": {("value-uniform", None)},
    # each relaunch reads values 0.1% from the last launch's: memoisable within 1%; 10% is not; an integer's +1
    # steps are within 1% as float bits, but the SASS says integer: nothing
    "approx": {("approx-reload", "prior_launch")},
    "approx_far": set(),
    "approx_double": {("approx-reload", "prior_launch")},
    "approx_int": set(),
}


def kernel(result: dict, name: str) -> dict:
    (k,) = [k for k in result["kernels"] if name in (k.get("mangled") or "")]
    return k


def nodes(k: dict, kind: str, space: str = "global") -> list[dict]:
    return sorted(
        (n for n in k["nodes"] if n["id"] and n["type"] == kind and n["space"] == space), key=lambda n: n["pc"]
    )


def edges_from(k: dict, node: dict) -> list[dict]:
    return [e for e in k["edges"] if e["from"] == node["id"]]


def compared(edges: list[dict]) -> tuple[int, int]:
    """Load lane-granules with a value, and those that returned their granule's last loaded value again."""
    return sum(e.get("value_loads", 0) for e in edges), sum(e.get("same_value", 0) for e in edges)


def near(edges: list[dict]) -> int:
    """Load lane-granules within the run's share of their granule's last loaded value (not equal to it)."""
    return sum(e.get("approx_value", 0) for e in edges)


def value_findings(report: dict) -> set[tuple[str, str | None]]:
    """The value findings of a report (docs/report-format.md), as (pattern, scope)."""
    from reuselens.analyzer.patterns import VALUE_PATTERNS

    return {
        (f["pattern"], f.get("scope"))
        for k in report["kernels"]
        for f in k.get("findings", [])
        if f["pattern"] in VALUE_PATTERNS
    }


def check(case: str, result: dict) -> None:
    """Asserts what `case` must show in `result` (replay_run's or the online analysis', names resolved)."""
    if case in ("reload", "reload_poked"):  # a thread loads its element twice; poked: a store changes it between
        k = kernel(result, "reload_in_thread")
        thread = [e for e in edges_from(k, nodes(k, "read")[-1]) if e["label"] == "thread"]
        assert compared(thread) == (N, N if case == "reload" else 0)
    elif case in ("table", "table_rewritten"):  # the next launch reads the table again; rewritten by the host between
        k = kernel(result, "read_table")
        (load,) = nodes(k, "read")
        prior = [e for e in edges_from(k, load) if e["prior_kernel"]]
        assert compared(prior) == (N, N if case == "table" else 0)
    elif case in ("flags_silent", "flags_changed"):  # stores of the value already there, or of another
        (store,) = nodes(kernel(result, "store_flags"), "write")
        assert store["values"]["lanes"] == N
        assert store["values"]["silent"] == (N if case == "flags_silent" else 0)
    elif case == "sparse":  # one element in ten is not zero; a per-warp element every lane of the warp reads
        by_zeros = {n["values"]["zero"]: n["values"] for n in nodes(kernel(result, "sparse_and_uniform"), "read")}
        assert sorted(by_zeros) == [0, N - N // 10 - 1]
        assert by_zeros[N - N // 10 - 1]["lanes"] == N
        assert by_zeros[0]["uniform"] == N // 32
    elif case == "vector":  # 16-byte loads twice around a store of the same 16 bytes
        k = kernel(result, "reload_vector")
        first, second = nodes(k, "read")
        assert compared(edges_from(k, second)) == (4 * N, 4 * N)  # four granules per lane, halves of its hash
        assert [s["values"]["silent"] for s in nodes(k, "write")] == [N, 0]  # the __stcg; then out[i]
    elif case == "shared":  # a shared tile read twice by each thread around a barrier
        k = kernel(result, "shared_twice")
        assert compared(edges_from(k, nodes(k, "read", "shared")[-1])) == (N, N)
    elif case == "replicated":  # each warp's 32 elements hold one value
        (load,) = nodes(kernel(result, "read_replicated"), "read")
        assert load["values"]["uniform"] == N // 32 and load["values"]["zero"] == 0
    elif case.startswith("approx"):  # a relaxation: each launch reads what the last one scaled
        name, width = {"approx_double": ("relax_double", 2), "approx_int": ("relax_int", 1)}.get(case, ("relax", 1))
        k = kernel(result, name)
        (load,) = nodes(k, "read")
        relaunched = (RELAX_LAUNCHES - 1) * N * width  # lane-granules that have an earlier launch's load to meet
        edges = edges_from(k, load)
        assert compared(edges) == (RELAX_LAUNCHES * N * width, 0)
        # the engine counts the integer's steps too (it cannot know the type); the analysis drops them by SASS
        assert near(edges) == (0 if case == "approx_far" else relaunched)
    else:
        raise AssertionError(f"unknown case {case}")
