"""End-to-end: the real server on the committed fixture run (fixtures/run1) through a pytest-lsp client."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, inline_links, lines_of, open_doc, wait_until
from lsprotocol import types

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

EXPECTED = {  # (file, 1-based line, pattern): what build_fixture_reports.py placed where
    "stencil.cu": [(15, "bank-conflict"), (24, "poor-coalescing"), (24, "redundant-rar"), (26, "removable-barrier")],
    "lut.cu": [(14, "constant-region"), (25, "abuse-smem")],
}
STREAMING = ("lut.cu", 11)  # a streaming-access finding: published only with diagnostics.showStreaming


def diag_set(client, uri):
    return sorted((d.range.start.line + 1, d.code) for d in client.diagnostics.get(uri, []))


async def test_diagnostics_on_exact_lines_including_unopened_files(client, workspace):
    # GIVEN a workspace whose run directory holds run1; no document is open
    for name, expected in EXPECTED.items():
        uri = (workspace / name).as_uri()
        # THEN every finding is published on its line, also for files the editor has not opened
        await wait_until(lambda uri=uri, expected=expected: diag_set(client, uri) == sorted(expected))
    bank = next(d for d in client.diagnostics[(workspace / "stencil.cu").as_uri()] if d.code == "bank-conflict")
    assert bank.source == "reuselens"
    assert bank.severity == types.DiagnosticSeverity.Warning
    assert bank.code_description.href.endswith("patterns.md#bank-conflict")
    assert bank.range.start.character == 4 and bank.range.end.character == len(
        "    out[y * n + x] = tile[threadIdx.x][threadIdx.y];"
    )
    assert [(r.location.range.start.line + 1, r.location.uri) for r in bank.related_information] == [
        (11, (workspace / "stencil.cu").as_uri())
    ]
    assert bank.data["findingId"] == "bank-conflict@0x120:4cecd8f91a8d" and bank.data["fixKind"] == "padding"


@pytest.mark.lsp_settings({"diagnostics": {"showStreaming": True}})
async def test_streaming_findings_are_published_when_asked_for(client, workspace):
    uri = (workspace / STREAMING[0]).as_uri()
    await wait_until(lambda: (STREAMING[1], "streaming-access") in diag_set(client, uri))
    hint = next(d for d in client.diagnostics[uri] if d.code == "streaming-access")
    assert hint.severity == types.DiagnosticSeverity.Hint


async def test_code_lens_resolves_to_scope_breakdown(client, workspace):
    uri = open_doc(client, workspace / "lut.cu")
    await wait_until(lambda: uri in client.diagnostics)
    found = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert [l.range.start.line + 1 for l in found] == [11, 14, 16, 24, 25]
    assert all(l.command is None for l in found)  # resolved lazily
    resolved = [await client.code_lens_resolve_async(l) for l in found]
    titles = {l.range.start.line + 1: l.command.title for l in resolved}
    assert titles[14] == "reuse 97% warp · 3% block · 67.1 MB"
    assert titles[24] == "reuse 100% cold · 8.4 MB"
    assert titles[25] == "reuse 100% thread · 8.4 MB"
    assert titles[11] == "reuse 100% cold · 4.2 MB"
    assert resolved[0].command.command == "reuselens.explainLine"


async def test_hover_table_on_load_line(client, workspace):
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: uri in client.diagnostics)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(14, 30))
    )
    raw = hover.contents.value
    # each file link is a reference, its target defined once after the tables
    assert "[stencil.cu:11][" in raw and f"]: {(workspace / 'stencil.cu').as_uri()}#L11" in raw
    text = inline_links(raw)
    assert "`transpose(const float*, float*, int)`" in text
    assert "| `0x0120` | shared read 4 B | 32768 | 4.2 MB | – | – | 100% | – | – |" in text
    assert f"[stencil.cu:11]({(workspace / 'stencil.cu').as_uri()}#L11)" in text
    assert "| `0x0120` | 32.0 | 32.0 | – | 32.0 (ideal 1.0) |" in text
    assert "/*0120*/ LDS R7, [R6]" in text
    none = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(12, 5))
    )  # line 13: no memory instruction
    assert none is None


def apply_edit(text: str, edit: types.TextEdit) -> str:
    lines = text.splitlines(keepends=True)

    def offset(p):
        return sum(len(l) for l in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


async def actions_for(client, uri, line):
    diags = [d for d in client.diagnostics[uri] if d.range.start.line + 1 == line]
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diagnostics=diags)
        )
    )


def nvcc_compiles(path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: cannot check that the edited source compiles")
    result = subprocess.run(
        [nvcc, "-arch=sm_90", "-c", str(path), "-o", str(path.with_suffix(".o"))], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "name,line,expected",
    [
        ("stencil.cu", 15, ("    __shared__ float tile[32][32];", "    __shared__ float tile[32][33];")),
        ("stencil.cu", 26, ("        __syncthreads();\n", "")),
        ("lut.cu", 14, ("__device__ const float coeffs[16]", "__constant__ const float coeffs[16]")),
    ],
)
async def test_quick_fix_edits_compile(client, workspace, name, line, expected):
    uri = open_doc(client, workspace / name)
    await wait_until(lambda: line in lines_of(client, uri))
    found = await actions_for(client, uri, line)
    edit_action = next(a for a in found if a.edit is not None)
    assert edit_action.is_preferred and edit_action.kind == types.CodeActionKind.QuickFix
    change = edit_action.edit.document_changes[0]
    assert change.text_document.uri == uri and change.text_document.version == 1
    before = (workspace / name).read_text()
    after = apply_edit(before, change.edits[0])
    assert expected[0] in before and after == before.replace(expected[0], expected[1], 1)
    (workspace / name).write_text(after)
    nvcc_compiles(workspace / name)


async def test_explanations_where_no_safe_edit(client, workspace):
    uri = open_doc(client, workspace / "lut.cu")
    await wait_until(lambda: 25 in lines_of(client, uri))
    found = await actions_for(client, uri, 25)
    assert len(found) == 1 and found[0].edit is None and found[0].kind == types.CodeActionKind.QuickFix
    assert found[0].title == "ReuseLens: how to demote shared memory to registers (abuse-smem)"
    assert found[0].command.command == "reuselens.explain"
    text = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="reuselens.explain", arguments=found[0].command.arguments)
    )
    assert text.startswith("abuse-smem in scale_private(float*, int): scratch[] is written")
    assert "No automatic edit" in text
    await wait_until(lambda: any("scratch[]" in m.message for m in client.messages))


async def test_barrier_that_orders_reuse_is_never_removed(client, workspace):
    # The barrier on stencil.cu:12 is spanned by cross-thread edges: even a forged finding gets no edit.
    from reuselens.lsp_server import actions
    from reuselens.lsp_server.model import FindingRef, RunResults
    from reuselens.lsp_server.report_source import load

    report, digest = load(FIXTURES / "run1" / "report.json")
    results = RunResults(report, "r", digest, {"/build/app": str(workspace)})
    ref = FindingRef(results.kernels[0], {"fix": {"kind": "barrier-removal"}}, str(workspace / "stencil.cu"), 12)
    lines = (workspace / "stencil.cu").read_text().splitlines()
    assert "orders cross-thread reuse" in actions.mechanical_edit(results, ref, lines, 12, 65536)


async def test_edits_shift_results_and_changed_lines_lose_them(client, workspace):
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: lines_of(client, uri) == [15, 24, 24, 26])
    # WHEN two lines are inserted above the transpose kernel and line 24 (the row_sum load) is edited
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(5, 0), types.Position(5, 0)), text="// a\n// b\n"
                )
            ],
        )
    )
    await wait_until(lambda: lines_of(client, uri) == [17, 26, 26, 28])
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(25, 19), types.Position(25, 20)), text="b"
                )
            ],
        )
    )
    # THEN findings follow their text, and the edited line's findings are dropped, not misplaced
    await wait_until(lambda: lines_of(client, uri) == [17, 28])
    found = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert [l.range.start.line + 1 for l in found] == [13, 17, 30]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(25, 10))
    )
    assert hover is None


async def test_a_moved_copy_of_a_line_does_not_inherit_its_findings(client, workspace):
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: lines_of(client, uri) == [15, 24, 24, 26])
    # WHEN line 24 is moved up (inserted above line 21, then the original deleted)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(20, 0), types.Position(20, 0)),
                    text="            acc += a[row * n + j];\n",
                ),
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(24, 0), types.Position(25, 0)), text=""
                ),
            ],
        )
    )
    # THEN the copy gets no findings (it was not profiled there) and the barrier stays on its line
    await wait_until(lambda: lines_of(client, uri) == [15, 26])


async def test_next_hot_spot_walks_by_waste(client, workspace):
    uri = (workspace / "lut.cu").as_uri()
    await wait_until(lambda: uri in client.diagnostics)
    first = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.nextHotSpot"))
    assert (first["uri"], first["range"]["start"]["line"] + 1) == (uri, 14)
    second = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="reuselens.nextHotSpot", arguments=[uri, 13])
    )
    assert (second["uri"], second["range"]["start"]["line"] + 1) == ((workspace / "stencil.cu").as_uri(), 24)
    await wait_until(lambda: len(client.shown_documents) == 2)
    assert client.shown_documents[1].selection.start.line == 23


async def test_show_graph_of_kernel_on_line(client, workspace):
    uri = (workspace / "lut.cu").as_uri()
    await wait_until(lambda: uri in client.diagnostics)
    g = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="reuselens.showGraph", arguments=[uri, 24])
    )
    assert g["name"] == "scale_private(float*, int)"
    labels = {n["id"]: n["label"] for n in g["nodes"]}
    assert labels == {
        0: "Cold Miss",
        1: "LD.G32 0x0070 lut.cu:24",
        2: "ST.S32 0x00a0 lut.cu:24",
        3: "LD.S32 0x00c0 lut.cu:25",
        4: "ST.G32 0x00e0 lut.cu:25",
    }
    assert {"from": 3, "to": 2, "label": "thread", "bytes": 4 << 20, "weight": 1.0} in g["edges"]
    assert [n["closed_subgraphs"] for n in g["nodes"]] == [[], [], [0], [0], []]


async def test_run_written_from_a_terminal_is_picked_up_and_compared(client, workspace):
    stencil = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == [15, 24, 24, 26])
    # WHEN a new run lands in the run directory (e.g. `reuselens profile` from a terminal)
    run = workspace / ".reuselens" / "run"
    shutil.copy(FIXTURES / "run2" / "report.json", run / "report.tmp")
    (run / "report.tmp").replace(run / "report.json")
    # THEN it is published without any request, and compare names what changed
    await wait_until(lambda: lines_of(client, stencil) == [24, 24])
    diff = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.compare"))
    assert [f["id"] for f in diff["resolved"]] == [
        "bank-conflict@0x120:4cecd8f91a8d",
        "removable-barrier@0x230:8724aa7c5c3c",
    ]
    assert diff["added"] == [] and diff["changed"] == []
    transpose = next(k for k in diff["kernels"] if k["mangled"] == "_Z9transposePKfPfi")
    assert transpose["patterns"]["bank-conflict"]["verdict"] == "removed"
    assert transpose["bytes_before"] == transpose["bytes_after"] == 16 << 20
    assert client.lens_refreshes >= 1


@pytest.mark.lsp_client("neovim@v0.7.0")
@pytest.mark.lsp_init({"settings": {"pathPrefixMap": {"/build/app": "WORKSPACE"}}})
async def test_neovim_profile_gets_no_requests_it_did_not_declare(client, workspace):
    # Neovim 0.7 declares neither workspace/configuration, codeLens refresh nor showDocument: with settings
    # in initializationOptions the server sends none of them (pytest-lsp turns such requests into errors).
    stencil = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == [15, 24, 24, 26])
    spot = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.nextHotSpot"))
    assert spot["range"]["start"]["line"] + 1 == 14
    assert client.shown_documents == [] and client.lens_refreshes == 0


async def test_findings_without_source_lines_are_announced_not_guessed(client, workspace):
    import json

    run = workspace / ".reuselens" / "run"
    report = json.loads((run / "report.json").read_text())
    for node in report["kernels"][2]["nodes"]:  # apply_lut's module built without -lineinfo
        node["source"] = None
    report["notes"] = [
        "module 9c1f9c1f9c1f: no line info; rebuild with -lineinfo (nvcc -lineinfo) to see findings on source lines"
    ]
    (run / "next.json").write_text(json.dumps(report))
    (run / "next.json").replace(run / "report.json")
    lut = (workspace / "lut.cu").as_uri()
    await wait_until(lambda: lines_of(client, lut) == [25])
    await wait_until(
        lambda: any(
            "2 finding(s) have no source line: module 9c1f9c1f9c1f: no line info" in m.message for m in client.messages
        )
    )


async def test_a_file_opened_as_profiled_keeps_its_diagnostics_without_a_resend(client, workspace):
    # GIVEN the diagnostics published for a file the editor has not opened
    uri = (workspace / "stencil.cu").as_uri()
    await wait_until(lambda: lines_of(client, uri) == [15, 24, 24, 26])
    published = client.diagnostics[uri]
    # WHEN the editor opens it unchanged (a hover after the open: the server has handled the open by then)
    open_doc(client, workspace / "stencil.cu")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(23, 10))
    )
    # THEN nothing is sent again (the client holds the same list), and the document's lines still answer
    assert hover is not None and client.diagnostics[uri] is published
    # and an edit publishes at once, for the edited version
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="// a\n"
                )
            ],
        )
    )
    await wait_until(lambda: lines_of(client, uri) == [16, 25, 25, 27])
