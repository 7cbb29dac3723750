"""Starting the server: stdio by default (what editors use), logs to stderr or --log-file, never stdout."""

from __future__ import annotations

import argparse
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-file", help="write the server's log here instead of stderr")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def start(log_file: str | None, log_level: str) -> int:
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=getattr(logging, log_level), handlers=[handler],
                        format="%(asctime)s reuselens-lsp %(levelname)s %(message)s")
    from lsp_server.server import SERVER
    SERVER.start_io()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lsp_server", description="ReuseLens language server (stdio)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return start(args.log_file, args.log_level)
