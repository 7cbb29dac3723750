"""A run's memory analysis as a JSON document, format `reuselens-memory` version 1 (docs/memory.md): the as-run
peak and what is live at it, every object with its allocation site, and the findings, the largest peak reduction
first. The table and SARIF writers read this document too, so every surface says the same."""

from __future__ import annotations

import json
from typing import Any

from reuselens.analyzer.memory.analysis import MemoryAnalysis, site
from reuselens.analyzer.memory.timeline import DataObject, Frame, Timeline

FORMAT = "reuselens-memory"
VERSION = 1


def memory_document(analysis: MemoryAnalysis, top: int | None = None) -> dict[str, Any]:
    """The document; with `top`, only the first `top` findings (objects, peak and counts stay whole)."""
    findings = analysis.findings[:top] if top is not None else analysis.findings
    timeline = analysis.timeline
    top = analysis.peak
    kernels = sum(op.kind == "kernel" for op in timeline.operations)
    return {
        "format": FORMAT,
        "version": VERSION,
        "run": str(analysis.memory.run.path),
        # "objects": an object-level profile (which allocations each kernel touched, not how much of each)
        "collection": (analysis.memory.run.manifest.get("collector") or {}).get("collection") or "trace",
        # an object-level profile with element maps (--intra-object): per object, the touched bytes and accesses
        "element_maps": bool((analysis.memory.run.manifest.get("collector") or {}).get("element_maps")),
        "operations": len(timeline.operations),
        "kernel_operations": kernels,
        "unknown_touch_kernels": analysis.memory.unknown_touch_kernels,
        "stray_touches": analysis.memory.stray_touches,
        "peak": {
            "bytes": top.bytes,
            "operation": top.index,
            "operation_label": timeline.operations[top.index].label() if top.index is not None else None,
            "live": list(top.live),
        },
        "objects": [_object(timeline, obj) for obj in timeline.objects.values()],
        "findings": [
            {
                "rank": rank,
                "pattern": f.pattern,
                "object": f.object_id,
                "site": _frame(site(timeline.objects[f.object_id])),
                "bytes": f.bytes,
                "operations": f.operations,
                "span": list(f.span) if f.span else None,
                "peak_reduction": f.peak_reduction,
                "other_object": f.other_object,
                "fix": f.fix,
            }
            for rank, f in enumerate(findings, 1)
        ],
    }


def _object(timeline: Timeline, obj: DataObject) -> dict[str, Any]:
    return {
        "id": obj.id,
        "address": obj.address,
        "size": obj.size,
        "allocated_at": timeline.allocated_at[obj.id],
        "freed_at": timeline.freed_at.get(obj.id),
        "touches": len({index for index, _ in timeline.touched_at[obj.id]}),
        "call_path": [_frame(frame) for frame in obj.call_path],
    }


def _frame(frame: Frame | None) -> dict[str, Any] | None:
    if frame is None:
        return None
    return {"function": frame.function, "file": frame.file, "line": frame.line}


def to_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2)
