"""Footprints are per launch: a report entry merges a kernel's launches, and cold edges count first touches
per launch (docs/engine.md), so summed cold bytes grow with the number of launches."""

from __future__ import annotations

from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import find_findings


def index_table(launches: int, entries: int = 512) -> tuple[dict, int]:
    """An int table of `entries` read warp-uniformly (`tbl[col]`) by 8 warps per launch, every entry per warp;
    the report entry merges `launches` launches, and each launch's first touches are cold again."""
    k = KernelBuilder(grid=(1, 1, 1))  # one block of 256 threads: 8 warps a launch
    k.background()
    executions = launches * 8 * entries
    table = k.node("global", "read", executions=executions, addresses=1, sectors=1, line=21)
    cold = launches * entries * 4 / (executions * 32 * 4)
    k.edge(table, 0, "cold", cold)
    k.edge(table, table, "warp_same_inst", 31 / 32)
    k.edge(table, table, "block", 1 - cold - 31 / 32)
    k.kernel["launches"] = list(range(launches))
    return k.build(), table


def test_a_2kb_table_read_by_200_launches_is_a_constant_region():
    kernel, table = index_table(launches=200)
    findings = find_findings(kernel)
    region = next(f for f in findings if f["pattern"] == "constant-region")
    assert region["pcs"] == [table] and region["fix"]["kind"] == "constant-promotion"
    assert region["metrics"]["footprint_bytes"] == 2048 and region["metrics"]["launches"] == 200
    assert "read-only region of 2.0 KB per launch, 200 launches" in region["message"]
    assert "broadcasting" not in [f["pattern"] for f in findings]


def test_the_capacity_still_bounds_one_launch():
    kernel, _table = index_table(launches=200, entries=32 * 1024)  # 128 KB per launch
    patterns = [f["pattern"] for f in find_findings(kernel)]
    assert "constant-region" not in patterns and "broadcasting" in patterns


def test_a_thread_private_shared_buffer_is_sized_per_block_of_one_launch():
    k = KernelBuilder(grid=(64, 1, 1))
    store = k.node("shared", "write", executions=2048, line=40)
    k.edge(store, 0, "cold")
    load = k.node("shared", "read", executions=2048, line=41)
    k.edge(load, store, "thread")
    k.kernel["launches"] = [0, 1, 2, 3]
    finding = next(f for f in find_findings(k.build()) if f["pattern"] == "abuse-smem")
    # 2048 warp stores of 128 B over 4 launches of 64 blocks: 1 KB per block
    assert finding["metrics"]["footprint_bytes_per_block"] == 1024


def produced_table(launches: int, written_share: float) -> dict:
    """index_table's kernel where `written_share` of the cold bytes follow a write by an earlier launch of
    another kernel (RAW cold edge with a prior-kernel origin), the rest a read."""
    kernel, table = index_table(launches)
    (cold,) = [e for e in kernel["edges"] if e["label"] == "cold" and e["from"] == table]
    kernel["edges"].remove(cold)
    origin = {"kernel": "_Z6writerPi", "kernel_function_id": 1, "function_id": 1, "pc": 0x40, "function": "w"}
    written = round(cold["accesses"] * written_share)
    for accesses, kind in ((written, "raw"), (cold["accesses"] - written, "rar")):
        if accesses:
            edge = {**cold, "bytes": accesses * 4, "accesses": accesses, "rar": 0, "raw": 0}
            edge[kind] = accesses
            edge["prior_kernel"] = {**origin, "bytes": accesses * 4}
            kernel["edges"].append(edge)
    return kernel


def test_a_table_rewritten_between_launches_is_no_constant_region():
    """A blocked LU's pivot row: the other kernel of each step writes it before every launch that reads it, so
    one __constant__ copy cannot serve the run (issue #15)."""
    patterns = [f["pattern"] for f in find_findings(produced_table(launches=33, written_share=1.0))]
    assert "constant-region" not in patterns and "broadcasting" in patterns


