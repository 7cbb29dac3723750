#!/usr/bin/env python3
"""Real-application benchmark: public CUDA apps (cuda-samples, PolyBench/GPU, SHOC) natively and under ReuseLens.

The apps, their pinned commits, build flags and arguments are in benchmarks/realapps/manifest.json; their
sources are staged (not committed) by benchmarks/realapps_stage.py into benchmarks/realapps/src/ ({src} in an
app's arguments stands for that folder, e.g. for input files staged with the sources). Every app
builds with `nvcc -lineinfo -O3 -arch=sm_90`. Each round runs, per app in turn: the app alone, `reuselens
profile --no-analyze` (collect), `reuselens profile` (collect + analysis), `reuselens profile --object-level`
(objects: the memory analysis without an access trace) and `reuselens profile --intra-object` (intra: the same
with element maps), so drift of the shared host spreads over all apps and modes. Printed per app: median wall times, launches and records (run.json),
findings (report.json), the sizes of report.json and analysis.json, and the collect/full ratios to native,
then the median and the worst ratio over the apps. A failing app is reported as a failure row.

    python3 benchmarks/realapps.py --src benchmarks/realapps/src --out DIR [--rounds 2] [--apps a,b]
    python3 benchmarks/realapps.py --src benchmarks/realapps/src --out DIR --check-only   # no GPU needed
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "realapps" / "manifest.json"
# objects: `reuselens profile --object-level` (the memory analysis without an access trace, issue 18), its
# memory table included; intra: `reuselens profile --intra-object` (the same with element maps on the GPU);
# values: `reuselens profile --values --no-analyze` (collect with value companions, issue 19: its cost against
# collect's is the value mode's).
MODES = ("native", "collect", "full", "objects", "intra", "values")
RATIO_MODES = ("collect", "full", "objects", "intra", "values")
# In an app's args, the staged-sources folder (--src), for input files staged with the sources (a source's
# "inputs" generator, benchmarks/realapps_stage.py). Replaced when the app runs, not when it is staged: the staged
# tree is carried to the device and may sit at another path there.
SRC_TOKEN = "{src}"


def load_manifest(path: Path) -> dict:
    manifest = json.loads(path.read_text())
    if manifest.get("format") != "reuselens-realapps-manifest" or manifest.get("version") != 1:
        raise SystemExit(f"realapps: {path}: not a version-1 realapps manifest")
    return manifest


def check_staged(manifest: dict, src: Path, apps: list[dict] | None = None) -> list[str]:
    """Problems with the staged tree: a source missing, staged from another commit, or an app file absent. `apps`:
    only those apps and their sources (an unselected app's missing input does not stop a run of others)."""
    problems = []
    apps = manifest["apps"] if apps is None else apps
    used = {app["source"] for app in apps}
    for name, spec in manifest["sources"].items():
        if name not in used:
            continue
        stamp = src / name / "STAGED.json"
        if not stamp.is_file():
            problems.append(f"{name}: not staged in {src} (run benchmarks/realapps_stage.py)")
            continue
        staged = json.loads(stamp.read_text())
        if staged.get("commit") != spec["commit"]:
            problems.append(f"{name}: staged from {staged.get('commit')}, manifest pins {spec['commit']}")
    for app in apps:
        root = src / app["source"] / app["dir"]
        for rel in app["files"]:
            if not (root / rel).is_file():
                problems.append(f"{app['name']}: missing {root / rel}")
        for path in staged_inputs(app, src):
            if not path.is_file():
                problems.append(f"{app['name']}: missing input {path} (made by the source's inputs generator)")
    return problems


def app_argv(app: dict, binary: Path, src: Path) -> list[str]:
    """The app's command line: its binary, then its manifest args with SRC_TOKEN replaced by `src`."""
    return [str(binary), *(arg.replace(SRC_TOKEN, str(src)) for arg in app.get("args", []))]


def staged_inputs(app: dict, src: Path) -> list[Path]:
    """The files under `src` that the app's args name through SRC_TOKEN; an argument may list several, comma-
    separated (Parboil's `-i a,b,c`)."""
    return [
        Path(item.replace(SRC_TOKEN, str(src)))
        for arg in app.get("args", [])
        for item in arg.split(",")
        if SRC_TOKEN in item
    ]


def build_command(manifest: dict, app: dict, src: Path, binary: Path) -> list[str]:
    root = src / app["source"] / app["dir"]
    source_root = src / app["source"]
    cmd = list(manifest["compile"])
    cmd += [f"-I{source_root / inc}" for inc in app.get("include", [])]
    if app.get("prelude"):
        # Size macros such as N go in a header included first, after <cuda.h>: as -DN=... they would also
        # rename the parameters called N in cuda.h's prototypes.
        prelude = binary.parent / f"{app['name']}_prelude.h"
        prelude.write_text(
            "/* written by benchmarks/realapps.py from the manifest */\n" + "\n".join(app["prelude"]) + "\n"
        )
        cmd += ["-include", str(prelude)]
    cmd += [f"-D{d}" for d in app.get("defines", [])]
    cmd += app.get("flags", [])
    cmd += [str(root / f) for f in app["files"]]
    return cmd + ["-o", str(binary)]


def build(manifest: dict, app: dict, src: Path, build_dir: Path) -> tuple[Path, str | None, float]:
    """Builds one app unless a binary from the same command and sources is there; returns (binary, error, s)."""
    binary = build_dir / app["name"]
    cmd = build_command(manifest, app, src, binary)
    root = src / app["source"]
    digest = hashlib.sha256((" ".join(cmd) + json.dumps(app, sort_keys=True)).encode())
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(path.read_bytes())
    stamp = build_dir / (app["name"] + ".stamp")
    if binary.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return binary, None, 0.0
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=build_dir)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()[-3:]
        return binary, f"build failed: {' | '.join(errors[:3])}", took
    stamp.write_text(digest.hexdigest())
    return binary, None, took


