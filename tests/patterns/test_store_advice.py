"""Stores are no reuse to serve (a store reads nothing), and uniform flag stores are a benign idiom."""

from __future__ import annotations

from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import find_findings


def patterns_of(findings):
    return sorted(f["pattern"] for f in findings)


def test_a_store_after_the_same_threads_load_of_the_element_is_no_reuse():
    # GIVEN x[i] = log(x[i]) * 255: one load (first touch), then the same thread stores the same element
    k = KernelBuilder()
    load = k.node("global", "read", executions=4096, line=12)
    k.edge(load, 0, "cold")
    store = k.node("global", "write", executions=4096, line=12)
    k.edge(store, load, "thread")  # write after read
    findings = find_findings(k.build())
    assert "hierarchical-reuse-block" not in patterns_of(findings)
    assert not [f for f in findings if "load it once into a register" in f["message"]]


def test_a_store_overwriting_its_own_value_in_a_loop_is_told_to_accumulate_in_a_register():
    k = KernelBuilder()
    k.background()
    store = k.node("global", "write", executions=4096, line=30)
    k.edge(store, 0, "cold", 0.1)
    k.edge(store, store, "thread", 0.9)  # write after write by the same thread, same PC
    finding = next(f for f in find_findings(k.build()) if f["pattern"] == "hierarchical-reuse-block")
    assert finding["scope"] == "thread"
    assert finding["message"].endswith("accumulate it in a register and store it once")
    assert "load it once" not in finding["fix"]["explanation"]


def flag_kernel(addresses: int = 1) -> tuple[dict, int]:
    """`*flag = true` by every thread of 8 blocks of 8 warps, in a loop of 4 passes."""
    k = KernelBuilder(grid=(8, 1, 1), block=(256, 1, 1))
    k.background()
    flag = k.node("global", "write", executions=256, addresses=addresses, line=50)
    total = 256 * 32
    k.edge(flag, 0, "cold", 1 / total)
    k.edge(flag, flag, "warp_same_inst", 31 / 32)
    rest = 1 - 1 / total - 31 / 32
    k.edge(flag, flag, "warp_diff_inst", rest * 0.7, synced=0, synced_bytes=0)
    k.edge(flag, flag, "block", rest * 0.2, synced=0, synced_bytes=0)
    k.edge(flag, flag, "grid", rest * 0.1)
    return k.build(), flag


def test_uniform_flag_stores_get_no_shuffle_advice_and_a_benign_race_note():
    kernel, flag = flag_kernel()
    findings = find_findings(kernel)
    assert "hierarchical-reuse-block" not in patterns_of(findings)
    race = next(f for f in findings if f["pattern"] == "race-candidate")
    assert race["pcs"] == [flag] and race["severity"] == "information"
    assert race["metrics"]["uniform_stores"] is True
    assert "benign if all store the same value" in race["message"]
    assert "does not record values" in race["message"]


def test_stores_of_several_addresses_per_warp_stay_a_race_warning():
    # GIVEN the same conflicts, but each warp store covers two addresses: not a single flag
    kernel, _flag = flag_kernel(addresses=2)
    race = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate")
    assert race["severity"] == "warning" and race["metrics"]["uniform_stores"] is False


def _with_values(kernel: dict, node: int, *, uniform: int, silent: int) -> dict:
    entry = next(n for n in kernel["nodes"] if n["id"] == node)
    lanes = entry["executions"] * 32
    entry["values"] = {"lanes": lanes, "zero": 0, "silent": silent, "uniform": uniform, "spatial": 0}
    return kernel


def test_recorded_values_of_one_flag_value_make_the_race_measured_benign():
    # GIVEN the flag kernel profiled with values: every execution stored one value, nearly all onto it already
    kernel, flag = flag_kernel()
    _with_values(kernel, flag, uniform=256, silent=256 * 32 - 8)
    race = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate")
    assert race["severity"] == "information" and race["metrics"]["one_value_per_store"] is True
    assert "benign — each store wrote one value" in race["message"]
    assert "does not record values" not in race["message"]


def test_recorded_values_that_differ_make_the_flag_race_a_warning():
    # GIVEN the same stores, but the lanes of an execution stored different values
    kernel, flag = flag_kernel()
    _with_values(kernel, flag, uniform=10, silent=0)
    race = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate")
    assert race["severity"] == "warning" and race["metrics"]["uniform_stores"] is False
    assert "the stored values differ" in race["message"]


def test_an_atomic_flag_update_against_a_one_thread_flag_store_is_the_benign_idiom():
    # GIVEN eigenvalues' `atomicExch(&flag, 1)` by some lanes of a warp (one address per execution) and `flag = 1`
    # by one thread of another warp, unordered: both set the flag; with two addresses per atomic it is no flag
    for atomic_addresses, severity in ((1, "information"), (2, "warning")):
        k = KernelBuilder()
        k.background()
        exchange = k.node("shared", "atomic", executions=141, lanes=4, addresses=atomic_addresses, line=313)
        k.edge(exchange, 0, "cold")
        store = k.node("shared", "write", executions=1, lanes=1, addresses=1, line=540)
        k.edge(store, exchange, "block", synced=0, synced_bytes=0)
        race = next(f for f in find_findings(k.build()) if f["pattern"] == "race-candidate")
        assert race["pcs"] == [store] and race["severity"] == severity, atomic_addresses
        assert race["metrics"]["uniform_stores"] is (severity == "information")
