"""benchmarks/queue_drain.py builds its harness from the collector's own sources and measures one configuration.
The script had no test, and session 44's thread names (support.cpp's name_this_thread, called by the queue's
threads) broke its link without any test failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from native_build import cuda_include  # noqa: E402


@pytest.mark.skipif(cuda_include() is None, reason="no cuda.h (CUDA_HOME, nvcc's toolkit or /usr/local/cuda)")
def test_queue_drain_builds_and_measures_one_configuration():
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks/queue_drain.py"),
            "--engine-ns",
            "0",
            "--copy-threads",
            "1",
            "--walk",
            "one",
            "--ring",
            "warm",
            "--repeat",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    lines = [line for line in done.stdout.splitlines() if "ns a record" in line]
    assert len(lines) == 1 and "1 copy threads, one walk, warm: drain thread" in lines[0], done.stdout[-2000:]
