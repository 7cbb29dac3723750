"""Value findings fixed in public applications, measured (issue 19): `python3 benchmarks/value_fixes.py --src
benchmarks/realapps/src --out DIR`.

For each fix of realapp_fixes.VALUE_FIXES: build the app as benchmarks/realapps.py does and a copy with the fix
applied; run the original twice and the fixed one once and require the same output (timing lines aside); profile
both with `reuselens profile --values --kernel-filter <kernel>` and report the finding the fix answers (its share
before, and whether it is still there after); measure the kernel in both builds with ncu (`--rounds` runs each,
alternating; a launch window for kernels launched hundreds of times): global and shared load and store counts,
DRAM bytes written, and the kernel's time (gpu__time_duration, median over the runs). Prints one block per fix and
writes DIR/value_fixes.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import realapp_fixes
from program_steps import (
    METRICS,
    SHORT,
    StepError,
    finding_lines,
    ncu_measure,
    reuselens_profile,
    run_to_end,
    same_output,
)

TIME = "gpu__time_duration.sum"
DRAM_WRITE = "dram__bytes_write.sum"
MEASURED = (*METRICS, DRAM_WRITE, TIME)
# ncu launch windows (skip, count) of the matching kernel's launches, where all of them would take minutes under
# ncu's replay: pb_lu launches lu_kernel2 once per pivot (511 times); the first 40 pivots update the most elements
# (the trailing matrix shrinks), and hold most of its silent stores.
WINDOWS = {"lu_guard_silent_store": (0, 40)}


def profile_findings(
    binary: Path, argv: list[str], fix: realapp_fixes.Fix, run_dir: Path, timeout: float, on_lines: bool
) -> dict:
    """The finding(s) of the fix's pattern, from a value profile of the kernel alone: on the fix's lines
    (`on_lines`, the original), or anywhere in the kernel (the fixed source, whose lines moved)."""
    report = reuselens_profile(
        [str(binary), *argv],
        run_dir,
        timeout=timeout,
        kernel_filter=fix.kernel,
        cwd=binary.parent,
        options=("--values",),
    )
    found = []
    for kernel in report["kernels"]:
        for finding in kernel.get("findings", []):
            if finding["pattern"] in fix.patterns and (not on_lines or finding_lines(kernel, finding) & set(fix.lines)):
                found.append(
                    {"pattern": finding["pattern"], "scope": finding.get("scope"), "message": finding["message"]}
                )
    return {"findings": found}


def measure(fix: realapp_fixes.Fix, binaries: dict[str, Path], argv: list[str], out: Path, args) -> dict:
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in binaries}
    for round_ in range(args.rounds):
        order = list(binaries) if round_ % 2 == 0 else list(reversed(binaries))
        for label in order:
            binary = binaries[label]
            runs[label].append(
                ncu_measure(
                    args.ncu,
                    [str(binary), *argv],
                    fix.kernel,
                    out / f"{label}.{round_}.ncu.csv",
                    timeout=args.timeout,
                    cwd=binary.parent,
                    metrics=MEASURED,
                    window=WINDOWS.get(fix.name),
                )
            )
    result = {}
    for label, samples in runs.items():
        counts = {m: samples[0][m] for m in MEASURED if m != TIME}
        counts[TIME] = statistics.median(s[TIME] for s in samples)
        counts["time_samples_ns"] = [s[TIME] for s in samples]
        result[label] = counts
    return result


def run_fix(fix: realapp_fixes.Fix, manifest: dict[str, Any], args) -> dict[str, Any]:
    app = next(a for a in manifest["apps"] if a["name"] == fix.app)
    src = Path(args.src).resolve()
    out = Path(args.out).resolve() / fix.name
    result: dict[str, Any] = {"name": fix.name, "app": fix.app, "kernel": fix.kernel, "lines": list(fix.lines)}
    result["why"] = fix.why
    try:
        original, fixed, result["edit"] = realapp_fixes.build_original_and_fixed(manifest, app, fix, src, out)
        argv = list(app.get("args", []))
        before = [
            run_to_end([str(original), *argv], timeout=args.timeout, what="run", cwd=original.parent) for _ in (0, 1)
        ]
        after = run_to_end([str(fixed), *argv], timeout=args.timeout, what="run fixed", cwd=fixed.parent)
        same, why = same_output((before[0].stdout, before[1].stdout), after.stdout)
        result["output_same"] = same and before[0].status == after.status == 0
        if not result["output_same"]:
            result["output_difference"] = why or f"exit status {before[0].status} -> {after.status}"
        result["profile_before"] = profile_findings(original, argv, fix, out / "run_before", args.timeout, True)
        result["profile_after"] = profile_findings(fixed, argv, fix, out / "run_after", args.timeout, False)
        result["ncu"] = measure(fix, {"before": original, "after": fixed}, argv, out, args)
        result["ncu_window"] = WINDOWS.get(fix.name)
    except (StepError, realapp_fixes.FixRefused, OSError) as error:
        result["error"] = str(error)
    return result


def print_result(r: dict[str, Any]) -> None:
    print(f"== {r['name']} ({r['app']}, {r['kernel']}, lines {r['lines']})")
    if "error" in r:
        print(f"   error: {r['error']}")
        return
    print(f"   output same: {r['output_same']}" + (f" ({r.get('output_difference')})" if not r["output_same"] else ""))
    for label in ("before", "after"):
        found = r[f"profile_{label}"]["findings"]
        print(
            f"   finding {label}: "
            + ("; ".join(f"{f['pattern']} {f['scope']}: {f['message'][:110]}" for f in found) or "none")
        )
    b, a = r["ncu"]["before"], r["ncu"]["after"]
    window = f" (launches {r['ncu_window'][0]}..+{r['ncu_window'][1]})" if r.get("ncu_window") else ""
    for metric in (*METRICS, DRAM_WRITE):
        if b[metric] or a[metric]:
            print(
                f"   {SHORT.get(metric, metric):24s} {b[metric]:>14,.0f} -> {a[metric]:>14,.0f}  ({a[metric] - b[metric]:+,.0f})"
            )
    tb, ta = b[TIME], a[TIME]
    print(
        f"   kernel time{window}: {tb / 1e3:,.1f} -> {ta / 1e3:,.1f} us (median of {len(b['time_samples_ns'])}; {ta / tb - 1:+.1%})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="staged sources (benchmarks/realapps_stage.py)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--fixes", help="comma-separated subset of realapp_fixes.VALUE_FIXES")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ncu", default="ncu")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    manifest = json.loads((Path(__file__).parent / "realapps" / "manifest.json").read_text())
    wanted = set(args.fixes.split(",")) if args.fixes else None
    fixes = [f for f in realapp_fixes.VALUE_FIXES if wanted is None or f.name in wanted]
    if wanted and len(fixes) != len(wanted):
        parser.error(f"unknown fix among {sorted(wanted)}; known: {[f.name for f in realapp_fixes.VALUE_FIXES]}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results = []
    for fix in fixes:
        results.append(run_fix(fix, manifest, args))
        print_result(results[-1])
    (Path(args.out) / "value_fixes.json").write_text(json.dumps(results, indent=1))
    return 1 if any("error" in r or not r.get("output_same") for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
