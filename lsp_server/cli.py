"""Starting the server: stdio by default (what editors use), logs to stderr or --log-file, never stdout."""

from __future__ import annotations

import argparse
import logging
import signal
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-file", help="write the server's log here instead of stderr")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def start(log_file: str | None, log_level: str, check_kernel_filter=None) -> int:
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        level=getattr(logging, log_level),
        handlers=[handler],
        format="%(asctime)s reuselens-lsp %(levelname)s %(message)s",
    )
    server = _build_without_collections(check_kernel_filter)
    _stop_children_on_signals()
    _import_the_disassembler_meanwhile()
    server.start_io()
    return 0


def _build_without_collections(check_kernel_filter):
    """The server's modules imported and the server built with the cyclic garbage collector off: the LSP
    library's types (hundreds of attrs classes) allocate enough at import to set off collections that find nothing
    to free, a tenth of the import on the development machine. What they built is then frozen (gc.freeze), so
    later collections do not walk it again. The code attrs and cattrs generate for those types comes from the
    previous start's compilation (code_cache.py)."""
    import atexit
    import gc

    from reuselens.lsp_server import code_cache

    gc.disable()
    try:
        code_cache.install()  # before the LSP types are imported: their generated methods come compiled
        atexit.register(code_cache.save)  # what the session's later messages compiled too
        from reuselens.lsp_server.app import build_server

        return build_server(check_kernel_filter)
    finally:
        gc.freeze()
        gc.enable()


def _import_the_disassembler_meanwhile() -> None:
    """The SASS lookup's modules (pyelftools, the line-table and nvdisasm wrappers: ~80 ms of imports) load while
    the server starts and reads the run, not in the background warm-up that follows the diagnostics, where they
    held the interpreter against the user's first hover (benchmarks/lsp_realapps.py: 11-59 ms)."""
    import importlib
    import threading

    def load() -> None:
        try:
            importlib.import_module("reuselens.analyzer.lineinfo")
        except Exception:  # the hover reports a missing piece when it asks; nothing to do here
            pass

    threading.Thread(target=load, name="reuselens-preload", daemon=True).start()


def _stop_children_on_signals() -> None:
    """Builds and profilers run in their own process groups, so a server ended by SIGTERM/SIGHUP/SIGINT would
    leave them (and the profiled app) running: stop them first, then end as the signal would have."""
    from reuselens.lsp_server import profiling

    def stop(number: int, frame) -> None:
        profiling.stop_all(number)
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)

    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reuselens.lsp_server", description="ReuseLens language server (stdio)"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return start(args.log_file, args.log_level)
