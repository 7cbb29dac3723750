"""The memory timeline in VS Code (issue 18): the command the extension declares, the server command and
notification it relies on, and the policy it puts on the server's page, checked against the real page of a run.

The page comes from analyzer/reporters/memory_html.py (what `reuselens memory --html` writes); the extension
only adds a Content-Security-Policy that lets that page's own inline style and script run, by hash. A change
to either side that breaks the other fails here, without starting VS Code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from vscode_tools import EXTENSION, REPO, npm, require_node

from reuselens.lsp_server.memory_loading import ANALYSED_NOTIFICATION
from reuselens.lsp_server.memory_page import COMMAND as SERVER_COMMAND

MEMORY_TESTS = REPO / "tests" / "memory"
if str(MEMORY_TESTS) not in sys.path:
    sys.path.insert(0, str(MEMORY_TESTS))
from run_dirs import RunWriter  # noqa: E402 - tests/memory's run-directory writer

CLIENT_COMMAND = "reuselens.showMemoryTimeline"
XHTML = "{http://www.w3.org/1999/xhtml}"


def package() -> dict:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def constant(group: str, key: str) -> str:
    """`key: "value"` inside `export const GROUP = {...}` of src/common/constants.ts."""
    text = (EXTENSION / "src" / "common" / "constants.ts").read_text(encoding="utf-8")
    block = re.search(rf"export const {group} = \{{(.*?)\}} as const;", text, re.DOTALL)
    assert block, f"constants.ts has no {group}"
    value = re.search(rf"^\s*{key}: \"([^\"]+)\",", block.group(1), re.MULTILINE)
    assert value, f"{group} has no {key}"
    return value.group(1)


def test_package_json_declares_the_show_memory_timeline_command() -> None:
    contributes = package()["contributes"]
    declared = {c["command"]: c for c in contributes["commands"]}
    assert declared[CLIENT_COMMAND]["category"] == "ReuseLens"
    assert declared[CLIENT_COMMAND]["title"] == "Show memory timeline"
    assert "icon" in declared[CLIENT_COMMAND]  # it sits in the editor title bar, beside the reuse graph's
    menu = {entry["command"]: entry for entry in contributes["menus"]["editor/title"]}
    assert menu[CLIENT_COMMAND]["group"] == menu["reuselens.showReuseGraph"]["group"]
    assert constant("CLIENT_COMMANDS", "showMemoryTimeline") == CLIENT_COMMAND


def test_the_extension_asks_the_server_command_and_listens_to_the_notification_the_server_has() -> None:
    assert constant("SERVER_COMMANDS", "memoryTimeline") == SERVER_COMMAND
    assert constant("SERVER_NOTIFICATIONS", "memoryAnalysisDone") == ANALYSED_NOTIFICATION
    assert SERVER_COMMAND != CLIENT_COMMAND  # vscode-languageclient registers the server's ids as commands too


def real_page(tmp_path: Path) -> str:
    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.reporters.memory_html import render_memory_html

    run = RunWriter()
    data, scratch = run.alloc(1 << 20), run.alloc(1 << 16)
    run.memcpy(0x1000, run.address(data), 1 << 20, "htod").kernel("_Z4stepPf", [(data, "rw")])
    run.free(scratch).free(data)
    return render_memory_html(analyze_run(str(run.write(tmp_path / "run"))))


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def test_the_policy_lets_exactly_the_real_pages_style_and_script_run(tmp_path: Path) -> None:
    node = require_node()
    compiled = npm("run", "compile-tests")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    page = real_page(tmp_path)
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    script = (
        f"const m = require({json.dumps(str(EXTENSION / 'out' / 'src' / 'common' / 'memoryPage.js'))});"
        f"const fs = require('fs');"
        f"process.stdout.write(m.withContentSecurityPolicy(fs.readFileSync({json.dumps(str(tmp_path / 'page.html'))}, 'utf8')));"
    )
    secured = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    # GIVEN the page's own blocks, as an XML parser reads them
    root = ElementTree.fromstring(page.split("\n", 1)[1])
    style, code = root.find(f"{XHTML}head/{XHTML}style").text, root.find(f"{XHTML}body/{XHTML}script").text
    # a webview takes the editor's theme (dark text on a dark editor otherwise): the page sets both colours
    body_rule = re.search(r"^body \{([^}]*)\}", style, re.MULTILINE).group(1)
    assert "color:" in body_rule and "background:" in body_rule
    # THEN the secured page is the page plus one policy element, first in <head>, allowing those blocks only
    head = ElementTree.fromstring(secured.split("\n", 1)[1]).find(f"{XHTML}head")
    meta = head[0]
    assert meta.tag == f"{XHTML}meta" and meta.get("http-equiv") == "Content-Security-Policy"
    assert meta.get("content") == (
        f"default-src 'none'; style-src {sha256(style)}; script-src {sha256(code)}; img-src data:"
    )
    element = secured[secured.index('<meta http-equiv="Content-Security-Policy"') :]
    assert secured.replace(element[: element.index("/>") + 2], "", 1) == page
