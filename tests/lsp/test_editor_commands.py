"""Commands with their documented optional arguments, lens clicks, inlay hints, hovers of lines shared by two
kernels, pathPrefixMap targets, failure messages and the pattern-doc links (issue #16, editor part)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lsp_helpers import FIXTURES, STANDIN, lines_of, open_doc, wait_until
from lsprotocol import types
from markdown_it import MarkdownIt

import reuselens.lsp_server as lsp_server

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

PY = sys.executable
STENCIL_LINES = [15, 24, 24, 26]


async def run(client, command: str, *arguments):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


async def test_commands_accept_their_short_documented_forms(client, workspace):
    stencil = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == STENCIL_LINES)
    # showGraph: no arguments (the heaviest finding's kernel), a kernel id, a mangled name, a uri without line
    heaviest = await run(client, "reuselens.showGraph")
    assert heaviest["kernel"] == "k2" and heaviest["nodes"]
    assert (await run(client, "reuselens.showGraph", "k3"))["name"] == "scale_private(float*, int)"
    assert (await run(client, "reuselens.showGraph", "_Z9transposePKfPfi"))["kernel"] == "k0"
    assert (await run(client, "reuselens.showGraph", stencil))["kernel"] == "k2"
    assert (await run(client, "reuselens.showGraph", "no_such_kernel")) == {
        "error": "the run has no kernel 'no_such_kernel'"
    }
    # nextHotSpot: no arguments and a uri alone both start at the first hot spot
    first = await run(client, "reuselens.nextHotSpot")
    assert first["range"]["start"]["line"] + 1 == 14
    assert (await run(client, "reuselens.nextHotSpot", stencil))["range"] == first["range"]
    # explain: the finding id alone
    text = await run(client, "reuselens.explain", "bank-conflict@0x120:4cecd8f91a8d")
    assert text.startswith("bank-conflict in transpose(const float*, float*, int): ")
    assert await run(client, "reuselens.explain") is None


async def test_a_lens_click_explains_its_own_line(client, workspace):
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: lines_of(client, uri) == STENCIL_LINES)
    found = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    lens = await client.code_lens_resolve_async(next(l for l in found if l.range.start.line == 23))
    assert lens.command.command == "reuselens.explainLine" and list(lens.command.arguments) == [uri, 23]
    text = await run(client, lens.command.command, *lens.command.arguments)
    assert text.startswith("stencil.cu:24: reuse 75% thread · 25% cold · 16.8 MB. ")
    assert "redundant-rar in row_sum" in text and "poor-coalescing in row_sum" in text
    quiet = await client.code_lens_resolve_async(next(l for l in found if l.range.start.line == 10))
    assert (await run(client, quiet.command.command, *quiet.command.arguments)).endswith("No finding on this line.")
    await wait_until(lambda: any(m.message == text for m in client.messages))
    assert client.shown_documents == []  # it stays on its line


@pytest.mark.lsp_client("emacs@v29.1")
@pytest.mark.lsp_init({"settings": {"pathPrefixMap": {"/build/app": "WORKSPACE"}}, "workspaceTrusted": True})
async def test_lens_titles_as_inlay_hints_for_clients_without_code_lenses(client, workspace):
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: lines_of(client, uri) == STENCIL_LINES)
    text = (workspace / "stencil.cu").read_text().splitlines()
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(0, 0), types.Position(len(text), 0)),
        )
    )
    assert {h.position.line + 1: h.label for h in hints} == {
        11: "reuse 100% cold · 8.4 MB",
        15: "reuse 50% block · 50% cold · 8.4 MB",
        24: "reuse 75% thread · 25% cold · 16.8 MB",
        28: "reuse 100% cold · 4.1 KB",
    }
    assert all(h.position.character == len(text[h.position.line]) and h.padding_left for h in hints)
    part = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(20, 0), types.Position(25, 0)),
        )
    )
    assert [h.position.line + 1 for h in part] == [24]
    assert client.hint_refreshes == 0  # emacs declares no inlayHint refresh


@pytest.mark.lsp_client("neovim@v0.10.0")
@pytest.mark.lsp_init({"settings": {"pathPrefixMap": {"/build/app": "WORKSPACE"}}, "workspaceTrusted": True})
async def test_a_new_run_refreshes_inlay_hints_where_declared(client, workspace):
    stencil = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == STENCIL_LINES)
    before = client.hint_refreshes
    run_dir = workspace / ".reuselens" / "run"
    shutil.copy(FIXTURES / "run2" / "report.json", run_dir / "report.tmp")
    (run_dir / "report.tmp").replace(run_dir / "report.json")
    await wait_until(lambda: lines_of(client, stencil) == [24, 24])
    await wait_until(lambda: client.hint_refreshes > before)


async def test_hover_of_a_line_shared_by_two_instantiations_keeps_each_table(client, workspace):
    # GIVEN a run without SASS (no code block closes the first table) where transpose is instantiated twice
    # (two kernels on the same source lines)
    run_dir = workspace / ".reuselens" / "run"
    report = json.loads((run_dir / "report.json").read_text())
    for node in report["kernels"][0]["nodes"]:
        node.pop("sass", None)
    twin = json.loads(json.dumps(report["kernels"][0]))
    twin.update(
        id="k9", name="transpose<double>(const double*, double*, int)", mangled="_Z9transposeIdEvPKT_PS0_i", findings=[]
    )
    report["kernels"].append(twin)
    (run_dir / "next.json").write_text(json.dumps(report))
    (run_dir / "next.json").replace(run_dir / "report.json")
    uri = open_doc(client, workspace / "stencil.cu")

    async def hover_text():
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(14, 30))
        )
        return hover.contents.value if hover else ""

    text = ""
    for _ in range(200):
        text = await hover_text()
        if "transpose<double>" in text:
            break
        await asyncio.sleep(0.05)
    # THEN each kernel's header is a paragraph of its own, not a row of the previous kernel's table
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    paragraphs = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open"]
    headers = [p for p in paragraphs if p.startswith("**ReuseLens**")]
    assert len(headers) == 2, text
    assert "transpose(const float*, float*, int)" in headers[0] and "transpose<double>" in headers[1]
    assert sum(t.type == "table_open" for t in tokens) == 4


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(t, marks=pytest.mark.lsp_settings({"pathPrefixMap": {"/build/app": t}}))
        for t in ["${workspaceFolder}", ".", "${workspaceFolder}/sub/..", "sub/.."]
    ],
)
async def test_path_prefix_map_targets_are_workspace_paths(client, workspace, target):
    # ${workspaceFolder} is expanded, and a relative target is taken from the workspace folder, not the run's cwd
    await wait_until(lambda: lines_of(client, (workspace / "stencil.cu").as_uri()) == STENCIL_LINES)


async def test_a_failed_profile_names_its_cause_first_and_once(client, workspace):
    stencil = workspace / "stencil.cu"
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == STENCIL_LINES)
    crash = [PY, "-c", "import sys; print('CUDA error: an illegal memory access was encountered'); sys.exit(3)"]
    settings = {
        "pathPrefixMap": {"/build/app": str(workspace)},
        "profile": {"command": crash},
        "profiler": {"command": [PY, str(STANDIN), "--recorded", str(FIXTURES / "run2")]},
    }
    client.set_configuration(settings, section="reuselens")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"reuselens": settings}))
    await wait_until(
        lambda: any("profile command " in m.message and "unset" not in m.message for m in client.log_messages)
    )
    result = await run(client, "reuselens.profile")
    cause = "the application exited with status 3; no report written"
    assert result["message"] == f"{cause} (profiling {' '.join(crash)} failed, exit 2)"
    await wait_until(lambda: any(m.type == types.MessageType.Error for m in client.messages))
    shown = next(m.message for m in client.messages if m.type == types.MessageType.Error)
    assert shown.startswith(f"ReuseLens: {cause} (profiling ")
    assert shown.count("exited with status 3") == 1
    assert "CUDA error: an illegal memory access was encountered" in shown  # the context is still there


async def test_pattern_links_point_into_the_installed_package(client, workspace):
    stencil = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == STENCIL_LINES)
    href = next(d for d in client.diagnostics[stencil] if d.code == "bank-conflict").code_description.href
    target = Path(unquote(urlparse(href).path))
    assert urlparse(href).fragment == "bank-conflict"
    assert target.parent == Path(lsp_server.__file__).absolute().parent, href
    assert '<a id="bank-conflict"></a>' in target.read_text()
