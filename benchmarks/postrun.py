"""Post-run cost: what `reuselens analyze RUN` costs on recorded runs, and where the time goes.

`reuselens profile` pays this after the application exits (the engine already ran online; analysis.json is in
the run): it is the time between the app's exit and the summary, and, in the editor, between the app's exit and
the diagnostics. Each measurement runs `reuselens analyze` in a fresh process (so imports count, as they do after
a real run) on a copy of the run, and reports the median of --repeat runs:

* total: the whole process, interpreter start-up included (what a shell sees);
* startup: process start to the analyze command's first line (interpreter, CLI modules, argument parsing);
  `reuselens profile` pays it before the app starts, so it is not part of the post-run cost;
  each run is measured twice: `analyze` as `reuselens analyze` runs, and `profile` with the analysis modules
  imported during start-up, as `reuselens profile` imports them while the application runs;
* post-run: the analyze command itself (total - startup - exit), split into exclusive phases:
  imports (modules imported lazily after start-up), read (analysis.json or trace replay, names), graph
  (PCDepGraph metrics), patterns, lines (PC -> source line mapping), sass (nvdisasm; 0 where the analysis does
  not disassemble), write (report.json), summary (printing it), other (the rest: argument checks, run.json).

A phase's time excludes the phases and imports nested in it, so the phases add up to post-run.

Usage: python benchmarks/postrun.py [--repeat 5] [--out benchmarks/results/postrun-<date>.txt] [RUN ...]
(default runs: tests/data/runs/*, reuselens/demo/run, tests/data/library_runs/pytorch).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PHASES = ("imports", "read", "graph", "patterns", "lines", "sass", "write", "summary", "other")
# (module, attribute) -> phase: wrapped as soon as the module is imported, before anyone binds the attribute.
TIMED = {
    ("reuselens.cli.analyze", "run"): "other",
    ("reuselens.analyzer.pipeline", "engine_aggregates"): "read",
    ("reuselens.analyzer.pipeline", "_attach_names"): "read",
    ("reuselens.analyzer.graph", "annotate_kernel"): "graph",
    ("reuselens.analyzer.patterns.registry", "find_report_findings"): "patterns",
    ("reuselens.analyzer.pipeline", "_attach_sources"): "lines",
    ("reuselens.analyzer.lineinfo.mapper", "SourceMapper.prepare_sass"): "sass",
    ("reuselens.analyzer.lineinfo.mapper", "SourceMapper.sass"): "sass",
    ("reuselens.analyzer.report", "save"): "write",
    ("reuselens.cli.summary", "print_summary"): "summary",
}


def default_runs() -> list[Path]:
    runs = sorted(p for p in (REPO / "tests" / "data" / "runs").iterdir() if (p / "run.json").is_file())
    return runs + [REPO / "reuselens" / "demo" / "run", REPO / "tests" / "data" / "library_runs" / "pytorch"]


# -- child: one analysis, timed by phase ----------------------------------------------------------------------
class PhaseClock:
    """Exclusive time per phase: entering a phase charges the time so far to the phase it interrupts."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(PHASES, 0.0)
        self.stack: list[str] = []
        self.mark = time.perf_counter()

    def enter(self, phase: str) -> None:
        self._charge()
        self.stack.append(phase)

    def leave(self) -> None:
        self._charge()
        self.stack.pop()

    def _charge(self) -> None:
        now = time.perf_counter()
        if self.stack:
            self.spent[self.stack[-1]] += now - self.mark
        self.mark = now


def _timed(clock: PhaseClock, phase: str, function):
    def wrapper(*args, **kwargs):
        clock.enter(phase)
        try:
            return function(*args, **kwargs)
        finally:
            clock.leave()

    wrapper.__wrapped__ = function
    return wrapper


