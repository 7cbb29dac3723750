"""The server on the real recorded demo run (reuselens/demo/run, H200, recorded by the collector) after the
analyzer turns it into report.json: findings land on demo.cu's lines, and the padding fix compiles."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from lsp_helpers import open_doc, wait_until
from lsprotocol import types

from reuselens.analyzer.lineinfo.sass import find_nvdisasm

REPO = Path(__file__).parents[2]
DEMO = REPO / "reuselens" / "demo"

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]


def expected_lines(report: dict) -> Counter:
    """(line, pattern) per finding: the line of its heaviest PC (docs/lsp.md), or its barrier's line; without
    streaming-access findings, which stay out of the Problems panel by default."""
    out = Counter()
    for kernel in report["kernels"]:
        nodes = {n["id"]: n for n in kernel["nodes"]}
        for finding in kernel["findings"]:
            if finding["pattern"] == "streaming-access":
                continue
            if finding.get("barrier"):
                source = finding["barrier"].get("source")
            else:
                placed = [nodes[p] for p in finding["pcs"] if nodes[p].get("source")]
                source = max(placed, key=lambda n: n["bytes"])["source"] if placed else None
            if source:
                out[(source["line"], finding["pattern"])] += 1
    return out


@pytest.fixture
def workspace(tmp_path) -> Path:
    """The demo sources plus the recorded run, analysed now (the run is committed without report.json)."""
    from reuselens.analyzer.pipeline import build_report

    assert (DEMO / "run" / "run.json").is_file(), "the bundled demo run is missing from reuselens/demo/run"
    ws = tmp_path / "ws"
    shutil.copytree(DEMO / "src", ws / "src")
    shutil.copytree(DEMO / "run", ws / ".reuselens" / "run")
    (ws / ".reuselens" / "run" / "report.json").unlink(missing_ok=True)
    build_report(ws / ".reuselens" / "run")
    return ws


@pytest.fixture
def lsp_settings_override(workspace):
    source_dir = json.loads((DEMO / "build.json").read_text())["source_dir"]
    return {"pathPrefixMap": {source_dir: str(workspace / "src")}}


async def test_demo_findings_on_demo_lines_and_padding_compiles(client, workspace, lsp_settings_override):
    client.set_configuration(lsp_settings_override, section="reuselens")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    report = json.loads((workspace / ".reuselens" / "run" / "report.json").read_text())
    uri = open_doc(client, workspace / "src" / "demo.cu")
    expected = expected_lines(report)
    published = lambda: Counter((d.range.start.line + 1, d.code) for d in client.diagnostics.get(uri, []))
    await wait_until(lambda: published() == expected, timeout=30)
    text = (workspace / "src" / "demo.cu").read_text().splitlines()
    bank = next(d for d in client.diagnostics[uri] if d.code == "bank-conflict")
    assert "tile[threadIdx.x][threadIdx.y]" in text[bank.range.start.line]
    smem = next(d for d in client.diagnostics[uri] if d.code == "abuse-smem")
    assert "vals[c]" in text[smem.range.start.line]
    assert {r.location.range.start.line + 1 for r in smem.related_information} >= {61, 62, 75} - {
        smem.range.start.line + 1
    }

    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    node_lines = {n["source"]["line"] for k in report["kernels"] for n in k["nodes"] if n.get("source")}
    assert {l.range.start.line + 1 for l in lenses} == node_lines
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(bank.range.start.line, 10))
    )
    assert "transpose_naive" in hover.contents.value and "shared read 4 B" in hover.contents.value
    if find_nvdisasm() is not None:  # report.json has no SASS: the server disassembles the run's CUBIN for it
        # in the background once the diagnostics are out; a hover meanwhile says so instead of waiting
        for _ in range(200):
            if "sass\n" in hover.contents.value:
                break
            assert "being disassembled" in hover.contents.value
            await asyncio.sleep(0.05)
            hover = await client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(bank.range.start.line, 10))
            )
        assert "sass\n" in hover.contents.value and " LDS" in hover.contents.value

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), bank.range, types.CodeActionContext(diagnostics=[bank])
        )
    )
    edit = next(a for a in actions if a.edit is not None).edit.document_changes[0].edits[0]
    assert edit.range.start.line + 1 == 79 and edit.new_text == "33"
    line = text[78]
    text[78] = line[: edit.range.start.character] + "33" + line[edit.range.end.character :]
    assert text[78].startswith("  __shared__ float tile[32][33];")
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the padded demo's compilation is not checked")
    edited = workspace / "src" / "demo_padded.cu"
    edited.write_text("\n".join(text) + "\n")
    result = subprocess.run(
        [nvcc, "-arch=sm_90", "-c", str(edited), "-o", str(edited.with_suffix(".o"))], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
