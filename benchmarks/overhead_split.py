#!/usr/bin/env python3
"""Where `reuselens profile --no-analyze` spends the time the app does not, per real application.

Each round runs, per app in turn (so that the shared host's drift spreads over every mode):

* native: the app alone;
* attach: `profile --no-analyze --kernel-filter` with a pattern no kernel name matches: the launcher, the
  Sanitizer attached and every launch seen, nothing instrumented;
* no-engine: `profile --no-analyze` with REUSELENS_ONLINE_ANALYSIS=0: every launch instrumented and its records
  drained, handed to no analysis;
* collect: `profile --no-analyze`, what a user runs.

Differences of the medians split the overhead: attach - native (launcher and Sanitizer), no-engine - attach (the
instrumented kernels and the drain), collect - no-engine (the online engine). From the collect runs' collector.log
(docs/collector.md), medians over rounds: the first instrumented launch's line, the last launch's line, and the
engine's catch-up after it ("queue emptied in ..."), all in seconds since the collector started.

    python3 benchmarks/overhead_split.py --src benchmarks/realapps/src --out DIR [--rounds 3] [--apps a,b]

Writes DIR/overhead_split.json (format reuselens-overhead-split, version 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import realapps  # noqa: E402

FORMAT, VERSION = "reuselens-overhead-split", 1
MODES = ("native", "attach", "no-engine", "collect")
NO_KERNEL = "^reuselens-no-such-kernel$"
LOG_LINE = re.compile(r"^\[\s*([0-9.]+)\] (.*)$")
QUEUE_EMPTIED = re.compile(r"exit: engine finished in ([0-9.]+) s: queue emptied in ([0-9.]+) s")


def command(mode: str, argv: list[str], reuselens: list[str], run_dir: Path, timeout: float) -> list[str]:
    """realapps.py's commands: the app alone (native), every other mode `profile --no-analyze` (attach with a kernel
    filter no name matches; no-engine differs by its environment)."""
    extra = ("--kernel-filter", NO_KERNEL) if mode == "attach" else ()
    realapps_mode = "native" if mode == "native" else "collect"
    return realapps.profile_command(realapps_mode, argv, reuselens, run_dir, timeout, extra)


def log_marks(log: Path) -> dict:
    """Seconds since the collector started: first and last launch line, the exit line; the engine's catch-up."""
    marks: dict = {}
    if not log.is_file():
        return marks
    for line in log.read_text(errors="replace").splitlines():
        m = LOG_LINE.match(line)
        if not m:
            continue
        t, text = float(m.group(1)), m.group(2)
        if text.startswith("launch "):
            marks.setdefault("first_launch_s", t)
            marks["last_launch_s"] = t
        elif text.startswith("context "):
            marks.setdefault("context_s", t)
        q = QUEUE_EMPTIED.match(text)
        if q:
            marks["engine_finish_s"] = float(q.group(1))
            marks["queue_emptied_s"] = float(q.group(2))
        if text.startswith("exit: ") and re.match(r"exit: \d+ launches", text):
            marks["exit_s"] = t
    return marks


def median_of(steps: list[dict], key: str):
    values = [s[key] for s in steps if s.get(key) is not None]
    return statistics.median(values) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, required=True, help="staged sources (benchmarks/realapps_stage.py)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--build", type=Path, help="where binaries go (default OUT/build; reused when unchanged)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--apps", help="comma-separated subset of the manifest's apps")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--reuselens", help="command that runs the CLI (default: reuselens on PATH)")
    parser.add_argument("--manifest", type=Path, default=realapps.MANIFEST)
    args = parser.parse_args(argv)

    manifest = realapps.load_manifest(args.manifest)
    apps = realapps.select_apps(manifest, args.apps, "overhead_split")
    src, out = args.src.resolve(), args.out.resolve()
    problems = realapps.check_staged(manifest, src)
    if problems:
        print("\n".join(f"overhead_split: {p}" for p in problems), file=sys.stderr)
        return 1
    build_dir = args.build.resolve() if args.build else out / "build"
    binaries = realapps.build_all(manifest, apps, src, build_dir, args.jobs)
    reuselens = realapps.reuselens_command(args.reuselens)
    steps: dict[str, dict[str, list[dict]]] = {a["name"]: {m: [] for m in MODES} for a in apps}
    for r in range(args.rounds):
        for app in apps:
            name = app["name"]
            binary, error, _ = binaries[name]
            if error:
                continue
            for mode in MODES:
                run_dir = out / "runs" / f"{name}-{mode}-{r}"
                shutil.rmtree(run_dir, ignore_errors=True)
                env = dict(os.environ)
                if mode == "no-engine":
                    env["REUSELENS_ONLINE_ANALYSIS"] = "0"
                cmd = command(mode, realapps.app_argv(app, binary, src), reuselens, run_dir, args.timeout)
                run_dir.parent.mkdir(parents=True, exist_ok=True)
                with open(run_dir.parent / f"{run_dir.name}.log", "w") as log:
                    done = realapps.timed_run(cmd, log, run_dir.parent, args.timeout * 2 + 60, env)
                step: dict = {"wall_s": done[1] if done and done[0] == 0 else None, "rc": done[0] if done else None}
                if mode != "native":
                    step.update(log_marks(run_dir / "collector.log"))
                steps[name][mode].append(step)
                wall = f"{step['wall_s']:.3f} s" if step["wall_s"] else f"failed (rc {step['rc']})"
                print(f"round {r} {name:18} {mode:10} {wall}", flush=True)

    rows = []
    print()
    head = "app                native  attach  no-eng  collect | launcher+san  kernels+drain  engine | "
    print(head + "1st launch  last launch  queue emptied  exit")
    for app in apps:
        name = app["name"]
        row: dict = {"app": name}
        for mode in MODES:
            row[f"{mode}_s"] = median_of(steps[name][mode], "wall_s")
        for key in ("first_launch_s", "last_launch_s", "queue_emptied_s", "exit_s"):
            row[key] = median_of(steps[name]["collect"], key)
        n, a, e, c = (row[f"{m}_s"] for m in MODES)
        if None not in (n, a, e, c):
            row.update(launcher_sanitizer_s=a - n, kernels_drain_s=e - a, engine_s=c - e)

        def f(v, spec=".3f"):
            return format(v, spec) if v is not None else "-"

        print(
            f"{name:18} {f(n):>6}  {f(a):>6}  {f(e):>6}  {f(c):>7} | {f(row.get('launcher_sanitizer_s')):>12}  "
            f"{f(row.get('kernels_drain_s')):>13}  {f(row.get('engine_s')):>6} | {f(row['first_launch_s']):>10}  "
            f"{f(row['last_launch_s']):>11}  {f(row['queue_emptied_s']):>13}  {f(row['exit_s']):>4}"
        )
        rows.append(row)
    result = {"format": FORMAT, "version": VERSION, "rounds": args.rounds, "apps": rows, "steps": steps}
    (out / "overhead_split.json").write_text(json.dumps(result, indent=1))
    print(f"\nwritten {out / 'overhead_split.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
