"""End to end in a real VS Code: the packaged .vsix in code-server, driven by Debian's Chromium.

The fixture workspace has src/kernel.cu and a run directory (fixture_run.py) whose report.json points into it
through a build-tree prefix; the workspace settings name this Python as the server's interpreter, the run
directory (with ${workspaceFolder}) and the prefix map. vscode-extension/test/e2e/run.mjs performs the user's
steps and records what the workbench shows; each test below checks one feature. Screenshots and logs:
vscode-extension/out/e2e/{trusted,restricted}/ (or under $REUSELENS_E2E_ARTIFACTS).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import fixture_run
import pytest
from vscode_tools import CHROMIUM, EXTENSION, SETUP_HINT, TOOLS, require_node

HERE = Path(__file__).parent
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
NODE24_BIN = TOOLS / "node24" / "node_modules" / "node" / "bin"
ARTIFACTS = Path(os.environ.get("REUSELENS_E2E_ARTIFACTS", EXTENSION / "out" / "e2e"))
RUN_SUBDIR = "runs/fixture"


def _require_tools() -> None:
    require_node()
    missing = [str(p) for p in (CODE_SERVER, NODE24_BIN / "node", CHROMIUM) if not p.exists()]
    if missing:
        pytest.skip(f"end-to-end tools missing: {', '.join(missing)} ({SETUP_HINT})")
    if not (EXTENSION / "node_modules" / "playwright-core").is_dir():
        pytest.skip(f"playwright-core is not installed in vscode-extension ({SETUP_HINT})")
    probe = subprocess.run([sys.executable, "-c", "import reuselens.lsp_server.server"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"this Python cannot import the language server: {probe.stderr.strip().splitlines()[-1:]}")


def _workspace(root: Path) -> Path:
    workspace = root / "workspace"
    shutil.copytree(HERE / "fixtures" / "workspace", workspace)
    fixture_run.write_run(workspace / RUN_SUBDIR)
    # "Profile now" runs an app that sleeps for the seconds in delay.txt under the stand-in profiler, which
    # then writes the fixed kernel's run (reps=1) into the run directory.
    (workspace / "delay.txt").write_text("1", encoding="utf-8")
    settings = {
        "reuselens.server.python": sys.executable,
        "reuselens.profile.command": [sys.executable, "-c", "import time; time.sleep(float(open('delay.txt').read()))"],
        "reuselens.profiler.command": [sys.executable, str(HERE / "standin_profiler.py")],
        "reuselens.runDirectory": "${workspaceFolder}/" + RUN_SUBDIR,
        "reuselens.pathPrefixMap": {fixture_run.BUILD_PREFIX: str(workspace)},
        "reuselens.trace.server": "messages",
    }
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return workspace


def _drive(
    vsix: Path, workspace: Path, artifacts: Path, mode: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Runs one browser session (test/e2e/run.mjs) and returns what it recorded."""
    if artifacts.exists():
        shutil.rmtree(artifacts)
    artifacts.mkdir(parents=True)
    spec = {
        "codeServer": str(CODE_SERVER),
        "nodeBin": str(NODE24_BIN),
        "chromium": str(CHROMIUM),
        "vsix": str(vsix),
        "workspace": str(workspace),
        "file": fixture_run.KERNEL_FILE,
        "artifacts": str(artifacts),
        "loadLine": fixture_run.LOAD_LINE,
        "storeLine": fixture_run.STORE_LINE,
        "hoverColumn": 20,
        "profileSeconds": 2,
        "mode": mode,
    }
    spec_path = artifacts / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    node = shutil.which("node")
    assert node is not None
    result = subprocess.run(
        [node, str(EXTENSION / "test" / "e2e" / "run.mjs"), str(spec_path)],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=480,
        env=env,
    )
    results_path = artifacts / "results.json"
    assert results_path.is_file(), f"the e2e driver wrote no results:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    recorded = json.loads(results_path.read_text(encoding="utf-8"))
    print(f"e2e artifacts: {artifacts}; timings: {recorded.get('timings')}")
    assert "fatal" not in recorded, recorded["fatal"]
    return recorded