def test_a_table_produced_once_by_a_kernel_is_still_a_constant_region():
    # produced once, read by 33 launches: only the first launch's first touches follow the write
    findings = find_findings(produced_table(launches=33, written_share=1 / 33))
    assert "constant-region" in [f["pattern"] for f in findings]
    # and with one launch, data written before it is produced once by definition
    assert "constant-region" in [f["pattern"] for f in find_findings(produced_table(launches=1, written_share=1.0))]


def test_hierarchical_reuse_footprint_is_one_launchs():
    # GIVEN a stencil-like load whose reuse crosses blocks, merged over 254 launches that each touch 256 KB
    k = KernelBuilder()
    k.background()
    launches, per_launch = 254, 256 * 1024
    executions = launches * per_launch // 128 * 3  # each 128-byte row read three times per launch
    rows = k.node("global", "read", executions=executions, line=131)
    k.edge(rows, 0, "cold", 1 / 3)
    k.edge(rows, rows, "grid", 2 / 3)
    k.kernel["launches"] = list(range(launches))
    finding = next(f for f in find_findings(k.build()) if f["pattern"] == "hierarchical-reuse-grid")
    assert finding["metrics"]["footprint_bytes"] == per_launch
    assert "(footprint 262.1 KB per launch, 254 launches)" in finding["message"]


def busy_coalesced_kernel() -> dict:
    """A kernel of 200 coalesced first-touch loads, 105 MB in all: most of a run's traffic."""
    k = KernelBuilder()
    for line in range(200):
        k.node("global", "read", executions=4096, line=100 + line)
        k.edge(line + 1, 0, "cold")
    kernel = k.build()
    kernel["id"], kernel["mangled"] = "big", "_Z3bigv"
    return kernel


def test_a_warning_must_matter_to_the_run_not_only_to_its_kernel():
    # GIVEN a run of two kernels: a big well-coalesced one and a tiny one whose one load is uncoalesced (a scan's
    # inter-block step): the tiny kernel's coalescing waste is most of its own traffic but under 1% of the run's
    from reuselens.analyzer.patterns import find_report_findings

    def uncoalesced(executions: int, name: str) -> dict:
        k = KernelBuilder()
        node = k.node("global", "read", executions=executions, sectors=32, line=5)
        k.edge(node, 0, "cold", 0.9)
        k.edge(node, node, "block", 0.1)
        kernel = k.build()
        kernel["id"], kernel["mangled"] = name, f"_Z{len(name)}{name}v"
        return kernel

    big_kernel = busy_coalesced_kernel()
    alone = find_report_findings([uncoalesced(640, "tiny")])[0]
    assert [f["severity"] for f in alone if f["pattern"] == "poor-coalescing"] == ["warning"]
    _big, tiny = find_report_findings([big_kernel, uncoalesced(64, "tiny")])
    (coalescing,) = [f for f in tiny if f["pattern"] == "poor-coalescing"]
    assert coalescing["severity"] == "hint"  # under a thousandth of the run: out of the editor's problem list
    assert "(a minor part of the run: under 0.1% of its traffic)" in coalescing["message"]
    # ten times the work, still under 1% of the run: information
    _big, small = find_report_findings([big_kernel, uncoalesced(640, "small")])
    (coalescing,) = [f for f in small if f["pattern"] == "poor-coalescing"]
    assert coalescing["severity"] == "information" and "of its traffic)" in coalescing["message"]
    # the same kernel at 100 times the work matters to the run
    _big, busy = find_report_findings([big_kernel, uncoalesced(6400, "busy")])
    assert [f["severity"] for f in busy if f["pattern"] == "poor-coalescing"] == ["warning"]


def test_a_warning_must_waste_more_than_a_few_kilobytes():
    # GIVEN cuda-samples simpleVoteIntrinsics: a tiny app whose one uncoalesced load wastes 192 bytes, most of its
    # own traffic: information, saying how little; the same load run 16 times as often is a warning
    from reuselens.analyzer.patterns import find_report_findings

    def uncoalesced(executions: int) -> dict:
        k = KernelBuilder()
        node = k.node("global", "read", executions=executions, sectors=32, line=5)
        k.edge(node, 0, "cold")
        return k.build()

    (alone,) = find_report_findings([uncoalesced(64)])
    (coalescing,) = [f for f in alone if f["pattern"] == "poor-coalescing"]
    assert coalescing["severity"] == "information" and coalescing["waste"]["bytes"] == 64 * 28 * 32
    assert coalescing["message"].endswith("(only 57.3 KB in the whole run)")
    (busier,) = find_report_findings([uncoalesced(1024)])
    assert [f["severity"] for f in busier if f["pattern"] == "poor-coalescing"] == ["warning"]


