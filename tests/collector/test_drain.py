"""The drain thread over many launches (collector/native/src/drain.cpp), checked without a GPU: the C++ harness
tests/collector/native/drain_test.cpp runs CPU threads that write records as the device patch does, launch after
launch, each armed by the collector's arm_device_state, the drain of one launch's last generation overlapping the
next launch, and checks that a sink gets every launch's records, all of them, between its begin and its end, with
several contexts, contexts made again, faulted kernels and a slow sink too."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

from benchmarks.native_build import cuda_include
from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build

CUDA_INCLUDE = cuda_include()


def sanitizer_include() -> Path | None:
    """sanitizer.h's folder in the nvidia-cuda-sanitizer-api wheel (a dependency of the package): the drain's
    launch handles are its types."""
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(root).glob("*/include/sanitizer.h")):
            return candidate.parent
    return None


SANITIZER_INCLUDE = sanitizer_include()
SRC = REPO / "collector/native/src"


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.skipif(CUDA_INCLUDE is None, reason="no cuda.h (CUDA_HOME, nvcc's toolkit, /usr/local/cuda): the types")
@pytest.mark.skipif(SANITIZER_INCLUDE is None, reason="no sanitizer.h (the nvidia-cuda-sanitizer-api wheel)")
# Not under TSan: the buffer flags are shared with the device through volatile accesses (device_state.h), which it
# counts as races against the CPU stand-in's atomics.
@pytest.mark.parametrize("sanitizer", [None, "address,undefined"])
def test_launches_drained_in_order_with_every_record(tmp_path, sanitizer):
    exe = build(
        tmp_path / "drain_test",
        [
            REPO / "tests/collector/native/drain_test.cpp",
            SRC / "drain.cpp",
            SRC / "pc_ranges.cpp",
            SRC / "support.cpp",
            SRC / "device_arming.cpp",
        ],
        [SRC, REPO / "analyzer/engine/include", CUDA_INCLUDE, SANITIZER_INCLUDE],
        sanitizer,
    )
    # CAPACITY_RECORDS BUFFERS LAUNCHES WRITERS SEED [CONTEXTS FAULT_PERCENT SLOW_SINK_US]: the smallest buffers
    # the collector takes (16 records), and buffers of 2 records, where most launches span several generations and
    # many end on a boundary; one writer and several; two buffers and more; then several contexts, some made again,
    # faulted kernels and a slow sink (a reviewer's scenarios).
    for args in (
        "16 2 300 4 1",
        "16 3 200 8 2",
        "2 2 300 1 3",
        "2 2 200 3 4",
        "1000 2 200 4 5",
        "3 8 150 4 6",
        "16 2 300 4 7 3 10 50",
        "2 3 300 3 8 2 15 0",
        "3 2 200 4 9 3 10 200",
    ):
        run = subprocess.run([str(exe), *args.split()], capture_output=True, text=True, timeout=120, env=SANITIZER_ENV)
        assert run.returncode == 0 and run.stdout.strip() == "ok", f"{args}: " + run.stdout + run.stderr[-4000:]
