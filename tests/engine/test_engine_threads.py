"""The engine's parallel paths under ThreadSanitizer: tests/engine/native/parallel_driver.cpp runs one trace
through engines with 1, 2 and 5 workers; the reports must be equal and TSan must find no data race."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMPILER = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")


def build(tmp_path: Path, sanitizer: str) -> Path:
    exe = tmp_path / f"parallel_driver_{sanitizer}"
    cmd = [COMPILER, "-std=c++17", "-O1", "-g", f"-fsanitize={sanitizer}", "-pthread",
           f"-I{REPO / 'analyzer/engine/include'}", "-o", str(exe),
           str(REPO / "tests/engine/native/parallel_driver.cpp"), str(REPO / "analyzer/engine/src/engine.cpp")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 and "sanitize" in done.stderr and "unrecognized" in done.stderr:
        pytest.skip(f"{COMPILER} cannot build with -fsanitize={sanitizer}")
    assert done.returncode == 0, done.stderr
    return exe


@pytest.mark.skipif(COMPILER is None, reason="no C++ compiler on PATH (the package build needs one too)")
@pytest.mark.parametrize("sanitizer", ["thread", "address,undefined"])
def test_workers_agree_with_no_data_race(tmp_path, sanitizer):
    exe = build(tmp_path, sanitizer)
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "same", run.stdout + run.stderr[-4000:]
