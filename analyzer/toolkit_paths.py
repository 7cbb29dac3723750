"""Whether a source path is one of the CUDA toolkit's own headers (system install, pip wheels, HPC SDK), whose
lines a developer cannot edit: a barrier inlined from cooperative_groups is removed where the user's code calls
it, and an allocation made through cuda_runtime.h's `cudaMalloc<T>` wrapper is placed on the user's call."""

from __future__ import annotations

_TOOLKIT_MARKERS = ("/cuda/", "/cuda-", "/targets/", "/nvidia/cu", "/nvhpc", "/cccl/", "cooperative_groups")


def is_toolkit_header(path: str) -> bool:
    path = path.replace("\\", "/")
    return "/include/" in path and any(marker in path for marker in _TOOLKIT_MARKERS)
