"""The memory findings on their allocation lines: diagnostics (source `reuselens-memory`, code = the pattern) and
the one-line lens title of each allocation line that has findings or is live at the peak.

One diagnostic per finding, except that findings of one pattern on one line are merged into one (the largest
peak reduction, with a count): a cudaMalloc in a loop makes one object per iteration, and a thousand identical
diagnostics on one line would say nothing more than one.

Severity: Warning when fixing the finding lowers the run's peak by at least `reuselens.memory.warningPeakShare`
of the peak, else Information (docs/settings.md gives the reason for the default).
"""

from __future__ import annotations

from typing import Callable

from lsprotocol import types

from reuselens.lsp_server.diagnostics import line_range
from reuselens.lsp_server.format import format_bytes
from reuselens.lsp_server.memory_model import AllocationLine, FindingFacts, MemorySurface, ObjectFacts
from reuselens.lsp_server.memory_page import COMMAND as TIMELINE_COMMAND
from reuselens.lsp_server.tracking import LineMap

SOURCE = "reuselens-memory"
MAX_LENS_CHARS = 140  # a lens is one line above the code; longer titles get cut by the editor anyway

# Per pattern: what the bytes suffer, and how the fix changes the program (the "if ..." of the message).
_WHAT = {
    "early_allocation": "allocated {ops} before its first use",
    "late_deallocation": "held {ops} after its last use",
    "temporary_idle": "idle for {ops} between two uses",
    "unused_allocation": "never touched by any GPU operation",
    "memory_leak": "never freed",
    "dead_write": "written, then overwritten before any read",
    "redundant_allocation": "could live in a buffer already allocated",
    "overallocation": "allocated but never touched by any kernel",
    "structured_access": "more than any one kernel uses at a time",
    "non_uniform_access": "take most of the object's accesses",
}


def _operations(count: int) -> str:
    return f"{count} GPU operation{'' if count == 1 else 's'}"


def pattern_title(pattern: str) -> str:
    return "non-uniform access" if pattern == "non_uniform_access" else pattern.replace("_", " ")


def peak_effect(facts: FindingFacts) -> str:
    """ "peak -4.2 MB if removed", or why the peak stays."""
    finding = facts.finding
    if finding.pattern == "dead_write":  # the object's lifetime stays: the fix saves GPU work, not memory
        return f"no memory saved: {facts.remedy}"
    if finding.pattern == "non_uniform_access":  # a placement opportunity: faster accesses, same memory
        return f"faster if {facts.remedy}"
    if finding.peak_reduction <= 0:
        return f"peak unchanged if {facts.remedy}"  # the peak is reached where this object is not resident
    return f"peak -{format_bytes(finding.peak_reduction)} if {facts.remedy}"


def finding_message(facts: FindingFacts, others: int = 0) -> str:
    finding = facts.finding
    what = _WHAT.get(finding.pattern, "").format(ops=_operations(finding.operations))
    more = f" (and {others} more object{'s' if others > 1 else ''} allocated on this line)" if others else ""
    return f"{pattern_title(finding.pattern)}: {format_bytes(finding.bytes)} {what}; {peak_effect(facts)}{more}"


def severity(finding_reduction: int, peak_bytes: int, warning_share: float) -> types.DiagnosticSeverity:
    if finding_reduction > 0 and finding_reduction >= warning_share * peak_bytes:
        return types.DiagnosticSeverity.Warning
    return types.DiagnosticSeverity.Information


def diagnostics(
    surface: MemorySurface, path: str, lines: list[str], line_map: LineMap | None, warning_share: float
) -> list[types.Diagnostic]:
    """The memory diagnostics of one file (ranges in code points; the server converts them)."""
    out = []
    for entry in surface.lines.get(path, {}).values():
        line = line_map.to_current(entry.line) if line_map else entry.line
        if line is None:
            continue  # the allocation line changed since the run
        by_pattern: dict[str, list[FindingFacts]] = {}
        for _, facts in entry.findings:  # largest peak reduction first, so [0] is each pattern's strongest
            by_pattern.setdefault(facts.finding.pattern, []).append(facts)
        for pattern, group in by_pattern.items():
            top = group[0].finding
            out.append(
                types.Diagnostic(
                    range=line_range(lines, line),
                    message=finding_message(group[0], len(group) - 1),
                    severity=severity(top.peak_reduction, surface.peak.bytes, warning_share),
                    source=SOURCE,
                    code=pattern,
                    data={
                        "memoryPattern": pattern,
                        "object": top.object_id,
                        "peakReduction": top.peak_reduction,
                        "run": surface.digest[:16],
                        "line": entry.line,
                    },
                )
            )
    return out


def _idle(objects: list[ObjectFacts]) -> str | None:
    live = sum(o.live_operations for o in objects)
    if not live:
        return None
    share = sum(o.idle_operations for o in objects) / live
    return f"idle {round(100 * share)}% of its life" if len(objects) == 1 else f"idle {round(100 * share)}%"


def lens_title(entry: AllocationLine) -> str:
    """ "4.2 MB · live at peak · idle 71% of its life · peak -4.2 MB if freed after op 12 (saxpy)"."""
    objects = entry.objects
    size = sum(o.size for o in objects)
    parts = [format_bytes(size) if len(objects) == 1 else f"{len(objects)} allocations, {format_bytes(size)}"]
    at_peak = sum(o.live_at_peak for o in objects)
    if at_peak:
        parts.append("live at peak" if len(objects) == 1 else f"{at_peak} live at peak")
    if idle := _idle(objects):
        parts.append(idle)
    findings = entry.findings
    if findings:
        parts.append(peak_effect(findings[0][1]))
    title = " · ".join(parts)
    return title if len(title) <= MAX_LENS_CHARS else title[: MAX_LENS_CHARS - 1] + "…"


def lenses(surface: MemorySurface, path: str, line_map: LineMap | None) -> list[types.CodeLens]:
    """Titled at once (the text is prepared; nothing to defer to codeLens/resolve); a click asks for the run's
    memory timeline page (memory_page.py), which a client with a webview shows; the hover has the line's details."""
    out = []
    for line, entry in sorted(surface.lines.get(path, {}).items()):
        current = line_map.to_current(line) if line_map else line
        if current is None:
            continue
        rng = types.Range(types.Position(current - 1, 0), types.Position(current - 1, 0))
        out.append(types.CodeLens(range=rng, command=types.Command(title=lens_title(entry), command=TIMELINE_COMMAND)))
    return out


def inlay_hints(
    surface: MemorySurface,
    path: str,
    line_map: LineMap | None,
    lines: list[str],
    first: int,
    last: int,
    end_of: Callable[[int], types.Position],
) -> list[types.InlayHint]:
    """The lens titles as hints after the allocation lines, for clients without code lenses (lenses.inlay_hints)."""
    out = []
    for line, entry in sorted(surface.lines.get(path, {}).items()):
        current = line_map.to_current(line) if line_map else line
        if current is None or not first <= current - 1 <= last or current > len(lines):
            continue
        out.append(types.InlayHint(position=end_of(current - 1), label=lens_title(entry), padding_left=True))
    return out
