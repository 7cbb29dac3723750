"""A kernel launched with several grids is one report entry by default and one per configuration on request
(issue #14: a kernel whose grid follows the data must not repeat its findings once per grid size)."""

from __future__ import annotations

import json
from pathlib import Path

from engine_records import mem, records, warp_addrs, write_trace

from reuselens.analyzer import engine_result
from reuselens.analyzer.replay import replay_run
from reuselens.cli.main import main
from reuselens.lsp_server.hover import _configuration_lines

A = 0x7F0000000000
GRIDS = ([1, 1, 1], [2, 1, 1], [1, 1, 1], [3, 1, 1])


def wavefront_run(tmp_path: Path) -> Path:
    """One kernel, four launches over three grid sizes; each block reads its own slice twice."""
    (tmp_path / "traces").mkdir()
    launches = []
    for lid, grid in enumerate(GRIDS):
        rows = []
        for block in range(grid[0]):
            rows += [
                mem(0x10, warp_addrs(A + 128 * block), block=block),
                mem(0x20, warp_addrs(A + 128 * block), block=block),
            ]
        write_trace(tmp_path / "traces" / f"{lid}.rltrace", records(rows), launch_id=lid, kernel_function_id=0)
        launches.append(
            {
                "id": lid,
                "function_id": 0,
                "kernel": "_Z4stepPf",
                "module": "m",
                "grid": grid,
                "block": [32, 1, 1],
                "dynamic_shared_bytes": 0,
                "trace": f"traces/{lid}.rltrace",
                "status": "complete",
            }
        )
    run = {
        "format": "reuselens-run",
        "version": 1,
        "status": "complete",
        "functions": [{"id": 0, "module": "m", "name": "_Z4stepPf", "kernel": True}],
        "launches": launches,
        "allocations": [{"address": A, "size": 1 << 16, "kind": "device", "freed_after_launch": None}],
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    return tmp_path


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def kernels(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "report.json").read_text())["kernels"]


def test_launches_of_all_grids_make_one_entry(tmp_path, capsys):
    run = wavefront_run(tmp_path)
    code, _, err = run_cli(capsys, "analyze", run, "--quiet")
    assert code == 0, err
    (kernel,) = kernels(run)
    assert kernel["launches"] == [0, 1, 2, 3]
    assert [(c["grid"], c["launches"]) for c in kernel["configurations"]] == [
        ([1, 1, 1], [0, 2]),
        ([2, 1, 1], [1]),
        ([3, 1, 1], [3]),
    ]
    # one finding per line, not one per grid size
    lines = [f["id"] for f in kernel["findings"]]
    assert len(lines) == len(set(lines))


def test_per_configuration_splits_them(tmp_path, capsys):
    run = wavefront_run(tmp_path)
    code, _, err = run_cli(capsys, "analyze", run, "--quiet", "--per-configuration")
    assert code == 0, err
    assert [(k["grid"], k["launches"]) for k in kernels(run)] == [
        ([1, 1, 1], [0, 2]),
        ([2, 1, 1], [1]),
        ([3, 1, 1], [3]),
    ]


def test_report_per_configuration_replays_a_merged_run(tmp_path, capsys):
    run = wavefront_run(tmp_path)
    run_cli(capsys, "analyze", run, "--quiet")
    code, out, err = run_cli(capsys, "report", run, "--per-configuration", "--format", "json")
    assert code == 0, err
    assert len({f["kernel_id"] for f in json.loads(out)["findings"]}) == 3
    assert len(kernels(run)) == 1  # the saved report is left as it was


def test_a_merged_online_result_without_traces_cannot_be_split(tmp_path, capsys):
    run = wavefront_run(tmp_path)
    online = replay_run(run)
    (run / engine_result.ONLINE_ANALYSIS).write_text(json.dumps(online))
    manifest = json.loads((run / "run.json").read_text())
    for launch in manifest["launches"]:
        del launch["trace"]
    (run / "run.json").write_text(json.dumps(manifest))
    code, _, err = run_cli(capsys, "analyze", run, "--per-configuration")
    assert code == 2 and err.count("\n") == 1
    assert "merged the launch configurations of 1 kernel(s) and kept no traces" in err
    assert "profile again with --per-configuration" in err
    code, _, err = run_cli(capsys, "analyze", run, "--quiet")  # the default still reads the online result
    assert code == 0, err


def test_hover_lists_the_configurations_it_adds_up():
    kernel = {
        "configurations": [
            {"grid": [g, 1, 1], "block": [16, 16, 1], "launches": [g], "records": 100 * g} for g in range(1, 11)
        ]
    }
    lines = _configuration_lines(kernel)
    assert lines[0] == "Sum over 10 launch configurations (10 launches):\n"
    assert lines[3] == "| 10x1x1 | 16x16x1 | 1 | 1,000 |"  # most records first
    assert lines[-2] == "| … 6 more |  | 6 | 2,100 |"
    assert _configuration_lines({"configurations": kernel["configurations"][:1]}) == []
