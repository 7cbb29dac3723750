"""A workspace is data the server must survive: a report that names devices, FIFOs or files outside the
workspace, and a report.json that is itself a FIFO, must neither hang nor exhaust the server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, lines_of, wait_until
from lsprotocol import types

pytestmark = pytest.mark.asyncio

# Node id in run1's first kernel -> the file its source is moved to. /build/app maps onto the workspace.
HOSTILE_SOURCES = {1: "/dev/stdin", 2: "/build/app/fifo.cu", 3: "/build/app/zero.cu", 4: "/build/app/outside.cu"}


@pytest.fixture
def workspace(tmp_path) -> Path:
    """run1 with stencil.cu's instructions moved onto the server's own stdin, a FIFO in the workspace, a
    workspace symlink to /dev/zero and a workspace symlink to a file outside the workspace."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "app", ws)
    run = ws / ".reuselens" / "run"
    shutil.copytree(FIXTURES / "run1", run)
    report = json.loads((run / "report.json").read_text())
    for node in report["kernels"][0]["nodes"]:
        if node["id"] in HOSTILE_SOURCES:
            node["source"]["file"] = HOSTILE_SOURCES[node["id"]]
    (run / "report.json").write_text(json.dumps(report))
    os.mkfifo(ws / "fifo.cu")
    (ws / "zero.cu").symlink_to("/dev/zero")
    secret = tmp_path / "secret.cu"
    secret.write_text("outside the workspace\n")
    (ws / "outside.cu").symlink_to(secret)
    return ws


async def hover(client, path: Path, line0: int):
    return await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(path.as_uri()), types.Position(line0, 0))
        ),
        10,
    )


@pytest.mark.lsp_init({})
async def test_report_naming_devices_fifos_and_outside_files_is_survived(client, workspace):
    # THEN the rest of the report is published and the server keeps answering
    lut = workspace / "lut.cu"
    await wait_until(lambda: lines_of(client, lut.as_uri()) == [14, 25])  # line 11: streaming, not published by default
    assert (await hover(client, lut, 13)) is not None
    # and no file the report named but the server may not read got diagnostics (nor were they read)
    named = {workspace / "fifo.cu", workspace / "zero.cu", workspace / "outside.cu", Path("/dev/stdin")}
    assert not {p.as_uri() for p in named} & {uri for uri, found in client.diagnostics.items() if found}
    await wait_until(lambda: any("not found here" in m.message for m in client.messages))


@pytest.fixture
def fifo_report_workspace(workspace) -> Path:
    report = workspace / ".reuselens" / "run" / "report.json"
    report.unlink()
    os.mkfifo(report)
    return workspace


@pytest.mark.lsp_init({})
async def test_report_json_that_is_a_fifo_gives_an_error_not_a_hang(fifo_report_workspace, client):
    report = fifo_report_workspace / ".reuselens" / "run" / "report.json"
    await wait_until(
        lambda: any(m.type == types.MessageType.Error and str(report) in m.message for m in client.messages)
    )
    message = next(m.message for m in client.messages if str(report) in m.message)
    assert message == f"ReuseLens: {report}: not read: not a regular file"
    assert (await hover(client, fifo_report_workspace / "lut.cu", 13)) is None
