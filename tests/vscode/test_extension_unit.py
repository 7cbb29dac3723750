"""Runs the extension's unit tests (node's test runner; settings, server lookup, graph model, status bar
model, units), which need no VS Code: the logic they cover lives in src/common, which never imports vscode."""

from __future__ import annotations

import re

from vscode_tools import npm, require_node


def test_extension_unit_tests_pass() -> None:
    require_node()
    result = npm("test")
    output = result.stdout + result.stderr
    summary = dict(re.findall(r"^# (pass|fail) (\d+)$", output, re.MULTILINE))
    assert result.returncode == 0, output[-6000:]
    assert summary.get("fail") == "0", output[-6000:]
    # The suite is not empty: a compile that silently produced no test files would otherwise pass.
    assert int(summary.get("pass", "0")) >= 30, output[-3000:]
