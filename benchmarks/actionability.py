#!/usr/bin/env python3
"""Actionability loop (cuVein paper section 5.2): does the guided fix remove exactly the waste the finding named?

For every before/after pair of tests/gpu/patterns/cases.json this script
  1. builds both programs with `nvcc -O3 -lineinfo -arch=<arch>` and runs each once (it must print ok, exit 0);
  2. measures both with `ncu --clock-control none --metrics <global ld/st requests + sectors, shared ld/st
     instructions + wavefronts>` restricted to the case's kernel;
  3. profiles the *before* program with ReuseLens (`reuselens profile`) and sums the `metrics.predicted`
     counters of the case's expected findings: what the finding said would go away;
  4. prints a before / after / removed / predicted table per case and writes everything to OUT/actionability.json.

    python benchmarks/actionability.py --out /tmp/actionability            # all cases
    python benchmarks/actionability.py --out DIR --cases softmax_smem --no-profile

Needs a GPU, nvcc and ncu (ncu needs access to the performance counters: run as root or with
NVreg_RestrictProfilingToAdminUsers=0). Step 3 needs the ReuseLens collector; when it is unavailable the
predicted column says why and the measured columns are still produced. Exit status: 0 when every case was
measured, 1 when a case failed to build, run or measure, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES_FILE = ROOT / "tests" / "gpu" / "patterns" / "cases.json"
METRICS = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
)
SHORT = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global ld requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global ld sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "global st requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global st sectors",
    "smsp__inst_executed_op_shared_ld.sum": "shared ld instructions",
    "smsp__inst_executed_op_shared_st.sum": "shared st instructions",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared ld wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared st wavefronts",
}


class StepError(Exception):
    """One step of one case failed; the message says which and why."""


def load_cases(path: Path, names: list[str] | None) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    if data.get("format") != "reuselens-pattern-cases" or data.get("version") != 1:
        raise SystemExit(f"{path}: not a version-1 reuselens-pattern-cases file")
    cases = [c for c in data["cases"] if c.get("after")]
    if names:
        unknown = set(names) - {c["name"] for c in cases}
        if unknown:
            raise SystemExit(
                f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(c['name'] for c in cases)}"
            )
        cases = [c for c in cases if c["name"] in names]
    return cases


def run(command: list[str], *, timeout: float, what: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise StepError(f"{what}: {command[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise StepError(f"{what}: timed out after {timeout:.0f} s") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise StepError(f"{what}: exit status {done.returncode}: {' | '.join(tail)}")
    return done.stdout


def build(source: Path, binary: Path, args: argparse.Namespace) -> None:
    binary.parent.mkdir(parents=True, exist_ok=True)
    run(
        [args.nvcc, "-O3", "-lineinfo", f"-arch={args.arch}", "-o", str(binary), str(source)],
        timeout=300,
        what=f"nvcc {source.name}",
    )


def parse_ncu_csv(text: str) -> dict[str, float]:
    """Sum each metric over all profiled kernel launches, from `ncu --csv` (details page; the raw page's one
    column per metric is read too)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        raise StepError("ncu printed no CSV rows (no kernel matched, or profiling is not permitted)")
    header, body = rows[0], rows[1:]
    totals: dict[str, float] = {}
    if "Metric Name" in header and "Metric Value" in header:
        name_col, value_col = header.index("Metric Name"), header.index("Metric Value")
        for row in body:
            if len(row) > max(name_col, value_col):
                value = _number(row[value_col])
                if value is not None:
                    totals[row[name_col]] = totals.get(row[name_col], 0.0) + value
        return totals
    for row in body:
        for name, cell in zip(header, row):
            if name in METRICS:
                value = _number(cell)
                if value is not None:  # the units row of the raw page has no numbers
                    totals[name] = totals.get(name, 0.0) + value
    return totals


