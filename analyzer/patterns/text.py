"""Human units for finding messages (shared with the CLI through analyzer.units)."""

from __future__ import annotations

from typing import Iterable

from reuselens.analyzer.patterns.view import Node
from reuselens.analyzer.units import format_bytes, format_share

__all__ = ["format_bytes", "format_share", "count", "places", "where"]


def count(value: float) -> str:
    """A whole count with thousands separators: 12,288."""
    return f"{int(round(value)):,}"


def places(nodes: Iterable[Node], limit: int = 3) -> str:
    """' at softmax.cu:40, softmax.cu:52' (or ' at pc 0x1a0' without line info); '' for no nodes."""
    listed = where(nodes, limit)
    return f" at {listed}" if listed else ""


def where(nodes: Iterable[Node], limit: int = 3) -> str:
    """'softmax.cu:40, softmax.cu:52 and 2 more'; '' for no nodes."""
    seen: list[str] = []
    for node in nodes:
        text = node.source_text() or f"pc {node.pc:#x}"
        if text not in seen:
            seen.append(text)
    if not seen:
        return ""
    more = f" and {len(seen) - limit} more" if len(seen) > limit else ""
    return ", ".join(seen[:limit]) + more
