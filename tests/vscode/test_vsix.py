"""The .vsix builds (typecheck + esbuild + vsce) and holds a self-contained extension: the language client
bundled in, the graph view's script with cytoscape inside (offline webview), nothing loaded from the network."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path


def test_vsix_contents(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        assert {
            "extension/package.json",
            "extension/dist/extension.js",
            "extension/dist/webview.js",
            "extension/media/graph.css",
            "extension/LICENSE.txt",
            "extension.vsixmanifest",
        } <= names
        assert not any(name.startswith("extension/node_modules/") for name in names), "dependencies must be bundled"
        assert not any(name.startswith("extension/src/") or name.endswith(".map") for name in names)
        package = json.loads(archive.read("extension/package.json"))
        extension_js = archive.read("extension/dist/extension.js").decode("utf-8")
        webview_js = archive.read("extension/dist/webview.js").decode("utf-8")
    assert package["main"] == "./dist/extension.js"
    assert package["engines"]["vscode"] == "^1.82.0"
    assert "onLanguage:cuda-cpp" in package["activationEvents"]
    # vscode-languageclient is inside the bundle, only `vscode` stays external.
    assert 'require("vscode-languageclient' not in extension_js
    assert re.search(r'require\("vscode"\)', extension_js)
    assert "window/workDoneProgress/cancel" in extension_js
    # The webview's CSP allows no inline script, no remote origin, and scripts only with a nonce.
    csp = re.search(r"default-src 'none'.{0,300}", extension_js)
    assert csp and "script-src 'nonce-" in csp.group(0) and "unsafe-inline" not in csp.group(0)
    # cytoscape is bundled into the webview script, which fetches nothing.
    assert "cytoscape" in webview_js.lower() and len(webview_js) > 200_000
    assert not re.search(r"https?://(?!www\.w3\.org|js\.cytoscape\.org|github\.com)[\w.-]+/[\w./-]*\.js", webview_js)
