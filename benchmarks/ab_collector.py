#!/usr/bin/env python3
"""Two builds of the collector on the real-application suite, paired: which one is faster, on one machine.

The H200 host's speed drifts by tens of per cent between minutes (benchmarks/results/h200-2026-12-02-s13: the
same code run twice in alternation took up to 1.7 times as long in one invocation as in the next), so figures of
separate runs, let alone separate device calls, do not say whether a change helped. Here each app runs under
build A and build B back to back, in an order that alternates between apps and rounds, and the verdict is the
median of the per-pair ratios B / A, with their range: a drift that lasts longer than one pair cancels out.
What does not cancel: an A/A pairing of the same code, installed against built beside it, gave ratios of 0.945 to
1.035 per app (benchmarks/results/h200-2026-12-02-s16, call 8), so a ratio within about 5% of 1 is no evidence.

Builds are tool libraries (REUSELENS_COLLECTOR_LIB, which the launcher hands the app), e.g. the installed one and
one of an earlier revision made by benchmarks/build_revision.sh:

    bash benchmarks/build_revision.sh 20e50fa /tmp/old
    python3 benchmarks/ab_collector.py --a old=/tmp/old/reuselens/collector/native/libreuselens_collector.so \\
        --b new=installed --apps pb_gemm,shoc_bfs --rounds 3 --out /tmp/ab [--mode collect|values]

A side may also be one library under other collector settings (`,VAR=VALUE` after its path):
    python3 benchmarks/ab_collector.py --a q1g=installed --b q128=installed,REUSELENS_ENGINE_QUEUE_BYTES=134217728 ...

Prints one line per run as it goes, then per app each build's median wall time and the pair ratios; writes
OUT/ab_collector.json (format reuselens-ab-collector, version 2: each build's library and settings).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import realapps  # noqa: E402

from reuselens.collector.launcher import LAUNCHER_SETTINGS  # noqa: E402

AB_MODES = ("collect", "full", "objects", "intra", "values")


def parse_build(text: str) -> tuple[str, str | None, dict[str, str]]:
    """NAME=PATH of a tool library, or NAME=installed (the library the launcher finds by itself), optionally
    followed by collector settings for that side, `,VAR=VALUE` each (e.g. `q128=installed,REUSELENS_ENGINE_QUEUE_BYTES
    =134217728`: the same library under another setting, docs/collector.md's environment variables)."""
    name, sep, rest = text.partition("=")
    path, *assignments = rest.split(",")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=PATH or NAME=installed, then ,VAR=VALUE settings")
    settings = {}
    for assignment in assignments:
        var, eq, value = assignment.partition("=")
        if not eq or not var.startswith("REUSELENS_"):
            raise argparse.ArgumentTypeError(f"{assignment!r}: a setting is REUSELENS_VAR=VALUE")
        if var in LAUNCHER_SETTINGS:  # session 23, call 2: both sides then ran the same buffers
            raise argparse.ArgumentTypeError(
                f"{var}: the launcher sets it from its own options, so it would not reach the app; "
                "build a library with that default instead (benchmarks/build_revision.sh --patch)"
            )
        settings[var] = value
    if path == "installed":
        return name, None, settings
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"{path}: no such tool library")
    return name, str(Path(path).resolve()), settings


def build_env(library: str | None, settings: dict[str, str] | None = None) -> dict:
    env = dict(os.environ)
    env.pop("REUSELENS_COLLECTOR_LIB", None)
    if library is not None:
        env["REUSELENS_COLLECTOR_LIB"] = library
    env.update(settings or {})
    return env


def order(app_index: int, round_index: int) -> tuple[int, int]:
    """Which build runs first: alternating between apps and between rounds, so that neither always goes first
    (a warm page cache, a GPU clock still rising) and a drift between rounds meets both orders."""
    return (0, 1) if (app_index + round_index) % 2 == 0 else (1, 0)


