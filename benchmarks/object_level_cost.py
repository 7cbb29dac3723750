#!/usr/bin/env python3
"""Where the object-level mode's time goes (issue 18's cost target), per real application.

Each round runs, per app in turn (so drift of the shared host spreads over the steps):

* native: the app alone;
* attached: the collector injected by hand (no launcher) in object-level mode, selecting no kernel: the
  Compute Sanitizer's attach, the resource and launch callbacks, run.json (with the environment the launcher gives
  the app: SANITIZER_DISABLE_PARALLEL_LAUNCHES=1 unless set, and a fresh run directory: session 10's call 2 gave
  none, so its collector stayed passive and these steps measured an unprofiled app);
* injected: the same, every kernel instrumented (the object patch, the table upload, the marks);
* launcher: `reuselens profile --object-level --no-analyze` (adds the Python launcher: interpreter, checks, the
  run header, waiting);
* profile: `reuselens profile --object-level` (adds the memory analysis and the report after the app's exit).

and then, on the last profile step's run, `reuselens memory RUN` on its own (the post-run analysis in a fresh
interpreter). Printed per app: the median of each step and the differences (collector = injected - native,
of which attach = attached - native; launcher = launcher - injected; post-run = profile - launcher).

    python3 benchmarks/object_level_cost.py --src benchmarks/realapps/src --out DIR [--rounds 3] [--apps a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import realapps  # noqa: E402  (the suite's manifest, build and timed runs)

STEPS = ("native", "attached", "injected", "launcher", "profile")
NO_KERNEL = "^$"  # a kernel filter no kernel name matches


def tool_library() -> str:
    found = subprocess.run(
        [sys.executable, "-c", "from reuselens.collector.launcher import find_tool_library as f; print(f())"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"object_level_cost: no collector library: {found.stderr.strip()[-300:]}")
    return found.stdout.strip()


def step_command(
    step: str, argv: list[str], run_dir: Path, reuselens: list[str], library: str
) -> tuple[list[str], dict]:
    env = dict(os.environ)
    if step == "native":
        return argv, env
    if step in ("attached", "injected"):
        # A fresh, existing run directory, as the launcher prepares it: the tool library stays passive (the app
        # runs unprofiled) where it cannot create its .collector.pid, in a missing directory or in one a previous
        # round claimed (session 10's call 2 measured such passive runs).
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        env.update(
            LD_PRELOAD=library,
            CUDA_INJECTION64_PATH=library,
            REUSELENS_RUN_DIR=str(run_dir),
            REUSELENS_OBJECT_LEVEL="1",
        )
        # What the launcher sets besides (collector/launcher.py), unless the caller's environment says otherwise:
        # the launcher's own share is then only the launcher.
        env.setdefault("SANITIZER_DISABLE_PARALLEL_LAUNCHES", "1")
        if step == "attached":
            env["REUSELENS_KERNEL_REGEX"] = NO_KERNEL
        return argv, env
    flags = ["--no-analyze"] if step == "launcher" else []
    return [*reuselens, "profile", "--object-level", *flags, "--run-dir", str(run_dir), "--", *argv], env


def timed(cmd: list[str], env: dict, log: Path, cwd: Path, timeout: float) -> float | str:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        done = realapps.timed_run(cmd, out, cwd, timeout, env)
    if done is None:
        return "timeout"
    rc, wall = done
    return wall if rc == 0 else f"exit {rc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", default=str(HERE / "realapps" / "src"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--apps", help="comma-separated subset of the manifest's apps")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    manifest = realapps.load_manifest(realapps.MANIFEST)
    apps = [a for a in manifest["apps"] if not args.apps or a["name"] in args.apps.split(",")]
    src, out = Path(args.src).resolve(), Path(args.out).resolve()
    problems = realapps.check_staged(manifest, src)
    if problems:
        raise SystemExit("\n".join(f"object_level_cost: {p}" for p in problems))
    build_dir = out / "build"
    build_dir.mkdir(parents=True, exist_ok=True)
    library = tool_library()
    reuselens = realapps.reuselens_command(None)
    binaries = {}
    for app in apps:
        binary, error, _ = realapps.build(manifest, app, src, build_dir)
        if error:
            print(f"{app['name']}: {error}", file=sys.stderr)
        else:
            binaries[app["name"]] = [str(binary), *app.get("args", [])]

    walls: dict[str, dict[str, list[float]]] = {name: {s: [] for s in (*STEPS, "memory")} for name in binaries}
    for rnd in range(args.rounds):
        for name, app_argv in binaries.items():
            for step in STEPS:
                run_dir = out / "runs" / f"{name}-{step}"
                cmd, env = step_command(step, app_argv, run_dir, reuselens, library)
                wall = timed(cmd, env, out / "logs" / f"r{rnd}-{name}-{step}.log", build_dir, args.timeout)
                if isinstance(wall, str):
                    print(f"round {rnd} {name} {step}: {wall}", file=sys.stderr)
                    continue
                if step in ("attached", "injected") and not (run_dir / "run.json").is_file():
                    print(f"round {rnd} {name} {step}: the collector did not profile (no run.json)", file=sys.stderr)
                    continue
                walls[name][step].append(wall)
            memory = [*reuselens, "memory", str(out / "runs" / f"{name}-profile")]
            wall = timed(memory, dict(os.environ), out / "logs" / f"r{rnd}-{name}-memory.log", out, args.timeout)
            if not isinstance(wall, str):
                walls[name]["memory"].append(wall)

    def median(name: str, step: str) -> float | None:
        values = walls[name][step]
        return statistics.median(values) if values else None

    header = f"{'app':<19}" + "".join(f"{s:>10}" for s in (*STEPS, "memory"))
    header += f"{'collector':>11}{'(attach)':>10}{'launcher':>10}{'post-run':>10}{'ratio':>7}"
    print(header)
    rows = []
    for name in binaries:
        m = {s: median(name, s) for s in (*STEPS, "memory")}
        diff = {
            "collector": (m["injected"] - m["native"]) if m["injected"] and m["native"] else None,
            "attach": (m["attached"] - m["native"]) if m["attached"] and m["native"] else None,
            "launcher": (m["launcher"] - m["injected"]) if m["launcher"] and m["injected"] else None,
            "post_run": (m["profile"] - m["launcher"]) if m["profile"] and m["launcher"] else None,
            "ratio": (m["profile"] / m["native"]) if m["profile"] and m["native"] else None,
        }
        rows.append({"app": name, "median_s": m, **diff, "walls_s": walls[name]})
        cells = "".join(realapps.fmt(m[s], "10.3f", "         -") for s in (*STEPS, "memory"))
        cells += realapps.fmt(diff["collector"], "11.3f", "          -") + realapps.fmt(
            diff["attach"], "10.3f", "         -"
        )
        cells += realapps.fmt(diff["launcher"], "10.3f", "         -") + realapps.fmt(
            diff["post_run"], "10.3f", "         -"
        )
        cells += realapps.fmt(diff["ratio"], "7.2f", "      -")
        print(f"{name:<19}{cells}")
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    if ratios:
        print(f"object-level profile: median {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x")
    for key in ("collector", "attach", "launcher", "post_run"):
        values = [r[key] for r in rows if r[key] is not None]
        if values:
            print(f"{key:>10}: median {statistics.median(values):.3f} s, worst {max(values):.3f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"format": "reuselens-object-level-cost", "version": 1, "apps": rows}))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
