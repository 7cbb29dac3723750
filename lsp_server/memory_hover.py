"""Hover on an allocation line: per object its size, alloc and free, first and last touch, how much of it the
kernels touched (and how concentrated their accesses were, where the run counted them), how idle it was, each
finding with its fix, and the three largest other objects live at the run's peak.

Everything comes prepared (memory_model.py), so the hover only formats. A line that allocates in a loop can
hold thousands of objects: the hover details the largest few and caps its Markdown at MAX_CHARS.
"""

from __future__ import annotations

import os

from reuselens.lsp_server import markdown as md
from reuselens.lsp_server.format import format_bytes
from reuselens.lsp_server.memory_model import AllocationLine, MemorySurface, ObjectFacts
from reuselens.lsp_server.memory_views import pattern_title, peak_effect
from reuselens.lsp_server.paths import path_to_uri

MAX_OBJECTS = 3  # objects detailed per line, the largest first
MAX_LIVE = 3  # other objects named as live at the peak
MAX_CHARS = 4096
CUT_NOTE = "\n\n… (cut; `reuselens memory RUN_DIR` lists every object and finding)"


def _object_lines(obj: ObjectFacts) -> list[str]:
    head = f"**object {obj.object_id}** · {format_bytes(obj.size)}" + (
        " · live at the peak" if obj.live_at_peak else ""
    )
    freed = f"freed by {md.text(obj.freed)}" if obj.freed else "never freed"
    lines = [head, "", f"- allocated by {md.text(obj.allocated)}; {freed}"]
    if obj.first_touch is None:
        lines.append("- never touched by a memcpy, memset or kernel")
    else:
        lines.append(f"- first touch {md.text(obj.first_touch)}; last touch {md.text(obj.last_touch)}")
    if obj.element_use is not None:
        lines.append(f"- {md.text(obj.element_use)}")
    if obj.idle_share is not None:
        lines.append(
            f"- idle {round(100 * obj.idle_share)}% of its life: {obj.idle_operations} of the "
            f"{obj.live_operations} GPU operations run while it was allocated did not touch it"
        )
    for facts in obj.findings:
        lines.append(
            f"- **{pattern_title(facts.finding.pattern)}** ({md.text(peak_effect(facts))}): {md.text(facts.finding.fix)}"
        )
    return lines


def _peak_lines(surface: MemorySurface, entry: AllocationLine) -> list[str]:
    peak = surface.peak
    if peak.operation is None:
        return []
    here = {obj.object_id for obj in entry.objects}
    others = [(oid, live) for oid, live in peak.live if oid not in here]
    named = []
    for _, live in others[:MAX_LIVE]:
        place = live.place
        where = f"[{md.text(live.site)}]({path_to_uri(place[0])}#L{place[1]})" if place else md.text(live.site)
        named.append(f"{where} {format_bytes(live.size)}")
    more = f", and {len(others) - MAX_LIVE} more" if len(others) > MAX_LIVE else ""
    text = f"Peak device memory {format_bytes(peak.bytes)} at {md.text(peak.operation)}."
    if named:
        text += f" Also live there: {', '.join(named)}{more}."
    return ["", text]


def markdown(surface: MemorySurface, path: str, line: int) -> str | None:
    """The hover text for snapshot line `line` of `path`, or None when no reported allocation is made there.
    The header and the peak always stay; objects are detailed, the strongest first, while they fit."""
    entry = surface.at(path, line)
    if entry is None:
        return None
    objects = entry.ranked_objects
    total = sum(o.size for o in objects)
    count = f"{len(objects)} allocations, {format_bytes(total)} in all" if len(objects) > 1 else format_bytes(total)
    head = f"**ReuseLens memory** · {md.text(os.path.basename(path))}:{line} · {count}"
    tail = "\n".join(_peak_lines(surface, entry))
    room = MAX_CHARS - len(head) - len(tail) - len(CUT_NOTE) - 4
    blocks: list[str] = []
    for obj in objects[:MAX_OBJECTS]:
        block = "\n".join(_object_lines(obj))
        if len(block) + 2 > room:
            if not blocks:  # not even the strongest object fits whole: keep its first lines
                cut = block.rfind("\n", 0, room)
                blocks.append(block[: cut if cut > 0 else max(room, 0)] + CUT_NOTE)
            break
        blocks.append(block)
        room -= len(block) + 2
    shown = len(blocks)
    if shown < len(objects):
        blocks.append(f"+{len(objects) - shown} more objects allocated on this line.")
    return "\n\n".join([head, *blocks]) + ("\n" + tail if tail else "")
