"""Latency of the ReuseLens language server on a large generated report.

Generates a run with >= 5,000 memory PCs spread over >= 50 source files (real files on disk, as a workspace
would have), starts the real server over stdio (`python -m reuselens.lsp_server`) with a pytest-lsp client, and prints
p50/p99 of textDocument/hover, textDocument/codeLens (+ codeLens/resolve of every lens) and
textDocument/codeAction, plus the time from the end of a run to the last published diagnostic, twice:
a report.json written into the watched run directory (a terminal/CI run), and a `reuselens.profile` run
through a stand-in profiler that records the moment it exits.

Usage: python benchmarks/lsp_latency.py [--files 50] [--pcs 5000] [--samples 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import LanguageClient

from reuselens.lsp_server.memory_loading import ANALYSED_NOTIFICATION

LINES_PER_FILE = 400
LABELS = ["cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid"]
FIXES = [
    ("redundant-rar", "register-promotion"),
    ("bank-conflict", "padding"),
    ("poor-coalescing", "coalescing"),
    ("streaming-access", "l2-window"),
    ("constant-region", "constant-promotion"),
    ("abuse-smem", "shared-demotion"),
]


def write_sources(root: Path, files: int) -> list[Path]:
    paths = []
    for f in range(files):
        body = [
            f"// generated source {f}",
            "#include <cuda_runtime.h>",
            "__device__ const float lut%d[16] = {1.f};" % f,
            "__global__ void k%d(float *a, float *b, int n)" % f,
            "{",
            "    __shared__ float tile[32][32];",
        ]
        while len(body) < LINES_PER_FILE - 1:
            i = len(body)
            body.append(f"    a[threadIdx.x + {i}] = tile[threadIdx.x][{i % 32}] + b[{i}] * lut{f}[{i % 16}];")
        body.append("}")
        path = root / f"src{f:03d}.cu"
        path.write_text("\n".join(body) + "\n")
        paths.append(path)
    return paths


def make_report(paths: list[Path], pcs: int, rng: random.Random) -> dict:
    kernels = []
    per_kernel = 500
    for k in range(max(1, pcs // per_kernel)):
        nodes = [
            {
                "id": 0,
                "function": None,
                "pc": None,
                "space": None,
                "type": "read",
                "size": 0,
                "bytes": 0,
                "executions": 0,
                "lanes": [],
                "addresses": [],
                "source": None,
                "sass": None,
            }
        ]
        edges, findings = [], []
        for n in range(1, per_kernel + 1):
            path = paths[(k * per_kernel + n) % len(paths)]
            execs = rng.randint(32, 100000)
            space = rng.choice(["global", "shared"])
            node = {
                "id": n,
                "function": f"_Z2k{k}Pf",
                "pc": 16 * n,
                "space": space,
                "type": rng.choice(["read", "write"]),
                "size": 4,
                "async_copy": False,
                "executions": execs,
                "lanes": [[32, execs]],
                "addresses": [[32, execs]],
                "bytes": execs * 128,
                "sectors": [[rng.randint(4, 32), execs]] if space == "global" else None,
                "sectors_ideal": [[4, execs]] if space == "global" else None,
                "wavefronts": [[rng.randint(1, 32), execs]] if space == "shared" else None,
                "wavefronts_ideal": [[1, execs]] if space == "shared" else None,
                "source": {"file": str(path), "line": rng.randint(7, LINES_PER_FILE - 1), "column": 0, "inline": []},
                "sass": "LDG.E R2, desc[UR4][R2.64]",
            }
            nodes.append(node)
            remaining = node["bytes"]
            for label in rng.sample(LABELS, 3):
                part = remaining // 2 if label != "cold" else remaining
                edges.append({"from": n, "to": rng.randint(0, n), "label": label, "bytes": part, "accesses": part // 4})
                remaining -= part
            if n % 10 == 0:
                pattern, fix = rng.choice(FIXES)
                findings.append(
                    {
                        "id": f"{pattern}@{16 * n:#x}:{k:04d}",
                        "pattern": pattern,
                        "severity": "warning",
                        "rank": n,
                        "pcs": [n],
                        "origin_pcs": [rng.randint(1, n)],
                        "scope": "thread",
                        "waste": {"bytes": node["bytes"] // 2, "instructions": execs, "wavefronts": 0, "share": 0.1},
                        "fix": {"kind": fix, "explanation": "generated"},
                        "message": f"{pattern} (generated)",
                    }
                )
        kernels.append(
            {
                "id": f"k{k}",
                "mangled": f"_Z2k{k}Pf",
                "name": f"k{k}(float*)",
                "module": "0" * 64,
                "grid": [1, 1, 1],
                "block": [32, 1, 1],
                "launches": [0],
                "nodes": nodes,
                "edges": edges,
                "barriers": [],
                "subgraphs": [],
                "findings": findings,
            }
        )
    return {
        "format": "reuselens-report",
        "version": 1,
        "run": {"dir": "", "status": "complete"},
        "settings": {},
        "notes": [],
        "kernels": kernels,
    }


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def timed(samples: list[float], coroutine):
    start = time.perf_counter()
    result = await coroutine
    samples.append((time.perf_counter() - start) * 1000)
    return result


async def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("timed out")
        await asyncio.sleep(0.001)


STANDIN = """import json, shutil, sys, time, pathlib
args = sys.argv[1:]; run = pathlib.Path(args[args.index("--run-dir") + 1]); run.mkdir(parents=True, exist_ok=True)
shutil.copy(sys.argv[1], run / "report.json.tmp"); (run / "report.json.tmp").replace(run / "report.json")
pathlib.Path(sys.argv[2]).write_text(repr(time.time()))
"""


def bench_client(
    published: dict[str, float],
    clock,
    progress: list[tuple[float, str, str]] | None = None,
    logs: list[str] | None = None,
) -> LanguageClient:
    """A client that notes in `published` when (by `clock`) each file's diagnostics last arrived, answers
    workspace/configuration from its own set_configuration, and ignores the server's other requests; given
    `progress` and `logs`, it also keeps each progress report as (time, kind, message) and the server's logged and
    shown messages (shown ones prefixed "shown: ")."""
    client = LanguageClient()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(params):
        published[params.uri] = clock()
        client.diagnostics[params.uri] = params.diagnostics

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def _configuration(params):
        return [client.get_configuration(section=i.section, scope_uri=i.scope_uri) for i in params.items]

    @client.feature(types.PROGRESS)
    def _progress(params):
        if progress is not None:
            value = params.value
            field = value.get if isinstance(value, dict) else lambda name: getattr(value, name, "")
            progress.append((clock(), str(field("kind")), str(field("message") or "")))

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(params):
        if logs is not None:
            logs.append(params.message)

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def _show(params):
        if logs is not None:
            logs.append(f"shown: {params.message}")

    for method in (
        types.WORKSPACE_CODE_LENS_REFRESH,
        types.WORKSPACE_INLAY_HINT_REFRESH,
        types.WINDOW_WORK_DONE_PROGRESS_CREATE,
        ANALYSED_NOTIFICATION,  # the memory analysis of the run finished (lsp_server/memory_loading.py)
    ):
        client.feature(method)(lambda params: None)
    return client


async def start_server(client: LanguageClient, cwd: Path, root: Path, profile_to: str | None = None, clock=time.time):
    """Start the real server over stdio in `cwd` (under cProfile, its profile written to `profile_to`, when given) and
    initialise it on workspace `root` as VS Code does; returns `clock()` taken once its process has started, before
    `initialize` (what lsp_realapps.py times the diagnostics from). In a folder of its own, as an editor starts it in
    its workspace: started in the checkout, `python -m` finds the checkout's reuselens/ (the application alone)
    before a non-editable install's package (session 21, call 3)."""
    prefix = ["-m", "cProfile", "-o", profile_to] if profile_to else []
    await client.start_io(sys.executable, *prefix, "-m", "reuselens.lsp_server", cwd=cwd)
    started = clock()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"workspaceTrusted": True},
        )
    )
    return started


