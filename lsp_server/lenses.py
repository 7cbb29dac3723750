"""Code lenses: one per source line with memory instructions, titled lazily in codeLens/resolve with the
line's reuse-scope breakdown by bytes; clicking one explains that line. The same titles are offered as inlay
hints at the end of the line, for clients that show those but no code lenses (Helix, Emacs/eglot)."""

from __future__ import annotations

import os
from typing import Callable

from lsprotocol import types

from reuselens.lsp_server.actions import explanation
from reuselens.lsp_server.format import lens_title
from reuselens.lsp_server.model import RunResults
from reuselens.lsp_server.tracking import LineMap

NEXT_HOT_SPOT = "reuselens.nextHotSpot"
EXPLAIN_LINE = "reuselens.explainLine"


def unresolved(results: RunResults, path: str, uri: str, line_map: LineMap | None) -> list[types.CodeLens]:
    """Lenses with range and data only (the cheap half)."""
    out = []
    for line in sorted(results.stats.get(path, {})):
        current = line_map.to_current(line) if line_map else line
        if current is None:
            continue
        rng = types.Range(types.Position(current - 1, 0), types.Position(current - 1, 0))
        out.append(types.CodeLens(range=rng, data={"uri": uri, "line": line, "run": results.digest[:16]}))
    return out


def resolve(results: RunResults | None, path: str, lens: types.CodeLens) -> types.CodeLens:
    """Fill in the title; a lens from an older run gets a title saying so instead of numbers."""
    data = lens.data or {}
    stats = results.stats.get(path, {}).get(int(data.get("line", 0))) if results else None
    if results is None or data.get("run") != results.digest[:16] or stats is None:
        lens.command = types.Command(title="reuse: results changed, refreshing", command="")
        return lens
    title = lens_title(stats.bytes_by_label, stats.total_bytes)
    lens.command = types.Command(title=title, command=EXPLAIN_LINE, arguments=[data.get("uri"), lens.range.start.line])
    return lens


def inlay_hints(
    results: RunResults,
    path: str,
    line_map: LineMap | None,
    lines: list[str],
    first: int,
    last: int,
    end_of: Callable[[int], types.Position],
) -> list[types.InlayHint]:
    """The lens titles of current lines first..last (0-based, inclusive) as hints after each line's text;
    end_of(line0) is the end of that line in the client's position encoding."""
    out = []
    for line, stats in sorted(results.stats.get(path, {}).items()):
        current = line_map.to_current(line) if line_map else line
        if current is None or not first <= current - 1 <= last or current > len(lines):
            continue
        out.append(
            types.InlayHint(
                position=end_of(current - 1),
                label=lens_title(stats.bytes_by_label, stats.total_bytes),
                padding_left=True,
            )
        )
    return out


def explain_line(results: RunResults, path: str, line: int) -> str | None:
    """What a lens click shows: the line's reuse breakdown and how to fix each finding on it."""
    stats = results.stats.get(path, {}).get(line)
    findings = [f for f in results.findings_by_file.get(path, []) if f.line == line]
    if stats is None and not findings:
        return None
    text = f"{os.path.basename(path)}:{line}"
    if stats is not None:
        text += f": {lens_title(stats.bytes_by_label, stats.total_bytes)}."
    if findings:
        text += " " + " ".join(explanation(f, None) for f in findings)
    else:
        text += " No finding on this line."
    return text
