"""A run's memory analysis (memory_json's document) as text for a terminal: the peak and what is live at it, what
the run could not see, then one row per finding, the largest peak reduction first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reuselens.analyzer.memory.timeline import Frame
from reuselens.analyzer.reportview import fit
from reuselens.analyzer.units import format_bytes

SITE_WIDTH = 40
LIVE_LISTED = 5  # objects named under the peak line; the JSON lists them all
HEADER = ("#", "pattern", "object", "bytes", "held for", "peak reduction", "fix")


def to_table(document: dict[str, Any]) -> str:
    objects = {obj["id"]: obj for obj in document["objects"]}
    lines = _peak_lines(document, objects) + _visibility_lines(document)
    findings = document["findings"]
    if not findings:
        return "\n".join([*lines, "no findings"])
    body = [
        (
            str(f["rank"]),
            f["pattern"],
            fit(object_text(objects[f["object"]]), SITE_WIDTH),
            format_bytes(f["bytes"]),
            f"{f['operations']} op{'' if f['operations'] == 1 else 's'}",
            format_bytes(f["peak_reduction"]),
            f["fix"],
        )
        for f in findings
    ]
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(HEADER[:-1])]
    lines.append("")
    lines.append("  ".join(h.ljust(w) for h, w in zip(HEADER[:-1], widths)) + "  " + HEADER[-1])
    lines += ["  ".join(v.ljust(w) for v, w in zip(row[:-1], widths)) + "  " + row[-1] for row in body]
    return "\n".join(lines)


def object_text(obj: dict[str, Any]) -> str:
    """`vecadd.cu:42, 4.1 MB`: where the program allocated the object, and its size."""
    return f"{site_label(obj)}, {format_bytes(obj['size'])}"


def site_label(obj: dict[str, Any]) -> str:
    frame = obj["call_path"][0] if obj["call_path"] else None
    if frame is None:
        return f"object {obj['id']} at {obj['address']:#x}"
    if frame["file"] is None:  # the sentence Frame.where() gives, from the JSON document's frame
        return Frame(frame["function"], None, None).where()
    name = Path(frame["file"]).name
    return f"{name}:{frame['line']}" if frame["line"] else name


def _peak_lines(document: dict[str, Any], objects: dict[int, dict[str, Any]]) -> list[str]:
    peak = document["peak"]
    if peak["operation"] is None:
        return ["no device memory allocated"]
    live = [object_text(objects[oid]) for oid in peak["live"]]
    more = f", and {len(live) - LIVE_LISTED} more" if len(live) > LIVE_LISTED else ""
    return [
        f"peak device memory {format_bytes(peak['bytes'])} at {peak['operation_label']}, "
        f"{document['operations']} operations in all",
        f"live at the peak: {'; '.join(live[:LIVE_LISTED])}{more}",
    ]


def _visibility_lines(document: dict[str, Any]) -> list[str]:
    lines = []
    unknown, kernels = document["unknown_touch_kernels"], document["kernel_operations"]
    if unknown:
        lines.append(
            f"{unknown} of {kernels} kernel operations have unknown touches (not instrumented): they count as "
            "reading and writing every live object, so no finding spans them"
        )
    if document.get("collection") == "objects" and document.get("element_maps"):
        lines.append(
            "object-level profile with element maps: each object's touched bytes and accesses per slice were counted "
            "on the GPU, without an access trace; no reuse analysis"
        )
    elif document.get("collection") == "objects":
        lines.append(
            "object-level profile: which objects and which of their 64 slices each kernel touched, not how much; "
            "overallocation and structured access come from those slices, non-uniform access needs a profile "
            "with --intra-object (or without --object-level)"
        )
    if document["stray_touches"]:
        lines.append(f"{document['stray_touches']} recorded kernel touches hit no live allocation and were left out")
    return lines
