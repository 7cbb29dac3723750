#!/usr/bin/env python3
"""Collector overhead: native vs profiled wall time and kernel time per application.

Each app (tests/gpu/apps.cu modes, the demo, the microbenchmarks) runs `--repeat` times natively and under
collector.launcher.profile() (online analysis as configured; no trace files). Apps print kernel_ms (CUDA
events around their kernels). Reported: per-app medians and the ratio, the median and the maximum ratio
over apps, the fixed cost per instrumented launch (many_launches vs trivial) and the start-up cost
(trivial app, profiled minus native).

    python3 benchmarks/overhead.py --build build/gpu [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def apps(build: Path, launches: int) -> list[tuple[str, list[str]]]:
    a = str(build / "apps")
    return [
        ("trivial", [a, "trivial"]),
        ("many_launches", [a, "many_launches", str(launches)]),
        ("vecadd_1M", [a, "vecadd", str(1 << 20)]),
        ("matmul_256", [a, "matmul", "256"]),
        ("stencil_20", [a, "stencil", "20"]),
        ("demo", [str(build / "demo")]),
        ("microbench", [str(build / "microbench")]),
        # last: the one app that did not finish under the collector on the H200 (docs/collector.md)
        ("multistream", [a, "multistream", "8"]),
    ]


def kernel_ms(text: str) -> float | None:
    m = re.search(r"kernel_ms=([0-9.]+)", text)
    return float(m.group(1)) if m else None


def run_native(argv: list[str]) -> tuple[float, float | None]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, kernel_ms(out)


def run_profiled(argv: list[str], work: Path, timeout: float = 120) -> tuple[float, float | None, dict]:
    from reuselens.collector.launcher import profile

    run_dir = Path(tempfile.mkdtemp(dir=work))
    log = run_dir.parent / (run_dir.name + ".out")
    import os

    with open(log, "w") as fh:
        saved = os.dup(1)
        os.dup2(fh.fileno(), 1)
        try:
            t0 = time.perf_counter()
            summary = profile(argv, run_dir=run_dir, timeout=timeout)
            wall = time.perf_counter() - t0
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    if summary.status != "complete":
        raise SystemExit(f"{argv}: profiled run is {summary.status}: {summary.partial_reason}")
    return wall, kernel_ms(log.read_text()), {"launches": summary.launches_instrumented, "records": summary.records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build/gpu"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--launches", type=int, default=500, help="launches of the many_launches app")
    parser.add_argument("--work", default=None)
    parser.add_argument("--apps", help="comma-separated subset of the apps")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="reuselens-overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    chosen = set(args.apps.split(",")) if args.apps else None
    for name, cmd in apps(Path(args.build), args.launches):
        if chosen is not None and name not in chosen:
            continue
        run_native(cmd)  # warm-up (driver, page cache)
        native = [run_native(cmd) for _ in range(args.repeat)]
        try:
            prof = [run_profiled(cmd, work) for _ in range(args.repeat)]
        except SystemExit as failure:
            print(f"{name:<14} FAILED: {failure}", flush=True)
            rows.append({"app": name, "failed": str(failure)})
            continue
        nw = statistics.median(w for w, _ in native)
        pw = statistics.median(w for w, _, _ in prof)
        nk = [k for _, k in native if k is not None]
        pk = [k for _, k, _ in prof if k is not None]
        row = {
            "app": name,
            "native_wall_s": nw,
            "profiled_wall_s": pw,
            "wall_ratio": pw / nw,
            "native_kernel_ms": statistics.median(nk) if nk else None,
            "profiled_kernel_ms": statistics.median(pk) if pk else None,
            "launches": prof[0][2]["launches"],
            "records": prof[0][2]["records"],
        }
        row["kernel_ratio"] = (
            row["profiled_kernel_ms"] / row["native_kernel_ms"] if nk and pk and row["native_kernel_ms"] > 0 else None
        )
        rows.append(row)
        print(
            f"{name:<14} wall {nw:7.3f} -> {pw:7.3f} s ({row['wall_ratio']:5.2f}x)  kernel "
            f"{row['native_kernel_ms'] if nk else float('nan'):9.3f} -> "
            f"{row['profiled_kernel_ms'] if pk else float('nan'):9.3f} ms"
            + (f" ({row['kernel_ratio']:6.1f}x)" if row["kernel_ratio"] else "")
            + f"  {row['launches']} launches, {row['records']} records",
            flush=True,
        )
    ok = [r for r in rows if "failed" not in r]
    ratios = [r["wall_ratio"] for r in ok]
    by = {r["app"]: r for r in ok}
    if not ok:
        return 1
    startup = (by["trivial"]["profiled_wall_s"] - by["trivial"]["native_wall_s"]) if "trivial" in by else float("nan")
    per_launch = (
        ((by["many_launches"]["profiled_wall_s"] - by["many_launches"]["native_wall_s"]) - startup)
        / max(1, args.launches - 1)
        if "many_launches" in by
        else float("nan")
    )
    summary = {
        "median_wall_ratio": statistics.median(ratios),
        "max_wall_ratio": max(ratios),
        "max_app": max(ok, key=lambda r: r["wall_ratio"])["app"],
        "failed": [r["app"] for r in rows if "failed" in r],
        "startup_s": startup,
        "per_launch_ms": per_launch * 1e3,
    }
    print(
        f"\nmedian end-to-end overhead {summary['median_wall_ratio']:.2f}x, max {summary['max_wall_ratio']:.2f}x "
        f"({summary['max_app']}); fixed cost per instrumented launch {summary['per_launch_ms']:.3f} ms; "
        f"start-up (profiled - native, trivial app) {summary['startup_s']:.3f} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"apps": rows, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
