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
    # by one thread of another warp, unordered: both set the flag; with two addresses per atomic it is no flag, and
    # an atomicAdd against a plain store (`if (tid == 0) cnt = 0;` racing the increments) loses updates
    header = "/usr/local/cuda/include/device_atomic_functions.hpp"
    for operation, atomic_addresses, severity in (
        ("atomicExch", 1, "information"),
        ("atomicExch", 2, "warning"),
        ("atomicAdd", 1, "warning"),
    ):
        k = KernelBuilder()
        k.background()
        exchange = k.node("shared", "atomic", executions=141, lanes=4, addresses=atomic_addresses, line=313)
        k.edge(exchange, 0, "cold")
        store = k.node("shared", "write", executions=1, lanes=1, addresses=1, line=540)
        k.edge(store, exchange, "block", synced=0, synced_bytes=0)
        kernel = k.build()
        kernel["nodes"][exchange]["source"]["inline"] = [
            {"function": f"{operation}(unsigned int*, unsigned int)", "file": header, "line": 100}
        ]
        race = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate")
        assert race["pcs"] == [store] and race["severity"] == severity, (operation, atomic_addresses)
        assert race["metrics"]["uniform_stores"] is (severity == "information")


def test_a_plain_read_against_atomics_is_a_hint_but_a_plain_store_stays_a_warning():
    # GIVEN mri-gridding's binning: a plain read of a bin's count (an optimistic pre-check), then atomicAdd by
    # other warps; a plain store against those atomics can lose updates, and a read after them (of the sum they
    # built, with no barrier between) is the classic missing-barrier race
    for other, read_pc, severity in (
        ("read", 0x100, "hint"),
        ("write", 0x100, "warning"),
        ("read", 0x300, "warning"),
    ):
        k = KernelBuilder()
        k.background()
        add = k.node("global", "atomic", executions=512, addresses=7, line=45, pc=0x200)
        k.edge(add, 0, "cold")
        plain = k.node("global", other, executions=512, addresses=7, line=44, pc=read_pc)
        k.edge(plain, add, "block", synced=0, synced_bytes=0)
        race = next(f for f in find_findings(k.build()) if f["pattern"] == "race-candidate")
        assert race["pcs"] == [plain] and race["severity"] == severity, (other, read_pc)
        assert (race["metrics"].get("unseen_order") == "atomic_load") == (severity == "hint")
    # THEN between blocks (Parboil histo's saturation pre-check of a counter other blocks add to) the read gets the
    # same words, not the grid's generic "make the updates atomic", which they already are
    k = KernelBuilder()
    k.background()
    add = k.node("global", "atomic", executions=512, addresses=7, line=37, pc=0x200)
    k.edge(add, 0, "cold")
    plain = k.node("global", "read", executions=512, addresses=7, line=32, pc=0x100)
    k.edge(plain, add, "grid", synced=0, synced_bytes=0)
    race = next(f for f in find_findings(k.build()) if f["pattern"] == "race-candidate")
    assert race["scope"] == "grid" and race["severity"] == "hint"
    assert "a plain read against atomics sees one value or the other" in race["message"]


def test_an_eight_byte_shared_store_of_one_value_by_every_thread_is_a_uniform_store():
    # GIVEN cutcp's `myBinIndex` (an int3's x and y as one STS.64) stored by every thread of the block: shared
    # `addresses` count 4-byte words, so one 8-byte location is 2 of them
    for size, words, uniform in ((8, 2, True), (4, 2, False)):
        k = KernelBuilder()
        store = k.node("shared", "write", executions=2916, size=size, addresses=words, line=160)
        total = 2916 * 32
        k.edge(store, 0, "cold", 1 / total)
        k.edge(store, store, "warp_same_inst", 31 / 32)
        k.edge(store, store, "block", 1 - 1 / total - 31 / 32, synced=0, synced_bytes=0)
        race = next(f for f in find_findings(k.build()) if f["pattern"] == "race-candidate")
        assert race["metrics"]["uniform_stores"] is uniform, (size, words)
        assert race["severity"] == ("information" if uniform else "warning")


def test_bank_conflicts_of_a_data_dependent_shared_atomic_have_no_padding_fix():
    # GIVEN Parboil histo's shared histogram: atomicAdd(&hist[bin], 1) whose wavefronts run from 1 to 6 with the
    # data, against a strided read whose conflicts are the same at every access (a layout to pad)
    for node_type, wavefronts, data_dependent in (
        ("atomic", [[1, 300], [2, 300], [3, 200], [4, 100], [6, 100]], True),
        ("read", [[4, 1000]], False),
    ):
        k = KernelBuilder()
        node = k.node("shared", node_type, executions=1000, line=58)
        k.edge(node, 0, "cold")
        kernel = k.build()
        kernel["nodes"][node]["wavefronts"] = wavefronts
        finding = next(f for f in find_findings(kernel) if f["pattern"] == "bank-conflict")
        assert finding["fix"]["kind"] == ("none" if data_dependent else "padding"), node_type
        assert finding["severity"] == ("information" if data_dependent else "warning")
        assert ("data-dependent" in finding["message"]) == data_dependent


def test_reads_of_a_block_uniform_shared_scalar_that_every_thread_stores_are_the_benign_idiom():
    # GIVEN cutcp's `myBinIndex.z = ...` by all threads (one shared word), read back by every thread before the next
    # barrier: some reads come before another warp's (identical) store; a read of a one-thread store stays a race
    for lanes, severity in ((32, "information"), (1, "warning")):
        k = KernelBuilder()
        store = k.node("shared", "write", executions=2916, lanes=lanes, addresses=1, line=161)
        k.edge(store, 0, "cold")
        read = k.node("shared", "read", executions=2916, addresses=1, line=185)
        k.edge(read, store, "thread", 0.9)
        k.edge(read, read, "warp_same_inst", 0.05)
        k.edge(read, store, "block", 0.05, synced=0, synced_bytes=0)
        race = next(f for f in find_findings(k.build()) if f["pattern"] == "race-candidate" and f["pcs"] == [read])
        assert race["severity"] == severity, lanes
        assert ("threads read one location that every lane stores to" in race["message"]) == (lanes == 32)


def test_recorded_values_that_differ_keep_reads_of_a_shared_scalar_a_race():
    # GIVEN the cutcp-like shared scalar, profiled with values: the stores wrote different values, so a read before
    # the barrier can see another thread's value, a race
    k = KernelBuilder()
    store = k.node("shared", "write", executions=2916, addresses=1, line=161)
    k.edge(store, 0, "cold")
    read = k.node("shared", "read", executions=2916, addresses=1, line=185)
    k.edge(read, store, "thread", 0.9)
    k.edge(read, read, "warp_same_inst", 0.05)
    k.edge(read, store, "block", 0.05, synced=0, synced_bytes=0)
    kernel = k.build()
    benign = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate" and f["pcs"] == [read])
    assert benign["severity"] == "information"
    _with_values(kernel, store, uniform=2916, silent=0)
    race = next(f for f in find_findings(kernel) if f["pattern"] == "race-candidate" and f["pcs"] == [read])
    assert race["severity"] == "warning"
