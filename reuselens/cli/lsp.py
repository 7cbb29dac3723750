"""`reuselens lsp`: run the language server on stdio (editors start it this way)."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    from reuselens.lsp_server.cli import add_arguments
    parser = subparsers.add_parser("lsp", help="run the language server on stdio",
                                   description="Run the ReuseLens language server on stdin/stdout.")
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reuselens.lsp_server.cli import start
    return start(args.log_file, args.log_level)
