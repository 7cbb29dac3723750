"""The trace sink (collector/native/src/sinks.cpp), checked without a GPU: the C++ harness
tests/collector/native/trace_sink_test.cpp feeds it packed streams and reads the trace file back."""

from __future__ import annotations

import subprocess

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("sanitizer", [None, "address,undefined"])
def test_trace_sink_writes_the_full_records_in_stream_order(tmp_path, sanitizer):
    exe = build(
        tmp_path / "trace_sink_test",
        [REPO / "tests/collector/native/trace_sink_test.cpp", REPO / "collector/native/src/sinks.cpp"],
        [REPO / "collector/native/src", REPO / "analyzer/engine/include"],
        sanitizer,
    )
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run = subprocess.run([str(exe), str(run_dir)], capture_output=True, text=True, timeout=300, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr[-4000:]
