"""Whether a source path is one of the CUDA toolkit's own headers (system install, pip wheels, HPC SDK), whose
lines a developer cannot edit: a barrier inlined from cooperative_groups is removed where the user's code calls
it, and an allocation made through cuda_runtime.h's `cudaMalloc<T>` wrapper is placed on the user's call."""

from __future__ import annotations

import re
from typing import Any

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


def source_frames(source: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A `source`'s frames: itself (the instruction's own line and function), then its inline chain."""
    source = source or {}
    return [source, *(f for f in source.get("inline") or () if isinstance(f, dict))]


def user_frame(source: dict[str, Any]) -> dict[str, Any]:
    """The frame of a node's or barrier's `source` (docs/report-format.md) a developer reads and edits: the source
    itself, or, when its line is in a toolkit header the app's code inlined (an atomicAdd from
    device_atomic_functions.hpp, a cg::sync), the innermost frame of its inline chain outside the toolkit; when every
    frame is the toolkit's (a library kernel), the outermost one, as a barrier's deletable line is chosen
    (analyzer/patterns/barriers.py, source_line). The editor places findings by it (lsp_server/model.py) and so do
    the CLI's tables, CSV and SARIF (analyzer/reportview.py)."""
    if not source.get("file") or not is_toolkit_header(str(source["file"])):
        return source
    frames = [f for f in source_frames(source)[1:] if f.get("file") and f.get("line")]
    return next((f for f in frames if not is_toolkit_header(str(f["file"]))), frames[-1] if frames else source)


# A CUDA atomic intrinsic's name as the frames of an inlined atomic show it (`..._cu_cab170b3::atomicExch(int*, int)`,
# `atomicAdd_block(float*, float)`): the last scope's name before the parameter list.
_ATOMIC_INTRINSIC = re.compile(r"(?:^|::)(atomic[A-Z][A-Za-z]*?)(?:_block|_system)?$")


def atomic_intrinsic(source: dict[str, Any] | None) -> str | None:
    """The atomic intrinsic (atomicAdd, atomicExch, atomicCAS, ...) an atomic instruction was inlined from, from the
    function names of its source frames; None when no frame names one (an atomic_ref member, inline PTX)."""
    found = atomic_intrinsic_call(source)
    return found[0] if found else None


def atomic_intrinsic_call(source: dict[str, Any] | None) -> tuple[str, list[dict[str, Any]]] | None:
    """The atomic intrinsic and the frames that called it (outward from the intrinsic's outermost frame: an app's
    helper, if any, then the kernel), or None (atomic_intrinsic)."""
    frames = source_frames(source)
    found = None
    for index, frame in enumerate(frames):
        match = _ATOMIC_INTRINSIC.search(str(frame.get("function") or "").split("(", 1)[0].strip())
        if match and (found is None or match.group(1) == found[0]):
            found = (match.group(1), index)
    return (found[0], frames[found[1] + 1 :]) if found else None