async def main_async(args) -> dict:
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="reuselens-lsp-bench-"))
    paths = write_sources(tmp, args.files)
    report = make_report(paths, args.pcs, rng)
    run = tmp / ".reuselens" / "run"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps(report))
    published: dict[str, float] = {}
    client = bench_client(published, time.time)
    client.set_configuration({"allowWorkspaceCommands": True}, section="reuselens")
    await start_server(client, tmp, tmp, args.profile_server)
    await wait_for(lambda: len(published) >= args.files)
    print(
        f"report: {sum(len(k['nodes']) - 1 for k in report['kernels'])} PCs, {len(paths)} files, "
        f"{sum(len(k['findings']) for k in report['kernels'])} findings",
        flush=True,
    )

    figures = await measure_requests(client, paths, report, rng, args.samples)
    figures.update(await measure_run_end(client, published, report, tmp, run, args.files))
    await asyncio.wait_for(client.shutdown_session(), 10)
    await client.stop()
    return figures


async def measure_requests(client, paths, report, rng, samples) -> dict:
    """p50/p99 of hover, codeLens, codeLens/resolve and codeAction on random memory lines of open files."""
    uris = [p.as_uri() for p in paths]
    for path, uri in zip(paths, uris):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())
            )
        )
    lines_by_uri = {}
    for k in report["kernels"]:
        for n in k["nodes"][1:]:
            lines_by_uri.setdefault(Path(n["source"]["file"]).as_uri(), set()).add(n["source"]["line"] - 1)
    hover, lens, resolve, action = [], [], [], []
    for _ in range(samples):
        uri = rng.choice(uris)
        line = rng.choice(sorted(lines_by_uri[uri]))
        await timed(
            hover,
            client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 8))
            ),
        )
        found = await timed(
            lens, client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        )
        await timed(resolve, client.code_lens_resolve_async(rng.choice(found)))
        diags = client.diagnostics.get(uri) or []
        on_line = [d for d in diags if d.range.start.line == line] or diags[:1]
        rng_ = on_line[0].range if on_line else types.Range(types.Position(line, 0), types.Position(line, 0))
        await timed(
            action,
            client.text_document_code_action_async(
                types.CodeActionParams(
                    types.TextDocumentIdentifier(uri), rng_, types.CodeActionContext(diagnostics=on_line)
                )
            ),
        )
    return {
        name: {"p50_ms": round(statistics.median(s), 2), "p99_ms": round(pct(s, 0.99), 2), "n": len(s)}
        for name, s in (("hover", hover), ("codeLens", lens), ("codeLens/resolve", resolve), ("codeAction", action))
    }


