#!/usr/bin/env python3
"""Where a profiled app's threads spend their time: on a core, or waiting in the run queue for one.

Runs a command (`reuselens profile ... -- ./app`, or the app alone) and, every --interval seconds until it ends,
reads the scheduler's figures of every thread of every process it started (Linux: /proc/PID/task/TID/schedstat:
nanoseconds on a core, nanoseconds runnable but waiting for a core, timeslices; and the thread's name, `comm`).
A thread's last sample stands for its life (a thread that ends between two samples loses at most one interval).
Printed per thread name (threads of one name together, digits at the end dropped: rl-engine-3 -> rl-engine-):
threads, seconds on a core, seconds waiting for one, and the share of its runnable time spent waiting.

Why: the engine's step times in collector.log are each worker's wall seconds in the step (steady_clock), so a
worker put off its core by the app, the drain, the copy threads or another tenant counts as working; on the
16-core GPU host twelve workers' summed step seconds per record were twice one worker's (docs/engine.md, "Why
twelve workers cost twice one worker's CPU per record"). The run-queue wait says how much of that is waiting.
Threads are told apart by name where the collector names them (rl-engine-N, rl-copy-N, rl-drain, rl-queue);
unnamed threads carry their process's name.

    python3 benchmarks/thread_times.py [--interval 0.05] [--json FILE] -- reuselens profile --no-analyze -- ./app
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

PROC = Path("/proc")


def read_schedstat(task: Path) -> tuple[int, int, int] | None:
    """(ns on a core, ns waiting in the run queue, timeslices) of one thread, or None once it is gone."""
    try:
        on_core, waiting, slices = (task / "schedstat").read_text().split()[:3]
        return int(on_core), int(waiting), int(slices)
    except (OSError, ValueError):
        return None


def read_comm(task: Path) -> str:
    try:
        return (task / "comm").read_text().strip()
    except OSError:
        return "?"


def parent_of(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after its last ')'
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def descendants(root: int) -> list[int]:
    """root and every process below it, as /proc lists them now."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            parent = parent_of(int(entry.name))
            if parent is not None:
                children[parent].append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def sample(root: int, seen: dict[tuple[int, int], dict]) -> None:
    """Every thread of root's process tree: its latest figures into `seen`, keyed by (pid, tid)."""
    for pid in descendants(root):
        try:
            tasks = list((PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            figures = read_schedstat(task)
            if figures is None:
                continue
            entry = seen.setdefault((pid, int(task.name)), {"pid": pid, "tid": int(task.name), "name": "?"})
            entry["on_core_ns"], entry["waiting_ns"], entry["slices"] = figures
            name = read_comm(task)  # every time: a thread names itself once it runs, maybe after the first sample
            if name != "?":
                entry["name"] = name


def group_name(name: str) -> str:
    """rl-engine-11 -> rl-engine-: the threads of one pool together."""
    return re.sub(r"\d+$", "", name)


def summarize(threads: list[dict]) -> list[dict]:
    groups: dict[str, dict] = {}
    for t in threads:
        g = groups.setdefault(
            group_name(t["name"]),
            {"name": group_name(t["name"]), "threads": 0, "on_core_s": 0.0, "waiting_s": 0.0, "slices": 0},
        )
        g["threads"] += 1
        g["on_core_s"] += t["on_core_ns"] / 1e9
        g["waiting_s"] += t["waiting_ns"] / 1e9
        g["slices"] += t["slices"]
    return sorted(groups.values(), key=lambda g: -g["on_core_s"])


def run(command: list[str], interval: float) -> tuple[int, float, list[dict]]:
    seen: dict[tuple[int, int], dict] = {}
    t0 = time.monotonic()
    proc = subprocess.Popen(command)
    while proc.poll() is None:
        sample(proc.pid, seen)
        time.sleep(interval)
    return proc.returncode, time.monotonic() - t0, list(seen.values())


def print_table(wall: float, groups: list[dict]) -> None:
    print(f"whole run {wall:.3f} s; per thread name: threads, s on a core, s waiting for a core, waiting share")
    for g in groups:
        runnable = g["on_core_s"] + g["waiting_s"]
        share = g["waiting_s"] / runnable if runnable else 0.0
        print(f"  {g['name']:<18} {g['threads']:4d} {g['on_core_s']:9.3f} {g['waiting_s']:9.3f} {share:8.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between samples (default 0.05)")
    parser.add_argument("--json", type=Path, help="also write every thread's figures here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.interval <= 0:
        parser.error("need -- COMMAND [ARGS] and --interval > 0")
    if not (PROC / "self" / "schedstat").exists():
        print("thread_times.py: this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO)", file=sys.stderr)
        return 2
    returncode, wall, threads = run(command, args.interval)
    groups = summarize(threads)
    print_table(wall, groups)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"command": command, "wall_s": wall, "returncode": returncode, "groups": groups, "threads": threads},
                indent=1,
            )
        )
    if returncode != 0:
        print(f"thread_times.py: the command exited with status {returncode}", file=sys.stderr)
    return 0 if returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
