#!/usr/bin/env python3
"""Where `reuselens profile` spends the time the app does not: the launcher's phases, timed.

Each round runs the app alone, then `reuselens profile` (--mode: the reuse profile, the default; `--no-analyze`;
`--object-level`; `--intra-object`) in a child interpreter that timestamps its
phases on the system-wide monotonic clock, so the parent can also place the interpreter's start-up (from its
spawn to the child's first line). Printed per phase: the median over the rounds, in milliseconds.

* interpreter: spawn to the first line of the CLI (Python start-up, site, the console script's import);
* cli imports: the CLI and the launcher modules;
* library check: find_tool_library (the installed collector, its cached load check);
* driver check: require_driver (loading libcuda in the launcher);
* run directory: preparing it and the first run.json;
* spawn: starting the app (Popen);
* app: the app's run under the collector, Popen to its exit seen;
* finish: run.json finalised (_finish);
* early wait: waiting, after the app's exit, for the analysis started at the tool library's exit files (while the
  app tears down; docs/collector.md "Launcher start-up");
* preload wait: waiting for the thread that imports the analysis while the app runs;
* memory report / reuse analysis: the memory analysis and its table, or the reuse profile's analysis, on the early
  analysis's thread when it started (then mostly during the app's teardown, inside "app": not added to the sum),
  else after the app;
* report: report.json (an object-level profile's: no kernels, one note; a reuse profile's: the analysis with the
  finished run's fields, written);
* summary: the reuse profile's findings table, printed;
* exit: the rest until the process is gone (flush, os._exit).

Also the time from the collector's exit files (the newest file it wrote) to the launcher seeing the
app's exit: the app's teardown after the collector's last write, which an analysis started at that write could
overlap, and how long before that exit the launcher saw those files (its on_collected, which starts the early
analysis), or that it never did. After the phases, the app's wall time when this script starts it with the launcher's very command, environment
and session (the collector injected as the launcher injects it): set against "app", it tells whether what the app
loses under the launcher comes from that environment or from the launcher's process.

    python3 benchmarks/launcher_phases.py [--rounds 5] [--mode reuse|no-analyze|object-level|intra-object] -- ./app args
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = (
    "interpreter",
    "cli imports",
    "library check",
    "driver check",
    "run directory",
    "spawn",
    "app",
    "finish",
    "early wait",
    "preload wait",
    "memory report",
    "reuse analysis",
    "report",
    "summary",
    "exit",
)


PROFILE_ENV = "REUSELENS_PHASES_PROFILE"  # the child's cProfile output for the reuse analysis (--profile-analysis)
MODES = {
    "reuse": [],
    "no-analyze": ["--no-analyze"],
    "object-level": ["--object-level"],
    "intra-object": ["--intra-object"],
}


def collector_last_write(run_dir: Path) -> float | None:
    """When the collector wrote its last file (run.json and report.json aside, which the launcher writes after the
    exit)."""
    if not run_dir.is_dir():
        return None
    times = [p.stat().st_mtime for p in run_dir.iterdir() if p.is_file() and p.name not in ("run.json", "report.json")]
    return max(times) if times else None


def child(argv: list[str]) -> None:
    """Runs `reuselens` with argv, its phases stamped; writes {phase: [start, end]} to the file named first."""
    out, argv = argv[0], argv[1:]
    stamps: dict[str, list[float]] = {"cli imports": [time.monotonic(), 0.0]}
    launched: dict[str, object] = {}  # the app's command, environment and directory as the launcher started it
    import reuselens.cli.main as cli_main
    import reuselens.cli.profile as profile_cli
    import reuselens.collector.launcher as launcher

    stamps["cli imports"][1] = time.monotonic()
    import reuselens.cli.memory as memory_cli  # light (its analysis imports are in its functions); stamped before the
    # app starts, since the early analysis may make the table during the app's teardown

    def stamp(name: str, owner, attribute: str) -> None:
        real = getattr(owner, attribute)

        def timed(*args, **kwargs):
            start = time.monotonic()
            try:
                return real(*args, **kwargs)
            finally:
                stamps[name] = [start, time.monotonic()]

        setattr(owner, attribute, timed)

    stamp("library check", launcher, "find_tool_library")
    stamp("driver check", launcher, "require_driver")
    stamp("run directory", launcher, "_prepare_run_dir")
    stamp("finish", launcher, "_finish")
    real_finish_preload = profile_cli._finish_preload

    def finish_preload(preload):  # the analysis modules the preload thread imports, then their functions stamped
        real_finish_preload(preload)
        from reuselens.analyzer import pipeline

        stamp("report", pipeline, "build_report")
        stamp("report", pipeline, "save_with_run_fields")  # the reuse profile's (it builds no report of its own)
        from reuselens.cli import summary

        stamp("summary", summary, "print_summary")

    profile_cli._finish_preload = finish_preload
    stamp("preload wait", profile_cli, "_finish_preload")
    stamp("early wait", profile_cli._EarlyAnalysis, "wait")
    real_start = profile_cli._EarlyAnalysis.start

    def early_start(self):  # the launcher's on_collected: the tool library's exit files seen
        launched["collected"] = time.monotonic()
        real_start(self)

    profile_cli._EarlyAnalysis.start = early_start
    stamp("memory report", memory_cli, "report_text")
    if profile_to := os.environ.get(PROFILE_ENV):  # --profile-analysis: the analysis's thread under cProfile
        real_report = profile_cli._report

        def profiled(*args, **kwargs):
            import cProfile

            profiler = cProfile.Profile()
            try:
                return profiler.runcall(real_report, *args, **kwargs)
            finally:
                profiler.dump_stats(profile_to)

        profile_cli._report = profiled
    stamp("reuse analysis", profile_cli, "_report")  # looked up when the profile starts its early analysis
    real_popen = launcher.subprocess.Popen

    class StampedPopen(real_popen):  # the app's spawn (the launcher's first child), and when its exit is seen
        def __init__(self, *args, **kwargs):
            start = time.monotonic()
            super().__init__(*args, **kwargs)
            if "spawn" not in stamps:
                stamps["spawn"] = [start, time.monotonic()]
                stamps["app"] = [time.monotonic(), 0.0]
                launched["argv"] = [str(a) for a in args[0]]
                launched["env"] = dict(kwargs.get("env") or os.environ)
                launched["cwd"] = str(kwargs.get("cwd") or os.getcwd())

    launcher.subprocess.Popen = StampedPopen
    real_exited = launcher._ExitWatch.exited

    def exited(self, timeout):
        done = real_exited(self, timeout)
        if done:
            stamps["app"][1] = time.monotonic()
            launched["exit_seen_wall"] = time.time()
        return done

    launcher._ExitWatch.exited = exited
    code = cli_main.main(argv)
    stamps["exit"] = [time.monotonic(), 0.0]
    Path(out).write_text(json.dumps({"stamps": stamps, "launched": launched}))
    sys.stdout.flush()
    os._exit(code)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--mode",
        choices=tuple(MODES),
        default="reuse",
        help="which profile: the reuse profile (the default), --no-analyze, --object-level or --intra-object",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    parser.add_argument(
        "--profile-analysis",
        type=Path,
        metavar="FILE",
        help="the reuse profile's analysis, on its thread, under cProfile: its statistics (last round) written to FILE "
        "and the 25 costliest calls printed",
    )
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: launcher_phases.py -- ./app args")
    mode = MODES[args.mode]
    spent: dict[str, list[float]] = {p: [] for p in PHASES}
    native, total, replayed, tails = [], [], [], []
    announced: list[float] = []  # per round where the launcher saw them: exit files seen, to the app's exit seen
    overlapped: list[bool] = []  # per round: the memory report started before the app's exit was seen
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.rounds):
            t0 = time.monotonic()
            subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
            native.append(time.monotonic() - t0)
            stamps_file = Path(work) / "stamps.json"
            argv = ["profile", *mode, "--run-dir", str(Path(work) / "run"), "--", *command]
            started = time.monotonic()
            env = dict(os.environ, **({PROFILE_ENV: str(args.profile_analysis)} if args.profile_analysis else {}))
            subprocess.run(
                [sys.executable, __file__, "--child", str(stamps_file), *argv], stdout=subprocess.DEVNULL, env=env
            )
            end = time.monotonic()
            total.append(end - started)
            written = json.loads(stamps_file.read_text())
            stamps, launched = written["stamps"], written["launched"]
            # The app once more, started from this process with the launcher's very command, environment and
            # session: if it takes as long as under the launcher, the collector's environment is the difference,
            # else the launcher's process is.
            replay_dir = Path(work) / f"replay{len(replayed)}"  # a fresh run directory: the collector of a
            replay_dir.mkdir()  # run directory another process has claimed stays passive (.collector.pid)
            env = dict(launched["env"], REUSELENS_RUN_DIR=str(replay_dir))
            t0 = time.monotonic()
            subprocess.run(
                launched["argv"], env=env, cwd=launched["cwd"], stdout=subprocess.DEVNULL, start_new_session=True
            )
            replayed.append(time.monotonic() - t0)
            if "collected" in launched and "app" in stamps:
                announced.append(stamps["app"][1] - launched["collected"])
            last_write = collector_last_write(Path(work) / "run")
            if last_write is not None and "exit_seen_wall" in launched:
                tails.append(launched["exit_seen_wall"] - last_write)
            stamps["interpreter"] = [started, stamps["cli imports"][0]]
            stamps["exit"][1] = end
            for phase in PHASES:
                if phase in stamps:
                    spent[phase].append(stamps[phase][1] - stamps[phase][0])
            report = stamps.get("memory report") or stamps.get("reuse analysis")
            overlapped.append(report is not None and "app" in stamps and report[0] < stamps["app"][1])
    print(
        f"{' '.join(command)}: native {statistics.median(native) * 1e3:.0f} ms, "
        f"profile {' '.join(mode)} {statistics.median(total) * 1e3:.0f} ms"
    )
    print(f"  the app alone with the launcher's environment: {statistics.median(replayed) * 1e3:.0f} ms")
    if tails:  # what a memory analysis started at the collector's last write could overlap
        print(f"  from the collector's exit files to the app's exit seen: {statistics.median(tails) * 1e3:.0f} ms")
    if announced:
        print(
            f"  the launcher saw the exit files {statistics.median(announced) * 1e3:.0f} ms before the app's exit "
            f"({len(announced)} of {args.rounds} rounds)"
        )
    else:
        print("  the launcher never saw the exit files before the app's exit (no early analysis)")
    accounted = 0.0
    during_teardown = sum(overlapped) * 2 > len(overlapped)  # most rounds made the report before the exit
    for phase in PHASES:
        if spent[phase]:
            ms = statistics.median(spent[phase]) * 1e3
            if phase in ("memory report", "reuse analysis") and during_teardown:
                print(f"  {phase:<14} {ms:8.1f} ms (started during the app's teardown, in {sum(overlapped)} rounds)")
                continue
            accounted += ms
            print(f"  {phase:<14} {ms:8.1f} ms")
    print(f"  {'(other)':<14} {statistics.median(total) * 1e3 - accounted:8.1f} ms")
    if args.profile_analysis and args.profile_analysis.is_file():
        import pstats

        pstats.Stats(str(args.profile_analysis)).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        sys.exit(main())