def select_apps(manifest: dict, names: str | None, tool: str = "realapps") -> list[dict]:
    """The manifest's apps named in the comma-separated `names` (all of them for None), in manifest order;
    SystemExit naming the unknown ones."""
    apps = manifest["apps"]
    if not names:
        return apps
    wanted = names.split(",")
    unknown = sorted(set(wanted) - {a["name"] for a in apps})
    if unknown:
        raise SystemExit(f"{tool}: unknown app(s) {', '.join(unknown)}; known: {', '.join(a['name'] for a in apps)}")
    return [a for a in apps if a["name"] in wanted]


def build_all(manifest: dict, apps: list[dict], src: Path, build_dir: Path, jobs: int) -> dict:
    """name -> (binary, error or None, seconds or 0 when reused) for each app, built `jobs` at a time into
    `build_dir`; a line per app is printed."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        built = dict(zip((a["name"] for a in apps), pool.map(lambda a: build(manifest, a, src, build_dir), apps)))
    for app in apps:
        _, error, took = built[app["name"]]
        print(
            f"build {app['name']:<19} {'FAILED ' + error if error else f'ok ({took:.1f} s)' if took else 'reused'}",
            flush=True,
        )
    return built


def reuselens_command(given: str | None) -> list[str]:
    if given:
        return shlex.split(given)
    found = shutil.which("reuselens")
    if found:
        return [found]
    # No console script on PATH: this interpreter's installed package (the checkout alone has no libraries).
    return [sys.executable, "-m", "reuselens"]


def timed_run(cmd: list[str], out, cwd: Path, timeout: float, env: dict | None = None) -> tuple[int, float] | None:
    """(exit status, wall seconds) of one command, or None when it outlived `timeout` and was killed.

    Not subprocess.run(timeout=...): its wait polls with sleeps of up to 50 ms, which rounds every wall time up
    to the next 50 ms step (a tenth of a 0.4 s app). A timer kills the process instead, and the wait blocks.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    expired = threading.Event()

    def kill() -> None:
        expired.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        rc = proc.wait()
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    return None if expired.is_set() else (rc, wall)


def profile_command(
    mode: str, argv: list[str], reuselens: list[str], run_dir: Path, timeout: float, extra: tuple[str, ...] = ()
) -> list[str]:
    """The command of one mode's run: the app alone (native), or the app under `reuselens profile` with the mode's
    options, then `extra` options (e.g. a kernel filter)."""
    if mode == "native":
        return list(argv)
    return [
        *reuselens,
        "profile",
        *(["--no-analyze"] if mode == "collect" else []),
        *(["--object-level"] if mode == "objects" else []),
        *(["--intra-object"] if mode == "intra" else []),
        *(["--values", "--no-analyze"] if mode == "values" else []),
        *extra,
        "--timeout",
        str(timeout),
        "--run-dir",
        str(run_dir),
        "--",
        *argv,
    ]


def run_step(
    mode: str, argv: list[str], reuselens: list[str], run_dir: Path, timeout: float, env: dict | None = None
) -> dict:
    """One timed run; the app's own output goes to a log next to the run directory. `env`: the environment of
    the run (default: this process's)."""
    cmd = profile_command(mode, argv, reuselens, run_dir, timeout)
    log = run_dir.parent / f"{run_dir.name}.log"
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        # The profiler gets the app's timeout and then its analysis time on top.
        done = timed_run(cmd, out, run_dir.parent, timeout if mode == "native" else 2 * timeout + 60, env)
    if done is None:
        return {"error": f"{mode}: no exit within the step timeout", "log": str(log)}
    rc, wall = done
    step = {"wall_s": wall, "rc": rc, "log": str(log)}
    if rc != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        step["error"] = f"{mode}: exit {rc}: {tail[0][:200]}"
    if mode != "native":
        step.update(run_facts(run_dir))
    return step


