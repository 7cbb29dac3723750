"""What the collector reads of a CUBIN (collector/native/src/cubin.cpp), checked without a GPU: each function's
per-thread stack need from the module's .nv.info, against what cuobjdump -res-usage printed as STACK for the same
committed CUBINs (nvcc 13.0; tests/data/sass/deep_stack.sm_90.cubin is `nvcc -cubin -arch=sm_90 -O3` of
tests/gpu/deep_stack.cu). The collector raises the context's stack limit by it before a patched kernel runs
(docs/collector.md, "The patch's stack")."""

from __future__ import annotations

import subprocess

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build

# cuobjdump -res-usage's STACK column for these fixtures' functions
STACKS = {
    "tests/data/sass/deep_stack.sm_90.cubin": {"_Z10deep_stackPKiPi": 1344},
    "tests/data/sass/frames.sm_90.cubin": {"_Z15local_histogramPKiiPi": 64, "_Z14recursive_sumsPKfiPf": 0},
    "tests/data/cubins/kernels.sm_90.lineinfo.cubin": None,  # some 32, the rest 0: checked below
}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    if COMPILER is None:
        pytest.skip(NO_COMPILER)
    return build(
        tmp_path_factory.mktemp("cubin") / "cubin_test",
        [REPO / "tests/collector/native/cubin_test.cpp", REPO / "collector/native/src/cubin.cpp"],
        [REPO / "collector/native/src"],
        "address,undefined",
    )


def _stacks(harness, cubin: str) -> dict[str, int]:
    run = subprocess.run(
        [str(harness), str(REPO / cubin)], capture_output=True, text=True, timeout=60, env=SANITIZER_ENV
    )
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    return {name: int(stack) for name, stack in (line.rsplit(" ", 1) for line in run.stdout.splitlines())}


@pytest.mark.parametrize("cubin", [c for c, want in STACKS.items() if want is not None])
def test_stack_needs_are_cuobjdumps(harness, cubin):
    stacks = _stacks(harness, cubin)
    for name, want in STACKS[cubin].items():
        assert stacks[name] == want, name


def test_functions_without_stack_attributes_need_none(harness):
    # every function of the line-info fixture is listed, their stacks those the module states (32 bytes or none)
    stacks = _stacks(harness, "tests/data/cubins/kernels.sm_90.lineinfo.cubin")
    assert stacks and set(stacks.values()) <= {0, 32} and 32 in stacks.values()


def test_a_truncated_cubin_is_an_error_not_a_crash(harness, tmp_path):
    data = (REPO / "tests/data/sass/deep_stack.sm_90.cubin").read_bytes()
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(data[: len(data) // 2])
    run = subprocess.run([str(harness), str(cut)], capture_output=True, text=True, timeout=60, env=SANITIZER_ENV)
    assert run.stdout.startswith("error: ") and run.returncode == 1, run.stdout + run.stderr[-2000:]
