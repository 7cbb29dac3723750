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
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES_FILE = ROOT / "tests" / "gpu" / "patterns" / "cases.json"

sys.path.insert(0, str(HERE))
import realapp_actionability  # noqa: E402
from program_steps import (  # noqa: E402  (the shared steps live next to this script)
    METRICS,
    SHORT,
    StepError,
    ncu_measure,
    nvcc_single_file,
    parse_ncu_csv,  # noqa: F401  (part of this script's interface: tests parse with it)
    predicted_by,
    reuselens_profile,
    run,
)
from program_steps import build as build_with  # noqa: E402


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


def build(source: Path, binary: Path, args: argparse.Namespace) -> None:
    build_with(nvcc_single_file(args.nvcc, args.arch, source, binary), what=f"nvcc {source.name}")


def measure(binary: Path, kernel: str, out_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    return ncu_measure(args.ncu, [str(binary)], kernel, out_dir / f"{binary.name}.ncu.csv", timeout=args.timeout)


def predict(binary: Path, case: dict[str, Any], out_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Profile the before program with ReuseLens; sum metrics.predicted of the case's expected findings."""
    run_dir = out_dir / "runs" / case["name"]
    report = reuselens_profile([str(binary)], run_dir, timeout=args.timeout, kernel_filter=case["kernel"])
    found, predicted = predicted_by(
        report, case["kernel"], lambda finding, _kernel: finding.get("pattern") in case["patterns"]
    )
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
            if args.dry_run:
                continue
            result[f"{side}_output"] = run(
                [str(binaries[side])], timeout=args.timeout, what=f"run {binaries[side].name}"
            ).strip()
        if args.dry_run:
            result["dry_run"] = "built both; nothing run"
            return result
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
    if "dry_run" in result:
        return "\n".join(lines + [f"   {result['dry_run']}"])
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
    parser.add_argument(
        "--suite",
        choices=("patterns", "realapps"),
        default="patterns",
        help="the before/after pairs of tests/gpu/patterns (default) or the fixes of realapp_fixes.py",
    )
    parser.add_argument("--fixes", help="comma-separated real-application fixes (default: all; --suite realapps)")
    parser.add_argument("--src", default=str(HERE / "realapps" / "src"), help="staged real-application sources")
    parser.add_argument("--manifest", default=str(HERE / "realapps" / "manifest.json"))
    parser.add_argument("--dry-run", action="store_true", help="build (and for real apps apply the fixes); run nothing")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.suite == "realapps":
        results = realapp_actionability.run_suite(args)
    else:
        cases = load_cases(CASES_FILE, args.cases.split(",") if args.cases else None)
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
        "suite": args.suite,
        "arch": args.arch,
        "metrics": list(METRICS),
        "cases": results,
    }
    target = Path(args.out) / "actionability.json"
    target.write_text(json.dumps(document, indent=2) + "\n")
    print(f"written {target}")
    return 1 if any("error" in r or r.get("output_same") is False for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