def run_facts(run_dir: Path) -> dict:
    """Launches and records from run.json (docs/run-directory.md); findings and sizes (docs/report-format.md)."""
    facts: dict = {}
    manifest = run_dir / "run.json"
    if manifest.is_file():
        run = json.loads(manifest.read_text())
        launches = run.get("launches", [])
        facts.update(
            status=run.get("status"),
            partial_reason=run.get("partial_reason"),
            launches=len(launches),
            instrumented=sum(1 for x in launches if x.get("instrumented")),
            records=sum(x.get("records") or 0 for x in launches),
            distinct_grids=len({tuple(x.get("grid") or ()) for x in launches}),
        )
    for name in ("report.json", "analysis.json"):
        path = run_dir / name
        facts[name.replace(".", "_") + "_bytes"] = path.stat().st_size if path.is_file() else None
    report = run_dir / "report.json"
    if report.is_file():
        kernels = json.loads(report.read_text()).get("kernels", [])
        facts["findings"] = sum(len(k.get("findings", [])) for k in kernels)
    return facts


def summarise(name: str, steps: dict[str, list[dict]]) -> dict:
    row: dict = {"app": name}
    failures = [s["error"] for mode in MODES for s in steps[mode] if "error" in s]
    if failures:
        row["failed"] = failures[0]
    for mode in MODES:
        walls = [s["wall_s"] for s in steps[mode] if "error" not in s]
        row[f"{mode}_s"] = statistics.median(walls) if walls else None
    for mode in RATIO_MODES:
        if row[f"{mode}_s"] and row["native_s"]:
            row[f"{mode}_ratio"] = row[f"{mode}_s"] / row["native_s"]
    if row["values_s"] and row["collect_s"]:
        row["values_over_collect"] = row["values_s"] / row["collect_s"]
    last_full = next((s for s in reversed(steps["full"]) if "launches" in s), None)
    last_collect = next((s for s in reversed(steps["collect"]) if "launches" in s), None)
    for source in (last_collect, last_full):
        if source:
            row.update(
                {
                    k: source.get(k)
                    for k in ("launches", "instrumented", "records", "distinct_grids", "status", "partial_reason")
                }
            )
    if last_full:
        row.update({k: last_full.get(k) for k in ("findings", "report_json_bytes", "analysis_json_bytes")})
    return row


def fmt(value, spec: str, missing: str = "-") -> str:
    return format(value, spec) if value is not None else missing


