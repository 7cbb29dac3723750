"""`reuselens memory RUN_DIR`: where a run's device memory went, object by object (DrGPUM's patterns, issue #18):
the peak and what is live at it, then each finding with the peak it would save, as a table, JSON or SARIF, and
optionally the timeline drawn as a self-contained HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reuselens.cli.common import positive_int, write_output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The analysis modules load when the command runs: every `reuselens` start registers this parser, and the
# symboliser pulls in pyelftools and the demangler (tests/cli/test_postrun_cost.py).
DEFAULT_MIN_IDLE_OPERATIONS = 1  # analyzer.memory.patterns.SETTINGS["min_idle_operations"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "memory",
        help="device memory waste per allocation (table, json, sarif, html timeline)",
        description="Find where a run's device memory is held needlessly (allocated early, freed late, idle, "
        "unused, leaked, written and never read, or a second buffer where one would do), each with the peak "
        "reduction its fix gives.",
    )
    parser.add_argument("input", metavar="RUN_DIR")
    parser.add_argument("--format", choices=("table", "json", "sarif"), default="table")
    parser.add_argument("--top", type=positive_int, metavar="N", help="only the N findings that save the most")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("--html", metavar="PATH", help="also write the memory timeline as a self-contained page")
    parser.add_argument("--source-root", metavar="DIR", help="SARIF: make file URIs relative to DIR")
    parser.add_argument(
        "--min-idle-operations",
        type=positive_int,
        default=DEFAULT_MIN_IDLE_OPERATIONS,
        metavar="N",
        help="report a gap only when at least N GPU operations run in it (default: %(default)s, DrGPUM's exact "
        "predicates)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    write_report(
        args.input,
        fmt=args.format,
        top=args.top,
        min_idle_operations=args.min_idle_operations,
        html=args.html,
        output=args.output,
        source_root=args.source_root,
    )
    return 0


def write_report(
    run_dir: str | Path,
    *,
    fmt: str = "table",
    top: int | None = None,
    min_idle_operations: int = DEFAULT_MIN_IDLE_OPERATIONS,
    html: str | None = None,
    output: str | None = None,
    source_root: str | None = None,
) -> None:
    """The run's memory report in `fmt` to `output` (standard output when None), and the timeline page to `html`:
    `reuselens memory`, and what `reuselens profile --object-level` prints after the run."""
    text, analysis = report_text(
        run_dir, fmt=fmt, top=top, min_idle_operations=min_idle_operations, source_root=source_root
    )
    if html:  # the page's renderer (and the html module) only when asked: profile prints the table
        from reuselens.analyzer.reporters.memory_html import render_memory_html

        write_output(html, render_memory_html(analysis))
    print_report(text, output)


def report_text(
    run_dir: str | Path,
    *,
    fmt: str = "table",
    top: int | None = None,
    min_idle_operations: int = DEFAULT_MIN_IDLE_OPERATIONS,
    source_root: str | None = None,
) -> tuple[str, Any]:
    """The report's text in `fmt`, and the analysis it came from (profile makes it while the app tears down)."""
    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.reporters.memory_json import memory_document, to_json
    from reuselens.analyzer.reporters.memory_table import to_table

    analysis = analyze_run(run_dir, {"min_idle_operations": min_idle_operations})
    document = memory_document(analysis, top)
    if fmt == "json":
        return to_json(document), analysis
    if fmt == "sarif":
        from reuselens.analyzer.reporters.memory_sarif import to_sarif

        return to_sarif(document, Path(source_root) if source_root else None), analysis
    return to_table(document), analysis


def print_report(text: str, output: str | None = None) -> None:
    if output:
        write_output(output, text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
