"""Helpers for tests/vscode: where the extension, node, code-server and chromium are.

The tools come from .ci/steps/vscode.sh; every test that needs one skips with the reason (and the fix)
when it is missing, so `pytest` on a machine without Node still passes the rest of the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"
VSIX = EXTENSION / "out" / "reuselens.vsix"
TOOLS = Path(os.environ.get("REUSELENS_VSCODE_TOOLS", Path.home() / ".cache" / "reuselens" / "vscode-e2e"))
CHROMIUM = Path(os.environ.get("REUSELENS_CHROMIUM", "/usr/bin/chromium"))
SETUP_HINT = "run .ci/steps/vscode.sh"


def require_node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip(f"node is not installed ({SETUP_HINT})")
    if not (EXTENSION / "node_modules" / "vscode-languageclient").is_dir():
        pytest.skip(f"vscode-extension/node_modules is missing: run `npm ci` in vscode-extension ({SETUP_HINT})")
    return node


def npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    npm_path = shutil.which("npm")
    if npm_path is None:
        pytest.skip(f"npm is not installed ({SETUP_HINT})")
    return subprocess.run([npm_path, *args], cwd=EXTENSION, capture_output=True, text=True, timeout=timeout)
