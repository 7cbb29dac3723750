"""The actionability loop on real applications (`actionability.py --suite realapps`, issue #15).

For each fix of realapp_fixes.FIXES: build the app as benchmarks/realapps.py does and a copy of its sources with
the fix applied; run both (the original twice, so that timing lines are told from results) and require the same
output and exit status; profile the original with `reuselens profile --kernel-filter <kernel>` and sum
`metrics.predicted` of the findings the fix answers; measure both with ncu restricted to the kernel; print
predicted vs measured drop per predicted counter, within 5% being the target.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import realapp_fixes
import realapps
from program_steps import (
    SHORT,
    StepError,
    finding_lines,
    ncu_measure,
    predicted_by,
    reuselens_profile,
    run_to_end,
    same_output,
)

TOLERANCE = 0.05


def select(names: str | None) -> list[realapp_fixes.Fix]:
    if not names:
        return list(realapp_fixes.FIXES)
    wanted = names.split(",")
    unknown = sorted(set(wanted) - {f.name for f in realapp_fixes.FIXES})
    if unknown:
        raise SystemExit(
            f"unknown fix(es): {', '.join(unknown)}; known: {', '.join(f.name for f in realapp_fixes.FIXES)}"
        )
    return [f for f in realapp_fixes.FIXES if f.name in wanted]


def _accepts(fix: realapp_fixes.Fix):
    def accept(finding: dict[str, Any], kernel: dict[str, Any]) -> bool:
        if finding.get("pattern") not in fix.patterns:
            return False
        if fix.scope and finding.get("scope") != fix.scope:
            return False
        return bool(finding_lines(kernel, finding) & set(fix.lines))

    return accept


def compare(predicted: dict[str, float], removed: dict[str, float]) -> list[dict[str, Any]]:
    """Per predicted counter: predicted, measured drop, their relative deviation and whether it is within 5%."""
    rows = []
    for metric, guess in sorted(predicted.items()):
        measured = removed.get(metric)
        row: dict[str, Any] = {"metric": metric, "predicted": guess, "measured": measured}
        if measured is None:
            row["note"] = "not measured (outside the ncu metric list)"
        elif guess:
            row["deviation"] = (measured - guess) / guess
            row["within_5pct"] = abs(row["deviation"]) <= TOLERANCE
        else:
            row["within_5pct"] = measured == 0
        rows.append(row)
    return rows


def run_fix(fix: realapp_fixes.Fix, manifest: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    app = next(a for a in manifest["apps"] if a["name"] == fix.app)
    src = Path(args.src).resolve()
    out = Path(args.out) / fix.name
    result: dict[str, Any] = {
        "name": fix.name,
        "suite": "realapps",
        "app": fix.app,
        "kernel": fix.kernel,
        "patterns": list(fix.patterns),
        "lines": list(fix.lines),
        "why": fix.why,
    }
    try:
        original, fixed, result["edit"] = realapp_fixes.build_original_and_fixed(manifest, app, fix, src, out)
        if args.dry_run:
            result["dry_run"] = "built both; nothing run"
            return result
        argv = list(app.get("args", []))
        runs = [
            run_to_end([str(original), *argv], timeout=args.timeout, what=f"run {fix.app}", cwd=original.parent)
            for _ in range(2)
        ]
        after = run_to_end([str(fixed), *argv], timeout=args.timeout, what=f"run {fixed.name}", cwd=fixed.parent)
        same, why = same_output((runs[0].stdout, runs[1].stdout), after.stdout)
        result["output_same"] = same and runs[0].status == after.status == 0
        if not result["output_same"]:
            result["output_difference"] = why or f"exit status {runs[0].status} -> {after.status}"
        result["before"] = ncu_measure(
            args.ncu,
            [str(original), *argv],
            fix.kernel,
            out / "before.ncu.csv",
            timeout=args.timeout,
            cwd=original.parent,
        )
        result["after"] = ncu_measure(
            args.ncu, [str(fixed), *argv], fix.kernel, out / "after.ncu.csv", timeout=args.timeout, cwd=fixed.parent
        )
        result["removed"] = {m: result["before"][m] - result["after"][m] for m in result["before"]}
    except (StepError, realapp_fixes.FixRefused, OSError) as error:
        result["error"] = str(error)
        return result
    if args.no_profile:
        result["predicted_error"] = "not asked for (--no-profile)"
        return result
    try:
        report = reuselens_profile(
            [str(original), *argv], out / "run", timeout=args.timeout, kernel_filter=fix.kernel, cwd=original.parent
        )
        result["findings"], result["predicted"] = predicted_by(report, fix.kernel, _accepts(fix))
        if not result["findings"]:
            result["predicted_error"] = f"ReuseLens reported no {'/'.join(fix.patterns)} finding at lines {fix.lines}"
        result["comparison"] = compare(result["predicted"], result["removed"])
    except (StepError, OSError, ValueError) as error:
        result["predicted_error"] = f"prediction unavailable: {error}"
    return result


def format_fix(result: dict[str, Any]) -> str:
    lines = [
        f"== {result['name']}  ({result['app']}, {result['kernel']}: {', '.join(result['patterns'])} "
        f"at lines {', '.join(map(str, result['lines']))})"
    ]
    if "edit" in result:
        lines.append(f"   edit: {result['edit']}")
    if "error" in result:
        return "\n".join(lines + [f"   FAILED: {result['error']}"])
    if "dry_run" in result:
        return "\n".join(lines + [f"   {result['dry_run']}"])
    lines.append(
        "   output: same" if result["output_same"] else f"   output: DIFFERENT ({result['output_difference']})"
    )
    for finding in result.get("findings", []):
        lines.append(f"   finding {finding['id']}: {finding['message'][:160]}")
    if result.get("predicted_error"):
        lines.append(f"   predicted: {result['predicted_error']}")
    lines.append(f"   {'counter':<24} {'before':>14} {'after':>14} {'removed':>14} {'predicted':>14} {'deviation':>10}")
    predicted = {row["metric"]: row for row in result.get("comparison", [])}
    for metric, before in result["before"].items():
        row = predicted.get(metric, {})
        deviation = (f"{row['deviation']:+.1%}" + ("" if row["within_5pct"] else " !")) if "deviation" in row else ""
        guess = row.get("predicted")
        lines.append(
            f"   {SHORT.get(metric, metric):<24} {before:>14,.0f} {result['after'][metric]:>14,.0f} "
            f"{result['removed'][metric]:>14,.0f} {'' if guess is None else f'{guess:>14,.0f}':>14} {deviation:>10}"
        )
    return "\n".join(lines)


def run_suite(args: argparse.Namespace) -> list[dict[str, Any]]:
    manifest = realapps.load_manifest(Path(args.manifest))
    fixes = select(args.fixes)
    problems = realapps.check_staged(manifest, Path(args.src).resolve())
    apps = {f.app for f in fixes}
    problems = [p for p in problems if p.split(":")[0] in apps or p.split(":")[0] in manifest["sources"]]
    if problems:
        raise SystemExit("actionability: " + "; ".join(problems[:3]))
    results = []
    for fix in fixes:
        result = run_fix(fix, manifest, args)
        results.append(result)
        print(format_fix(result), flush=True)
    return results
