"""The memory findings (issue 18) in the editor, end to end: the real server on a run whose run.json has memory
operations, with allocation call paths into a host program built here with -g, so the analysis symbolises them
onto the lines of host.c in the workspace exactly as it does for a real application."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, inline_links, lines_of, open_doc, wait_until
from lsprotocol import types

MEMORY_TESTS = Path(__file__).parents[1] / "memory"
if str(MEMORY_TESTS) not in sys.path:
    sys.path.insert(0, str(MEMORY_TESTS))
from host_binaries import first_address_of_line  # noqa: E402 - tests/memory's helpers
from run_dirs import RunWriter  # noqa: E402 - tests/memory's run-directory writer

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

HOST_SOURCE = """#include <stdlib.h>

static void *device_alloc(size_t bytes) { return malloc(bytes); }

int main(void)
{
    void *weights = device_alloc(4 << 20);  /* site:unused */
    void *table = device_alloc(16 << 10);   /* site:early */
    void *input = device_alloc(8 << 20);    /* site:input */
    free(input);
    free(table);
    free(weights);
    return 0;
}
"""
SITES = {name: HOST_SOURCE.splitlines().index(line) + 1 for line in HOST_SOURCE.splitlines() if "site:" in line
         for name in [line.split("site:")[1].split()[0]]}  # fmt: skip
STENCIL_REUSE_LINES = [15, 24, 24, 26]  # fixtures/run1's reuse findings in stencil.cu (test_features.py)
MEMORY = "reuselens-memory"
ANALYSED = "ReuseLens: memory analysis:"
COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def build_host(tmp_path: Path) -> Path:
    """host.c built with -g as if in /build/app (the fixture run's build tree), so the DWARF names
    /build/app/host.c and reuselens.pathPrefixMap maps it onto the workspace, as for the kernel sources."""
    if COMPILER is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH to build the host binary")
    build = tmp_path / "build"
    build.mkdir()
    (build / "host.c").write_text(HOST_SOURCE)
    binary = build / "host"
    subprocess.run(
        [COMPILER, "-g", "-O0", f"-fdebug-prefix-map={build}=/build/app", "-o", str(binary), "host.c"],
        cwd=build,
        check=True,
        capture_output=True,
    )
    return binary


def return_address_on(binary: Path, line: int) -> int:
    """A return address inside `line` of host.c, as the collector records it (the symboliser looks at the
    address before it, tests/memory/test_symbols.py)."""
    return first_address_of_line(binary, line) + 1


def write_memory_run(run: Path, binary: Path) -> None:
    """fixtures/run1 plus memory operations. At the peak (op 2 to 5) weights, table and input are live:
    weights 4 MiB, never touched: unused allocation, peak -4 MiB (a Warning: a third of the peak);
    table 16 KiB, allocated 3 GPU operations before its first use: early allocation, peak -16 KiB (Information);
    input 8 MiB, used from its allocation to its free: no finding, but live at the peak (a lens, no diagnostic)."""

    def path_to(site: str) -> list[dict]:
        frames = [{"module": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "offset": 0x1234}]  # left out as CUDA stack
        return frames + [{"module": str(binary), "offset": return_address_on(binary, SITES[site])}]

    w = RunWriter()
    weights = w.alloc(4 << 20, path_to("unused"))
    table = w.alloc(16 << 10, path_to("early"))
    data = w.alloc(8 << 20, path_to("input"))
    w.memcpy(0x1000, w.address(data), 8 << 20, "htod")
    w.kernel("_Z5scalePfi", [(data, "rw")]).kernel("_Z5scalePfi", [(data, "rw")])
    w.free(data)
    w.kernel("_Z6reducePf", [(table, "w")]).memcpy(w.address(table), 0x2000, 16 << 10, "dtoh")
    w.free(table).free(weights)
    manifest = json.loads((FIXTURES / "run1" / "run.json").read_text())
    manifest.update({k: v for k, v in w.manifest().items() if k in ("launches", "allocations", "memory_operations")})
    # recorded after the host program was built, as a real run is (a binary newer than its run is not read)
    manifest["start_time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 2))
    w.write(run, manifest)


@pytest.fixture
def memory_workspace(workspace: Path, tmp_path: Path) -> Path:
    (workspace / "host.c").write_text(HOST_SOURCE)
    write_memory_run(workspace / ".reuselens" / "run", build_host(tmp_path))
    return workspace


@pytest.fixture
def object_level_workspace(workspace: Path, tmp_path: Path) -> Path:
    """The same run recorded by `reuselens profile --object-level`: run.json says so, and the report.json that
    profile writes has no kernel and a note (what reuselens.memory.objectLevel makes the server profile)."""
    from reuselens.analyzer.pipeline import build_report

    (workspace / "host.c").write_text(HOST_SOURCE)
    run = workspace / ".reuselens" / "run"
    write_memory_run(run, build_host(tmp_path))
    manifest = json.loads((run / "run.json").read_text())
    manifest.setdefault("collector", {})["collection"] = "objects"
    (run / "run.json").write_text(json.dumps(manifest))
    build_report(run)
    return workspace


def memory_diagnostics(client, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, []) if d.source == MEMORY]


def analysed(client) -> list[str]:
    return [m.message for m in client.log_messages if m.message.startswith(ANALYSED)]


async def hover_at(client, uri: str, line: int) -> str | None:
    found = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line - 1, 8))
    )
    return inline_links(found.contents.value) if found else None


async def test_memory_findings_on_the_allocation_lines_of_host_code(memory_workspace, client):
    ws = memory_workspace
    host = (ws / "host.c").as_uri()
    # THEN each finding is on its allocation line, graded by what it saves, apart from the reuse findings
    await wait_until(lambda: len(memory_diagnostics(client, host)) == 2)
    found = {d.range.start.line + 1: d for d in memory_diagnostics(client, host)}
    assert sorted(found) == [SITES["unused"], SITES["early"]]
    unused, early = found[SITES["unused"]], found[SITES["early"]]
    assert (unused.code, unused.severity) == ("unused_allocation", types.DiagnosticSeverity.Warning)
    assert unused.message == "unused allocation: 4.2 MB never touched by any GPU operation; peak -4.2 MB if removed"
    assert (early.code, early.severity) == ("early_allocation", types.DiagnosticSeverity.Information)
    assert early.message == (
        "early allocation: 16.4 KB allocated 3 GPU operations before its first use; "
        "peak -16.4 KB if allocated just before op 7 (reduce)"
    )
    assert unused.range.start.character == 4  # from the first non-blank character, as kernel findings
    # the reuse findings of the same run are all still there
    assert lines_of(client, (ws / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES
    assert all(d.source == "reuselens" for d in client.diagnostics[(ws / "stencil.cu").as_uri()])

    # a lens above every allocation line with findings or live at the peak
    open_doc(client, ws / "host.c")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(host)))
    titles = {lens.range.start.line + 1: lens.command.title for lens in lenses}
    assert titles == {
        SITES["unused"]: "4.2 MB · live at peak · idle 100% of its life · peak -4.2 MB if removed",
        SITES["early"]: "16.4 KB · live at peak · idle 60% of its life · peak -16.4 KB if allocated just before op 7 "
        "(reduce)",
        SITES["input"]: "8.4 MB · live at peak · idle 0% of its life",
    }

    # the same titles as inlay hints, for clients without lenses
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(host), types.Range(types.Position(0, 0), types.Position(20, 0))
        )
    )
    assert {hint.position.line + 1: hint.label for hint in hints} == titles

    # the hover: the object's life, each finding with its fix, and what else is live at the peak
    text = await hover_at(client, host, SITES["early"])
    assert text.startswith(f"**ReuseLens memory** · host.c:{SITES['early']} · 16.4 KB")
    assert "allocated by op 1 (alloc cudaMalloc, stream 0); freed by op 9 (free, stream 0)" in text
    assert "first touch op 7 (kernel reduce, stream 0); last touch op 8 (memcpy dtoh, stream 0)" in text
    assert "idle 60% of its life: 3 of the 5 GPU operations" in text
    assert "**early allocation** (peak -16.4 KB if allocated just before op 7 (reduce)): Move the cudaMalloc" in text
    input_link = f"[host.c:{SITES['input']}]({(ws / 'host.c').as_uri()}#L{SITES['input']})"
    assert (
        f"Peak device memory 12.6 MB at op 2 (alloc cudaMalloc, stream 0). Also live there: {input_link} 8.4 MB, "
        in text
    )
    assert f"8.4 MB, [host.c:{SITES['unused']}]" in text
    assert await hover_at(client, host, SITES["input"] + 1) is None  # `free(input);`: no allocation there


async def test_an_edit_above_moves_the_memory_findings_with_their_line(memory_workspace, client):
    host_path = memory_workspace / "host.c"
    host = open_doc(client, host_path)
    await wait_until(lambda: len(memory_diagnostics(client, host)) == 2)
    # WHEN two lines are inserted at the top of host.c
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=host, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="// a\n// b\n"
                )
            ],
        )
    )
    # THEN the findings follow their allocation lines
    moved = sorted([SITES["unused"] + 2, SITES["early"] + 2])
    await wait_until(
        lambda: lines_of(client, host, "unused_allocation") + lines_of(client, host, "early_allocation") == moved
    )


async def test_an_old_run_without_memory_records_shows_the_reuse_findings_only(client, workspace):
    # GIVEN fixtures/run1 as it is: its run.json predates memory_operations
    await wait_until(lambda: analysed(client))
    assert analysed(client) == [f"{ANALYSED} this run has no memory records (recorded by an older collector, or no "
                                "run.json beside report.json)"]  # fmt: skip
    assert lines_of(client, (workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES
    assert not [d for ds in client.diagnostics.values() for d in ds if d.source == MEMORY]
    assert not [m for m in client.messages if m.type in (types.MessageType.Error, types.MessageType.Warning)]


async def test_a_broken_object_touches_file_is_told_once_and_the_reuse_findings_stay(memory_workspace, client):
    run = memory_workspace / ".reuselens" / "run"
    await wait_until(lambda: len(memory_diagnostics(client, (memory_workspace / "host.c").as_uri())) == 2)
    # WHEN the next run's object_touches.json is truncated (the collector died writing it)
    (run / "object_touches.json").write_text('{"format": "reuselens-object-touches", "version": 1, "launches": [')
    report = json.loads((run / "report.json").read_text())
    report["notes"] = ["re-profiled"]  # another report: the server loads the run again
    (run / "next.json").write_text(json.dumps(report))
    (run / "next.json").replace(run / "report.json")
    await wait_until(lambda: len(analysed(client)) == 2)
    # THEN one notification names the file; the reuse findings are published and the memory ones are gone
    told = [m.message for m in client.messages if "memory" in m.message]
    assert len(told) == 1 and "object_touches.json" in told[0] and "The reuse findings are shown" in told[0]
    assert lines_of(client, (memory_workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES
    await wait_until(lambda: not memory_diagnostics(client, (memory_workspace / "host.c").as_uri()))
    # and the server keeps answering
    assert await hover_at(client, (memory_workspace / "host.c").as_uri(), SITES["unused"]) is None


@pytest.mark.lsp_settings({"memory": {"enabled": False}})
async def test_the_memory_surface_follows_reuselens_memory_enabled(memory_workspace, client):
    ws = memory_workspace
    host = open_doc(client, ws / "host.c")
    await wait_until(lambda: lines_of(client, (ws / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES)
    # off: no analysis, no diagnostic, lens or hover on allocation lines
    assert analysed(client) == [] and memory_diagnostics(client, host) == []
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(host)))
    assert not lenses and await hover_at(client, host, SITES["unused"]) is None
    # WHEN turned on: the run is analysed and its findings appear
    client.set_configuration(
        {"pathPrefixMap": {"/build/app": str(ws)}, "memory": {"enabled": True}}, section="reuselens"
    )
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await wait_until(lambda: len(memory_diagnostics(client, host)) == 2)
    # WHEN turned off again: they are withdrawn, the reuse findings stay
    client.set_configuration(
        {"pathPrefixMap": {"/build/app": str(ws)}, "memory": {"enabled": False}}, section="reuselens"
    )
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await wait_until(lambda: memory_diagnostics(client, host) == [])
    assert await hover_at(client, host, SITES["unused"]) is None
    assert lines_of(client, (ws / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES


@pytest.mark.lsp_settings({"memory": {"warningPeakShare": 0.5}})
async def test_the_warning_share_of_the_peak_is_a_setting(memory_workspace, client):
    host = (memory_workspace / "host.c").as_uri()
    await wait_until(lambda: len(memory_diagnostics(client, host)) == 2)
    # the unused 4 MiB would lower the 12 MiB peak by a third: below half, so Information
    assert {d.severity for d in memory_diagnostics(client, host)} == {types.DiagnosticSeverity.Information}


# ----- the memory timeline page (reuselens.memoryTimeline) ------------------------------------------------------
TIMELINE = "reuselens.memoryTimeline"


async def timeline(client) -> dict:
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(command=TIMELINE))
    assert isinstance(answer, dict), answer
    return answer


async def test_the_memory_timeline_is_the_page_reuselens_memory_writes_for_the_loaded_run(memory_workspace, client):
    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.reporters.memory_html import render_memory_html

    run = memory_workspace / ".reuselens" / "run"
    await wait_until(lambda: lines_of(client, (memory_workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES)
    # WHEN the page is asked for once the run is loaded (its memory analysis may still run: the request waits)
    page = await timeline(client)
    assert "error" not in page, page["error"]
    # THEN it is the CLI's page of this run, byte for byte: every object a bar, the peak and what is live there
    assert set(page) == {"run", "html"}
    assert page["html"] == render_memory_html(analyze_run(str(run)))
    html = page["html"]
    assert html.count('<rect class="bar') == 3
    for site, size in (("unused", "4.2 MB"), ("early", "16.4 KB"), ("input", "8.4 MB")):
        assert f">host.c:{SITES[site]}, {size}</text>" in html
    assert "Peak device memory 12.6 MB at op 2 (alloc cudaMalloc, stream 0)." in html
    # and each memory lens opens it
    host = open_doc(client, memory_workspace / "host.c")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(host)))
    assert {lens.command.command for lens in lenses} == {TIMELINE}
    assert not lenses[0].command.arguments
    await wait_until(lambda: client.memory_analyses, timeout=5)
    assert client.memory_analyses == [{"run": page["run"], "status": "ready"}]

    # WHEN the next run (a new report) loads: a notification says its analysis ended, and the page is the new run's
    report = json.loads((run / "report.json").read_text())
    report["notes"] = ["re-profiled"]
    (run / "next.json").write_text(json.dumps(report))
    (run / "next.json").replace(run / "report.json")
    await wait_until(lambda: len(client.memory_analyses) == 2)
    again = await timeline(client)
    assert client.memory_analyses[1] == {"run": again["run"], "status": "ready"}
    assert again["run"] != page["run"] and again["html"] == html  # same memory records, another report


async def test_an_old_run_has_no_memory_timeline_and_says_why(client, workspace):
    # GIVEN fixtures/run1 as it is: its run.json predates memory_operations
    await wait_until(lambda: lines_of(client, (workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES)
    assert await timeline(client) == {
        "error": "this run has no memory records (recorded by an older collector, or no run.json beside report.json)"
    }
    await wait_until(lambda: [a["status"] for a in client.memory_analyses] == ["none"])


async def test_a_failed_memory_analysis_has_no_timeline_and_says_why(memory_workspace, client):
    run = memory_workspace / ".reuselens" / "run"
    (run / "object_touches.json").write_text('{"format": "reuselens-object-touches", "version": 1, "launches": [')
    await wait_until(lambda: lines_of(client, (memory_workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES)
    answer = await timeline(client)
    assert set(answer) == {"error"}
    assert answer["error"].startswith("the memory analysis of this run failed: ")
    assert "object_touches.json" in answer["error"]
    await wait_until(lambda: [a["status"] for a in client.memory_analyses] == ["failed"])


@pytest.mark.lsp_settings({"memory": {"enabled": False}})
async def test_no_memory_timeline_while_reuselens_memory_enabled_is_off(memory_workspace, client):
    await wait_until(lambda: lines_of(client, (memory_workspace / "stencil.cu").as_uri()) == STENCIL_REUSE_LINES)
    assert await timeline(client) == {"error": "the memory analysis is off (reuselens.memory.enabled is false)"}
    assert client.memory_analyses == []  # and asking did not start it
    # WHEN turned on, the same request gets the page
    client.set_configuration(
        {"pathPrefixMap": {"/build/app": str(memory_workspace)}, "memory": {"enabled": True}}, section="reuselens"
    )
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await wait_until(lambda: client.memory_analyses)
    assert "<svg" in (await timeline(client))["html"]


async def test_an_object_level_run_shows_its_memory_findings_and_no_reuse_finding(object_level_workspace, client):
    ws = object_level_workspace
    host = (ws / "host.c").as_uri()
    await wait_until(lambda: len(memory_diagnostics(client, host)) == 2)
    assert sorted(d.range.start.line + 1 for d in memory_diagnostics(client, host)) == sorted(
        [SITES["unused"], SITES["early"]]
    )
    assert [m for m in analysed(client)] == [f"{ANALYSED} 2 finding(s) on 3 allocation line(s)"]
    assert lines_of(client, (ws / "stencil.cu").as_uri()) == []  # the report has no kernel: no reuse finding
