"""Findings are stable across runs and input order, free of duplicates, and bad settings are refused."""

from __future__ import annotations

import copy
import json
import random

import pytest
from pattern_kernels import KernelBuilder
from test_pattern_rules import global_reader, rar_kernel, reuse_kernel, shared_reader, softmax_like, uniform_reader

from reuselens.analyzer.errors import ReportError, SettingsError
from reuselens.analyzer.patterns import DEFAULT_SETTINGS, PATTERNS, find_findings


def busy_kernel() -> dict:
    """One kernel carrying many patterns at once: softmax groups, a conflict, a race, a barrier, streams."""
    kernel, _private, _broadcast = softmax_like()
    k = KernelBuilder(kernel["mangled"], grid=kernel["grid"], block=kernel["block"])
    k.kernel = kernel
    k._pc = 0x1000
    staged = k.node("shared", "write", executions=8192, line=89)
    k.edge(staged, 0, "cold")
    conflicted = k.node("shared", "read", executions=8192, wavefronts=8, line=90)
    k.edge(conflicted, staged, "block", synced=0)  # another warp's data, read with no barrier in between
    gather = k.node("global", "read", executions=8192, sectors=32, line=91)
    k.edge(gather, 0, "cold", 0.5)
    k.edge(gather, 1, "thread", 0.5)
    k.barrier(0x1100, spanned=0, line=92)
    return k.build()


def location_view(kernel: dict, findings: list[dict]) -> list[tuple]:
    """Findings with node ids replaced by (function, pc), so renumbered inputs compare equal."""
    key = {n["id"]: (n["function"], n["pc"]) for n in kernel["nodes"]}
    return [
        (
            f["id"],
            f["rank"],
            f["pattern"],
            f["severity"],
            tuple(key[i] for i in f["pcs"]),
            tuple(key[i] for i in f["origin_pcs"]),
            json.dumps(f["waste"], sort_keys=True),
            f["message"],
        )
        for f in findings
    ]


def renumbered(kernel: dict, seed: int) -> dict:
    """The same kernel with node ids permuted (0 stays Cold Miss) and nodes, edges, barriers shuffled."""
    rng = random.Random(seed)
    copy_ = copy.deepcopy(kernel)
    ids = [n["id"] for n in copy_["nodes"] if n["id"] != 0]
    shuffled = ids[:]
    rng.shuffle(shuffled)
    mapping = {0: 0, **dict(zip(ids, shuffled))}
    for node in copy_["nodes"]:
        node["id"] = mapping[node["id"]]
    for edge in copy_["edges"]:
        edge["from"], edge["to"] = mapping[edge["from"]], mapping[edge["to"]]
    for items in (copy_["nodes"], copy_["edges"], copy_["barriers"]):
        rng.shuffle(items)
    return copy_


def test_busy_kernel_has_the_expected_patterns():
    patterns = sorted(f["pattern"] for f in find_findings(busy_kernel()))
    assert {
        "abuse-smem",
        "bank-conflict",
        "race-candidate",
        "poor-coalescing",
        "redundant-rar",
        "removable-barrier",
    } <= set(patterns)


@pytest.mark.parametrize("seed", range(8))
def test_same_ids_and_ranks_for_shuffled_and_renumbered_input(seed):
    kernel = busy_kernel()
    expected = location_view(kernel, find_findings(kernel))
    other = renumbered(kernel, seed)
    assert location_view(other, find_findings(other)) == expected


def test_same_input_twice_gives_identical_output():
    kernel = busy_kernel()
    assert json.dumps(find_findings(kernel)) == json.dumps(find_findings(copy.deepcopy(kernel)))


def test_input_is_not_modified():
    kernel = busy_kernel()
    before = json.dumps(kernel, sort_keys=True)
    find_findings(kernel)
    assert json.dumps(kernel, sort_keys=True) == before


def test_ids_depend_on_kernel_configuration_not_on_positions():
    kernel = busy_kernel()
    other = copy.deepcopy(kernel)
    other["grid"] = [256, 1, 1]
    ids = {f["id"] for f in find_findings(kernel)}
    assert ids.isdisjoint({f["id"] for f in find_findings(other)})


@pytest.mark.parametrize(
    "make",
    [
        busy_kernel,
        lambda: softmax_like()[0],
        lambda: rar_kernel("thread")[0],
        lambda: shared_reader(32),
        lambda: global_reader(32),
        lambda: uniform_reader(1, 1 / 4096)[0],
        lambda: reuse_kernel({"block": 0.9, "grid": 0.1}),
    ],
)
def test_findings_are_unique_and_well_formed(make):
    kernel = make()
    findings = find_findings(kernel)
    assert len({f["id"] for f in findings}) == len(findings)
    assert [f["rank"] for f in findings] == list(range(1, len(findings) + 1))
    per_pc_fix = [(pc, f["fix"]["kind"]) for f in findings for pc in f["pcs"]]
    assert len(per_pc_fix) == len(set(per_pc_fix)), "a PC is reported twice with the same fix"
    node_ids = {n["id"] for n in kernel["nodes"]}
    for f in findings:
        assert f["pattern"] in PATTERNS
        assert f["severity"] in ("warning", "information", "hint")
        assert set(f["pcs"]) <= node_ids and set(f["origin_pcs"]) <= node_ids
        assert (
            set(f["waste"]) == {"bytes", "instructions", "wavefronts", "share", "basis"}
            and 0 <= f["waste"]["share"] <= 1
        )
        assert f["waste"]["basis"] == {
            "bank-conflict": "wavefronts",
            "poor-coalescing": "sectors",
            "constant-region": "sectors",
        }.get(f["pattern"], "bytes")
        assert f["fix"]["kind"] in (
            "register-promotion",
            "constant-promotion",
            "shared-demotion",
            "padding",
            "l2-window",
            "barrier-removal",
            "shared-promotion",
            "coalescing",
            "warp-shuffle",
            "none",
        )
        assert f["fix"]["explanation"] and f["message"]
        json.dumps(f, allow_nan=False)


