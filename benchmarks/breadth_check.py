#!/usr/bin/env python3
"""What went wrong, app by app, when `reuselens profile` ran apps it had never seen (the breadth set).

benchmarks/realapps.py runs each app of a manifest natively and under the profiler (`--modes native,full`) and keeps
the last round's run directories and logs; this script reads them back and prints, per app, everything a user
would call a defect: the app failing natively (then it exercised nothing) or exiting differently under the
profiler, its own verdict lines (PASSED, Test failed, Result = ..., GPU sum = ...) differing from the native run's,
a run marked partial, with no kernel launch or none instrumented (every app of the set launches kernels; kernels
launched through CUDA graphs are not instrumented yet, which is named when their nodes outnumber the instrumented
launches), errors the launcher recorded in run.json, error and
warning lines of collector.log, no report, findings that sit on no source line (benchmarks/answer_key.py's rule),
and the run's cost against native. Timing lines differ from run to run and are not compared.

    python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json --src benchmarks/realapps/breadth-src \
        --out OUT --modes native,full --rounds 1
    python3 benchmarks/breadth_check.py OUT [--json OUT/breadth.json]

Exit status 0 when no app shows a defect, 1 otherwise (the table says which), 2 for an unreadable OUT.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_key import finding_places  # noqa: E402

# An app's own verdict on its results: the lines to compare between the native and the profiled run.
# (Checked on session 45's breadth logs: 23 of the 26 apps print such a line, and none of the launcher's own.)
VERDICT = re.compile(
    r"\b(pass(ed)?|fail(ed|ure)?|error|mismatch|incorrect|correct|verif\w*|valid\w*|succe\w*|ok|result|sum|misses)\b",
    re.I,
)
# Figures that differ from run to run on the same input: times, rates, addresses; blanked before comparing.
VOLATILE = re.compile(
    r"(\d+(\.\d+)?(e[-+]?\d+)?\s*(ms|msec|s|sec|seconds|us|usec|ns|GB/s|MB/s|GFlop/s|Gflops|GFLOPS|MOptions/s|"
    r"Mkeys/s|MElements/s|cycles|clocks)\b)|0x[0-9a-f]+|time[^,;]*",
    re.I,
)
# The launcher's own lines in the profiled run's log: its messages while the app runs (skipped), and the start of
# what it prints after the app's exit (the summary and findings table, whose wording must not count as the app's
# verdict; its "warning:" and "note:" lines come there too, so an app's own lines of that shape still count).
LAUNCHER_LINE = re.compile(r"^reuselens\b")
LAUNCHER_END = re.compile(r"^(run written to |\d+ kernel configuration\(s\) analysed)")
COLLECTOR_PROBLEM = re.compile(r"\] (error|warning)\b|incomplete|dropped|lost|overflow", re.I)


def verdict_lines(log: Path) -> list[str]:
    """The app's verdict lines, volatile figures blanked, in order."""
    if not log.is_file():
        return []
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        if LAUNCHER_END.match(line):
            break
        if LAUNCHER_LINE.match(line) or not VERDICT.search(line):
            continue
        lines.append(VOLATILE.sub("#", line).strip())
    return lines


def report_facts(run_dir: Path) -> dict:
    report = run_dir / "report.json"
    if not report.is_file():
        return {"report": False}
    kernels = json.loads(report.read_text()).get("kernels", [])
    findings = [(k, f) for k in kernels for f in k.get("findings", [])]
    return {
        "report": True,
        "kernels": len(kernels),
        "findings": len(findings),
        "warnings": sum(1 for _, f in findings if f.get("severity") == "warning"),
        "unplaced": sum(1 for k, f in findings if not finding_places(k, f)),
        "patterns": sorted({str(f.get("pattern")) for _, f in findings}),
    }


