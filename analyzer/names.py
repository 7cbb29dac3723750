"""Names for the engine's function ids: kernels, instructions, barriers and prior-kernel origins get the mangled
names and the module that run.json's `functions` list gives each id.

Its own module, without numpy, because both paths need it: the trace replay (analyzer/replay.py) and the online
result the collector wrote (analyzer/pipeline.py), which then needs nothing else from the replay.
"""

from __future__ import annotations

from typing import Any


def resolve_names(result: dict[str, Any], functions: dict[int, dict[str, Any]], notes: list[str]) -> None:
    missing: set[int] = set()

    def name(fid: int | None) -> str | None:
        if fid is None:
            return None
        f = functions.get(int(fid))
        if f is None:
            missing.add(int(fid))
            return None
        return f.get("name")

    for kernel in result["kernels"]:
        kfid = kernel["kernel_function_id"]
        kernel["mangled"] = name(kfid)
        kernel["module"] = functions.get(kfid, {}).get("module")
        for node in kernel["nodes"]:
            node["function"] = name(node["function_id"])
        for edge in kernel["edges"]:
            prior = edge.get("prior_kernel")
            if prior:
                prior["kernel"] = name(prior["kernel_function_id"])
                prior["function"] = name(prior["function_id"])
        for barrier in kernel["barriers"]:
            barrier["function"] = name(barrier["function_id"])
    if missing:
        notes.append(f"function ids {sorted(missing)} appear in traces but not in run.json functions")
