"""How the DOT and GraphML writers name a PCDepGraph node: its instruction and its source line."""

from __future__ import annotations

from typing import Any


def node_title(node: dict[str, Any]) -> str:
    async_tag = " async" if node.get("async_copy") else ""
    return f"0x{node['pc']:x} {node.get('type')} {node.get('space')} {node.get('size')}B{async_tag}"


def source_line(node: dict[str, Any]) -> str:
    """`file.cu:LINE` of the node's instruction (the file's name only: labels stay short; GraphML keeps the path)."""
    source = node.get("source") or {}
    if not source.get("file"):
        return "no line info"
    return f"{source['file'].rsplit('/', 1)[-1]}:{source.get('line')}"
