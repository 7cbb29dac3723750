"""Recorded reports under the installed pattern rules: what a rule change does to findings on real applications.

    python benchmarks/rederive_reports.py DIR [DIR...] [--changes] [--write OUT]

Every report.json under the DIRs (a run directory, a folder of them, an unpacked `breadth_runs.tgz`) has its
findings re-derived from the graph it carries, under its recorded settings (the rules read nothing else:
analyzer.rederive). Per report: warnings and findings as recorded, then as the installed rules make them; with
--changes, each finding that appears or disappears (severity, pattern, kernel, source line). The last line sums
them. With --write, each re-derived report is written under OUT as `<its folder's name>/report.json` (for
benchmarks/score_findings.py --runs OUT); the recorded reports are never changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from reuselens.analyzer.patterns import find_report_findings


def _reports(roots: list[Path]) -> list[Path]:
    found = []
    for root in roots:
        if root.is_file() and root.name == "report.json":
            found.append(root)
        elif root.is_dir():
            found.extend(sorted(root.rglob("report.json")))
        else:
            raise SystemExit(f"rederive_reports: {root} is neither a report.json nor a folder")
    return found


def _line_of(kernel: dict, finding: dict) -> str:
    nodes = {n.get("id"): n for n in kernel.get("nodes", [])}
    for pc in finding.get("pcs") or []:
        source = (nodes.get(pc) or {}).get("source") or {}
        if source.get("file"):
            return f"{str(source['file']).rsplit('/', 1)[-1]}:{source.get('line')}"
    return "?"


def _keys(kernels: list[dict], findings: list[list[dict]]) -> Counter:
    """(severity, pattern, kernel name, source line) of every finding, counted."""
    keys: Counter = Counter()
    for kernel, kernel_findings in zip(kernels, findings):
        name = str(kernel.get("name") or kernel.get("mangled") or "?").split("(")[0]
        for f in kernel_findings:
            keys[(f.get("severity"), f.get("pattern"), name, _line_of(kernel, f))] += 1
    return keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--changes", action="store_true", help="list each finding that appears or disappears")
    ap.add_argument("--write", type=Path, help="write each re-derived report as OUT/<run folder>/report.json")
    ap.add_argument(
        "--l2-bytes",
        type=int,
        help="the GPU's L2 size for reports recorded before run.json kept it (H100 SXM: 52428800)",
    )
    args = ap.parse_args()
    totals = Counter()
    for path in _reports(args.dirs):
        report = json.loads(path.read_text())
        kernels = report.get("kernels") or []
        before = [k.get("findings") or [] for k in kernels]
        gpu = dict((report.get("run") or {}).get("gpu") or {})
        if args.l2_bytes:
            gpu.setdefault("l2_bytes", args.l2_bytes)  # a size the run recorded wins
        after = find_report_findings(kernels, report.get("settings") or {}, gpu)
        if args.write:
            for kernel, kernel_findings in zip(kernels, after):
                kernel["findings"] = kernel_findings
            target = args.write / path.parent.name / "report.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(report))
        old, new = _keys(kernels, before), _keys(kernels, after)
        warn = {
            label: sum(n for key, n in keys.items() if key[0] == "warning")
            for label, keys in (("old", old), ("new", new))
        }
        counts = (warn["old"], sum(old.values()), warn["new"], sum(new.values()))
        totals.update(dict(zip(("warnings_before", "findings_before", "warnings_after", "findings_after"), counts)))
        mark = "" if old == new else "  changed"
        print(
            f"{path.parent.name:50s} warnings {counts[0]:3d} -> {counts[2]:3d}   findings {counts[1]:4d} -> {counts[3]:4d}{mark}"
        )
        if args.changes and old != new:
            for key in sorted((old - new).keys() | (new - old).keys(), key=str):
                delta = new[key] - old[key]
                print(f"    {'+' if delta > 0 else '-'}{abs(delta)} {key[0]} {key[1]} {key[2]} {key[3]}")
    print(
        f"all: warnings {totals['warnings_before']} -> {totals['warnings_after']}, "
        f"findings {totals['findings_before']} -> {totals['findings_after']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
