"""benchmarks/engine.py --engine: the figures are of the engine module named (a build of another revision, to compare
two engines on one machine), and a file that is no engine module stops the benchmark before it measures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "engine.py"
SMALL = ["--pattern", "gather", "--blocks", "64", "--workers", "1", "--repeat", "1", "--footprint-mb", "1"]


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *SMALL, *args], capture_output=True, text=True, timeout=120)


def test_the_named_engine_module_is_measured():
    from reuselens.analyzer import _engine

    done = run_bench("--engine", _engine.__file__)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("workers  1:") == 2  # cold and warm


def test_a_file_that_is_no_engine_module_stops_the_benchmark(tmp_path):
    fake = tmp_path / "_engine.cpython-311-x86_64-linux-gnu.so"
    fake.write_bytes(b"not a shared object")
    done = run_bench("--engine", str(fake))
    assert done.returncode != 0
    assert "workers" not in done.stdout
    assert "ImportError" in done.stderr
