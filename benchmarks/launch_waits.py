#!/usr/bin/env python3
"""Where a collected run's launches waited, summed from its collector.log (docs/collector.md, "Where a short app's
time goes"): per run, the launches' span, what their ends waited for (the kernel, then the last records' drain,
split into the drain thread's taking the end up and its work on the last generation; "-" for logs from before
session 29, which did not split it), the drain thread's own time (resolving PCs, the sinks), the engine queue's
part of the sinks (waiting for space, copying or unpacking into it), how long the engine took after the app's
exit, and from the engine's exit line its consume wall and its workers' CPU per record (all steps; docs/engine.md,
"Determinism and parallelism").

    python3 benchmarks/launch_waits.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead_split import log_marks  # noqa: E402  the launches' first and last line, the engine's catch-up

LAUNCH = re.compile(
    r"^\[\s*[0-9.]+\] launch \d+: (\d+) records .*?drain thread: resolving PCs ([0-9.]+) s, sinks ([0-9.]+) s;"
    r".*end: kernel ([0-9.]+) s, last records ([0-9.]+) s"
    r"(?: \(taken up after (-?[0-9.]+) s, the last generation ([0-9.]+) s\))?"
)
QUEUE = re.compile(r"queue: ([0-9.]+) s waiting for space, ([0-9.]+) s copying")
ENGINE_STEPS = re.compile(r"engine steps, slowest worker / all workers' CPU: (.*?); consume wall ([0-9.]+) s")
STEP_CPU = re.compile(r"[0-9.]+ / ([0-9.]+) s")
FIELDS = ("launches", "records", "kernel", "last_records", "resolve", "sinks", "q_wait", "q_copy")
SPLIT = ("taken_up", "last_generation")  # the last records' drain split (None where the log does not split it)


def summarize(log: Path) -> dict:
    s = dict.fromkeys(FIELDS, 0.0)
    s.update(dict.fromkeys(SPLIT))
    marks = log_marks(log)
    s["first"] = marks.get("first_launch_s")
    s["last"] = marks.get("last_launch_s", 0.0)
    s["engine_after"] = marks.get("engine_finish_s")
    s["consume_wall"] = None
    s["engine_cpu"] = None
    for line in log.read_text(errors="replace").splitlines():
        if m := LAUNCH.match(line):
            s["launches"] += 1
            s["records"] += int(m[1])
            s["resolve"] += float(m[2])
            s["sinks"] += float(m[3])
            s["kernel"] += float(m[4])
            s["last_records"] += float(m[5])
            if m[6] is not None:
                s["taken_up"] = (s["taken_up"] or 0.0) + float(m[6])
                s["last_generation"] = (s["last_generation"] or 0.0) + float(m[7])
        elif m := QUEUE.search(line):
            s["q_wait"] += float(m[1])
            s["q_copy"] += float(m[2])
        elif m := ENGINE_STEPS.search(line):
            s["engine_cpu"] = sum(float(c) for c in STEP_CPU.findall(m[1]))
            s["consume_wall"] = float(m[2])
    return s


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    print(
        f"{'run':28} {'launches':>8} {'M rec':>6} {'span s':>7} {'kernel':>7} {'drain':>7} {'taken':>7} {'last g':>7} "
        f"{'resolve':>7} {'sinks':>7} {'q wait':>7} {'q copy':>7} {'eng after':>9} {'consume':>7} {'CPU ns/rec':>10}"
    )
    for arg in argv:
        log = Path(arg) / "collector.log"
        if not log.is_file():
            print(f"{arg}: no collector.log", file=sys.stderr)
            continue
        s = summarize(log)
        span = (s["last"] - s["first"]) if s["first"] is not None else 0.0
        after = "-" if s["engine_after"] is None else f"{s['engine_after']:.3f}"
        consume = "-" if s["consume_wall"] is None else f"{s['consume_wall']:.3f}"
        taken, last = ("-" if s[k] is None else f"{s[k]:.3f}" for k in SPLIT)
        per_record = "-" if not s["engine_cpu"] or not s["records"] else f"{s['engine_cpu'] / s['records'] * 1e9:.0f}"
        name = "/".join(Path(arg).parts[-2:])
        print(
            f"{name[-28:]:28} {int(s['launches']):8d} {s['records'] / 1e6:6.2f} {span:7.3f} "
            f"{s['kernel']:7.3f} {s['last_records']:7.3f} {taken:>7} {last:>7} {s['resolve']:7.3f} {s['sinks']:7.3f} "
            f"{s['q_wait']:7.3f} {s['q_copy']:7.3f} {after:>9} {consume:>7} {per_record:>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
