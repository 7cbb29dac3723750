"""`reuselens analyze RUN_DIR`: (re)analyse a recorded run without a GPU, e.g. with other thresholds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reuselens.analyzer.rundir import open_run
from reuselens.cli.common import add_analysis_options, analyze, positive_int
from reuselens.cli.progress import stage_progress
from reuselens.cli.summary import print_summary


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="analyse a run directory (no GPU needed)",
        description="Replay a run's traces (or take its online analysis), map PCs "
        "to source lines, find patterns, and write RUN_DIR/report.json.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N", help="findings to print (default 10)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_analysis_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    run_dir = open_run(Path(args.run_dir)).path
    with stage_progress(enabled=not args.quiet) as progress:
        report = analyze(run_dir, args, progress=progress)
    if not args.quiet:
        print_summary(report, sys.stdout, top=args.top)
        print(f"\nreport written to {run_dir / 'report.json'}")
    return 0
