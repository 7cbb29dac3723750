"""networkx view, paper metrics (W_out, RI, r(l), R_coal, R_conf, closed subgraphs), report I/O and exports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from engine_records import SHARED, WRITE, mem, warp_addrs
from test_engine_labels import A, listing2_rows, node, run

from reuselens.analyzer import report
from reuselens.analyzer.errors import ReportError
from reuselens.analyzer.graph import (
    annotate_kernel,
    build_graph,
    closed_subgraphs,
    r_coal,
    r_conf,
    reuse_intensity,
    reuse_ratio,
    w_out,
    w_total,
)
from reuselens.analyzer.reporters.graph_accelprof import to_accelprof
from reuselens.analyzer.reporters.graph_dot import to_dot
from reuselens.analyzer.reporters.graph_graphml import to_graphml


def two_objects():
    """Object X (global, read twice by the same thread) and object Y (shared, written then read by other warps)."""
    rows = [
        mem(0x10, warp_addrs(A)),
        mem(0x20, warp_addrs(A)),
        mem(0x30, warp_addrs(0), space=SHARED, access=WRITE, warp=0),
        mem(0x40, warp_addrs(0), space=SHARED, warp=1),
        mem(0x40, warp_addrs(0), space=SHARED, warp=1),
        mem(0x50, warp_addrs(A + 4096, 128)),
    ]
    return run(rows, block=(64, 1, 1))


def ids(k):
    return {n["pc"]: n["id"] for n in k["nodes"] if n["id"]}


def test_graph_and_weighted_degrees():
    k = run(listing2_rows(), grid=(2, 1, 1), block=(64, 1, 1))
    g = build_graph(k)
    i = ids(k)
    assert g.number_of_nodes() == 7 and g.number_of_edges() == len(k["edges"]) == 8
    assert w_out(g, i[0x30], "warp_same_inst") == 496 and w_out(g, i[0x30], "thread") == 16
    assert w_total(g, i[0x30]) == 512
    assert g.has_edge(i[0x30], i[0x30])  # self-loop


def test_closed_subgraphs_reuse_intensity_and_ratio():
    k = two_objects()
    g = build_graph(k)
    i = ids(k)
    subs = closed_subgraphs(g)
    assert subs == [[i[0x10], i[0x20]], [i[0x30], i[0x40]], [i[0x50]]]
    # X: 128 B cold + 128 B thread reuse -> RI 2, r(thread) 1
    assert reuse_intensity(g, subs[0]) == 2.0 and reuse_ratio(g, subs[0], "thread") == 1.0
    # Y: 128 B cold (write) + 128 B block (warp 1 reads warp 0's words) + 128 B thread (it reads them again)
    assert reuse_intensity(g, subs[1]) == 3.0
    assert reuse_ratio(g, subs[1], "block") == 0.5 and reuse_ratio(g, subs[1], "thread") == 0.5
    assert reuse_ratio(g, subs[2], "grid") is None  # only cold traffic
    with pytest.raises(ValueError):
        reuse_ratio(g, subs[0], "cold")


def test_coalescing_and_conflict_ratios():
    k = two_objects()
    assert r_coal(node(k, 0x50)) == 8.0  # 32 sectors for a 4-sector footprint
    assert r_coal(node(k, 0x10)) == 1.0 and r_conf(node(k, 0x10)) is None
    assert r_conf(node(k, 0x40)) == 1.0 and r_coal(node(k, 0x40)) is None
    stride = run([mem(0x10, [4 * 32 * i for i in range(32)], space=SHARED)])
    assert r_conf(node(stride, 0x10)) == 32.0


def test_annotate_kernel_fills_subgraphs_and_metrics():
    k = annotate_kernel(two_objects())
    assert [s["nodes"] for s in k["subgraphs"]][0] == [1, 2]
    s = k["subgraphs"][1]
    assert s["footprint_bytes"] == 128 and s["bytes"] == 384 and s["reuse_intensity"] == 3.0
    assert s["bytes_by_label"] == {"cold": 128, "thread": 128, "block": 128}
    m = node(k, 0x40)["metrics"]
    assert m["W_total"] == 256 and m["W_out"]["block"] == 128 and m["subgraph"] == 1
    json.dumps(k, allow_nan=False)


def test_annotate_kernel_metrics_are_the_papers_definitions_on_a_random_graph():
    """annotate_kernel sums each node's edges once; every figure must be what w_out, w_total, reuse_intensity and
    reuse_ratio (one node or subgraph at a time) give, on a graph with parallel edges, cold edges, several
    components, nodes without edges and an edge to a node the list lacks (networkx adds it; so must the union-find
    that replaced it)."""
    import random

    rng = random.Random(43)
    labels = ["cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid"]
    nodes = [{"id": 0}] + [{"id": i, "space": rng.choice(["global", "shared"]), "pc": 16 * i} for i in range(1, 40)]
    edges = []
    for _ in range(300):
        src = rng.randrange(1, 40)
        label = rng.choice(labels)
        # components of up to 8 nodes (an edge stays in its source's eighth); nodes 33-39 only read cold or nothing
        dst = 0 if label == "cold" or src > 32 else rng.randrange(max(1, src // 8 * 8), src // 8 * 8 + 8)
        edges.append({"from": src, "to": dst, "label": label, "bytes": rng.randrange(1, 1 << 40), "accesses": 1})
    edges.append({"from": 3, "to": 99, "label": "block", "bytes": 8, "accesses": 1})  # 99: an edge's end, unlisted
    kernel = annotate_kernel({"nodes": nodes, "edges": edges})
    g = build_graph(kernel)
    for n in kernel["nodes"][1:]:
        assert n["metrics"]["W_out"] == {label: w_out(g, n["id"], label) for label in labels}
        assert n["metrics"]["W_total"] == w_total(g, n["id"])
    subs = closed_subgraphs(g)
    assert [s["nodes"] for s in kernel["subgraphs"]] == subs and len(subs) > 2
    for summary, members in zip(kernel["subgraphs"], subs):
        assert summary["reuse_intensity"] == reuse_intensity(g, members)
        for label in ("thread", "warp_diff_inst", "block", "grid"):
            assert summary["reuse_ratio"][label] == reuse_ratio(g, members, label)


def test_report_is_written_compact(tmp_path):
    """One line from the C encoder (an indented report took the json module's pure-Python encoder: 0.26 s of
    sortingNetworks' post-run time on the GPU host), read back equal."""
    rep = {"format": "reuselens-report", "version": 2, "kernels": [annotate_kernel(two_objects())]}
    text = report.save(rep, tmp_path / "report.json").read_text()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert len(text) == len(json.dumps(rep, separators=(",", ":"))) + 1


def test_a_report_that_cannot_be_written_is_an_error_and_leaves_nothing_behind(tmp_path):
    rep = {"format": "reuselens-report", "version": 2, "kernels": [annotate_kernel(two_objects())]}
    report.save(rep, tmp_path / "report.json")
    before = (tmp_path / "report.json").read_text()
    rep["kernels"][0]["nodes"][1]["bytes"] = float("nan")  # JSON has no NaN
    with pytest.raises(ReportError, match="cannot write report"):
        report.save(rep, tmp_path / "report.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary file left
    assert (tmp_path / "report.json").read_text() == before  # the last good report is kept
    with pytest.raises(ReportError, match="cannot write report"):
        report.save(dict(rep, kernels=[]), tmp_path / "missing-folder" / "report.json")


def test_report_round_trip_and_errors(tmp_path):
    rep = {"format": "reuselens-report", "version": 2, "kernels": [annotate_kernel(two_objects())]}
    p = report.save(rep, tmp_path / "report.json")
    assert report.load(p) == json.loads(json.dumps(rep))
    (tmp_path / "v3.json").write_text(json.dumps(dict(rep, version=3)))
    with pytest.raises(ReportError, match=r"v3\.json: report version 3, this build reads versions 1, 2"):
        report.load(tmp_path / "v3.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ReportError, match="not readable as JSON"):
        report.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "x"}')
    with pytest.raises(ReportError, match="not a ReuseLens report"):
        report.load(tmp_path / "other.json")
    with pytest.raises(ReportError, match="no such report"):
        report.load(tmp_path / "missing.json")


def test_exports():
    k = two_objects()
    k["mangled"] = "_Z1kPf"
    root = ET.fromstring(to_graphml(k))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == 6 and len(root.findall(".//g:edge", ns)) == len(k["edges"])
    dot = to_dot(k)
    assert dot.startswith('digraph "_Z1kPf" {') and dot.count("->") == len(k["edges"])
    ap = to_accelprof(k)
    rows = {(e["current_pc"], e["ancient_pc"]): e for e in ap["edges"]}
    assert rows[(0x20, 0x10)]["dist"]["intra_thread"] == 32
    assert rows[(0x40, 0x30)]["dist"]["intra_block"] == 32 and rows[(0x10, None)]["cold"] == 32
    assert {n["flags"] for n in ap["nodes"]} == {"READ GLOBAL", "WRITE SHARED", "READ SHARED"}
