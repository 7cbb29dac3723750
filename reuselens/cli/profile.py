"""`reuselens profile [options] -- CMD [ARGS...]`: run an app under the collector, then analyse the run."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

from reuselens.analyzer.errors import SettingsError
from reuselens.cli.common import add_analysis_options, analyze, positive_int, share
from reuselens.cli.exit_status import app_exit_status, app_failure
from reuselens.cli.progress import stage_progress

TYPE_CHECKING = False  # typing itself is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from typing import Any, Callable


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "profile",
        help="profile a CUDA application (GPU) and analyse it",
        description="Run CMD under the ReuseLens collector (Compute Sanitizer API), write a run directory, "
        "analyse it and print the top findings. Build the app with -lineinfo to get source lines.",
        usage="reuselens profile [options] -- CMD [ARGS...]",
    )
    parser.add_argument(
        "--run-dir", metavar="DIR", help="where to write the run (default: ./reuselens-run-<date>-<time>)"
    )
    parser.add_argument("--kernel-filter", metavar="REGEX", help="instrument only kernels whose name matches")
    parser.add_argument("--kernel-list", metavar="FILE", help="instrument only kernels named in FILE (one per line)")
    parser.add_argument("--launch-range", metavar="A:B", help="instrument launches A (inclusive) to B (exclusive)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="stop the app after this; run is partial")
    parser.add_argument("--traces", action="store_true", help="also keep raw warp records in RUN/traces/")
    parser.add_argument("--buffer-bytes", type=int, metavar="N", help="device trace buffer size (advanced)")
    parser.add_argument(
        "--module-loading",
        choices=("eager", "lazy"),
        help="the app's CUDA_MODULE_LOADING; eager also patches every module as it loads "
        "(a fallback for apps that block at their first launch, docs/collector.md)",
    )
    parser.add_argument(
        "--object-level",
        action="store_true",
        help="memory analysis only: record which allocations each kernel reads and writes, not every access "
        "(far faster; no reuse analysis), then print `reuselens memory`'s table",
    )
    parser.add_argument(
        "--intra-object",
        action="store_true",
        help="--object-level, and count each object's touched bytes and accesses per slice on the GPU (element "
        "maps): the intra-object memory patterns exactly, still without an access trace",
    )
    parser.add_argument(
        "--values",
        action="store_true",
        help='also record each loaded and stored value, for value redundancy (docs/engine.md, "Value redundancy"); '
        "slower than a plain profile",
    )
    parser.add_argument(
        "--values-every",
        type=positive_int,
        metavar="K",
        help="with --values: record values on the first of every K instrumented launches only (launch sampling for "
        "long runs; the others are traced without values)",
    )
    parser.add_argument(
        "--values-approx",
        type=share,
        metavar="SHARE",
        help="with --values: count a float (double) load as approximately redundant when it returns a value within "
        "this share of its location's last loaded one (default 0.01 = 1%%, LoadSpy's; 0 turns it off)",
    )
    parser.add_argument("--no-analyze", action="store_true", help="only record the run")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N", help="findings to print (default 10)")
    add_analysis_options(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]")
    parser.set_defaults(func=run)


def parse_launch_range(text: str | None) -> tuple[int, int | None] | None:
    if not text:
        return None
    start, sep, end = text.partition(":")
    try:
        first = int(start) if start else 0
        last = int(end) if end else None
    except ValueError:
        raise SettingsError(f"--launch-range {text!r}: expected A:B with whole numbers, e.g. 0:10") from None
    if not sep or first < 0 or (last is not None and last <= first):
        raise SettingsError(f"--launch-range {text!r}: expected A:B with 0 <= A < B, e.g. 0:10")
    return first, last


def run(args: argparse.Namespace) -> int:
    from reuselens.collector.launcher import profile

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise SettingsError("no command to profile: reuselens profile [options] -- ./app args")
    launch_range = parse_launch_range(args.launch_range)
    run_dir = Path(args.run_dir or time.strftime("reuselens-run-%Y%m%d-%H%M%S"))
    if args.intra_object:
        args.object_level = True
    if args.values and args.object_level:
        raise SettingsError("--values needs the access trace: it cannot be combined with --object-level/--intra-object")
    if args.values_every and not args.values:
        raise SettingsError("--values-every samples the launches of a --values profile: add --values")
    if args.values_approx is not None and not args.values:
        raise SettingsError("--values-approx sets the approximate redundancy of a --values profile: add --values")
    preload = None if args.no_analyze else _import_analysis_while_the_app_runs(args.object_level, command[0])
    early = None if args.no_analyze else _EarlyAnalysis(_memory_table if args.object_level else _report, run_dir, args)
    with stage_progress() as progress:
        summary = profile(
            command,
            run_dir=run_dir,
            kernel_filter=args.kernel_filter,
            kernel_list=args.kernel_list,
            launch_range=launch_range,
            timeout=args.timeout,
            write_traces=args.traces,
            buffer_bytes=args.buffer_bytes,
            on_progress=progress,
            module_loading=args.module_loading,
            split_configurations=args.per_configuration,
            object_level=args.object_level,
            element_maps=args.intra_object,
            values=args.values,
            values_every=args.values_every,
            values_approx=args.values_approx,
            on_start=preload.start if preload is not None else None,
            on_collected=early.start if early is not None else None,
        )
    print(f"run written to {run_dir}", file=sys.stderr)
    if early is not None:
        early.wait()  # its run.json read done before the finished one is remembered (open_run keeps one run)
    if not args.no_analyze and summary.manifest_text is not None:
        from reuselens.analyzer.rundir import remember_written

        remember_written(run_dir, summary.manifest_text, summary.manifest)  # the analysis need not decode it again
    if summary.status != "complete":
        print(f"warning: partial run: {summary.partial_reason or 'reason unknown'}", file=sys.stderr)
    if args.no_analyze or args.object_level:
        failure = app_failure(summary.exit_code)
        if failure:
            print(f"warning: {failure}", file=sys.stderr)
        if args.object_level and not args.no_analyze:
            _finish_preload(preload)
            from reuselens.analyzer.pipeline import build_report
            from reuselens.cli.memory import print_report, report_text

            text = early.result() if early is not None and early.started else None
            print_report(text if text is not None else report_text(run_dir, top=args.top)[0])
            if summary.collection == "objects":  # not when the collector never started in the app
                build_report(run_dir)  # no kernels, a note: what an editor loads the run through
    else:
        _finish_preload(preload)
        if early is not None and early.started:
            from reuselens.analyzer.pipeline import save_with_run_fields

            report = save_with_run_fields(early.result(), run_dir)  # the status and exit code as finished
        else:
            with stage_progress() as progress:
                report = analyze(run_dir, args, progress=progress)
        from reuselens.cli.summary import print_summary

        print_summary(report, sys.stdout, top=args.top)
    return app_exit_status(summary.exit_code)


def _import_analysis_while_the_app_runs(memory: bool = False, program: str | None = None) -> threading.Thread:
    """A thread that loads the analysis modules (the memory analysis's, for an object-level profile, and the
    program's symbols its report names allocation sites with), started once the application has started: the
    launcher then waits on it with the interpreter lock released, so they load meanwhile instead of after the
    app's exit (docs/engine.md "Post-run cost"), and not before its start, where they would hold the lock the
    launcher needs."""
    load = (lambda: _import_memory_analysis_modules(program)) if memory else _import_reuse_analysis_modules
    return threading.Thread(target=_preload, args=(load,), name="reuselens-preload", daemon=True)


def _preload(load: Callable[[], None]) -> None:
    from reuselens.cli.main import configure_logging

    configure_logging()  # a no-op under --verbose, which main() configured before the app started
    load()


def _import_reuse_analysis_modules() -> None:
    from reuselens.analyzer.pipeline import import_analysis_modules

    import_analysis_modules()
    from reuselens.cli import summary  # noqa: F401  (the findings table)


def _import_memory_analysis_modules(program: str | None = None) -> None:
    from reuselens.analyzer import _engine, pipeline, report  # noqa: F401  (slice bytes; the run's report.json)
    from reuselens.analyzer.memory import analysis, symbols  # noqa: F401  (pyelftools, the demangler)
    from reuselens.analyzer.patterns import settings  # noqa: F401  (build_report's defaults)
    from reuselens.analyzer.reporters import memory_json, memory_table  # noqa: F401
    from reuselens.cli import memory  # noqa: F401

    if program is not None:
        from reuselens.collector.errors import CollectorError
        from reuselens.collector.launcher import resolve_program

        try:
            path = resolve_program(program, Path.cwd(), os.environ.get("PATH"))
        except CollectorError:
            return  # the launcher has said why it could not start it
        symbols.open_ahead(path)


class _EarlyAnalysis:
    """The analysis of the tool library's exit files, made on a thread from the moment they are written (the
    launcher's on_collected), while the app's CUDA context and the Compute Sanitizer are still going away
    (docs/collector.md, "Launcher start-up"). It reads only what the tool library wrote; what the launcher's
    rewrite of run.json adds after the exit (status, exit code) the caller puts in afterwards."""

    def __init__(self, make: Callable[[Path, argparse.Namespace], Any], run_dir: Path, args: argparse.Namespace):
        self._make, self._run_dir, self._args = make, run_dir, args
        self._thread: threading.Thread | None = None
        self._value: Any = None
        self._error: BaseException | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="reuselens-early-analysis", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._make(self._run_dir, self._args)
        except BaseException as error:  # noqa: BLE001 - raised again on the main thread by result()
            self._error = error

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def result(self) -> Any:
        """What it made, once made; its error raised here (a malformed run: the one-line error as ever)."""
        if self._thread is None:
            return None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _memory_table(run_dir: Path, args: argparse.Namespace) -> str:
    from reuselens.cli.memory import report_text

    return report_text(run_dir, top=args.top)[0]


def _report(run_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    return analyze(run_dir, args, write=False)  # written once the launcher has finished run.json


def _finish_preload(preload: threading.Thread | None) -> None:
    """Wait for the preload, or do it here when the app never started (the thread was never started)."""
    if preload is None:
        return
    if preload.ident is None:
        preload.run()
    else:
        preload.join()
