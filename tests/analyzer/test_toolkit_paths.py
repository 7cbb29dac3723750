"""Which source paths are the CUDA toolkit's own headers (analyzer.toolkit_paths): the analysis places inlined
barriers and allocation wrappers on the user's call by it, and the editor places inlined instructions the same way
(lsp_server/model.py, RunResults.place). A project folder named after CUDA is not the toolkit."""

from __future__ import annotations

import pytest

from reuselens.analyzer.toolkit_paths import atomic_intrinsic, is_toolkit_header


@pytest.mark.parametrize(
    "path",
    [
        "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp",
        "/usr/local/cuda-13.0/include/cooperative_groups/details/sync.h",
        "/usr/local/cuda-12.4.1/include/cuda/pipeline",
        "/opt/nvidia/hpc_sdk/Linux_x86_64/24.3/cuda/12.3/include/sm_30_intrinsics.hpp",
        "/home/u/.conda/envs/x/targets/x86_64-linux/include/cuda_runtime.h",
        "/venv/lib/python3.12/site-packages/nvidia/cu13/include/crt/host_defines.h",
        "/usr/include/cooperative_groups/reduce.h",
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\include\\cuda\\std\\atomic",
    ],
)
def test_toolkit_headers(path):
    assert is_toolkit_header(path)


@pytest.mark.parametrize(
    "path",
    [
        "/home/u/cuda-kernels/include/stencil.cuh",
        "/home/u/src/cuda_proj/include/tile.cuh",
        "/home/u/work/cudaStuff/include/k.cuh",
        "/work/app/src/kernel.cu",
        "/usr/local/cuda/samples/app.cu",  # the toolkit's folder, but not a header it ships
    ],
)
def test_project_files_are_not(path):
    assert not is_toolkit_header(path)


def test_findings_sit_on_the_apps_line_in_the_cli_too():
    from reuselens.analyzer.reportview import Place, finding_places
    from reuselens.analyzer.toolkit_paths import user_frame

    header = "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp"
    inlined = {
        "file": header,
        "line": 107,
        "inline": [{"file": header, "line": 107}, {"file": "/src/app.cu", "line": 48}],
    }
    library = {"file": header, "line": 5, "inline": [{"file": header, "line": 5}, {"file": header, "line": 9}]}
    assert user_frame(inlined)["line"] == 48 and user_frame(library)["line"] == 9  # all toolkit: the outermost
    assert user_frame({"file": "/src/app.cu", "line": 3}) == {"file": "/src/app.cu", "line": 3}
    kernel = {"nodes": [{"id": 1, "source": inlined}]}
    assert finding_places(kernel, {"pcs": [1]}) == [Place("/src/app.cu", 48)]


@pytest.mark.parametrize(
    ("function", "intrinsic"),
    [
        ("_INTERNAL_0d080f93_25_simpleAtomicIntrinsics_cu_cab170b3::atomicExch(int*, int)", "atomicExch"),
        ("atomicCAS(unsigned int*, unsigned int, unsigned int)", "atomicCAS"),
        ("atomicAdd_block(float*, float)", "atomicAdd"),
        ("atomicMax_system(int*, int)", "atomicMax"),
        ("myatomicExchange(int*)", None),
        ("cuda::__4::atomic_ref<int, (cuda::std::__4::__thread_scope)1>::fetch_add(int, int) const", None),
        ("", None),
    ],
)
def test_atomic_intrinsic_named_by_the_inlined_frames(function, intrinsic):
    source = {"file": "/src/app.cu", "line": 40, "function": "kernel(int*)"}
    source["inline"] = [{"function": function, "file": "/usr/local/cuda/include/device_atomic_functions.hpp"}]
    assert atomic_intrinsic(source) == intrinsic
    assert atomic_intrinsic(None) is None
