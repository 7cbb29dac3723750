"""package.json `contributes.configuration` is the one source of truth for the settings (docs/settings.md).

These tests check that package.json, the table in docs/settings.md and the server's DEFAULTS
(lsp_server.settings) list the same names with the same types and defaults, and that the thresholds of all
three are those of their one home, the analyzer's THRESHOLDS (analyzer/patterns/settings.py).
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

from vscode_tools import EXTENSION, REPO

from reuselens.analyzer.patterns.settings import THRESHOLDS

TYPES = {
    "string[]": ("array", "string"),
    "string": ("string", None),
    "object": ("object", None),
    "boolean": ("boolean", None),
    "number": ("number", None),
}


def package_settings() -> dict[str, dict[str, Any]]:
    package = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    properties = package["contributes"]["configuration"]["properties"]
    return {name.removeprefix("reuselens."): schema for name, schema in properties.items()}


def documented_settings() -> dict[str, tuple[str, Any]]:
    """name -> (type, default) from the table rows of docs/settings.md."""
    rows = re.findall(
        r"^\| `reuselens\.([^`]+)` \| ([^|]+?) \| `([^`]*)` \|",
        (REPO / "docs" / "settings.md").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert rows, "docs/settings.md has no settings table"
    return {name: (kind.strip(), json.loads(default)) for name, kind, default in rows}


def test_package_json_matches_docs_settings_md() -> None:
    documented = documented_settings()
    contributed = package_settings()
    assert sorted(contributed) == sorted(documented)
    for name, (kind, default) in documented.items():
        schema = contributed[name]
        assert schema["default"] == default, name
        assert type(schema["default"]) is type(default), name
        json_type, item_type = TYPES[kind]
        assert schema["type"] == json_type, name
        if item_type:
            assert schema["items"] == {"type": item_type}, name


def test_package_json_defaults_match_the_server() -> None:
    defaults = importlib.import_module("reuselens.lsp_server.settings").DEFAULTS
    contributed = {name: schema["default"] for name, schema in package_settings().items()}
    missing_in_package = sorted(set(defaults) - set(contributed))
    missing_in_server = sorted(set(contributed) - set(defaults))
    assert not missing_in_package, f"the server reads settings package.json does not contribute: {missing_in_package}"
    assert not missing_in_server, f"package.json contributes settings the server does not know: {missing_in_server}"
    for name, default in contributed.items():
        assert defaults[name] == default and type(defaults[name]) is type(default), (
            f"reuselens.{name}: package.json default {default!r}, server default {defaults[name]!r}"
        )


def test_restricted_settings_are_the_ones_that_run_commands() -> None:
    package = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    trust = package["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    restricted = {name.removeprefix("reuselens.") for name in trust["restrictedConfigurations"]}
    assert restricted <= set(package_settings())
    assert {
        "profile.command",
        "profile.cwd",
        "profile.env",
        "build.command",
        "profiler.command",
        "server.path",
        "server.python",
        "allowWorkspaceCommands",
        "profileOnSave",
    } == restricted


def _thresholds_of(settings: dict[str, Any]) -> dict[str, Any]:
    return {
        name.removeprefix("thresholds."): value for name, value in settings.items() if name.startswith("thresholds.")
    }


def test_thresholds_of_package_json_and_docs_are_the_analyzers() -> None:
    homes = {threshold.key: threshold.default for threshold in THRESHOLDS}
    contributed = _thresholds_of({name: schema["default"] for name, schema in package_settings().items()})
    documented = _thresholds_of({name: default for name, (_kind, default) in documented_settings().items()})
    for where, defaults in (("package.json", contributed), ("docs/settings.md", documented)):
        assert sorted(defaults) == sorted(homes), f"{where} lists other thresholds than the analyzer"
        for key, default in homes.items():
            assert defaults[key] == default and type(defaults[key]) is type(default), (
                f"{where}: reuselens.thresholds.{key} defaults to {defaults[key]!r}, the analyzer to {default!r}"
            )


def test_the_server_takes_its_threshold_defaults_from_the_analyzer() -> None:
    defaults = importlib.import_module("reuselens.lsp_server.settings").DEFAULTS
    assert _thresholds_of(defaults) == {threshold.key: threshold.default for threshold in THRESHOLDS}