def pair_summary(a_walls: list[float], b_walls: list[float]) -> dict:
    """Per-app verdict from the walls of the runs, paired in the order they were made (None: a failed run)."""
    ratios = [b / a for a, b in zip(a_walls, b_walls) if a and b]
    ok_a = [w for w in a_walls if w]
    ok_b = [w for w in b_walls if w]
    return {
        "a_median_s": statistics.median(ok_a) if ok_a else None,
        "b_median_s": statistics.median(ok_b) if ok_b else None,
        "pairs": len(ratios),
        "ratio_median": statistics.median(ratios) if ratios else None,
        "ratio_min": min(ratios) if ratios else None,
        "ratio_max": max(ratios) if ratios else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, type=parse_build, help="NAME=PATH[,VAR=VALUE...] of build A")
    parser.add_argument("--b", required=True, type=parse_build, help="NAME=PATH (or NAME=installed)[,VAR=VALUE...]")
    parser.add_argument("--apps", required=True, help="comma-separated apps of the manifest")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=AB_MODES, default="collect")
    parser.add_argument("--out", required=True, help="results folder: builds, runs, ab_collector.json")
    parser.add_argument("--src", default=str(realapps.HERE / "realapps" / "src"), help="staged sources")
    parser.add_argument("--build", help="where binaries go (default OUT/build; reused when unchanged)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds an app may run in one step")
    parser.add_argument("--reuselens", help="command that runs the CLI (default: reuselens on PATH)")
    parser.add_argument("--manifest", default=str(realapps.MANIFEST))
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    builds = [args.a, args.b]
    if builds[0][0] == builds[1][0]:
        parser.error("--a and --b need different names")

    manifest = realapps.load_manifest(Path(args.manifest))
    apps = realapps.select_apps(manifest, args.apps, "ab_collector")
    src, out = Path(args.src).resolve(), Path(args.out).resolve()
    problems = realapps.check_staged(manifest, src)
    if problems:
        print("\n".join(f"ab_collector: {p}" for p in problems), file=sys.stderr)
        return 1
    build_dir = Path(args.build).resolve() if args.build else out / "build"
    built = realapps.build_all(manifest, apps, src, build_dir, os.cpu_count() or 1)
    failed = {name: error for name, (_, error, _) in built.items() if error}
    reuselens = realapps.reuselens_command(args.reuselens)

    walls: dict[str, list[list[float | None]]] = {a["name"]: [[], []] for a in apps if a["name"] not in failed}
    steps: list[dict] = []
    for rnd in range(args.rounds):
        for index, app in enumerate(a for a in apps if a["name"] not in failed):
            argv_app = realapps.app_argv(app, built[app["name"]][0], src)
            for which in order(index, rnd):
                name, library, settings = builds[which]
                run_dir = out / "runs" / f"r{rnd}" / f"{app['name']}-{name}"
                env = build_env(library, settings)
                step = realapps.run_step(args.mode, argv_app, reuselens, run_dir, args.timeout, env)
                wall = step.get("wall_s") if "error" not in step else None
                walls[app["name"]][which].append(wall)
                steps.append({"round": rnd, "app": app["name"], "build": name, **step})
                print(
                    f"round {rnd} {app['name']:<19} {name:<8} "
                    + (f"{wall:8.3f} s" if wall is not None else f"FAILED {step.get('error', '')}"),
                    flush=True,
                )
    rows = []
    a_name, b_name = builds[0][0], builds[1][0]
    print(f"\n{'app':<19} {a_name + ' s':>10} {b_name + ' s':>10} {b_name + '/' + a_name:>12}  range of the pairs")
    for app_name, (a_walls, b_walls) in walls.items():
        row = {"app": app_name, **pair_summary(a_walls, b_walls)}
        rows.append(row)
        if row["pairs"]:
            print(
                f"{app_name:<19} {row['a_median_s']:10.3f} {row['b_median_s']:10.3f} {row['ratio_median']:12.3f}"
                f"  {row['ratio_min']:.3f}-{row['ratio_max']:.3f} ({row['pairs']} pairs)"
            )
        else:
            print(f"{app_name:<19} no pair with both runs complete")
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "format": "reuselens-ab-collector",
        "version": 2,
        "mode": args.mode,
        "rounds": args.rounds,
        "builds": {
            name: {"library": library or "installed", "settings": settings} for name, library, settings in builds
        },
        "apps": rows,
        "steps": steps,
        "failed_builds": failed,
    }
    (out / "ab_collector.json").write_text(json.dumps(result, indent=1))
    print(f"\nwritten {out / 'ab_collector.json'}")
    return 0 if rows and all(r["pairs"] for r in rows) and not failed else 2


if __name__ == "__main__":
    sys.exit(main())
