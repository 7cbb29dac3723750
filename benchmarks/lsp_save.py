"""Save -> diagnostics on a real application: how long after the app exits its findings are in the editor.

Issue 14's target: for an app of at most 1 M warp records, the diagnostics of a save's profile are out at most
1 s after the app exits (the build excluded). This starts the real language server over stdio on the staged
sources of one suite app (benchmarks/realapps/manifest.json), sets it up as a user would (profile on save, the
app's binary as the profile command, a launch range to keep the records in bounds, a trusted workspace), then
saves the app's source file --rounds times, each time waiting for the profile to end. Per save it notes, on the
wall clock: the save; the app's exit, taken as the moment the launcher wrote run.json's final version (it does so
as soon as the app has exited: docs/collector.md); and the last diagnostics published for the app's files after
it. Printed per save and as medians: save -> diagnostics, the app's own wall time under the profiler
(run.json's launcher.wall_seconds), and app exit -> diagnostics.

    python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build DIR --app cs_matrixMul \\
        [--launch-range 0:80] [--rounds 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
import realapps  # noqa: E402
from lsp_latency import bench_client, start_server, wait_for  # noqa: E402


async def measure(
    app: dict,
    source_dir: Path,
    binary: Path,
    launch_range: str,
    rounds: int,
    timeout: float,
    profiler: list[str],
    prefix_map: dict[str, str] | None = None,
) -> dict:
    """One server, `rounds` saves of the app's first source file; per save and as medians, the figures above.
    profiler: reuselens.profiler.command (empty: the real one); prefix_map: reuselens.pathPrefixMap."""
    published: dict[str, float] = {}  # each file's last publish
    progress: list[tuple[float, str, str]] = []
    logs: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="reuselens-lsp-save-"))
    run_dir = scratch / "run"
    client = bench_client(published, time.time, progress, logs)
    settings = {
        "runDirectory": str(run_dir),
        "profileOnSave": True,
        "profile": {"command": [str(binary), *app.get("args", [])], "cwd": str(binary.parent)},
        "launchRange": launch_range,
        "timeoutSeconds": timeout,
        **({"profiler": {"command": profiler}} if profiler else {}),
        **({"pathPrefixMap": prefix_map} if prefix_map else {}),
    }
    client.set_configuration(settings, section="reuselens")
    await start_server(client, scratch, source_dir)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"reuselens": settings}))
    await wait_for(lambda: any("settings applied" in m for m in logs), timeout=30)
    saved = source_dir / app["files"][0]
    rows = []

    def ends() -> int:
        return sum(1 for _, kind, _ in progress if kind == "end")

    for rnd in range(rounds):
        ended = ends()
        save_at = time.time()
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(saved.as_uri())))
        try:
            await wait_for(lambda ended=ended: ends() > ended, timeout=timeout + 60)
        except TimeoutError:
            raise SystemExit(f"lsp_save: round {rnd}: the profile did not end within {timeout + 60:.0f} s") from None
        await asyncio.sleep(0.5)  # publishes that follow the progress's end still count
        end_message = [m for _, kind, m in progress if kind == "end"][-1]
        manifest = run_dir / "run.json"
        if not manifest.is_file():
            raise SystemExit(f"lsp_save: round {rnd}: no run.json after the profile ({end_message}); log: {logs[-3:]}")
        exit_at = manifest.stat().st_mtime
        if exit_at < save_at:  # the run of an earlier save: this one wrote none
            raise SystemExit(f"lsp_save: round {rnd}: the profile wrote no new run ({end_message}); log: {logs[-3:]}")
        run = json.loads(manifest.read_text())
        after = [t for t in published.values() if t >= exit_at]
        if not after:
            raise SystemExit(f"lsp_save: round {rnd}: no diagnostics published after the app's exit ({end_message})")
        diagnostics_at = max(after)
        rows.append(
            {
                "save_to_diagnostics_s": round(diagnostics_at - save_at, 3),
                "app_wall_s": (run.get("launcher") or {}).get("wall_seconds"),
                "exit_to_diagnostics_s": round(diagnostics_at - exit_at, 3),
                "records": sum(x.get("records") or 0 for x in run.get("launches", [])),
                "diagnostics": sum(len(client.diagnostics.get(uri) or []) for uri in published),
                "progress_end": end_message,
            }
        )
        row = rows[-1]
        print(
            f"save {rnd}: save -> diagnostics {row['save_to_diagnostics_s']:.3f} s, app {row['app_wall_s']} s under "
            f"the profiler, app exit -> diagnostics {row['exit_to_diagnostics_s']:.3f} s; {row['records']:,} records, "
            f"{row['diagnostics']} diagnostics ({end_message})",
            flush=True,
        )
    await asyncio.wait_for(client.shutdown_session(), 10)
    await client.stop()
    summary = {
        key: statistics.median(r[key] for r in rows)
        for key in ("save_to_diagnostics_s", "app_wall_s", "exit_to_diagnostics_s")
        if all(r[key] is not None for r in rows)
    }
    return {"app": app["name"], "launch_range": launch_range, "rounds": rows, "median": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, type=Path, help="staged sources (benchmarks/realapps_stage.py)")
    parser.add_argument("--build", required=True, type=Path, help="where the suite's binaries are (built if not)")
    parser.add_argument("--app", default="cs_matrixMul", help="an app of the manifest")
    parser.add_argument("--launch-range", default="", help="reuselens.launchRange, e.g. 0:80 (empty: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120, help="reuselens.timeoutSeconds")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--profiler", default="", help="(tests) reuselens.profiler.command as one shell-quoted string: a stand-in"
    )
    args = parser.parse_args(argv)
    manifest = realapps.load_manifest(realapps.MANIFEST)
    (app,) = realapps.select_apps(manifest, args.app, "lsp_save")
    src = args.src.resolve()
    problems = realapps.check_staged(manifest, src)
    if problems:
        print("\n".join(f"lsp_save: {p}" for p in problems), file=sys.stderr)
        return 1
    binary, error, _ = realapps.build_all(manifest, [app], src, args.build.resolve(), 1)[app["name"]]
    if error:
        print(f"lsp_save: {app['name']} does not build: {error}", file=sys.stderr)
        return 1
    source_dir = src / app["source"] / app["dir"]
    figures = asyncio.run(
        measure(app, source_dir, Path(binary), args.launch_range, args.rounds, args.timeout, shlex.split(args.profiler))
    )
    median = figures["median"]
    print(
        f"{app['name']}: median save -> diagnostics {median.get('save_to_diagnostics_s')} s, app under the profiler "
        f"{median.get('app_wall_s')} s, app exit -> diagnostics {median.get('exit_to_diagnostics_s')} s "
        f"(issue 14: <= 1 s for an app of <= 1 M records)"
    )
    if args.json:
        args.json.write_text(json.dumps({"format": "reuselens-lsp-save", "version": 1, **figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
