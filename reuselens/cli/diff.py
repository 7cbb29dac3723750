"""`reuselens diff BEFORE AFTER`: per kernel and pattern, what a fix removed or added."""

from __future__ import annotations

import argparse
import json
import sys

from reuselens.analyzer.compare import diff_reports
from reuselens.analyzer.reportview import fit
from reuselens.analyzer.units import format_bytes, format_waste
from reuselens.cli.common import add_analysis_options, load_report_input


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="compare two runs or reports",
        description="Compare two runs (or report.json files), e.g. before and after "
        "a fix: memory traffic and findings per kernel and pattern.",
    )
    parser.add_argument("before", metavar="BEFORE")
    parser.add_argument("after", metavar="AFTER")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    add_analysis_options(parser)
    parser.set_defaults(func=run)


def _change(before: float, after: float) -> str:
    if before == 0:
        return "new" if after else "="
    return f"{100.0 * (after - before) / before:+.1f}%"


def format_table(entries: list[dict]) -> str:
    lines = []
    for entry in entries:
        lines.append(f"{fit(entry['kernel'], 100)} ({entry['status']})")
        for key, values in entry["traffic"].items():
            b, a = values["before"], values["after"]
            shown_b, shown_a = (format_bytes(b), format_bytes(a)) if key == "bytes" else (str(b), str(a))
            lines.append(f"  {key:<13} {shown_b:>12} -> {shown_a:>12}  {_change(b, a)}")
        for pattern, values in entry["patterns"].items():
            was, now = values["before"], values["after"]
            unit = values["unit"]
            lines.append(
                f"  {values['verdict']:<8} {pattern:<24} findings {was['findings']} -> {now['findings']}, "
                f"waste {format_waste(was['waste'], unit)} -> {format_waste(now['waste'], unit)}  "
                f"{_change(was['waste'], now['waste'])}"
            )
    return "\n".join(lines) if lines else "no kernels in either report"


def run(args: argparse.Namespace) -> int:
    before = load_report_input(args.before, args)
    after = load_report_input(args.after, args)
    entries = diff_reports(before, after)
    if args.format == "json":
        sys.stdout.write(json.dumps({"format": "reuselens-diff", "version": 1, "kernels": entries}, indent=2) + "\n")
    else:
        sys.stdout.write(format_table(entries) + "\n")
    return 0
