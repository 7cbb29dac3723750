"""Whether a source path is one of the CUDA toolkit's own headers (system install, pip wheels, HPC SDK), whose
lines a developer cannot edit: a barrier inlined from cooperative_groups is removed where the user's code calls
it, and an allocation made through cuda_runtime.h's `cudaMalloc<T>` wrapper is placed on the user's call."""

from __future__ import annotations

import re

# A folder of the toolkit on the way to its include/ folder: cuda/ (a system or HPC SDK install), cuda-13.0/ (a
# versioned one; not a project folder such as cuda-kernels/), targets/<arch>/ (the toolkit's own layout), the pip
# wheels' nvidia/cu13/ or nvidia/<package>/, the HPC SDK, CCCL, cooperative groups.
_TOOLKIT_MARKERS = re.compile(
    r"/cuda/|/cuda-\d[\d.]*/|/targets/[^/]+/include/|/site-packages/nvidia/|/nvidia/cu\d|/nvhpc|/cccl/|cooperative_groups"
)


def is_toolkit_header(path: str) -> bool:
    """Whether `path` is one of the CUDA toolkit's headers (used by the analysis and by the editor's placement of
    inlined instructions, lsp_server/model.py)."""
    path = path.replace("\\", "/")
    return "/include/" in path and _TOOLKIT_MARKERS.search(path) is not None
