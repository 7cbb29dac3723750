"""A self-contained HTML page of a run's memory timeline (docs/memory.md): no network, inline SVG, CSS and a few
lines of script, the same bytes for the same run.

DrGPUM's picture (seed 002): the GPU operations along one axis, each data object a bar under it from its
allocation to its free, a mark wherever an operation touched it; above them the device memory in use, with its
peak marked and the objects live there listed. Each finding is drawn over its object's bar across the operations
it held memory needlessly; hovering it (or its row in the table below) shows the fix. Kernels whose touches were
not recorded are grey bands across every bar: nothing is claimed across them.

The markup is also well-formed XML (every element closed, text escaped), so any XML parser can check it.
"""

from __future__ import annotations

import html
from typing import Any

from reuselens.analyzer.memory.analysis import MemoryAnalysis
from reuselens.analyzer.memory.peak import usage
from reuselens.analyzer.reporters.memory_json import memory_document
from reuselens.analyzer.reporters.memory_table import object_text
from reuselens.analyzer.units import format_bytes

LEFT, PLOT_W, CURVE_H, ROW_H, GAP = 300, 900, 120, 16, 28
TOUCH_COLORS = {(True, False): "#4c78a8", (False, True): "#f58518", (True, True): "#b279a2"}
STYLE = """
body { font: 13px sans-serif; margin: 16px; color: #222; background: #fff; }
svg text { font: 11px sans-serif; }
.bar { fill: #d9d9d9; }
.bar.peak { fill: #9ecae1; }
.unknown { fill: #bbbbbb; opacity: 0.35; }
.finding { fill: #e45756; opacity: 0.45; }
.finding:hover, .finding.lit { opacity: 0.9; }
.curve { fill: none; stroke: #4c78a8; stroke-width: 1.5; }
.peakline { stroke: #e45756; stroke-width: 1; stroke-dasharray: 4 3; }
table { border-collapse: collapse; margin-top: 12px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
tr.lit { background: #fde0dd; }
"""
# Hovering a finding's table row lights its drawing and back (no `<` or `&`: the page stays well-formed XML).
SCRIPT = """
document.querySelectorAll("[data-finding]").forEach(function (node) {
  function light(on) {
    document.querySelectorAll("[data-finding='" + node.dataset.finding + "']").forEach(function (other) {
      other.classList.toggle("lit", on);
    });
  }
  node.addEventListener("mouseenter", function () { light(true); });
  node.addEventListener("mouseleave", function () { light(false); });
});
"""


def render_memory_html(analysis: MemoryAnalysis) -> str:
    document = memory_document(analysis)
    count = max(len(analysis.timeline.operations), 1)
    scale = _Scale(count)
    rows = {obj["id"]: row for row, obj in enumerate(document["objects"])}
    bars_top = CURVE_H + GAP
    height = bars_top + len(rows) * ROW_H + 20
    parts = _curve(analysis, scale) + _bars(analysis, document, scale, rows, bars_top)
    parts += _unknown_bands(analysis, scale, bars_top, height)  # over the bars: nothing is known under them
    parts += _findings(document, scale, rows, bars_top)
    parts += _peak_marker(document, scale, height)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + PLOT_W + 20}" height="{height}" '
        f'viewBox="0 0 {LEFT + PLOT_W + 20} {height}">{"".join(parts)}</svg>'
    )
    return _page(document, svg)


class _Scale:
    """Operation index -> x; an operation is a column of PLOT_W / count pixels."""

    def __init__(self, count: int):
        self.count, self.width = count, PLOT_W / count

    def x(self, index: float) -> str:
        return _num(LEFT + index * self.width)

    def span(self, first: int, end: int) -> str:
        return _num(max((end - first) * self.width, 1.0))


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _curve(analysis: MemoryAnalysis, scale: _Scale) -> list[str]:
    curve = usage(analysis.timeline)
    top = max(curve, default=0) or 1
    points = []
    for index, value in enumerate(curve):  # a step: the value holds across the operation's column
        y = _num(CURVE_H - 10 - (CURVE_H - 20) * value / top)
        points += [f"{scale.x(index)},{y}", f"{scale.x(index + 1)},{y}"]
    axis = f'<line x1="{LEFT}" y1="{CURVE_H - 10}" x2="{LEFT + PLOT_W}" y2="{CURVE_H - 10}" stroke="#999"/>'
    label = f'<text x="8" y="20">device memory in use (peak {html.escape(format_bytes(max(curve, default=0)))})</text>'
    return [label, axis, f'<polyline class="curve" points="{" ".join(points)}"/>'] if points else [label, axis]


def _unknown_bands(analysis: MemoryAnalysis, scale: _Scale, top: int, height: int) -> list[str]:
    return [
        f'<rect class="unknown" x="{scale.x(op.index)}" y="{top}" width="{scale.span(0, 1)}" height="{height - top}">'
        f"<title>{html.escape(op.label())}: touches not recorded</title></rect>"
        for op in analysis.timeline.operations
        if op.touches_unknown
    ]