def _install(clock: PhaseClock) -> None:
    """Time every import (as `imports`) and wrap the TIMED functions the moment their module is loaded."""
    import builtins
    import importlib

    pending = dict(TIMED)

    def wrap_loaded() -> None:
        # Only what a module already holds (its __dict__): a lazy package's __getattr__ (analyzer.patterns) would
        # import from inside this hook, which runs after every import, without end.
        for (module_name, attribute), phase in list(pending.items()):
            module = sys.modules.get(module_name)
            owner_name, _, name = attribute.rpartition(".")
            owner = vars(module).get(owner_name) if module is not None and owner_name else module
            if owner is None or name not in vars(owner):
                continue
            setattr(owner, name, _timed(clock, phase, getattr(owner, name)))
            del pending[(module_name, attribute)]

    def timed_import(real):
        def do_import(*args, **kwargs):
            clock.enter("imports")
            try:
                return real(*args, **kwargs)
            finally:
                clock.leave()
                if pending:
                    wrap_loaded()

        return do_import

    builtins.__import__ = timed_import(builtins.__import__)
    importlib.import_module = timed_import(importlib.import_module)


def child(run_dir: str, preload: bool) -> None:
    started = time.perf_counter()
    clock = PhaseClock()
    _install(clock)
    import io

    from reuselens.cli.main import main

    if preload:  # what `reuselens profile` does while the application runs
        from reuselens.analyzer import pipeline

        getattr(pipeline, "import_analysis_modules", lambda: None)()

    analyze_started: list[float] = []
    real_enter = clock.enter

    def enter(phase: str) -> None:  # the analyze command's first line ends start-up
        if not analyze_started and phase == "other":
            analyze_started.append(time.perf_counter())
            clock.spent = dict.fromkeys(PHASES, 0.0)
        real_enter(phase)

    clock.enter = enter
    out, sys.stdout = sys.stdout, io.StringIO()
    try:
        code = main(["analyze", run_dir])
    finally:
        sys.stdout = out
    ended = time.perf_counter()
    print(
        json.dumps(
            {
                "code": code,
                "startup": analyze_started[0] - started if analyze_started else None,
                "post_run": ended - analyze_started[0] if analyze_started else None,
                **clock.spent,
            }
        )
    )


# -- parent: fresh processes, medians, table ------------------------------------------------------------------
def measure(run: Path, repeat: int, preload: bool) -> dict[str, float]:
    samples: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="reuselens-postrun-") as tmp:
        for _ in range(repeat):
            copy = Path(tmp) / run.name
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(run, copy, ignore=shutil.ignore_patterns("report.json", "sass.json"))
            begin = time.perf_counter()
            argv = [sys.executable, __file__, "--child", str(copy), *(["--preload"] if preload else [])]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            total = time.perf_counter() - begin
            if proc.returncode != 0 or not proc.stdout.strip():
                raise SystemExit(f"{run}: analysis failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
            sample = json.loads(proc.stdout.strip().splitlines()[-1])
            if sample["code"] != 0 or sample["post_run"] is None:
                raise SystemExit(f"{run}: reuselens analyze exited {sample['code']}")
            sample["total"] = total
            samples.append(sample)
    keys = ("total", "startup", "post_run", *PHASES)
    return {key: statistics.median(s[key] for s in samples) for key in keys}


def table(rows: list[tuple[str, dict[str, float]]]) -> str:
    header = f"{'run':<22}{'total':>7}{'startup':>8}{'post-run':>9}" + "".join(f"{p:>9}" for p in PHASES)
    lines = [header, "-" * len(header)]
    for name, m in rows:
        lines.append(
            f"{name:<22}{m['total']:>7.3f}{m['startup']:>8.3f}{m['post_run']:>9.3f}"
            + "".join(f"{m[p]:>9.3f}" for p in PHASES)
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, metavar="RUN")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per run; the median is shown")
    parser.add_argument("--out", type=Path, help="also write the table here (e.g. under benchmarks/results/)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--preload", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.preload)
        return 0
    runs = args.runs or default_runs()
    rows = []
    for run in runs:
        for preload, mode in ((False, "analyze"), (True, "profile")):
            rows.append((f"{run.name} {mode}", measure(run, args.repeat, preload)))
        print(f"measured {run}", file=sys.stderr)
    text = (
        f"reuselens analyze, fresh process, median of {args.repeat} (seconds); {time.strftime('%Y-%m-%d %H:%M')}, "
        f"python {sys.version.split()[0]}, nvdisasm {'found' if _nvdisasm() else 'missing'}\n" + table(rows)
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def _nvdisasm() -> str | None:
    from reuselens.analyzer.lineinfo.sass import find_nvdisasm

    return find_nvdisasm()


if __name__ == "__main__":
    sys.exit(main())