def test_race_candidates_keep_their_severity_however_small_in_the_run():
    # GIVEN a tiny kernel with an unsynchronized block race next to a big kernel: correctness is not a share
    from reuselens.analyzer.patterns import find_report_findings

    big_kernel = busy_coalesced_kernel()
    k = KernelBuilder()
    w = k.node("shared", "write", executions=8, line=10)
    k.edge(w, 0, "cold")
    r = k.node("shared", "read", executions=8, line=11)
    k.edge(r, w, "block", synced=0, synced_bytes=0)
    tiny = k.build()
    tiny["id"], tiny["mangled"] = "tiny", "_Z4tinyv"
    _big, findings = find_report_findings([big_kernel, tiny])
    (race,) = [f for f in findings if f["pattern"] == "race-candidate"]
    assert race["severity"] == "warning" and "minor part of the run" not in race["message"]


def test_a_templates_instantiations_share_one_warning_per_source_line():
    # GIVEN SHOC scan's reduce<float, 256> and reduce<double, 256>: the same uncoalesced load on one source line in
    # two instantiations, one edit of the source; and a kernel of another name that inlines the same line
    from reuselens.analyzer.patterns import find_report_findings

    def kernel(name: str, executions: int) -> dict:
        k = KernelBuilder()
        node = k.node("global", "read", executions=executions, sectors=32, line=127)
        k.edge(node, 0, "cold")
        built = k.build()
        built["id"], built["name"] = name, f"void {name}(float const*, float*, int)"
        return built

    def coalescing(*kernels: dict) -> list[list[dict]]:
        return [[f for f in fs if f["pattern"] == "poor-coalescing"] for fs in find_report_findings(list(kernels))]

    small, large = kernel("reduce<float, 256>", 4096), kernel("reduce<double, 256>", 8192)
    findings = coalescing(small, large)
    assert [f["severity"] for f in findings[1]] == ["warning"]  # the one that wastes most
    assert [f["severity"] for f in findings[0]] == ["information"]
    assert findings[0][0]["message"].endswith(
        "(the same lines as the warning in void reduce<double, 256>(float const*, float*, int))"
    )
    assert [f["severity"] for fs in coalescing(small, kernel("scan_helper_user", 8192)) for f in fs] == [
        "warning",
        "warning",
    ]


def test_a_reload_of_a_few_warp_instructions_per_launch_is_no_warning():
    # GIVEN PolyBench adi's kernel4: a reload the same thread could keep in a register, 4,096 warp loads in all; in one
    # launch it is a warning, spread over 64 launches (64 per launch, nanoseconds against a launch's microseconds)
    # it is information saying so
    from reuselens.analyzer.patterns import find_report_findings

    def reload(launches: int) -> dict:
        k = KernelBuilder()
        first = k.node("global", "read", executions=4096, line=41)
        k.edge(first, 0, "cold")
        again = k.node("global", "read", executions=4096, line=42)
        k.edge(again, first, "thread")
        kernel = k.build()
        kernel["launches"] = list(range(launches))
        return kernel

    (once,) = find_report_findings([reload(1)])
    assert [f["severity"] for f in once if f["pattern"] == "redundant-rar"] == ["warning"]
    (spread,) = find_report_findings([reload(64)])
    (finding,) = [f for f in spread if f["pattern"] == "redundant-rar"]
    assert finding["severity"] == "information"
    assert finding["message"].endswith("(only 64 warp instructions per launch)")


