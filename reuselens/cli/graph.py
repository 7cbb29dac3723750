"""`reuselens graph RUN_DIR --kernel K --format dot|graphml|html`: export one kernel's PCDepGraph."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.reportview import kernel_title
from reuselens.cli.common import add_analysis_options, load_report_input, write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "graph",
        help="export a kernel's PCDepGraph (dot, graphml, html)",
        description="Export the PCDepGraph of one kernel configuration.",
    )
    parser.add_argument("input", metavar="RUN_DIR|REPORT")
    parser.add_argument(
        "--kernel", metavar="K", help="kernel id (k0, k1, ...) or a regex on its name; required when there are several"
    )
    parser.add_argument("--format", choices=("dot", "graphml", "html"), default="html")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_analysis_options(parser)
    parser.set_defaults(func=run)


def select_kernel(report: dict[str, Any], selector: str | None) -> dict[str, Any]:
    kernels = report.get("kernels", [])
    if not kernels:
        raise ReuseLensError("the report has no kernels (nothing was instrumented)")
    if selector is None:
        if len(kernels) == 1:
            return kernels[0]
        listing = "; ".join(f"{k['id']} = {kernel_title(k)}" for k in kernels)
        raise ReuseLensError(f"several kernels, choose one with --kernel: {listing}")
    for kernel in kernels:
        if kernel.get("id") == selector:
            return kernel
    try:
        pattern = re.compile(selector)
    except re.error as error:
        raise ReuseLensError(f"--kernel {selector!r} is neither a kernel id nor a valid regex ({error})") from error
    matches = [k for k in kernels if pattern.search(k.get("name") or "") or pattern.search(k.get("mangled") or "")]
    if not matches:
        raise ReuseLensError(f"no kernel matches {selector!r}; kernels: " + ", ".join(k["id"] for k in kernels))
    if len(matches) > 1:
        listing = "; ".join(f"{k['id']} = {kernel_title(k)}" for k in matches)
        raise ReuseLensError(f"{selector!r} matches several kernels, use an id: {listing}")
    return matches[0]


def _render(kernel: dict[str, Any], fmt: str) -> str:
    if fmt == "html":
        from reuselens.analyzer.reporters.graph_html import render_html

        return render_html(kernel)
    if fmt == "dot":
        from reuselens.analyzer.reporters.graph_dot import to_dot

        return to_dot(kernel)
    from reuselens.analyzer.reporters.graph_graphml import to_graphml

    return to_graphml(kernel)


def run(args: argparse.Namespace) -> int:
    report = load_report_input(args.input, args)
    kernel = select_kernel(report, args.kernel)
    text = _render(kernel, args.format)
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
