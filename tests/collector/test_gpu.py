"""Collector on a real GPU (skipped with the reason printed where there is none, e.g. CI)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import reuselens.collector.launcher as launcher

REPO = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu")
    for name in ("microbench", "crash", "zero_fill"):
        subprocess.run(
            ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(out / name), str(REPO / "tests/gpu" / f"{name}.cu")],
            check=True,
        )
    return out


def _records(run_dir: Path, launch: dict) -> np.ndarray:
    from collector_traces import read_trace  # noqa: PLC0415

    return read_trace(run_dir / launch["trace"])


def test_every_launch_complete_with_valid_records(programs, tmp_path):
    run = tmp_path / "run"
    summary = launcher.profile([str(programs / "microbench")], run_dir=run, write_traces=True, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["gpu"]["name"] and manifest["gpu"]["arch"].startswith("sm_")
    assert manifest["gpu"]["l2_bytes"] >= 4 << 20  # every data-centre GPU since Volta; the L2 rule reads it
    functions = {f["id"]: f for f in manifest["functions"]}
    for launch in manifest["launches"]:
        assert launch["instrumented"] and launch["status"] == "complete"
        records = _records(run, launch)
        assert len(records) == launch["records"] > 0
        assert set(records["function_id"]) <= set(functions)
        for r in records[:200]:
            assert r["pc"] < functions[int(r["function_id"])]["size"] + 1
    assert manifest["collector"]["unresolved_pc_records"] == 0
    from collector_traces import check_run  # noqa: PLC0415

    assert check_run(run) == []
    # and collector.log says, per launch and for the run, what the launches' ends waited for: the kernel, then the
    # drain of its last records (docs/collector.md, "Where a short app's time goes")
    log = (run / "collector.log").read_text()
    ends = re.findall(
        r"launch \d+: .*; end: kernel ([0-9.]+) s, last records ([0-9.]+) s "
        r"\(taken up after ([0-9.]+) s, the last generation ([0-9.]+) s\)$",
        log,
        re.M,
    )
    assert len(ends) == len(manifest["launches"])
    total = re.search(r"exit: launch ends waited ([0-9.]+) s for their kernels and ([0-9.]+) s", log)
    assert total and abs(float(total[2]) - sum(float(d) for _, d, _, _ in ends)) < 0.002 * len(ends) + 0.001
    # the drain thread drains a launch's last generation while the app goes on (drain.h): what the app waited for it
    # is at most what it took the drain thread, give or take the app thread's wake-up once the drain is done (the
    # drain's clock stops before it takes its lock back and signals; on the GPU host, with the engine's workers
    # busy, that took over 0.1 ms in 2 of 7 runs of this test in session 38)
    wake_up = 0.002
    late = [(wait, taken, last) for _, wait, taken, last in ends if float(wait) > float(taken) + float(last) + wake_up]
    assert not late, f"launch ends waited longer than the drain took (wait, taken up after, last generation): {late}"


def test_atomic_flags(programs, tmp_path):
    run = tmp_path / "run"
    launcher.profile([str(programs / "microbench"), "atomics", "atomic_system"], run_dir=run, write_traces=True)
    manifest = json.loads((run / "run.json").read_text())
    ordinary, system = (_records(run, l) for l in manifest["launches"])
    glob = ordinary[(ordinary["type"] == 1) & (ordinary["space"] == 1)]
    assert 3 in set(glob["access"]) and not (glob["access"] & 4).any()
    assert set(system[(system["type"] == 1)]["access"]) == {7}


def test_kernel_filter_and_launch_range(programs, tmp_path):
    run = tmp_path / "run"
    launcher.profile([str(programs / "microbench")], run_dir=run, kernel_filter="bank_conflict", launch_range=(1, 3))
    launches = json.loads((run / "run.json").read_text())["launches"]
    chosen = [l["kernel"] for l in launches if l["instrumented"]]
    assert chosen == ["_Z13bank_conflictILi2EEvPf", "_Z13bank_conflictILi4EEvPf"]


def test_kernel_fault_gives_partial_run(programs, tmp_path):
    summary = launcher.profile([str(programs / "crash"), "fault"], run_dir=tmp_path / "run", timeout=120)
    assert summary.status == "partial" and "kernel fault" in summary.partial_reason


def test_hang_times_out(programs, tmp_path):
    summary = launcher.profile([str(programs / "crash"), "hang"], run_dir=tmp_path / "run", timeout=5)
    assert summary.status == "partial" and summary.partial_reason == "timeout after 5 s"


ASYNC, VALUES_FLAG, COMPANION, UNIFORM = 0x1, 0x8, 4, 0x1


def test_zero_fill_cp_async_reads_nothing(programs, tmp_path):
    """A cp.async with a null source (cuBLAS's and CUTLASS's tile loads past a matrix's edge, src-size 0) reads no
    global memory: its global half leaves the lane out, one record still per executed instruction, and its shared
    half writes to every lane."""
    from collector_traces import ZERO_FILL_BLOCKS, cp_async_halves, zero_fill_sourced_lanes  # noqa: PLC0415

    run = tmp_path / "run"
    summary = launcher.profile([str(programs / "zero_fill")], run_dir=run, write_traces=True, timeout=120)
    assert summary.status == "complete" and summary.exit_code == 0, summary.partial_reason
    launches = json.loads((run / "run.json").read_text())["launches"]
    assert len(launches) == 3
    for launch in launches:
        global_half, shared_half = cp_async_halves(_records(run, launch))
        assert len(global_half) == len(shared_half) == ZERO_FILL_BLOCKS * 2
        for r in global_half:
            assert int(r["active_mask"]) == zero_fill_sourced_lanes(int(r["block"]), int(r["warp"]), launch["kernel"])
            lanes = [lane for lane in range(32) if (int(r["active_mask"]) >> lane) & 1]
            assert all(int(r["addr"][lane]) != 0 for lane in lanes)
        assert all(int(r["active_mask"]) == 0xFFFFFFFF for r in shared_half)


def test_zero_fill_cp_async_under_value_mode(programs, tmp_path):
    """Value mode reads each copied value from the source: a null one must not be read (the app would fault); the
    zero-filled lanes' shared half has the value 0."""
    run = tmp_path / "run"
    summary = launcher.profile([str(programs / "zero_fill")], run_dir=run, write_traces=True, values=True, timeout=120)
    assert summary.status == "complete" and summary.exit_code == 0, summary.partial_reason
    from collector_traces import zero_fill_sourced_lanes  # noqa: PLC0415

    for launch in json.loads((run / "run.json").read_text())["launches"]:
        records = _records(run, launch)
        for i in range(len(records) - 1):
            r, v = records[i], records[i + 1]
            if not (r["type"] == 1 and r["space"] == 2 and r["flags"] & ASYNC and r["flags"] & VALUES_FLAG):
                continue
            assert v["type"] == COMPANION and int(v["active_mask"]) == 0xFFFFFFFF  # every lane has a value
            filled = 0xFFFFFFFF & ~zero_fill_sourced_lanes(int(r["block"]), int(r["warp"]), launch["kernel"])
            for lane in range(32):
                if (filled >> lane) & 1:
                    assert int(v["addr"][0 if v["flags"] & UNIFORM else lane]) == 0


def test_online_analysis_equals_replay_with_irregular_counts(programs, tmp_path):
    # The engine inside the collector and the replay of the same traces agree on every node, the count of executions
    # whose lanes follow no stride (`irregular`, a gather's) included, and the microbenchmark's gathers have some.
    from reuselens.analyzer import engine_result  # noqa: PLC0415
    from reuselens.analyzer.replay import replay_run, resolve_names  # noqa: PLC0415

    run = tmp_path / "run"
    summary = launcher.profile([str(programs / "microbench")], run_dir=run, write_traces=True, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    online = engine_result.load(run / "analysis.json")
    functions = {int(f["id"]): f for f in json.loads((run / "run.json").read_text())["functions"]}
    resolve_names(online, functions, [])
    replayed = replay_run(run, workers=3)
    assert online["kernels"] == replayed["kernels"]
    assert any(n.get("irregular") for k in online["kernels"] for n in k["nodes"])
