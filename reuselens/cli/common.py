"""Arguments and input handling shared by several subcommands."""

from __future__ import annotations

import argparse
from pathlib import Path

from reuselens.analyzer.errors import ReportError, ReuseLensError, SettingsError
from reuselens.analyzer.patterns.settings import THRESHOLDS

TYPE_CHECKING = False  # typing itself is not imported at run time: 4-5 ms of every start on the H200 host
if TYPE_CHECKING:
    from typing import Any

# The analysis modules are imported where they are used: `reuselens profile` parses these options before the app
# starts and loads the analysis while it runs (profile.py), so what the parser needs is kept light.


def add_analysis_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("analysis")
    for threshold in THRESHOLDS:
        group.add_argument(
            threshold.option, dest=f"threshold_{threshold.key}", type=float, metavar="X", help=threshold.help
        )
    group.add_argument("--workers", type=int, metavar="N", help="analysis worker threads (default: all cores)")
    group.add_argument(
        "--per-configuration",
        action="store_true",
        help="one graph and set of findings per launch configuration (grid, block, dynamic shared memory) of each "
        "kernel, instead of one per kernel",
    )
    group.add_argument(
        "--prefix-map",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="rewrite source paths that start with OLD (build tree) to NEW; repeatable",
    )


def settings_from_args(args: argparse.Namespace) -> dict[str, float]:
    settings = {}
    for threshold in THRESHOLDS:
        value = getattr(args, f"threshold_{threshold.key}", None)
        if value is not None:
            settings[threshold.key] = value
    return settings


def prefix_map_from_args(args: argparse.Namespace) -> dict[str, str]:
    mapping = {}
    for item in getattr(args, "prefix_map", []) or []:
        old, sep, new = item.partition("=")
        if not sep or not old:
            raise SettingsError(f"--prefix-map {item!r}: expected OLD=NEW")
        mapping[old] = new
    return mapping


def analyze(run_dir: Path, args: argparse.Namespace, *, progress: Any = None, write: bool = True) -> dict[str, Any]:
    from reuselens.analyzer.pipeline import build_report

    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise SettingsError("--workers must be at least 1")
    return build_report(
        run_dir,
        settings_from_args(args),
        workers=getattr(args, "workers", None),
        prefix_map=prefix_map_from_args(args),
        progress=progress,
        write=write,
        split_configurations=bool(getattr(args, "per_configuration", False)),
    )


def load_report_input(path_text: str, args: argparse.Namespace | None = None) -> dict[str, Any]:
    """A run directory (analysed now if it has no report.json yet) or a report.json file, with its findings under
    the threshold options of `args`: a saved report made with other thresholds has its findings re-derived (in
    memory; the file is left as it is)."""
    from reuselens.analyzer.rederive import NotRederivable
    from reuselens.analyzer.rundir import is_run_directory

    args = args or argparse.Namespace()
    path = Path(path_text).expanduser()
    if path.is_dir():
        if not is_run_directory(path):
            raise ReuseLensError(f"{path}: not a run directory (no run.json) and not a report file")
        report_path = path / "report.json"
        if not report_path.is_file():
            return analyze(path, args)
        try:
            report = read_report(report_path)
            if _needs_split(report, args):
                return analyze(path, args, write=False)
            return _with_threshold_options(report, report_path, args)
        except NotRederivable:
            return analyze(path, args, write=False)  # the run itself still has what the report lost
    if not path.exists():
        raise ReuseLensError(f"{path}: no such file or directory")
    report = read_report(path)
    if _needs_split(report, args):
        raise ReuseLensError(
            f"{path}: this report merges launch configurations; --per-configuration needs the run directory"
        )
    return _with_threshold_options(report, path, args)


def _needs_split(report: dict[str, Any], args: argparse.Namespace) -> bool:
    """--per-configuration asked for, and the report has a kernel entry that merges several configurations."""
    from reuselens.analyzer import configurations

    return bool(getattr(args, "per_configuration", False)) and any(
        configurations.merges_several(kernel) for kernel in report.get("kernels") or []
    )


def _with_threshold_options(report: dict[str, Any], path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from reuselens.analyzer.rederive import with_thresholds

    requested = settings_from_args(args)
    if not requested:
        return report
    try:
        return with_thresholds(report, requested)
    except ReportError as error:
        raise type(error)(f"{path}: {error}") from None


def read_report(path: Path) -> dict[str, Any]:
    from reuselens.analyzer.report import load

    return load(path)


def share(text: str) -> float:
    """argparse type for a relative share such as --values-approx: a finite number from 0 up to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1 (0.01 = 1%)")
    return value


def positive_int(text: str) -> int:
    """argparse type for counts such as --top: a whole number of at least 1 (0 would print nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number (at least 1)")
    return value


def write_output(path_text: str, text: str) -> None:
    """Write a command's output file; a missing folder or a denied write is the user's to fix, one line."""
    path = Path(path_text).expanduser()
    try:
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except IsADirectoryError:
        raise ReuseLensError(f"{path}: is a directory; -o takes a file name") from None
    except FileNotFoundError:
        raise ReuseLensError(f"{path}: cannot write, folder {path.parent} does not exist") from None
    except OSError as error:
        raise ReuseLensError(f"{path}: cannot write ({error.strerror or error})") from None
