#!/usr/bin/env python3
"""A PyTorch training loop natively and under ReuseLens (issue 14's target: a loop of at least 40 steps within 3x
its native time; issue 18's modes too), the same way realapps.py measures the compiled suite.

The loop is benchmarks/pytorch_memory_step.py (a two-layer MLP, SGD, batch 256; cuBLAS GEMMs included) with
--steps steps. Each round runs, in turn: the loop alone and under each requested mode (collect: `reuselens
profile --no-analyze`, full: `reuselens profile`, objects: `--object-level`, intra: `--intra-object`), so drift
of the shared host spreads over the modes. Printed per mode: the median wall time, its ratio to native, and the
launches and warp records of the last run. --alloc-conf sets PYTORCH_CUDA_ALLOC_CONF for every run (for example
backend:cudaMallocAsync, under which each tensor is an allocation the memory analysis sees).

    python3 benchmarks/pytorch_overhead.py --out DIR [--steps 40] [--rounds 2] [--modes native,collect,full]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import realapps  # noqa: E402  (timed runs, the facts of a run directory, the reuselens command)

MODES = ("native", "collect", "full", "objects", "intra")
FLAGS = {"collect": ["--no-analyze"], "full": [], "objects": ["--object-level"], "intra": ["--intra-object"]}


def command(mode: str, loop: list[str], run_dir: Path, reuselens: list[str], timeout: float) -> list[str]:
    if mode == "native":
        return loop
    return [*reuselens, "profile", *FLAGS[mode], "--timeout", str(timeout), "--run-dir", str(run_dir), "--", *loop]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="run directories, logs and pytorch_overhead.json")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default="native,collect,full", help=f"comma-separated subset of {','.join(MODES)}")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one run may take")
    parser.add_argument("--alloc-conf", help="PYTORCH_CUDA_ALLOC_CONF for every run")
    parser.add_argument("--reuselens", help="command that runs the CLI (default: reuselens on PATH)")
    parser.add_argument(
        "--script", default=str(HERE / "pytorch_memory_step.py"), help="the loop: a Python script given the steps"
    )
    args = parser.parse_args(argv)
    modes = [m for m in MODES if m in args.modes.split(",")]
    if not modes or set(args.modes.split(",")) - set(MODES) or args.steps < 1 or args.rounds < 1:
        parser.error(f"--modes: a comma-separated subset of {','.join(MODES)}; --steps and --rounds at least 1")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if args.alloc_conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = args.alloc_conf
    loop = [sys.executable, args.script, str(args.steps)]
    reuselens = realapps.reuselens_command(args.reuselens)
    steps: dict[str, list[dict]] = {m: [] for m in modes}
    for rnd in range(args.rounds):
        for mode in modes:
            run_dir = out / "runs" / f"r{rnd}-{mode}"
            with open(out / f"r{rnd}-{mode}.log", "w") as log:
                done = realapps.timed_run(
                    command(mode, loop, run_dir, reuselens, args.timeout), log, out, 2 * args.timeout + 60, env
                )
            step: dict = (
                {"error": "no exit within the step timeout"} if done is None else {"rc": done[0], "wall_s": done[1]}
            )
            if done is not None and done[0] != 0:
                step["error"] = f"exit {done[0]} (log: {out / f'r{rnd}-{mode}.log'})"
            if mode != "native" and done is not None:
                step.update(realapps.run_facts(run_dir))
            steps[mode].append(step)
            print(f"round {rnd} {mode:<8} " + (step.get("error") or f"{step['wall_s']:8.3f} s"), flush=True)
    native_walls = [s["wall_s"] for s in steps.get("native", []) if "error" not in s]
    native = statistics.median(native_walls) if native_walls else None
    summary = {}
    print(f"\nPyTorch loop, {args.steps} steps{', ' + args.alloc_conf if args.alloc_conf else ''}:")
    for mode in modes:
        walls = [s["wall_s"] for s in steps[mode] if "error" not in s]
        if not walls:
            print(f"{mode:>8}: failed ({steps[mode][-1].get('error')})")
            continue
        wall = statistics.median(walls)
        last = steps[mode][-1]
        summary[mode] = {"wall_s": wall, "ratio": wall / native if native else None}
        ratio = f"{wall / native:6.2f}x" if native and mode != "native" else "       "
        facts = f"  {last.get('launches', 0)} launches, {last.get('records', 0):,} records" if mode != "native" else ""
        print(f"{mode:>8}: {wall:8.3f} s {ratio}{facts}")
    (out / "pytorch_overhead.json").write_text(
        json.dumps(
            {
                "format": "reuselens-pytorch-overhead",
                "version": 1,
                "steps": args.steps,
                "modes": steps,
                "summary": summary,
            },
            indent=1,
        )
    )
    return 0 if all(summary.get(m) for m in modes) else 2


if __name__ == "__main__":
    sys.exit(main())
