"""Code lenses: one per source line with memory instructions, titled lazily in codeLens/resolve with the
line's reuse-scope breakdown by bytes; clicking one jumps to the next hot spot."""

from __future__ import annotations

from lsprotocol import types

from lsp_server.format import lens_title
from lsp_server.model import RunResults
from lsp_server.tracking import LineMap

NEXT_HOT_SPOT = "reuselens.nextHotSpot"


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
    lens.command = types.Command(title=title, command=NEXT_HOT_SPOT, arguments=[data.get("uri"), lens.range.start.line])
    return lens