def test_a_shared_memory_reload_in_a_kernel_streaming_from_dram_is_no_warning():
    # GIVEN cuda-samples scalarProd: a thread re-reads the shared element it stored (RAW) in a kernel whose traffic is
    # mostly first-touch global loads; with a stream of under half its traffic the reload stays a warning
    from reuselens.analyzer.patterns import find_report_findings

    def kernel(streamed_loads: int) -> dict:
        k = KernelBuilder()
        for line in range(streamed_loads):
            k.node("global", "read", executions=4096, line=10 + line)
            k.edge(line + 1, 0, "cold")
        store = k.node("shared", "write", executions=4096, line=80)
        k.edge(store, 0, "cold")
        load = k.node("shared", "read", executions=4096, line=81)
        k.edge(load, store, "thread")
        partner = k.node("shared", "read", executions=4096, line=82)  # the tree's other operand: shared for real
        k.edge(partner, store, "block")
        return k.build()

    (streaming,) = find_report_findings([kernel(4)])
    (finding,) = [f for f in streaming if f["pattern"] == "redundant-raw"]
    assert finding["severity"] == "information"
    assert finding["message"].endswith(
        "(the kernel streams 57% of its traffic from DRAM: fewer shared-memory accesses will not shorten it)"
    )
    (reusing,) = find_report_findings([kernel(1)])
    assert [f["severity"] for f in reusing if f["pattern"] == "redundant-raw"] == ["warning"]


def test_information_under_a_thousandth_of_the_run_is_a_hint():
    # GIVEN a kernel whose uncoalesced load is a small part of its own sectors (information, not a warning), run
    # beside a big kernel: under a thousandth of the run's traffic it leaves the problem list, as a warning that small
    # would have (session 56's reviews: small-waste findings that kept their place at information)
    from reuselens.analyzer.patterns import find_report_findings

    def mostly_coalesced(scale: int) -> dict:
        k = KernelBuilder()
        streamed = k.node("global", "read", executions=64 * scale, line=4)
        k.edge(streamed, 0, "cold")
        uncoalesced = k.node("global", "read", executions=scale, sectors=32, line=5)
        k.edge(uncoalesced, 0, "cold")
        kernel = k.build()
        kernel["id"], kernel["mangled"] = f"small{scale}", f"_Z7small{scale}v"
        return kernel

    (alone,) = find_report_findings([mostly_coalesced(64)])
    (coalescing,) = [f for f in alone if f["pattern"] == "poor-coalescing"]
    assert coalescing["severity"] == "information" and "minor part of the run" not in coalescing["message"]
    _big, beside = find_report_findings([busy_coalesced_kernel(), mostly_coalesced(64)])
    (coalescing,) = [f for f in beside if f["pattern"] == "poor-coalescing"]
    assert coalescing["severity"] == "hint"
    assert coalescing["message"].endswith("(a minor part of the run: under 0.1% of its traffic)")
    # at a hundred times the work it is over a thousandth of the run: information still
    _big, busier = find_report_findings([busy_coalesced_kernel(), mostly_coalesced(6400)])
    assert [f["severity"] for f in busier if f["pattern"] == "poor-coalescing"] == ["information"]


def test_a_removable_barrier_is_not_judged_by_the_runs_bytes():
    # GIVEN a barrier in a loop that orders nothing, in a kernel beside a big one: it wastes waits, not bytes
    from reuselens.analyzer.patterns import find_report_findings

    k = KernelBuilder()
    k.background()
    k.kernel["barriers"] = [
        {
            "function": k.kernel["mangled"],
            "pc": 0x800,
            "kind": "block",
            "executions": 8192,
            "spanned_cross_thread_edges": 0,
            "spans": [],
            "source": {"file": "/src/app.cu", "line": 30, "column": 0, "inline": []},
        }
    ]
    kernel = k.build()
    kernel["id"], kernel["mangled"] = "synced", "_Z6syncedv"
    alone = [f for f in find_report_findings([kernel])[0] if f["pattern"] == "removable-barrier"]
    beside = [
        f for f in find_report_findings([busy_coalesced_kernel(), kernel])[1] if f["pattern"] == "removable-barrier"
    ]
    assert [f["severity"] for f in alone] == ["information"]  # executed in a loop (more than once a warp)
    assert [f["severity"] for f in beside] == ["information"]
