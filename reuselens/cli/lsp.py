"""`reuselens lsp`: run the language server on stdio (editors start it this way)."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    from reuselens.lsp_server.cli import add_arguments

    parser = subparsers.add_parser(
        "lsp", help="run the language server on stdio", description="Run the ReuseLens language server on stdin/stdout."
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reuselens.collector.kernel_regex import kernel_regex_problem
    from reuselens.lsp_server.cli import start

    # The server checks reuselens.kernelFilter with the collector's own syntax; it cannot import the collector.
    return start(args.log_file, args.log_level, kernel_regex_problem)