def _number(cell: str) -> float | None:
    text = cell.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def measure(binary: Path, kernel: str, out_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    # Same invocation as benchmarks/fidelity.py (verified on the H200): CSV of the details page into a log file,
    # so the program's own output never mixes with it.
    log = out_dir / f"{binary.name}.ncu.csv"
    log.unlink(missing_ok=True)
    command = [
        args.ncu,
        "--clock-control",
        "none",
        "--csv",
        "--print-units",
        "base",
        "--metrics",
        ",".join(METRICS),
        "--kernel-name",
        f"regex:{kernel}",
        "--log-file",
        str(log),
        str(binary),
    ]
    run(command, timeout=args.timeout, what=f"ncu {binary.name}")
    if not log.is_file():
        raise StepError(f"ncu {binary.name}: no output in {log}")
    totals = parse_ncu_csv(log.read_text())
    missing = [m for m in METRICS if m not in totals]
    if missing:
        raise StepError(f"ncu {binary.name}: no value for {', '.join(missing)}")
    return totals


def predict(binary: Path, case: dict[str, Any], out_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Profile the before program with ReuseLens; sum metrics.predicted of the case's expected findings."""
    run_dir = out_dir / "runs" / case["name"]
    if run_dir.exists():
        shutil.rmtree(run_dir)
    env = dict(os.environ)  # the installed package; the checkout's reuselens/ would hide its libraries
    run(
        [
            sys.executable,
            "-m",
            "reuselens",
            "profile",
            "--run-dir",
            str(run_dir),
            "--kernel-filter",
            case["kernel"],
            "--",
            str(binary),
        ],
        timeout=args.timeout,
        what="reuselens profile",
        env=env,
    )
    report = json.loads((run_dir / "report.json").read_text())
    predicted: dict[str, float] = {}
    found = []
    for kernel in report.get("kernels", []):
        if not re.search(case["kernel"], f"{kernel.get('mangled', '')} {kernel.get('name', '')}"):
            continue
        for finding in kernel.get("findings", []):
            if finding.get("pattern") in case["patterns"]:
                found.append({"id": finding["id"], "pattern": finding["pattern"], "message": finding["message"]})
                for metric, value in (finding.get("metrics", {}).get("predicted") or {}).items():
                    predicted[metric] = predicted.get(metric, 0.0) + value
    return {"findings": found, "predicted": predicted, "run_dir": str(run_dir)}


def run_case(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    source_dir = CASES_FILE.parent
    out_dir = Path(args.out) / case["name"]
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"name": case["name"], "patterns": case["patterns"], "meter": case["meter"]}
    try:
        binaries = {}
        for side in ("before", "after"):
            binaries[side] = out_dir / f"{case['name']}_{side}"
            build(source_dir / case[side], binaries[side], args)
            result[f"{side}_output"] = run(
                [str(binaries[side])], timeout=args.timeout, what=f"run {binaries[side].name}"
            ).strip()
        for side in ("before", "after"):
            result[side] = measure(binaries[side], case["kernel"], out_dir, args)
        result["removed"] = {m: result["before"][m] - result["after"][m] for m in METRICS}
    except StepError as error:
        result["error"] = str(error)
        return result
    if args.no_profile:
        result["predicted_error"] = "not asked for (--no-profile)"
        return result
    try:
        result.update(predict(binaries["before"], case, out_dir, args))
        if not result["findings"]:
            result["predicted_error"] = f"ReuseLens reported no {'/'.join(case['patterns'])} finding"
    except (StepError, OSError, ValueError) as error:
        result["predicted_error"] = f"prediction unavailable: {error}"
    return result


def format_case(result: dict[str, Any]) -> str:
    lines = [f"== {result['name']}  (expected: {', '.join(result['patterns'])})"]
    if "error" in result:
        return "\n".join(lines + [f"   FAILED: {result['error']}"])
    for finding in result.get("findings", []):
        lines.append(f"   finding {finding['id']}: {finding['message']}")
    if result.get("predicted_error"):
        lines.append(f"   predicted: {result['predicted_error']}")
    predicted = result.get("predicted") or {}
    lines.append(f"   {'metric':<24} {'before':>14} {'after':>14} {'removed':>14} {'predicted':>14}  meter")
    for metric in METRICS:
        guess = predicted.get(metric)
        lines.append(
            f"   {SHORT[metric]:<24} {result['before'][metric]:>14,.0f} {result['after'][metric]:>14,.0f} "
            f"{result['removed'][metric]:>14,.0f} {'' if guess is None else f'{guess:>14,.0f}':>14}"
            f"  {'*' if metric in result['meter'] else ''}"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for binaries, ncu CSVs, runs and actionability.json")
    parser.add_argument("--cases", help="comma-separated case names (default: all with a fixed version)")
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch (default sm_90)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc", help="nvcc executable")
    parser.add_argument("--ncu", default=shutil.which("ncu") or "ncu", help="Nsight Compute CLI executable")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per program run (default 600)")
    parser.add_argument("--no-profile", action="store_true", help="skip the ReuseLens prediction")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = load_cases(CASES_FILE, args.cases.split(",") if args.cases else None)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results = []
    for case in cases:
        started = time.time()
        result = run_case(case, args)
        result["seconds"] = round(time.time() - started, 1)
        results.append(result)
        print(format_case(result), flush=True)
    document = {
        "format": "reuselens-actionability",
        "version": 1,
        "arch": args.arch,
        "metrics": list(METRICS),
        "cases": results,
    }
    target = Path(args.out) / "actionability.json"
    target.write_text(json.dumps(document, indent=2) + "\n")
    print(f"written {target}")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