@pytest.fixture(scope="module")
def seen(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The trusted session, run once; every test reads what it recorded."""
    _require_tools()
    return _drive(vsix, _workspace(tmp_path_factory.mktemp("vscode-e2e")), ARTIFACTS / "trusted", "trusted")


@pytest.fixture(scope="module")
def restricted(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An untrusted folder whose settings name a server interpreter that does not exist and a profile command
    that would leave a marker file: VS Code must ignore both, the server must come from python3 on PATH."""
    _require_tools()
    root = tmp_path_factory.mktemp("vscode-e2e-restricted")
    workspace = _workspace(root)
    settings_path = workspace / ".vscode" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["reuselens.server.python"] = "/nonexistent/python3"
    settings["reuselens.profile.command"] = [sys.executable, "-c", "open('app-ran', 'w')"]
    settings_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    # VS Code gives its extension host the environment of the user's login shell unless it was started from a
    # command line (VSCODE_CLI=1). On a machine whose shell start-up files put another Python first (pyenv's
    # shims in ~/.bashrc), that would hide the wrapper below; so PATH stays the one set here.
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "VSCODE_CLI": "1"}
    return _drive(vsix, workspace, ARTIFACTS / "restricted", "restricted", env)


def value(seen: dict[str, Any], step: str) -> Any:
    outcome = seen["steps"].get(step)
    assert outcome is not None, f"step {step} did not run"
    assert outcome["ok"], f"step {step} failed: {outcome.get('error')}\nconsole: {seen.get('console')}"
    return outcome["value"]


def test_extension_installs_and_workbench_opens_the_kernel(seen: dict[str, Any]) -> None:
    assert "successfully installed" in value(seen, "install").lower()
    assert "kernel.cu" in value(seen, "open")


def test_squiggle_on_the_finding_line(seen: dict[str, Any]) -> None:
    assert value(seen, "squiggle") >= 1


def test_problems_panel_lists_the_findings_with_their_messages(seen: dict[str, Any]) -> None:
    rows = " ".join(value(seen, "problems"))
    assert fixture_run.RAR_MESSAGE in rows
    assert fixture_run.COALESCING_MESSAGE in rows


def test_code_lens_shows_the_reuse_breakdown(seen: dict[str, Any]) -> None:
    lenses = value(seen, "codelens")
    # Line 8: 12 MiB of 16 MiB intra-thread, 4 MiB cold (fixture_run.py).
    load_lens = [text for text in lenses if "thread" in text]
    assert load_lens, lenses
    assert "75%" in load_lens[0] and "25%" in load_lens[0] and "cold" in load_lens[0], lenses


def test_hover_shows_the_instruction_table(seen: dict[str, Any]) -> None:
    hover = " ".join(value(seen, "hover"))
    assert "0x01a0" in hover or "0x1a0" in hover, hover
    assert "thread" in hover, hover
    assert fixture_run.RAR_MESSAGE in hover, hover


def test_quick_fix_offers_register_promotion(seen: dict[str, Any]) -> None:
    rows = value(seen, "quickfix")
    assert any("register" in row.lower() for row in rows), rows


def test_status_bar_counts_the_findings(seen: dict[str, Any]) -> None:
    assert value(seen, "statusbar").endswith("ReuseLens: 2 findings")


def test_next_hot_spot_moves_to_the_finding_line(seen: dict[str, Any]) -> None:
    hotspot = value(seen, "hotspot")
    assert hotspot["before"].startswith("Ln 1,"), hotspot
    assert hotspot["after"].startswith(f"Ln {fixture_run.LOAD_LINE},"), hotspot


def test_graph_view_draws_the_kernel_offline_under_a_strict_csp(seen: dict[str, Any]) -> None:
    graph = value(seen, "graph")
    assert graph["title"] == "PCDepGraph: row_sum(const float*, float*, int, int)"
    assert (graph["nodes"], graph["edges"], graph["groups"]) == (3, 3, 2)
    assert graph["legend"] == ["cold miss", "intra-thread"]
    assert graph["canvases"] >= 1
    labels = sorted(p["label"] for p in graph["positions"])
    assert labels[0].startswith("kernel.cu:11\n") and labels[1].startswith("kernel.cu:8\n"), labels
    assert "cold miss" in labels[2]
    csp = graph["csp"]
    assert csp.startswith("default-src 'none'") and "script-src 'nonce-" in csp and "unsafe" not in csp
    ours = [script for script in graph["scripts"] if script["src"].endswith("/dist/webview.js")]
    assert len(ours) == 1 and ours[0]["nonce"], graph["scripts"]
    assert all("reuselens" not in script["src"] for script in graph["scripts"] if script not in ours)
    # cytoscape found its container rule in our stylesheet <link>, so it injected no inline <style>.
    assert graph["cytoscapeStylesheet"] == "LINK"
    assert "__________cytoscape_stylesheet" not in graph["styleTags"]
    violations = [line for line in seen["console"] if "Content Security Policy" in line or "Refused to" in line]
    assert not violations, violations


