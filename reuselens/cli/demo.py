"""`reuselens demo`: analyse the bundled demo run (recorded on an H200) and print its findings. No GPU needed."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.rundir import set_source_prefix_map
from reuselens.cli.common import add_analysis_options, analyze, positive_int
from reuselens.cli.summary import print_summary


def demo_root() -> Path:
    return Path(str(resources.files("reuselens") / "demo"))


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="analyse the bundled demo run (no GPU needed)",
        description="Copy the bundled demo run (a softmax and a second kernel, "
        "recorded on an NVIDIA H200) and analyse it.",
    )
    parser.add_argument("--output", metavar="DIR", help="where to put the analysed copy (default: a temp dir)")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N", help="findings to print (default 10)")
    add_analysis_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = demo_root()
    recorded = root / "run"
    sources = root / "src"
    if not (recorded / "run.json").is_file():
        raise ReuseLensError(f"the bundled demo run is missing from {root}; reinstall reuselens")
    target = Path(args.output).expanduser() if args.output else Path(tempfile.mkdtemp(prefix="reuselens-demo-")) / "run"
    if target.exists() and not target.is_dir():
        raise ReuseLensError(f"{target}: exists and is a file; --output takes a folder (new or empty)")
    if target.exists() and any(target.iterdir()):
        raise ReuseLensError(f"{target}: exists and is not empty; choose another --output")
    try:
        shutil.copytree(recorded, target, dirs_exist_ok=True)
    except OSError as error:
        raise ReuseLensError(f"{target}: cannot copy the demo run there ({error.strerror or error})") from None
    # The demo was built on the GPU machine; its line table names that build tree. The copy's manifest maps it
    # to the sources shipped with the package, so a later `reuselens analyze` of the copy finds them too.
    build = json.loads((root / "build.json").read_text(encoding="utf-8")) if (root / "build.json").is_file() else {}
    if build.get("source_dir"):
        set_source_prefix_map(target, {build["source_dir"]: str(sources)})
    report = analyze(target, args)
    print(
        f"ReuseLens demo: {len(report.get('kernels', []))} kernel configuration(s) from a run recorded on "
        f"{report.get('run', {}).get('gpu', {}).get('name', 'a GPU')}; sources in {sources}"
    )
    print_summary(report, sys.stdout, top=args.top)
    print(f"\nreport: {target / 'report.json'}\nnext: reuselens graph {target} --kernel k0 -o graph.html")
    return 0
