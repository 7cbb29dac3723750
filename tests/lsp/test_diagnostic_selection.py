"""Which findings become diagnostics and how they are told apart: streaming rows stay out of the Problems panel
unless asked for, and findings of several kernels on one line name their kernel."""

from __future__ import annotations

from reuselens.lsp_server import diagnostics, settings
from reuselens.lsp_server.model import RunResults

SOURCE = "/src/scan.cu"


def finding(pattern: str, node_id: int, message: str) -> dict:
    return {
        "id": f"{pattern}@{node_id}",
        "pattern": pattern,
        "severity": "information",
        "rank": 1,
        "pcs": [node_id],
        "origin_pcs": [],
        "scope": None,
        "message": message,
        "waste": {"bytes": 4096, "share": 0.5},
        "fix": {"kind": "none"},
    }


def kernel(kernel_id: str, name: str, findings: list[dict], block=(256, 1, 1)) -> dict:
    node = {
        "id": 1,
        "function": name,
        "pc": 16,
        "space": "global",
        "type": "read",
        "size": 4,
        "bytes": 4096,
        "source": {"file": SOURCE, "line": 3},
    }
    return {
        "id": kernel_id,
        "name": name,
        "mangled": name,
        "grid": [4, 1, 1],
        "block": list(block),
        "nodes": [{"id": 0, "space": None}, node],
        "edges": [],
        "barriers": [],
        "findings": findings,
    }


def built(report: dict, show_streaming: bool = False, min_share: float = 0.0) -> list:
    results = RunResults(report, "/run/report.json", "0" * 64, {})
    lines = ["", "", "  out[i] = in[i];"]
    return diagnostics.build(
        results, SOURCE, lines, None, "docs", lambda path, line: None, min_share, None, show_streaming=show_streaming
    )


def test_min_share_hides_traffic_findings_but_never_race_candidates():
    # GIVEN a race candidate and a coalescing finding, both a tiny share of the kernel's traffic: the analysis keeps
    # race candidates whatever their share, and so must the editor when it applies minShare (session 45: the
    # breadth set's race warnings, 0.01% of their kernels' traffic, never reached the Problems panel)
    race, sectors = finding("race-candidate", 1, "race"), finding("poor-coalescing", 1, "sectors")
    race["waste"] = sectors["waste"] = {"bytes": 510, "share": 0.000146}
    report = {"kernels": [kernel("k0", "void k(float*)", [race, sectors])]}
    assert sorted(d.code for d in built(report, min_share=0.01)) == ["race-candidate"]
    assert sorted(d.code for d in built(report)) == ["poor-coalescing", "race-candidate"]


def test_streaming_findings_are_published_only_when_asked_for():
    report = {
        "kernels": [
            kernel(
                "k0",
                "void scan<float>(float*)",
                [finding("streaming-access", 1, "streams"), finding("poor-coalescing", 1, "sectors")],
            )
        ]
    }
    assert [d.code for d in built(report)] == ["poor-coalescing"]
    assert sorted(d.code for d in built(report, show_streaming=True)) == ["poor-coalescing", "streaming-access"]


def test_the_setting_is_read_from_the_configuration():
    assert settings.parse({}, "/ws")[0].show_streaming is False
    assert settings.parse({"diagnostics": {"showStreaming": True}}, "/ws")[0].show_streaming is True


def test_findings_of_two_instantiations_on_one_line_name_their_kernels():
    report = {
        "kernels": [
            kernel("k0", "void scan<float>(float*)", [finding("poor-coalescing", 1, "sectors")]),
            kernel("k1", "void scan<double>(double*)", [finding("poor-coalescing", 1, "sectors")]),
        ]
    }
    assert sorted(d.message for d in built(report)) == ["sectors [kernel scan<double>]", "sectors [kernel scan<float>]"]


def test_one_kernel_in_two_configurations_is_told_apart_by_its_launch():
    report = {
        "kernels": [
            kernel("k0", "void scan(float*)", [finding("poor-coalescing", 1, "sectors")]),
            kernel("k1", "void scan(float*)", [finding("poor-coalescing", 1, "sectors")], (128, 1, 1)),
        ]
    }
    assert sorted(d.message for d in built(report)) == [
        "sectors [kernel scan <<<4x1x1, 128x1x1>>>]",
        "sectors [kernel scan <<<4x1x1, 256x1x1>>>]",
    ]


def test_a_line_of_one_kernel_keeps_its_message():
    report = {
        "kernels": [
            kernel("k0", "void scan<float>(float*)", [finding("poor-coalescing", 1, "sectors")]),
            kernel("k1", "void scan<double>(double*)", [finding("streaming-access", 1, "streams")]),
        ]
    }
    assert [d.message for d in built(report)] == ["sectors"]


def test_an_instruction_inlined_from_a_toolkit_header_sits_on_the_apps_call_site():
    # GIVEN an atomicAdd inlined from the toolkit's device_atomic_functions.hpp into the app's kernel at app.cu:48,
    # and a node wholly inside another toolkit header (no call site of the app's): the first goes to the app's line,
    # the second stays where it is
    header = "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp"
    inlined = {
        "file": header,
        "line": 107,
        "inline": [
            {"function": "atomicAdd(int*, int)", "file": header, "line": 107},
            {"function": "testKernel(int*)", "file": SOURCE, "line": 3},
        ],
    }
    report = {"kernels": [kernel("k0", "void k(int*)", [finding("atomic-contention", 1, "contended")])]}
    report["kernels"][0]["nodes"][1]["source"] = inlined
    results = RunResults(report, "/run/report.json", "0" * 64, {})
    assert set(results.nodes_by_line) == {SOURCE} and set(results.findings_by_file) == {SOURCE}
    assert [d.code for d in built(report)] == ["atomic-contention"]
    other = "/usr/local/cuda-13.0/include/cooperative_groups/details/helpers.h"
    report["kernels"][0]["nodes"][1]["source"] = {"file": other, "line": 87, "inline": [{"file": other, "line": 87}]}
    assert set(RunResults(report, "/run/report.json", "0" * 64, {}).nodes_by_line) == {other}


def test_a_barrier_inlined_from_cooperative_groups_sits_on_the_apps_call():
    header = "/usr/local/cuda/targets/x86_64-linux/include/sm_30_intrinsics.hpp"
    barrier = {
        "pc": 400,
        "kind": "block",
        "executions": 8,
        "source": {
            "file": header,
            "line": 98,
            "inline": [
                {"function": "__barrier_sync(unsigned int)", "file": header, "line": 98},
                {"function": "cooperative_groups::__v1::thread_block::sync()", "file": header, "line": 489},
                {"function": "k(int*)", "file": SOURCE, "line": 3},
            ],
        },
    }
    report = {"kernels": [kernel("k0", "void k(int*)", [])]}
    report["kernels"][0]["barriers"] = [barrier]
    results = RunResults(report, "/run/report.json", "0" * 64, {})
    assert {path: sorted(lines) for path, lines in results.barriers_by_line.items()} == {SOURCE: [3]}
