"""The queue in front of the online engine (collector/native/src/queued_sink.cpp), checked without a GPU: the
C++ harness tests/collector/native/queued_sink_test.cpp is compiled against the collector's source and run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMPILER = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


@pytest.mark.skipif(COMPILER is None, reason="no C++ compiler on PATH (the package build needs one too)")
@pytest.mark.parametrize("sanitizer", [None, "thread", "address,undefined"])
def test_queued_sink_orders_copies_bounds_and_reports(tmp_path, sanitizer):
    """The queue and its parallel copy are concurrent code: also run under ThreadSanitizer and ASan/UBSan."""
    exe = tmp_path / "queued_sink_test"
    flags = ["-O1", "-Wall", "-Wextra", "-Werror"] if sanitizer is None else ["-O1", "-g", f"-fsanitize={sanitizer}"]
    build = subprocess.run(
        [COMPILER, "-std=c++17", *flags, "-pthread",
         f"-I{REPO / 'collector/native/src'}", f"-I{REPO / 'analyzer/engine/include'}", "-o", str(exe),
         str(REPO / "tests/collector/native/queued_sink_test.cpp"), str(REPO / "collector/native/src/queued_sink.cpp")],
        capture_output=True, text=True)
    if sanitizer and build.returncode != 0 and "sanitize" in build.stderr:
        pytest.skip(f"{COMPILER} cannot build with -fsanitize={sanitizer}: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr[-4000:]
