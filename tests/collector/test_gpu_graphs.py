"""Kernels launched through CUDA graphs (tests/gpu/graphs.cu) on a real GPU (docs/collector.md, "CUDA graphs"): each
kernel node of each graph launch is a launch of its own in run.json, marked as a graph node and not instrumented; the
app runs to the same results, the direct launches before and after a graph keep exactly their records (a graph
instantiated before the first direct launch included: its module is patched at the instantiation, not at that
launch, which left the graph's kernels on an illegal instruction), and the report says what was left out. Until
session 45 the collector saw no graph launch at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher

REPO = Path(__file__).resolve().parents[2]
SCALE, ACCUMULATE = "_Z5scalePKfPfi", "_Z10accumulatePKfPfi"

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("graphs") / "graphs"
    subprocess.run(
        ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(exe), str(REPO / "tests/gpu/graphs.cu")], check=True
    )
    return exe


def profiled(graphs: Path, run: Path, mode: str) -> dict:
    summary = launcher.profile([str(graphs), mode], run_dir=run, timeout=120)
    assert summary.status == "complete", summary.partial_reason
    assert summary.exit_code == 0  # graphs.cu checks its results and exits 1 on a wrong one or a CUDA error
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["errors"] == []
    for launch in manifest["launches"]:
        assert launch["grid"] == [32, 1, 1] and launch["block"] == [256, 1, 1], launch
        assert launch["status"] == "complete", launch
    return manifest


def test_graph_nodes_are_listed_not_instrumented_and_direct_launches_keep_their_records(graphs, tmp_path):
    direct = profiled(graphs, tmp_path / "direct", "direct")["launches"]
    assert [x["kernel"] for x in direct] == [SCALE, ACCUMULATE] and all(x["records"] for x in direct)
    manifest = profiled(graphs, tmp_path / "run", "all")
    launches = manifest["launches"]
    # direct: scale, accumulate; the captured graph twice; the graph built node by node once
    assert [x["kernel"] for x in launches] == [SCALE, ACCUMULATE] * 4
    assert [bool(x.get("graph_node")) for x in launches] == [False, False] + [True] * 6
    assert [x["instrumented"] for x in launches] == [True, True] + [False] * 6
    assert [x["records"] for x in launches[:2]] == [x["records"] for x in direct]
    collector = manifest["collector"]
    assert (collector["graph_launches"], collector["graph_kernel_nodes"], collector["launches_instrumented"]) == (
        3,
        6,
        2,
    )
    log = (tmp_path / "run" / "collector.log").read_text()
    assert "CUDA graph nodes seen" in log and "exit: 3 CUDA graph launches, 6 kernel nodes launched" in log


@pytest.mark.parametrize("mode, launches", [("capture", 4), ("manual", 2)])
def test_graph_only_app_runs_and_its_report_says_what_was_left_out(graphs, tmp_path, mode, launches):
    run = tmp_path / "run"
    manifest = profiled(graphs, run, mode)
    assert len(manifest["launches"]) == launches and not any(x["instrumented"] for x in manifest["launches"])
    assert "graph instantiated: 1 modules patched" in (run / "collector.log").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "reuselens", "analyze", "--quiet", str(run)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((run / "report.json").read_text())
    assert report["kernels"] == []
    notes = [n for n in report["notes"] if "CUDA graphs" in n]
    assert notes == [notes[0]] and notes[0].startswith(f"{launches} kernel launch(es) of 2 kernel(s) ran inside")


def test_direct_launches_around_a_graph_instantiated_first(graphs, tmp_path):
    direct = [x["records"] for x in profiled(graphs, tmp_path / "direct", "direct")["launches"]]
    manifest = profiled(graphs, tmp_path / "run", "interleaved")
    launches = manifest["launches"]
    assert [bool(x.get("graph_node")) for x in launches] == [False, False, True, True, False, False]
    assert [x["records"] for x in launches if x["instrumented"]] == direct * 2
    assert "graph instantiated: 1 modules patched" in (tmp_path / "run" / "collector.log").read_text()