def print_table(rows: list[dict]) -> dict:
    print(
        f"\n{'app':<19}{'native s':>9}{'collect s':>10}{'full s':>9}{'coll x':>8}{'full x':>8}{'objs x':>8}{'intra x':>8}"
        f"{'launches':>9}{'records':>13}{'findings':>9}{'report KiB':>11}{'analysis KiB':>13}"
    )
    for r in rows:
        line = (
            f"{r['app']:<19}{fmt(r.get('native_s'), '9.3f', '        -')}{fmt(r.get('collect_s'), '10.3f', '         -')}"
            f"{fmt(r.get('full_s'), '9.3f', '        -')}{fmt(r.get('collect_ratio'), '8.2f', '       -')}"
            f"{fmt(r.get('full_ratio'), '8.2f', '       -')}{fmt(r.get('objects_ratio'), '8.2f', '       -')}"
            f"{fmt(r.get('intra_ratio'), '8.2f', '       -')}{fmt(r.get('launches'), '9d', '        -')}"
            f"{fmt(r.get('records'), '13,d', '            -')}{fmt(r.get('findings'), '9d', '        -')}"
            f"{fmt((r.get('report_json_bytes') or 0) / 1024 if r.get('report_json_bytes') else None, '11.1f', '          -')}"
            f"{fmt((r.get('analysis_json_bytes') or 0) / 1024 if r.get('analysis_json_bytes') else None, '13.1f', '            -')}"
        )
        print(
            line
            + (f"  FAILED: {r['failed']}" if "failed" in r else "")
            + (f"  partial: {r['partial_reason']}" if r.get("status") == "partial" else "")
        )
    summary: dict = {"apps": len(rows), "failed": [r["app"] for r in rows if "failed" in r]}
    for mode in RATIO_MODES:
        ratios = [(r[f"{mode}_ratio"], r["app"]) for r in rows if r.get(f"{mode}_ratio") is not None]
        if ratios:
            worst = max(ratios)
            summary[mode] = {
                "median_ratio": statistics.median(x for x, _ in ratios),
                "worst_ratio": worst[0],
                "worst_app": worst[1],
            }
            print(
                f"{mode:>7}: median {summary[mode]['median_ratio']:.2f}x, worst {worst[0]:.2f}x ({worst[1]}) "
                f"over {len(ratios)} apps"
            )
    over = [(r["values_over_collect"], r["app"]) for r in rows if r.get("values_over_collect") is not None]
    if over:
        worst = max(over)
        summary["values_over_collect"] = {
            "per_app": {app: x for x, app in over},
            "median_ratio": statistics.median(x for x, _ in over),
            "worst_ratio": worst[0],
            "worst_app": worst[1],
        }
        print(
            "values / collect: "
            + ", ".join(f"{app} {x:.2f}" for x, app in over)
            + f"; median {summary['values_over_collect']['median_ratio']:.2f}x, worst {worst[0]:.2f}x ({worst[1]})"
        )
    if summary["failed"]:
        print(f"failed: {', '.join(summary['failed'])}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", default=str(HERE / "realapps" / "src"), help="staged sources")
    parser.add_argument("--out", required=True, help="results folder: builds, runs, realapps.json")
    parser.add_argument("--build", help="where binaries go (default OUT/build; reused when unchanged)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--apps", help="comma-separated subset of the manifest's apps")
    parser.add_argument("--timeout", type=float, default=300, help="seconds an app may run in one step")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel builds")
    parser.add_argument("--reuselens", help="command that runs the CLI (default: reuselens on PATH)")
    parser.add_argument("--keep-runs", action="store_true", help="keep every run directory (default: last round)")
    parser.add_argument("--manifest", default=str(MANIFEST))
    parser.add_argument("--check-only", action="store_true", help="check the staged sources and build; no GPU")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="comma-separated subset of native,collect,full,objects,intra,values (default all; ratios need native)",
    )
    args = parser.parse_args(argv)
    modes = [m for m in MODES if m in args.modes.split(",")]
    if not modes or set(args.modes.split(",")) - set(MODES):
        raise SystemExit(f"realapps: --modes {args.modes!r}: expected a comma-separated subset of {','.join(MODES)}")

    manifest = load_manifest(Path(args.manifest))
    apps = select_apps(manifest, args.apps)
    src, out = Path(args.src).resolve(), Path(args.out).resolve()
    problems = check_staged(manifest, src, apps)
    if problems:
        print("\n".join(f"realapps: {p}" for p in problems), file=sys.stderr)
        return 1
    build_dir = Path(args.build).resolve() if args.build else out / "build"
    built = build_all(manifest, apps, src, build_dir, args.jobs)
    if args.check_only:
        return 1 if any(error for _, error, _ in built.values()) else 0

    reuselens = reuselens_command(args.reuselens)
    steps = {a["name"]: {m: [] for m in MODES} for a in apps}
    runnable = [a for a in apps if not built[a["name"]][1]]
    for rnd in range(args.rounds):
        for app in runnable:
            argv = app_argv(app, built[app["name"]][0], src)
            for mode in modes:
                run_dir = out / "runs" / f"r{rnd}" / f"{app['name']}-{mode}"
                if run_dir.exists():
                    shutil.rmtree(run_dir)
                step = run_step(mode, argv, reuselens, run_dir, args.timeout)
                steps[app["name"]][mode].append(step)
                print(
                    f"round {rnd} {app['name']:<19} {mode:<8} "
                    + (step["error"] if "error" in step and "wall_s" not in step else f"{step['wall_s']:8.3f} s")
                    + (
                        f"  {step.get('records', 0):,} records, {step.get('launches', 0)} launches"
                        if mode != "native" and "launches" in step
                        else ""
                    )
                    + (f"  ERROR {step['error']}" if "error" in step and "wall_s" in step else ""),
                    flush=True,
                )
        if rnd > 0 and not args.keep_runs:
            # Keep the last round's run directories for inspection; earlier rounds only add bulk.
            shutil.rmtree(out / "runs" / f"r{rnd - 1}", ignore_errors=True)

    rows = [summarise(a["name"], steps[a["name"]]) for a in runnable]
    rows += [{"app": a["name"], "failed": built[a["name"]][1]} for a in apps if built[a["name"]][1]]
    summary = print_table(rows)
    result = {
        "format": "reuselens-realapps-result",
        "version": 1,
        "rounds": args.rounds,
        "reuselens": reuselens,
        "manifest": manifest,
        "apps": rows,
        "steps": steps,
        "summary": summary,
    }
    (out / "realapps.json").write_text(json.dumps(result, indent=1))
    print(f"\nwritten {out / 'realapps.json'}")
    return 0 if rows and not summary["failed"] else 2


if __name__ == "__main__":
    sys.exit(main())
