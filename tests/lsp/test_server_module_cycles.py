"""The server's modules import each other one way: no module of lsp_server/ reaches itself through its imports
(handlers registers the features on a server it is given; server.py never imports handlers)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "reuselens.lsp_server"
SOURCE = Path(__file__).resolve().parents[2] / "lsp_server"


def _siblings_imported(path: Path) -> set[str]:
    """The lsp_server modules that `path` imports anywhere in its text (module level or inside a function)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
            names.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[2] for a in node.names if a.name.startswith(PACKAGE + "."))
    return names


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    stack = [(start, [start])]
    while stack:
        module, trail = stack.pop()
        for imported in sorted(graph.get(module, ())):
            if imported == start:
                return trail + [start]
            if imported not in trail:
                stack.append((imported, trail + [imported]))
    return None


def test_no_lsp_server_module_imports_itself_through_others():
    graph = {path.stem: _siblings_imported(path) for path in SOURCE.glob("*.py")}
    assert "server" in graph and "handlers" in graph["app"]
    cycles = [cycle for module in sorted(graph) if (cycle := _cycle_from(module, graph))]
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)
