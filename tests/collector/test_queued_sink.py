"""The queue in front of the online engine (collector/native/src/queued_sink.cpp), checked without a GPU: the
C++ harness tests/collector/native/queued_sink_test.cpp is compiled against the collector's source and run."""

from __future__ import annotations

import subprocess

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("sanitizer", [None, "thread", "address,undefined"])
def test_queued_sink_orders_copies_bounds_and_reports(tmp_path, sanitizer):
    """The queue and its parallel copy are concurrent code: also run under ThreadSanitizer and ASan/UBSan."""
    exe = build(
        tmp_path / "queued_sink_test",
        [
            REPO / "tests/collector/native/queued_sink_test.cpp",
            REPO / "collector/native/src/queued_sink.cpp",
            REPO / "collector/native/src/support.cpp",  # name_this_thread
        ],
        [REPO / "collector/native/src", REPO / "analyzer/engine/include"],
        sanitizer,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr[-4000:]
