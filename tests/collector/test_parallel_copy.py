"""The collector's ParallelCopy (collector/native/src/parallel_copy.h), checked without a GPU: the C++ harness
tests/collector/native/parallel_copy_test.cpp copies blocks of many sizes with 1 to 34 threads and compares
every byte. It runs plain and under ThreadSanitizer and ASan/UBSan, since the copy is split across threads."""

from __future__ import annotations

import subprocess

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("sanitizer", [None, "thread", "address,undefined"])
def test_parallel_copy_copies_every_byte(tmp_path, sanitizer):
    exe = build(
        tmp_path / "parallel_copy_test",
        [REPO / "tests/collector/native/parallel_copy_test.cpp", REPO / "collector/native/src/support.cpp"],
        [REPO / "collector/native/src", REPO / "analyzer/engine/include"],
        sanitizer,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr[-4000:]
