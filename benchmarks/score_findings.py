#!/usr/bin/env python3
"""Score ReuseLens's findings on the real-application suite against the expert answer key.

    python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs DIR [--json OUT.json]

DIR holds one report.json per app: DIR/<app>/report.json, DIR/<app>-full/report.json, or the run folders that
benchmarks/realapps.py leaves (DIR/runs/r<N>/<app>-full/, latest round). Prints per app and overall: recall on
primary and on all expected items, precision of warning-level findings, warnings on negative controls and
unplaced findings (benchmarks/answer_key.py defines each). A measurement: the exit status is 0 whatever the
scores; 2 only when the key cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import answer_key  # noqa: E402  (the scoring module lives next to this script)


def _pct(value: float | None) -> str:
    return "    -" if value is None else f"{100 * value:5.1f}"


def print_table(result: dict) -> None:
    print(
        f"{'app':<20} {'primary':>9} {'rec%':>5} {'all':>7} {'rec%':>5} {'warn':>5} {'prec%':>5} "
        f"{'ctrlFP':>6} {'unplaced':>8}"
    )
    rows = list(result["apps"].items()) + [("OVERALL", result["overall"])]
    for app, s in rows:
        if "missing" in s:
            print(f"{app:<20} {s['missing']}")
            continue
        print(
            f"{app:<20} {s['primary_found']:>4}/{s['primary_expected']:<4} {_pct(s['recall_primary'])} "
            f"{s['found']:>3}/{s['expected']:<3} {_pct(s['recall_all'])} {s['warnings']:>5} {_pct(s['precision'])} "
            f"{s['control_fp']:>6} {s['unplaced']:>8}"
        )
    for app, s in result["apps"].items():
        for label, entries in (
            ("missed primary", s.get("missed_primary")),
            ("control hit", s.get("control_hits")),
            ("unexpected warning", s.get("unexpected_warnings")),
        ):
            for entry in entries or ():
                text = (
                    entry
                    if isinstance(entry, str)
                    else f"{entry['pattern']} at {', '.join(entry['places']) or '(no line)'} in {entry['kernel']}"
                )
                print(f"  {app}: {label}: {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True, type=Path, help="answer key (tests/realapps/answer_key.json)")
    parser.add_argument("--runs", required=True, type=Path, help="folder with each app's report.json")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON here")
    args = parser.parse_args(argv)
    try:
        key = answer_key.load_key(args.key)
    except answer_key.AnswerKeyError as error:
        print(f"score_findings: {error}", file=sys.stderr)
        return 2
    result = answer_key.score(key, args.runs)
    print_table(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
        print(f"\nwritten {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
