"""benchmarks/launch_waits.py without a GPU: the sums it takes from a collect run's collector.log, whose launch and
queue lines are built here from the collector's own format strings, so that a change of either breaks this test."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
waits = importlib.import_module("launch_waits")


def c_format(source: str, first_words: str) -> str:
    """The C string literal (adjacent literals joined) that starts with `first_words` in collector/native/src/SOURCE,
    as a Python %-format (no length modifiers)."""
    text = (REPO / "collector/native/src" / source).read_text()
    start = text.index(f'"{first_words}')
    literals = re.match(r'((?:"(?:[^"\\]|\\.)*"\s*)+)', text[start:])[1]
    joined = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literals))
    return joined.replace("%llu", "%d")


LAUNCH = c_format("launch_events.cpp", "launch %llu: %llu records")
QUEUE = c_format("queued_sink.cpp", "queue: ")


def launch_line(
    t: float, launch: int, records: int, resolve: float, sinks: float, kernel: float, last: float, taken: float
) -> str:
    fields = (launch, records, records * 2, 1, 0.001, resolve, sinks, 0, 0, kernel, last, taken, last - taken)
    return f"[{t:9.3f}] " + LAUNCH % fields


def test_the_format_strings_were_found():
    assert "last records" in LAUNCH and "resolving PCs" in LAUNCH and "taken up after" in LAUNCH
    assert "waiting for space" in QUEUE


def test_launches_waits_and_engine_figures_are_summed(tmp_path):
    log = "\n".join(
        [
            "[    0.200] context 0x1: device 0 (NVIDIA H200 sm_90), 2 buffers of 58254 records",
            launch_line(0.250, 0, 10240, 0.001, 0.002, 0.000150, 0.000800, 0.000100),
            "[    0.251] sink engine: " + QUEUE % (0.0, 0.0004, 0, 64),
            "[    0.251] sink engine: engine: launch 0 analysed, 10240 records in 0.001 s (14.51 M records/s)",
            launch_line(0.650, 1, 30000, 0.003, 0.004, 0.000250, 0.001200, 0.000300),
            "[    0.651] sink engine: " + QUEUE % (0.002, 0.0006, 135, 200),
            "[    0.700] exit: engine finished in 0.044 s: queue emptied in 0.043 s, then engine results in 0.001 s",
            "[    0.700] exit: engine: engine steps, slowest worker / all workers' CPU: ids 0.040 / 0.010 s; new PCs "
            "0.004 / 0.004 s; distributions and routing 0.144 / 0.006 s; blocks 0.141 / 0.008 s; global shadow 0.178 / "
            "0.012 s; consume wall 0.508 s; 3100672 records as shadow segments",
        ]
    )
    (tmp_path / "collector.log").write_text(log + "\n")
    s = waits.summarize(tmp_path / "collector.log")
    assert s["launches"] == 2 and s["records"] == 40240
    assert (s["first"], s["last"]) == (0.250, 0.650)
    assert abs(s["kernel"] - 0.0004) < 1e-9 and abs(s["last_records"] - 0.002) < 1e-9
    assert abs(s["taken_up"] - 0.0004) < 1e-9 and abs(s["last_generation"] - 0.0016) < 1e-9
    assert abs(s["resolve"] - 0.004) < 1e-9 and abs(s["sinks"] - 0.006) < 1e-9
    assert abs(s["q_wait"] - 0.002) < 1e-9 and abs(s["q_copy"] - 0.001) < 1e-9
    assert s["engine_after"] == 0.044 and s["consume_wall"] == 0.508
    assert abs(s["engine_cpu"] - 0.040) < 1e-9  # the five steps' CPU, not the slowest workers'

    out = subprocess.run(
        [sys.executable, str(BENCH / "launch_waits.py"), str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[1].split()[1:4] == ["2", "0.04", "0.400"]
    assert out[1].split()[-1] == str(round(0.040 / 40240 * 1e9))


def test_a_log_from_before_the_split_has_no_split(tmp_path):
    old = LAUNCH % ((0, 10, 20, 1, 0.001, 0.001, 0.002, 0, 0, 0.0001, 0.0008) + (0.0, 0.0))
    old = old[: old.index(" (taken up")]  # collector.log lines before session 29 ended at "last records ... s"
    (tmp_path / "collector.log").write_text(f"[    0.250] {old}\n")
    s = waits.summarize(tmp_path / "collector.log")
    assert s["launches"] == 1 and abs(s["last_records"] - 0.0008) < 1e-9
    assert s["taken_up"] is None and s["last_generation"] is None


def test_a_folder_without_a_log_is_named_and_skipped(tmp_path):
    run = subprocess.run(
        [sys.executable, str(BENCH / "launch_waits.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode == 0 and "no collector.log" in run.stderr
