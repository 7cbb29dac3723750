"""`reuselens report RUN_DIR|REPORT`: findings as a table, JSON, CSV or SARIF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reuselens.analyzer.reporters.findings_csv import to_csv
from reuselens.analyzer.reporters.findings_json import to_json
from reuselens.analyzer.reporters.findings_rows import finding_rows
from reuselens.analyzer.reporters.findings_sarif import to_sarif
from reuselens.analyzer.reporters.findings_table import to_table
from reuselens.cli.common import add_analysis_options, load_report_input, positive_int, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="list findings (table, json, csv, sarif)",
        description="Print the findings of a run directory or report.json.",
    )
    parser.add_argument("input", metavar="RUN_DIR|REPORT")
    parser.add_argument("--format", choices=("table", "json", "csv", "sarif"), default="table")
    parser.add_argument("--top", type=positive_int, metavar="N", help="only the N most wasteful findings")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("--source-root", metavar="DIR", help="SARIF: make file URIs relative to DIR")
    add_analysis_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    report = load_report_input(args.input, args)
    rows = finding_rows(report)
    if args.top is not None:
        rows = rows[: args.top]
    if args.format == "table":
        text = to_table(rows)
    elif args.format == "json":
        text = to_json(rows)
    elif args.format == "csv":
        text = to_csv(rows)
    else:
        if args.top is not None:
            keep = {row["id"] for row in rows}
            for kernel in report.get("kernels", []):
                kernel["findings"] = [f for f in kernel.get("findings", []) if f.get("id") in keep]
        text = to_sarif(report, Path(args.source_root) if args.source_root else None)
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