def _bars(
    analysis: MemoryAnalysis, document: dict[str, Any], scale: _Scale, rows: dict[int, int], top: int
) -> list[str]:
    timeline, live = analysis.timeline, set(document["peak"]["live"])
    unknown = {op.index for op in timeline.operations if op.touches_unknown}
    parts = []
    for obj in document["objects"]:
        oid, y = obj["id"], top + rows[obj["id"]] * ROW_H
        first, end = obj["allocated_at"], timeline.end_of(obj["id"])
        text = html.escape(object_text(obj))
        parts.append(f'<text x="8" y="{y + 11}">{text}</text>')
        css = "bar peak" if oid in live else "bar"
        freed = f"freed at op {end}" if obj["freed_at"] is not None else "never freed"
        parts.append(
            f'<rect class="{css}" x="{scale.x(first)}" y="{y + 2}" width="{scale.span(first, end)}" '
            f'height="{ROW_H - 4}"><title>{text}: allocated at op {first}, {freed}</title></rect>'
        )
        parts += _touch_marks(timeline.touched_at[oid], unknown, scale, y)
    return parts


def _touch_marks(marks: tuple[Any, ...], unknown: set[int], scale: _Scale, y: int) -> list[str]:
    """One mark per pixel column at most, so a long run draws at most PLOT_W marks per object."""
    modes: dict[int, tuple[int, bool, bool]] = {}  # pixel column -> (first index, read, write)
    for index, touch in marks:
        if index in unknown:
            continue
        column = int(index * scale.width)
        first, read, write = modes.get(column, (index, False, False))
        modes[column] = (first, read or touch.read, write or touch.write)
    return [
        f'<rect x="{scale.x(index)}" y="{y + 4}" width="{_num(max(scale.width, 2.0))}" height="{ROW_H - 8}" '
        f'fill="{TOUCH_COLORS[(read, write)]}"/>'
        for index, read, write in sorted(modes.values())
    ]


def _findings(document: dict[str, Any], scale: _Scale, rows: dict[int, int], top: int) -> list[str]:
    objects = {obj["id"]: obj for obj in document["objects"]}
    parts = []
    for finding in document["findings"]:
        obj = objects[finding["object"]]
        first, last = finding["span"] or (obj["allocated_at"], obj["allocated_at"])
        y = top + rows[finding["object"]] * ROW_H
        tip = html.escape(f"{finding['pattern']}, peak -{format_bytes(finding['peak_reduction'])}: {finding['fix']}")
        parts.append(
            f'<rect class="finding" data-finding="{finding["rank"]}" x="{scale.x(first)}" y="{y + 1}" '
            f'width="{scale.span(first, last + 1)}" height="{ROW_H - 2}"><title>{tip}</title></rect>'
        )
    return parts


def _peak_marker(document: dict[str, Any], scale: _Scale, height: int) -> list[str]:
    peak = document["peak"]
    if peak["operation"] is None:
        return []
    x = scale.x(peak["operation"] + 0.5)
    label = html.escape(f"peak {format_bytes(peak['bytes'])} at {peak['operation_label']}")
    return [
        f'<line class="peakline" x1="{x}" y1="8" x2="{x}" y2="{height}"/>',
        f'<text x="{LEFT}" y="{CURVE_H + GAP - 8}" fill="#e45756">{label}</text>',
    ]


def _page(document: dict[str, Any], svg: str) -> str:
    objects = {obj["id"]: obj for obj in document["objects"]}
    peak = document["peak"]
    live = "".join(f"<li>{html.escape(object_text(objects[oid]))}</li>" for oid in peak["live"])
    rows = "".join(
        f'<tr data-finding="{f["rank"]}"><td>{f["rank"]}</td><td>{html.escape(f["pattern"])}</td>'
        f"<td>{html.escape(object_text(objects[f['object']]))}</td><td>{f['operations']}</td>"
        f"<td>{html.escape(format_bytes(f['peak_reduction']))}</td><td>{html.escape(f['fix'])}</td></tr>"
        for f in document["findings"]
    )
    unknown = document["unknown_touch_kernels"]
    notes = (
        f"<p>{unknown} of {document['kernel_operations']} kernel operations have unknown touches (grey bands): "
        "they count as touching every live object, so no finding spans them.</p>"
        if unknown
        else ""
    )
    title = html.escape(f"ReuseLens memory timeline: {document['run']}")
    peak_text = (
        html.escape(f"Peak device memory {format_bytes(peak['bytes'])} at {peak['operation_label']}.")
        if peak["operation"] is not None
        else "No device memory allocated."
    )
    return (
        '<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>'
        f"<title>{title}</title><style>{STYLE}</style></head><body><h1>{title}</h1>"
        f"<p>{peak_text} Bars: objects from allocation to free; marks: touches (blue read, orange write, purple "
        f"both); red: findings (hover for the fix).</p>{notes}{svg}"
        f"<h2>Live at the peak</h2><ul>{live}</ul>"
        "<h2>Findings</h2><table><tr><th>#</th><th>pattern</th><th>object</th><th>held for (ops)</th>"
        f"<th>peak reduction</th><th>fix</th></tr>{rows}</table><script>{SCRIPT}</script></body></html>\n"
    )
