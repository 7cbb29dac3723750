#!/usr/bin/env python3
"""How long an app takes to go after its last line of output, natively and under the collector.

launcher_phases.py showed (session 42, call 1) that under `reuselens profile --no-analyze` a short app still runs
120-139 ms after the tool library has written its exit files. This script tells what that costs against the app's
own teardown, and which part of the collector a short app's extra time comes from (session 42, call 2: the app's
own exit is 90-100 ms of it; benchmarks/results/s42/README.md). Each round runs the app, interleaved, as:

* native: the app alone;
* collect: `reuselens profile --no-analyze`;
* no-engine: the same with the online engine off (REUSELENS_ONLINE_ANALYSIS=0);
* attach: the same with a kernel filter no kernel matches (the Sanitizer attached, nothing patched or recorded);
* passive: the app alone with the tool library injected as the launcher injects it (LD_PRELOAD and
  CUDA_INJECTION64_PATH) but no run directory, so that it stays passive: the Sanitizer's library loaded, no
  callbacks subscribed (--library names the tool library);
* any of these with variables of the collector set, e.g. `collect:REUSELENS_ENGINE_QUEUE_BYTES=268435456`.

The app's output goes to a pseudo-terminal, so its C library writes each line when it is printed, and each line is
stamped as it arrives. Printed per mode, medians over the rounds, in ms: spawn to the first line, spawn to the last
line, the last line to the exit seen (for the collector modes, the launcher's exit: its own work after the app's
is a few ms under --no-analyze), the tool library's last file before or after the last line, the whole run, and
the peak resident memory and minor page faults of the app and the launcher (wait4's accounting: what the kernel
frees when the app exits, and the pages first touched).

    python3 benchmarks/teardown.py [--rounds 3] [--reuselens reuselens] [--modes native,collect,...] -- ./app args
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from launcher_phases import collector_last_write

MODES = ("native", "collect", "no-engine", "attach", "passive")
NO_KERNEL = "^reuselens_teardown_matches_no_kernel$"


def parse_mode(text: str) -> tuple[str, dict[str, str]]:
    """MODE[:VAR=VALUE...] -> (MODE, {VAR: VALUE}); ValueError for an unknown mode or a setting without '='."""
    mode, *settings = text.split(":")
    if mode not in MODES or not all("=" in s for s in settings):
        raise ValueError(f"{text!r}: expected one of {', '.join(MODES)}, then :VAR=VALUE settings")
    return mode, dict(s.split("=", 1) for s in settings)


def _command(
    text: str, reuselens: str, run_dir: Path, app: list[str], library: str | None = None
) -> tuple[list[str], dict[str, str]]:
    mode, settings = parse_mode(text)
    env = dict(os.environ, **settings)
    if mode == "native":
        return app, env
    if mode == "passive":
        if not library:
            raise ValueError("the passive mode needs --library (the tool library)")
        env.pop("REUSELENS_RUN_DIR", None)
        preload = env.get("LD_PRELOAD")
        env.update(LD_PRELOAD=f"{library}:{preload}" if preload else library, CUDA_INJECTION64_PATH=library)
        return app, env
    command = [reuselens, "profile", "--no-analyze", "--run-dir", str(run_dir)]
    if mode == "no-engine":
        env["REUSELENS_ONLINE_ANALYSIS"] = "0"
    if mode == "attach":
        command += ["--kernel-filter", NO_KERNEL]
    return [*command, "--", *app], env


def run_once(command: list[str], env: dict[str, str], timeout: float) -> dict[str, float | None]:
    """One run with its stdout on a pseudo-terminal: the times of its first and last lines and of its exit, in s
    from the spawn, and the wall clock of the spawn (for the run directory's file times)."""
    master, slave = pty.openpty()
    wall0, t0 = time.time(), time.monotonic()
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    first = last = None
    pending = b""
    deadline = t0 + timeout
    while True:
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            proc.kill()
            proc.wait()
            os.close(master)
            raise TimeoutError(f"{command[0]}: no end after {timeout} s")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            chunk = b""
        if not chunk:
            break
        now = time.monotonic() - t0
        pending += chunk
        if b"\n" in pending:
            first = now if first is None else first
            last = now
            pending = pending[pending.rindex(b"\n") + 1 :]
    _, status, usage = os.wait4(proc.pid, 0)  # the app's (and the launcher's) peak RSS and page faults with it
    exited = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    os.close(master)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}...: exit status {proc.returncode}")
    return {
        "first": first,
        "last": last,
        "exit": exited,
        "wall0": wall0,
        "maxrss_mib": usage.ru_maxrss / 1024,
        "minor_faults": usage.ru_minflt,
    }


def measure(
    app: list[str], modes: list[str], rounds: int, reuselens: str, timeout: float, library: str | None = None
) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="teardown-") as tmp:
        for r in range(rounds):
            for mode in modes:
                run_dir = Path(tmp) / f"{mode}-{r}"
                command, env = _command(mode, reuselens, run_dir, app, library)
                got = run_once(command, env, timeout)
                written, wall0 = collector_last_write(run_dir), got.pop("wall0")
                got["files"] = None if written is None else written - wall0
                results[mode].append(got)
    return results


def _median_ms(values: list[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{statistics.median(present) * 1000:8.1f}" if present else "       -"


def print_table(app: list[str], results: dict[str, list[dict]]) -> None:
    print(f"{' '.join(app)}: medians over {len(next(iter(results.values())))} rounds, ms")
    width = max(10, *(len(mode) for mode in results))  # a mode with settings names them all
    print(
        f"  {'mode':<{width}} {'1st line':>8} {'last line':>9} {'then exit':>9} {'files-last':>10} {'whole':>8}"
        f" {'peak RSS MiB':>12} {'minor faults':>12}"
    )
    for mode, runs in results.items():
        first = _median_ms([r["first"] for r in runs])
        last = _median_ms([r["last"] for r in runs])
        tail = _median_ms([r["exit"] - r["last"] if r["last"] is not None else None for r in runs])
        files = _median_ms(
            [r["files"] - r["last"] if r["files"] is not None and r["last"] is not None else None for r in runs]
        )
        whole = _median_ms([r["exit"] for r in runs])
        rss = statistics.median(r["maxrss_mib"] for r in runs)
        faults = statistics.median(r["minor_faults"] for r in runs)
        print(f"  {mode:<{width}} {first} {last:>9} {tail:>9} {files:>10} {whole} {rss:12.0f} {faults:12,.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reuselens", default="reuselens", help="the console script (default: on PATH)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take")
    parser.add_argument("--library", help="the tool library, for the passive mode")
    parser.add_argument("--json", type=Path, help="also write every run's times here")
    parser.add_argument("app", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    app = args.app[1:] if args.app[:1] == ["--"] else args.app
    modes = args.modes.split(",")
    try:
        names = [parse_mode(m)[0] for m in modes]
    except ValueError:
        names = []
    if not app or args.rounds < 1 or not names:
        parser.error("need -- ./app [args], --rounds >= 1 and modes among " + ", ".join(MODES) + " (MODE:VAR=VALUE...)")
    if "passive" in names and not args.library:
        parser.error("the passive mode needs --library (the tool library)")
    results = measure(app, modes, args.rounds, args.reuselens, args.timeout, args.library)
    print_table(app, results)
    if args.json:
        args.json.write_text(json.dumps({"app": app, "runs": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