def check_app(out: Path, row: dict, steps: dict) -> dict:
    """One app's facts and the defects among them."""
    name = row["app"]
    facts: dict = {"app": name, "defects": []}
    defects = facts["defects"]
    if "native_s" not in row:  # a build failure row: nothing ran
        facts["defects"].append(f"not run: {row.get('failed')}")
        return facts
    native = (steps.get("native") or [{}])[-1]
    full = (steps.get("full") or [{}])[-1]
    facts.update(native_s=row.get("native_s"), full_s=row.get("full_s"), ratio=row.get("full_ratio"))
    facts.update(native_rc=native.get("rc"), full_rc=full.get("rc"), records=row.get("records"))
    if "rc" not in native:
        defects.append(f"native run: {native.get('error', 'no result')}")
        return facts
    if native["rc"] != 0:
        defects.append(f"native run exits {native['rc']}: the app exercised nothing to compare")
    if "rc" not in full:
        defects.append(f"profile: {full.get('error', 'no result')}")
    elif full["rc"] != native["rc"]:
        defects.append(f"exit status {full['rc']} under the profiler, {native['rc']} natively")
    native_verdict = verdict_lines(Path(native["log"])) if native.get("log") else []
    full_verdict = verdict_lines(Path(full["log"])) if full.get("log") else []
    if native_verdict != full_verdict:
        gone = [v for v in native_verdict if v not in full_verdict][:2]
        new = [v for v in full_verdict if v not in native_verdict][:2]
        defects.append(f"the app's verdict differs: native {gone} vs profiled {new}")
    facts["verdict"] = native_verdict[:3]
    run_dir = out / "runs" / "r0" / f"{name}-full"
    for candidate in sorted((out / "runs").glob(f"r*/{name}-full"), key=lambda p: int(p.parent.name[1:] or 0)):
        run_dir = candidate  # the last round kept
    manifest = run_dir / "run.json"
    if not manifest.is_file():
        defects.append(f"no run.json in {run_dir}")
        return facts
    run = json.loads(manifest.read_text())
    facts["status"] = run.get("status")
    if run.get("status") != "complete":
        defects.append(f"run {run.get('status')}: {run.get('partial_reason')}")
    # run.json lists every instrumented launch (the collector caps only the others); graph kernel nodes never are
    instrumented = sum(1 for x in run.get("launches") or () if x.get("instrumented"))
    graphs = (run.get("collector") or {}).get("graph_kernel_nodes") or 0
    if not run.get("launches") and full.get("rc") == 0:  # every app of the set launches kernels
        defects.append("no kernel launch seen")
    elif full.get("rc") == 0 and not instrumented:
        defects.append(
            "no launch instrumented" + (f" ({graphs} CUDA graph kernel nodes, not instrumented yet)" if graphs else "")
        )
    elif graphs > instrumented:
        # Kernels relaunched as graph nodes (cuda-samples jacobiCudaGraphs: 1,389 nodes beside one direct launch) run
        # uninstrumented, so the report covers a sliver of the app's work (session 58's third breadth set).
        defects.append(
            f"{graphs} CUDA graph kernel nodes not instrumented against {instrumented} instrumented launches: "
            "the report covers the direct launches only"
        )
    for error in run.get("errors") or []:
        defects.append(f"run.json error: {str(error)[:160]}")
    log = run_dir / "collector.log"
    if log.is_file():
        problems = [ln for ln in log.read_text(errors="replace").splitlines() if COLLECTOR_PROBLEM.search(ln)]
        facts["collector_problems"] = len(problems)
        for line in problems[:2]:
            defects.append(f"collector.log: {line[:160]}")
    facts.update(report_facts(run_dir))
    if not facts["report"] and facts.get("full_rc") == 0:
        defects.append("no report.json")
    if facts.get("unplaced"):
        defects.append(f"{facts['unplaced']} of {facts['findings']} findings on no source line")
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="realapps.py's --out folder")
    parser.add_argument("--json", help="write the per-app facts here")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        result = json.loads((out / "realapps.json").read_text())
    except (OSError, ValueError) as error:
        print(f"breadth_check: {out / 'realapps.json'}: {error}", file=sys.stderr)
        return 2
    checked = [check_app(out, row, result.get("steps", {}).get(row["app"], {})) for row in result["apps"]]
    print(
        f"{'app':<24}{'native s':>9}{'full x':>8}{'records':>13}{'kernels':>8}{'findings':>9}{'unplaced':>9}  defects"
    )
    for c in checked:
        ratio = f"{c['ratio']:8.2f}" if c.get("ratio") else "       -"
        native = f"{c['native_s']:9.3f}" if c.get("native_s") else "        -"
        records = f"{c['records']:13,d}" if c.get("records") is not None else "            -"
        print(
            f"{c['app']:<24}{native}{ratio}{records}{c.get('kernels', '-'):>8}{c.get('findings', '-'):>9}"
            f"{c.get('unplaced', '-'):>9}  {len(c['defects']) or 'none'}"
        )
        for defect in c["defects"]:
            print(f"    - {defect}")
    bad = [c["app"] for c in checked if c["defects"]]
    print(f"\n{len(checked)} apps, {len(bad)} with defects" + (f": {', '.join(bad)}" if bad else ""))
    if args.json:
        Path(args.json).write_text(json.dumps({"format": "reuselens-breadth-check", "version": 1, "apps": checked}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
