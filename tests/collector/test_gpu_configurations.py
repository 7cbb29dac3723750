"""A kernel launched with a different grid each time, on the GPU: the collector's online analysis merges its
launches into one entry (issue #14) and splits them on request, and both equal a replay of the traces; so does
a run whose context is destroyed and created again midway, with buffers small enough that every launch wraps
around them many times."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher
from reuselens.analyzer import engine_result
from reuselens.analyzer.pipeline import build_report
from reuselens.analyzer.replay import replay_run, resolve_names

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu") / "apps"
    subprocess.run(
        ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(out), str(REPO / "tests/gpu/apps.cu")], check=True
    )
    return out


def _online(run: Path) -> dict:
    online = engine_result.load(run / "analysis.json")
    functions = {int(f["id"]): f for f in json.loads((run / "run.json").read_text())["functions"]}
    resolve_names(online, functions, [])
    return online


@pytest.mark.parametrize("split", [False, True], ids=["merged", "split"])
def test_online_result_of_varying_grids_equals_replay(apps, tmp_path, split):
    run = tmp_path / "run"
    summary = launcher.profile(
        [str(apps), "grids", "24"], run_dir=run, write_traces=True, timeout=120, split_configurations=split
    )
    assert summary.status == "complete", summary.partial_reason
    launches = [l for l in json.loads((run / "run.json").read_text())["launches"] if "diagonal" in l["kernel"]]
    grids = {tuple(launch["grid"]) for launch in launches}
    assert len(launches) == 48 and len(grids) == 24
    online = _online(run)
    diagonal = [k for k in online["kernels"] if "diagonal" in k["mangled"]]
    assert len(diagonal) == (24 if split else 1)
    assert sum(len(k["configurations"]) for k in diagonal) == 24
    replayed = replay_run(run, workers=3, split_configurations=split)
    assert online["kernels"] == replayed["kernels"]
    report = build_report(run, write=False, split_configurations=split)
    findings = [f for k in report["kernels"] if "diagonal" in k["mangled"] for f in k["findings"]]
    if not split:
        # one set of findings, each on its own PCs: nothing repeated per grid size
        assert len(findings) == len({tuple(f["pcs"]) + (f["pattern"],) for f in findings}) <= 20


# 64 records per buffer: each of the reset app's launches (69,632 records) wraps around them over a thousand times
SMALL_BUFFERS = {"buffer_bytes": 64 * 288, "buffers": 2}


@pytest.mark.parametrize("buffers", [{}, SMALL_BUFFERS], ids=["default", "small"])
def test_a_context_destroyed_midway_keeps_every_record(apps, tmp_path, buffers):
    """cudaDeviceReset between two rounds of launches: the second context gets buffers of its own."""
    run = tmp_path / "run"
    summary = launcher.profile([str(apps), "reset", "4"], run_dir=run, write_traces=True, timeout=120, **buffers)
    assert summary.status == "complete", summary.partial_reason
    launches = [l for l in json.loads((run / "run.json").read_text())["launches"] if "stencil" in l["kernel"]]
    assert len(launches) == 8 and {l["status"] for l in launches} == {"complete"}
    assert len({l["records"] for l in launches}) == 1 and launches[0]["records"] > 10000
    log = (run / "collector.log").read_text()
    assert re.search(r"context 0x[0-9a-f]+ destroyed", log) and "error:" not in log
    assert not json.loads((run / "run.json").read_text())["errors"]
    assert _online(run)["kernels"] == replay_run(run, workers=3)["kernels"]
