"""Fixtures for the language-server tests: a workspace copied from fixtures/ and a pytest-lsp client
talking to the real server (`python -m reuselens.lsp_server`) over stdio."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsp_helpers import FIXTURES
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


def pytest_configure(config):
    config.addinivalue_line("markers", "lsp_settings(dict): reuselens settings the client answers with")
    config.addinivalue_line("markers", "lsp_init(dict): initializationOptions for the session")
    config.addinivalue_line("markers", "lsp_client(name): pytest-lsp client profile (default visual-studio-code)")


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A fresh workspace: the fixture sources plus run1 as the current run."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "app", ws)
    shutil.copytree(FIXTURES / "run1", ws / ".reuselens" / "run")
    return ws


def base_settings(ws: Path) -> dict:
    return {"pathPrefixMap": {"/build/app": str(ws)}}


def marker_value(request, name, default):
    marker = request.node.get_closest_marker(name)
    return marker.args[0] if marker else default


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "reuselens.lsp_server"]))
async def client(lsp_client: LanguageClient, request, workspace: Path):
    settings = {**base_settings(workspace), **marker_value(request, "lsp_settings", {})}
    lsp_client.set_configuration(settings, section="reuselens")
    lsp_client.shown_requests = []
    lsp_client.answer_title = "Run"
    lsp_client.lens_refreshes = 0
    lsp_client.hint_refreshes = 0

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(params):
        lsp_client.lens_refreshes += 1

    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def _refresh_hints(params):
        lsp_client.hint_refreshes += 1

    lsp_client.memory_analyses = []  # params of each reuselens/memoryAnalysisDone

    @lsp_client.feature("reuselens/memoryAnalysisDone")
    def _memory_analysed(params):
        lsp_client.memory_analyses.append(params if isinstance(params, dict) else params._asdict())

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: types.ShowMessageRequestParams):
        lsp_client.shown_requests.append(params)
        return next((a for a in params.actions or [] if a.title == lsp_client.answer_title), None)

    fix_code_action_hook(lsp_client)
    init = json.loads(
        json.dumps(marker_value(request, "lsp_init", {"workspaceTrusted": True})).replace("WORKSPACE", str(workspace))
    )
    profile = marker_value(request, "lsp_client", "visual-studio-code")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=init,
        )
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 5)


def fix_code_action_hook(client: LanguageClient) -> None:
    """lsprotocol's client-side hook reads every CodeAction that carries a `command` as a Command. The spec
    tells them apart by the type of `command` (a string only in a Command); do the same."""
    converter = client.protocol._converter

    def hook(obj, _):
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)