async def measure_run_end(client, published, report, tmp, run, files) -> dict:
    """Run end -> last diagnostics: a report.json landing in the watched directory, then a profile run."""
    figures = {}
    for k in report["kernels"]:
        for f in k["findings"]:
            f["waste"]["bytes"] += 1
    staged = tmp / "next.json"
    staged.write_text(json.dumps(report))
    published.clear()
    end = time.time()
    staged.replace(run / "report.json")
    await wait_for(lambda: len(published) >= files)
    figures["watched run end -> last diagnostics published"] = {"ms": round((max(published.values()) - end) * 1000, 1)}

    # The same through reuselens.profile with a stand-in profiler that stamps its exit time.
    for k in report["kernels"]:
        for f in k["findings"]:
            f["waste"]["bytes"] += 1
    staged.write_text(json.dumps(report))
    (tmp / "standin.py").write_text(STANDIN)
    stamp = tmp / "exit-stamp"
    settings = {
        "allowWorkspaceCommands": True,
        "profile": {"command": ["true"]},
        "profiler": {"command": [sys.executable, str(tmp / "standin.py"), str(staged), str(stamp)]},
    }
    client.set_configuration(settings, section="reuselens")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await asyncio.sleep(0.5)
    published.clear()
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "ok", result
    await wait_for(lambda: len(published) >= files)
    figures["profiler exit -> last diagnostics published"] = {
        "ms": round((max(published.values()) - float(stamp.read_text())) * 1000, 1)
    }
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--pcs", type=int, default=5000)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--profile-server", metavar="FILE", help="run the server under cProfile, stats to FILE")
    args = parser.parse_args()
    figures = asyncio.run(main_async(args))
    for name, values in figures.items():
        print(f"{name:48s} " + "  ".join(f"{k}={v}" for k, v in values.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
