"""The language server on real applications' reports: time to diagnostics, hover size and latency (issue #14).

For each report.json given (a run of benchmarks/realapps.py, whose source paths point into the staged sources),
this starts the real server over stdio on a workspace folder holding the sources (the server places findings
only in files of its workspace) with the run directory (a temporary copy of the report) set, waits for
the diagnostics of every source file the report names (the time from `initialized` to the last publish is what
a user waits for when the editor opens on a finished run), then opens each such file and hovers every line that
holds a memory instruction. It prints per app: files, diagnostics, time to diagnostics, hovers, hover p50/p99
and the largest hover's Markdown size (hovers timed a second after the diagnostics; the first hover, sent at
once, apart). Targets: hover <= 20 KB and p99 <= 10 ms, diagnostics <= 1 s.

Usage: python benchmarks/lsp_realapps.py --runs DIR   (DIR/<app>/report.json, e.g. /tmp/ra/runs/r1/*-full)
RL_PROFILE_SERVER=FILE runs the server under cProfile, its main thread's profile written to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from lsp_latency import bench_client, pct, start_server, timed, wait_for
from lsprotocol import types

from reuselens.analyzer.toolkit_paths import is_toolkit_header
from reuselens.lsp_server.model import RunResults


def memory_lines(report: dict, report_path: Path) -> dict[str, set[int]]:
    """Source file -> lines with a memory instruction, as the server maps them; the app's files, not the toolkit's
    headers (a user opens the app's folder, and a workspace spanning both would be "/": session 45, eigenvalues
    and threadFenceReduction got no diagnostics that way)."""
    results = RunResults(report, str(report_path), "", {})
    return {
        path: set(lines)
        for path, lines in results.nodes_by_line.items()
        if Path(path).is_file() and not is_toolkit_header(path)
    }


async def measure(report_path: Path) -> dict:
    report = json.loads(report_path.read_text())
    lines = memory_lines(report, report_path)
    scratch = Path(tempfile.mkdtemp(prefix="reuselens-lsp-realapp-"))
    run = scratch / "run"
    run.mkdir(parents=True)
    shutil.copy(report_path, run / "report.json")
    workspace = Path(os.path.commonpath(list(lines))) if lines else scratch
    workspace = workspace if workspace.is_dir() else workspace.parent
    published: dict[str, float] = {}
    client = bench_client(published, time.perf_counter)
    client.set_configuration({"runDirectory": str(run)}, section="reuselens")
    start = await start_server(client, scratch, workspace, os.environ.get("RL_PROFILE_SERVER"), time.perf_counter)
    uris = {Path(path).as_uri() for path in lines}
    await wait_for(lambda: uris <= set(published), timeout=60)
    to_diagnostics = (max(published[u] for u in uris) - start) * 1000 if uris else 0.0
    # Once the diagnostics are out the server imports the disassembler and disassembles the run's modules in the
    # background; a hover in that window shares the interpreter with it. A user's first hover comes later: the
    # requests are timed after a second, and the warm-up window is shown apart (first_hover_ms, sent at once).
    first: list[float] = []
    if lines:
        path, memory = next(iter(sorted(lines.items())))
        await timed(
            first,
            client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(Path(path).as_uri()), types.Position(min(memory) - 1, 0))
            ),
        )
    await asyncio.sleep(1.0)
    hover_ms: list[float] = []
    sizes: list[int] = []
    for path, memory in sorted(lines.items()):
        uri = Path(path).as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=Path(path).read_text())
            )
        )
        for line in sorted(memory):
            hover = await timed(
                hover_ms,
                client.text_document_hover_async(
                    types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line - 1, 0))
                ),
            )
            sizes.append(len(hover.contents.value.encode()) if hover else 0)
    await asyncio.wait_for(client.shutdown_session(), 10)
    await client.stop()
    shutil.rmtree(scratch, ignore_errors=True)
    return {
        "files": len(lines),
        "diagnostics": sum(len(client.diagnostics.get(u) or []) for u in uris),
        "to_diagnostics_ms": round(to_diagnostics, 1),
        "first_hover_ms": round(first[0], 1) if first else None,
        "hovers": len(hover_ms),
        "hover_p50_ms": round(pct(hover_ms, 0.5), 2) if hover_ms else None,
        "hover_p99_ms": round(pct(hover_ms, 0.99), 2) if hover_ms else None,
        "hover_max_kb": round(max(sizes, default=0) / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", required=True, type=Path, help="folder with <app>/report.json")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    reports = sorted(args.runs.glob("*/report.json"))
    if not reports:
        print(f"{args.runs}: no <app>/report.json", file=sys.stderr)
        return 2
    figures = {}
    print(f"{'app':22s} files diags  to-diag ms  1st hover ms  hovers  p50 ms  p99 ms  max KB")
    for path in reports:
        row = figures[path.parent.name] = asyncio.run(measure(path))
        print(
            f"{path.parent.name:22s} {row['files']:5d} {row['diagnostics']:6d} {row['to_diagnostics_ms']:10.1f} "
            f"{row['first_hover_ms'] or 0:13.1f} "
            f"{row['hovers']:7d} {row['hover_p50_ms'] or 0:7.2f} {row['hover_p99_ms'] or 0:7.2f} {row['hover_max_kb']:7.1f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