def test_informational_patterns_never_warn():
    k = KernelBuilder()
    node = k.node("global", "read", executions=4096, addresses=1, sectors=1)
    k.edge(node, 0, "cold", 0.5)
    k.edge(node, node, "warp_same_inst", 0.5)
    findings = find_findings(k.build(), {"constantCapacityBytes": 1})
    assert {f["pattern"] for f in findings} == {"broadcasting"}
    assert all(f["severity"] in ("information", "hint") for f in findings)


def test_min_share_drops_small_traffic_findings_but_not_races():
    kernel = busy_kernel()
    everything = {f["pattern"] for f in find_findings(kernel, {"minShare": 0.0})}
    strict = {f["pattern"] for f in find_findings(kernel, {"minShare": 0.9})}
    assert strict == {"race-candidate", "removable-barrier"} and strict < everything


def test_defaults_are_the_papers_values():
    assert DEFAULT_SETTINGS == {
        "delta": 0.8,
        "streaming": 0.95,
        "coalescing": 1.5,
        "bankConflict": 1.5,
        "constantCapacityBytes": 65536,
        "valueRedundancy": 0.5,  # not the paper's: LoadSpy reports fractions, not a threshold (issue 19)
        "minShare": 0.01,
    }


def test_report_spelling_of_settings_is_accepted():
    kernel = busy_kernel()
    assert find_findings(
        kernel, {"bank_conflict": 1.5, "constant_capacity_bytes": 65536, "min_share": 0.01}
    ) == find_findings(kernel)


@pytest.mark.parametrize(
    "settings, fragment",
    [
        ({"delta": 1.5}, "threshold delta = 1.5 is invalid: expected a number in (0, 1]"),
        ({"delta": 0}, "threshold delta = 0 is invalid"),
        ({"streaming": -0.1}, "threshold streaming = -0.1 is invalid"),
        ({"coalescing": 0.5}, "R_coal is 1 for perfect coalescing"),
        ({"bankConflict": "high"}, "threshold bankConflict = 'high' is invalid"),
        ({"constantCapacityBytes": 100.5}, "a whole number of bytes"),
        ({"minShare": float("nan")}, "threshold minShare = nan is invalid"),
        ({"delta": True}, "threshold delta = True is invalid"),
        ({"detla": 0.8}, "unknown threshold 'detla'; known thresholds: delta, streaming"),
        ([0.8], "pattern settings must be an object of thresholds, not list"),
    ],
)
def test_bad_settings_raise_one_clear_sentence(settings, fragment):
    with pytest.raises(SettingsError) as error:
        find_findings(busy_kernel(), settings)
    assert fragment in str(error.value)


def test_malformed_kernel_raises_report_error():
    with pytest.raises(ReportError, match="'edges' is missing"):
        find_findings({"mangled": "_Z1kv", "nodes": []})
    kernel = busy_kernel()
    kernel["edges"][0]["label"] = "intra_block"
    with pytest.raises(ReportError, match="edge label 'intra_block'"):
        find_findings(kernel)


def test_view_metrics_agree_with_analyzer_graph():
    from reuselens.analyzer import graph
    from reuselens.analyzer.patterns.view import KernelView, reuse_ratios

    kernel = busy_kernel()
    view = KernelView(kernel)
    g = graph.build_graph(kernel)
    for members in view.closed_subgraphs():
        ids = [n.id for n in members]
        ours = reuse_ratios(view, members, graph.REUSE_LABELS)
        for label in graph.REUSE_LABELS:
            assert ours[label] == pytest.approx(graph.reuse_ratio(g, ids, label) or 0.0)
    for node in view.memory_nodes():
        assert node.w_total() == graph.w_total(g, node.id)
        assert node.r_coal() == (graph.r_coal(node.raw) or 0.0)


def test_bank_conflict_share_is_a_share_of_shared_wavefronts():
    """A bank conflict serializes cycles, it moves no extra byte: its share is of the kernel's wavefronts."""
    from pathlib import Path

    from reuselens.analyzer.pipeline import build_report

    demo = Path(__import__("reuselens").__file__).parent / "demo" / "run"
    report = build_report(demo, write=False)
    transpose = next(k for k in report["kernels"] if k["mangled"].startswith("_Z15transpose_naive"))
    finding = next(f for f in transpose["findings"] if f["pattern"] == "bank-conflict")
    total = sum(v * c for n in transpose["nodes"] if n.get("space") == "shared" for v, c in n["wavefronts"])
    ideal = sum(v * c for n in transpose["nodes"] if n.get("space") == "shared" for v, c in n["wavefronts_ideal"])
    assert finding["waste"]["wavefronts"] == total - ideal == 3968
    assert abs(finding["waste"]["share"] - (total - ideal) / total) < 1e-6
