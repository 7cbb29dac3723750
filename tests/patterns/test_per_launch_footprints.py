"""Footprints are per launch: a report entry merges a kernel's launches, and cold edges count first touches
per launch (docs/engine.md), so summed cold bytes grow with the number of launches."""

from __future__ import annotations

from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import find_findings


def index_table(launches: int, entries: int = 512) -> tuple[dict, int]:
    """An int table of `entries` read warp-uniformly (`tbl[col]`) by 8 warps per launch, every entry per warp;
    the report entry merges `launches` launches, and each launch's first touches are cold again."""
    k = KernelBuilder()
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
