"""Human units for finding messages (shared with the CLI through analyzer.units)."""

from __future__ import annotations

from typing import Iterable

from reuselens.analyzer.patterns.view import Node
from reuselens.analyzer.units import format_bytes, format_share

__all__ = ["format_bytes", "format_share", "count", "places", "where", "loaded_values"]


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


def loaded_values(origins: Iterable[Node]) -> str:
    """What an address was computed from (a node's `address_from`, analyzer/address_origin.py): 'the values loaded at
    bfs.cu:581', 'the old values the atomic at slots.cu:79 returned', or both joined by 'and'."""
    origins = list(origins)
    loads = [o for o in origins if o.type != "atomic"]
    atomics = [o for o in origins if o.type == "atomic"]
    parts = []
    if loads:
        parts.append(f"the values loaded at {where(loads)}")
    if atomics:
        plural = "s" if len({o.source_text() or o.pc for o in atomics}) > 1 else ""
        parts.append(f"the old values the atomic{plural} at {where(atomics)} returned")
    return " and ".join(parts)
