"""`reuselens` console script: one subcommand per module of this package.

Each subcommand module defines `add_parser(subparsers)`, which registers its parser and sets
`func=<callable(args) -> int>` as the parser default. User mistakes surface as ReuseLensError or CollectorError and are printed
as one line (with the traceback only under --verbose); the exit code is then 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from reuselens.analyzer import __version__
from reuselens.analyzer.errors import ReuseLensError
from reuselens.collector.errors import CollectorError

SUBCOMMANDS = ("profile", "analyze", "report", "graph", "diff", "lines", "memory", "demo", "lsp")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `only` the one subcommand that will run: each subcommand module is imported to
    register its parser, and a profile should not wait for the other eight (their imports are most of the
    launcher's start-up before the app starts)."""
    parser = argparse.ArgumentParser(
        prog="reuselens",
        description="Memory-reuse structure (Topological Distance, PCDepGraph) of CUDA kernels, per source line.",
    )
    parser.add_argument("--version", action="version", version=f"reuselens {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details and show tracebacks")
    # Not dest="command": `profile` has a positional of that name (the app's command line), which would overwrite it.
    subparsers = parser.add_subparsers(dest="subcommand", metavar="COMMAND", required=True)
    for name in (only,) if only else SUBCOMMANDS:
        importlib.import_module(f"reuselens.cli.{name}").add_parser(subparsers)
    return parser


def chosen_subcommand(argv: list[str]) -> str | None:
    """The subcommand named by `argv` when its first word that is not a global option names one, else None (then
    the whole parser answers: help, a mistyped command)."""
    for word in argv:
        if word in ("-v", "--verbose"):
            continue
        return word if word in SUBCOMMANDS else None
    return None


def configure_logging(verbose: bool = False) -> None:
    """Warnings (debug details with --verbose) on stderr, prefixed with the tool's name. Nothing logs before the
    analysis modules are loaded, so `profile` calls this from the thread that loads them while the app runs."""
    import logging

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="reuselens: %(levelname)s: %(message)s"
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen_subcommand(argv))
    args = parser.parse_args(argv)
    if args.subcommand != "profile" or args.verbose:
        configure_logging(args.verbose)  # profile's preload does it while the app runs: `logging` takes 5-7 ms
    try:
        return int(args.func(args) or 0)
    except (ReuseLensError, CollectorError) as error:
        if args.verbose:
            raise
        print(f"reuselens: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reuselens: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def entry() -> None:
    """The console script and `python -m reuselens`: main(), then the process ends without the interpreter's
    teardown. Freeing every module the analysis loaded (networkx, pyelftools, the patterns) took 0.03-0.08 s of
    each run on the development machine, after everything was written (files are closed where they are written)
    and printed (flushed here)."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):  # a reader that went away, or a closed stream
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
