"""The packages depend one way (docs/architecture.md): the application (reuselens, reuselens.cli) may import
the three libraries; the language server may import the analyzer; the analyzer and the collector import none
of the others. Lazy imports inside functions count too: they hid the old analyzer <-> collector cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# source folder -> layer; the wheel installs each under reuselens.<layer> (pyproject: wheel.packages)
FOLDERS = {"analyzer": "analyzer", "collector": "collector", "lsp_server": "lsp_server", "reuselens": "app"}
ALLOWED = {
    "app": {"analyzer", "collector", "lsp_server"},
    "lsp_server": {"analyzer"},
    "analyzer": set(),
    "collector": set(),
}
BARE_NAMES = {"analyzer", "collector", "lsp_server"}


def layer_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] in BARE_NAMES:
        return "bare:" + parts[0]
    if parts[0] != "reuselens":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in BARE_NAMES else "app"


def imported_modules(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            if node.module == "reuselens":  # `from reuselens import collector`
                for alias in node.names:
                    yield node.lineno, f"reuselens.{alias.name}"


def arrows() -> list[tuple[str, str, str]]:
    """(file:line, from layer, to layer) of every import between layers."""
    found = []
    for folder, layer in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line, module in imported_modules(tree):
                target = layer_of_module(module)
                if target is not None and target != layer:
                    found.append((f"{path.relative_to(REPO)}:{line}", layer, target))
    return found


def test_there_are_imports_to_check():
    layers = {(source, target) for _, source, target in arrows()}
    assert ("app", "analyzer") in layers and ("lsp_server", "analyzer") in layers


@pytest.mark.parametrize("source", sorted(ALLOWED))
def test_each_package_imports_only_what_it_may(source):
    wrong = [
        f"{where}: {source} -> {target}"
        for where, layer, target in arrows()
        if layer == source and target not in ALLOWED[source]
    ]
    assert wrong == [], "imports against docs/architecture.md:\n" + "\n".join(wrong)


def test_run_format_named_alike_by_its_writers_and_its_reader():
    from reuselens.analyzer import rundir
    from reuselens.collector import manifest

    assert (manifest.MANIFEST, manifest.RUN_FORMAT, manifest.RUN_VERSION) == (
        rundir.MANIFEST,
        rundir.RUN_FORMAT,
        rundir.RUN_VERSION,
    )
    native = "".join(p.read_text(encoding="utf-8") for p in (REPO / "collector/native/src").glob("*.cpp"))
    assert f'\\"format\\": \\"{rundir.RUN_FORMAT}\\", \\"version\\": {rundir.RUN_VERSION}' in native
