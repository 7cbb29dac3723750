"""The drain's walk of a packed stream (collector/native/src/pc_ranges.cpp), checked without a GPU: the C++ harness
tests/collector/native/pc_ranges_test.cpp resolves PCs through nested function ranges (a kernel's pcs before and
after its callee's, alternating with the callee's) and checks the records' first slots it keeps for the engine
queue against a walk of its own."""

from __future__ import annotations

import subprocess

import pytest

from benchmarks.native_build import cuda_include
from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build

CUDA_INCLUDE = cuda_include()


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.skipif(CUDA_INCLUDE is None, reason="no cuda.h (CUDA_HOME, nvcc's toolkit, /usr/local/cuda): the types")
@pytest.mark.parametrize("sanitizer", [None, "address,undefined"])
def test_resolve_records_walks_once_and_resolves_nested_ranges(tmp_path, sanitizer):
    exe = build(
        tmp_path / "pc_ranges_test",
        [REPO / "tests/collector/native/pc_ranges_test.cpp", REPO / "collector/native/src/pc_ranges.cpp"],
        [REPO / "collector/native/src", REPO / "analyzer/engine/include", CUDA_INCLUDE],
        sanitizer,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr[-4000:]
