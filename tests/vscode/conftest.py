"""Fixtures for tests/vscode (helpers live in vscode_tools.py, a module name no other test area uses)."""

from __future__ import annotations

from pathlib import Path

import pytest
from vscode_tools import VSIX, npm, require_node


@pytest.fixture(scope="session")
def vsix() -> Path:
    """Builds the .vsix once per session (typecheck, esbuild --production, vsce package)."""
    require_node()
    result = npm("run", "package")
    assert result.returncode == 0, f"npm run package failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert VSIX.is_file()
    return VSIX