def test_clicking_a_graph_node_opens_its_source_line(seen: dict[str, Any]) -> None:
    click = value(seen, "graph_click")
    assert click["clicked"].startswith(f"kernel.cu:{fixture_run.STORE_LINE}\n")
    assert click["after"].startswith(f"Ln {fixture_run.STORE_LINE},"), click
    assert not click["before"].startswith(f"Ln {fixture_run.STORE_LINE},"), click


def test_profile_now_shows_progress_then_the_new_result(seen: dict[str, Any]) -> None:
    profile = value(seen, "profile")
    texts = profile["texts"]
    assert any(re.fullmatch(r"ReuseLens: \d+% (build|run|analyze|map)", text) for text in texts), texts
    assert texts[-1] == "ReuseLens: 1 finding", texts
    assert profile["squiggles"] == 1
    assert "Last run: ReuseLens profile: 1 finding(s)" in profile["tooltip"], profile["tooltip"]
    # The open graph view was redrawn for the new run: the intra-thread self-loop is gone.
    assert profile["graph"] == {"edges": 2, "legend": ["cold miss"]}, profile["graph"]


def test_compare_lists_the_resolved_finding_and_the_traffic(seen: dict[str, Any]) -> None:
    page = value(seen, "compare")["text"]
    assert "## Resolved (1)" in page and "redundant-rar" in page, page
    assert "## Changed waste (1)" in page and "| 117.4 MB | 29.4 MB |" in page, page
    assert "| 16.8 MB | 4.2 MB |" in page, page


def test_compare_is_a_read_only_page_not_a_dirty_untitled_document(seen: dict[str, Any]) -> None:
    compare = value(seen, "compare")
    assert compare["tabTitle"].startswith("Compare runs.md"), compare
    assert "dirty" not in compare["tabClass"].split(), compare


def test_next_hot_spot_works_with_no_editor_open(seen: dict[str, Any]) -> None:
    hotspot = value(seen, "hotspot_no_editor")
    assert hotspot["editorsBefore"] == 0, hotspot
    assert hotspot["after"].startswith(f"Ln {fixture_run.LOAD_LINE},"), hotspot
    assert not any("Invalid" in toast for toast in hotspot["errors"]), hotspot


def test_graph_opened_with_no_editor_draws_the_heaviest_kernel(seen: dict[str, Any]) -> None:
    graph = value(seen, "graph_no_editor")
    assert graph["title"] == "PCDepGraph: row_sum(const float*, float*, int, int)"
    assert graph["nodes"] == 3


def test_a_lens_click_explains_its_line_and_stays_there(seen: dict[str, Any]) -> None:
    click = value(seen, "lens_click")
    assert click["toast"].startswith(f"kernel.cu:{fixture_run.LOAD_LINE}: {click['title']}."), click
    assert "redundant-rar in row_sum" in click["toast"], click
    assert click["after"] == click["before"], click


def test_cancel_from_the_status_bar_stops_the_run(seen: dict[str, Any]) -> None:
    cancel = value(seen, "cancel")
    assert any(re.fullmatch(r"ReuseLens: \d+% run", text) for text in cancel["running"]), cancel
    assert cancel["after"][-1] == "ReuseLens: 1 finding", cancel
    assert cancel["seconds"] < 20, cancel
    assert "Last run: ReuseLens profile: cancelled" in cancel["tooltip"], cancel


def test_restricted_mode_ignores_the_workspace_server_setting(restricted: dict[str, Any]) -> None:
    assert "Restricted Mode" in value(restricted, "restricted_mode")
    lines = value(restricted, "lookup_log")
    assert "server lookup: reuselens.server.python: not set" in lines, lines
    assert not any("/nonexistent/python3" in line for line in lines), lines
    assert any(
        line.startswith("server lookup: python3 on PATH: ") and line.endswith("-c 'import reuselens.lsp_server' -> ok")
        for line in lines
    ), lines
    assert any(
        line.startswith("server command: ") and line.endswith("-m reuselens lsp (from python3 on PATH)")
        for line in lines
    ), lines


def test_restricted_mode_still_shows_results(restricted: dict[str, Any]) -> None:
    assert value(restricted, "squiggle") >= 1


def test_profile_now_refuses_in_an_untrusted_workspace(restricted: dict[str, Any]) -> None:
    refused = value(restricted, "profile_refused")
    assert "needs a trusted workspace" in refused["toast"], refused
    assert not any("%" in text for text in refused["status"]), refused
    assert refused["appRan"] is False
