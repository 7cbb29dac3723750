"""benchmarks/overhead_split.py without a GPU: what it reads from a collect run's collector.log, and the commands of
its four modes."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
split = importlib.import_module("overhead_split")

# The lines it reads, as the collector writes them (an H200 run of pb_fdtd2d, session 20, call 2, cut short).
LOG = """\
[    0.228] reuselens collector 0.1.0, pid 4680, patch /x/reuselens_patch.fatbin, buffers 2 x 16777216 bytes
[    0.246] context 0x557ee8e68700: device 0 (NVIDIA H200 sm_90), 2 buffers of 58254 records
[    0.250] launch 0: 40928 records in 1 flushes, 0.002 s; drain thread: resolving PCs 0.000 s, sinks 0.001 s
[    0.251] sink engine: queue: 0.000 s waiting for space, 0.001 s copying; 0 MiB queued ahead at launch start
[    0.884] launch 299: 57759 records in 1 flushes, 0.003 s; drain thread: resolving PCs 0.000 s, sinks 0.002 s
[    0.890] engine: launch 298 analysed, 40928 records in 0.003 s (12.70 M records/s)
[    1.103] exit: engine finished in 0.140 s: queue emptied in 0.139640 s, then engine results in 0.000557 s
[    1.103] exit: engine: engine steps, slowest worker / all workers' CPU: ids 0.083 / 0.916 s; consume wall 0.841 s
[    1.103] exit: 300 launches, 300 instrumented, 14015900 records
"""


def test_the_collect_log_gives_the_launch_span_and_the_engine_catch_up(tmp_path):
    log = tmp_path / "collector.log"
    log.write_text(LOG)
    assert split.log_marks(log) == {
        "context_s": 0.246,
        "first_launch_s": 0.250,
        "last_launch_s": 0.884,
        "engine_finish_s": 0.140,
        "queue_emptied_s": 0.139640,
        "exit_s": 1.103,
    }


def test_a_run_without_a_log_or_without_the_engine_gives_what_it_has(tmp_path):
    assert split.log_marks(tmp_path / "missing.log") == {}
    log = tmp_path / "collector.log"
    log.write_text("\n".join(line for line in LOG.splitlines() if "engine" not in line))
    marks = split.log_marks(log)
    assert "queue_emptied_s" not in marks and marks["last_launch_s"] == 0.884 and marks["exit_s"] == 1.103


def test_each_mode_runs_the_app_alone_or_under_profile_no_analyze(tmp_path):
    app = ["./app", "-n", "4"]
    assert split.command("native", app, ["reuselens"], tmp_path, 60) == app
    collect = split.command("collect", app, ["reuselens"], tmp_path, 60)
    assert collect[:3] == ["reuselens", "profile", "--no-analyze"] and collect[-4:] == ["--", *app]
    assert "--kernel-filter" not in collect
    assert split.command("no-engine", app, ["reuselens"], tmp_path, 60) == collect  # the engine is off by env
    attach = split.command("attach", app, ["reuselens"], tmp_path, 60)
    assert attach[attach.index("--kernel-filter") + 1] == split.NO_KERNEL
