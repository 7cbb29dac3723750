#!/usr/bin/env python3
"""Safety test for removable-barrier advice (issue #15): remove every barrier a report says can go together,
rebuild, and check under compute-sanitizer that nothing broke.

For each program of the pattern suite (tests/gpu/pattern_suite.cu and the programs of tests/gpu/patterns/cases.json)
and of the real-application suite (benchmarks/realapps/manifest.json, sources staged by realapps_stage.py):
  1. build it as its suite does and profile it with `reuselens profile` (or read a report given with --reports
     NAME=report.json, or RUNS/NAME/report.json with --runs RUNS);
  2. for every kernel (launch configuration) with removable-barrier findings, copy the sources, replace each
     barrier call on the reported lines by `(void)0 /* removed ... */` (barrier_edit.py; a line without a
     recognisable barrier call is refused), and rebuild with the same nvcc command;
  3. run original (twice, to learn which output lines are timings) and modified natively, and both under
     `compute-sanitizer --tool racecheck` and `--tool synccheck`;
  4. print program, kernel, removed barriers (file:line), racecheck hazards before/after, synccheck errors
     before/after, same output (and exit status)?, and write OUT/barrier_safety.json.

    python3 benchmarks/barrier_safety.py --out DIR                          # both suites, profiles itself
    python3 benchmarks/barrier_safety.py --out DIR --suite patterns --dry-run --reports pattern_suite=R.json

--dry-run builds, reads the reports given, applies the edits and rebuilds; it runs nothing on a GPU.
Exit status: 0 every removal was tested and broke nothing; 1 a removal caused a hazard, a synccheck error, a
different output or exit status; 2 bad arguments; 3 incomplete: no program had a removable-barrier finding,
or a build, profile, edit or sanitizer step failed, so some advice went untested.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import barrier_edit  # noqa: E402  (the helper modules live next to this script)
import realapps  # noqa: E402
import sanitizer_check  # noqa: E402
from program_steps import StepError, build, nvcc_single_file, reuselens_profile, run_to_end, same_output  # noqa: E402

PATTERN_DIR = ROOT / "tests" / "gpu"
CASES_FILE = PATTERN_DIR / "patterns" / "cases.json"


@dataclass(frozen=True)
class Program:
    """A program to test: its source tree (copied whole for an edit), how to build it from a copy, its args."""

    name: str
    suite: str
    root: Path
    build_command: Callable[[Path, Path], list[str]]  # (source tree, binary) -> nvcc command
    args: tuple[str, ...] = ()


def pattern_programs(args: argparse.Namespace) -> list[Program]:
    def single(source: Path) -> Callable[[Path, Path], list[str]]:
        relative = source.relative_to(PATTERN_DIR)
        return lambda tree, binary: nvcc_single_file(args.nvcc, args.arch, tree / relative, binary)

    programs = [Program("pattern_suite", "patterns", PATTERN_DIR, single(PATTERN_DIR / "pattern_suite.cu"))]
    cases = json.loads(CASES_FILE.read_text())["cases"]
    for name in sorted({c[side] for c in cases for side in ("before", "after") if c.get(side)}):
        source = CASES_FILE.parent / name
        programs.append(Program(source.stem, "patterns", PATTERN_DIR, single(source)))
    return programs


def realapp_programs(args: argparse.Namespace) -> list[Program]:
    manifest = realapps.load_manifest(Path(args.manifest))
    src = Path(args.src).resolve()
    problems = realapps.check_staged(manifest, src)
    if problems:
        raise SystemExit("barrier_safety: " + "; ".join(problems[:3]))
    programs = []
    for app in manifest["apps"]:

        def command(tree: Path, binary: Path, app: dict[str, Any] = app) -> list[str]:
            # build_command wants the folder that holds the source trees; a copy holds just this one
            return realapps.build_command(manifest, app, tree.parent, binary)

        programs.append(Program(app["name"], "realapps", src / app["source"], command, tuple(app.get("args", []))))
    return programs


def select(programs: list[Program], wanted: str | None) -> list[Program]:
    if not wanted:
        return programs
    names = wanted.split(",")
    unknown = sorted(set(names) - {p.name for p in programs})
    if unknown:
        raise SystemExit(
            f"barrier_safety: unknown program(s) {', '.join(unknown)}; known: {', '.join(p.name for p in programs)}"
        )
    return [p for p in programs if p.name in names]


def report_for(program: Program, binary: Path, out: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    given = dict(item.split("=", 1) for item in args.reports or [])
    if program.name in given:
        return json.loads(Path(given[program.name]).read_text())
    if args.runs:
        path = Path(args.runs) / program.name / "report.json"
        if not path.is_file():
            raise StepError(f"no report.json for {program.name} under {args.runs}")
        return json.loads(path.read_text())
    if args.dry_run:
        return None
    return reuselens_profile([str(binary), *program.args], out / "run", timeout=args.timeout, cwd=out)


class Baseline:
    """The original program's runs, done once per program and only when a removal needs them."""

    def __init__(self, program: Program, binary: Path, out: Path, args: argparse.Namespace):
        self.program, self.binary, self.out, self.args = program, binary, out, args
        self._native: tuple[Any, Any] | None = None
        self._checked: dict[str, sanitizer_check.Checked] = {}

    def native(self):
        if self._native is None:
            self._native = tuple(native_run(self.binary, self.program, self.out, self.args) for _ in range(2))
        return self._native

    def checked(self, tool: str) -> sanitizer_check.Checked:
        if tool not in self._checked:
            self._checked[tool] = sanitize(tool, self.binary, self.program, self.out, self.args)
        return self._checked[tool]


def native_run(binary: Path, program: Program, cwd: Path, args: argparse.Namespace):
    return run_to_end([str(binary), *program.args], timeout=args.timeout, what=f"run {binary.name}", cwd=cwd)


def sanitize(tool: str, binary: Path, program: Program, cwd: Path, args: argparse.Namespace):
    log = cwd / f"{binary.name}.{tool}.log"
    return sanitizer_check.check(
        args.sanitizer, tool, [str(binary), *program.args], log, timeout=args.sanitizer_timeout, cwd=cwd
    )


def make_variant(program: Program, lines: list[barrier_edit.SourceLine], out: Path) -> Path:
    """A copy of the program's source tree with the barriers on `lines` removed; returns the copy's root."""
    tree = out / program.root.name
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(program.root, tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "STAGED.json"))
    by_file: dict[str, list[int]] = {}
    for site in lines:
        by_file.setdefault(site.relative, []).append(site.line)
    for relative, numbers in by_file.items():
        path = tree / relative
        text = path.read_text()
        try:
            edited = barrier_edit.remove_barriers(text.splitlines(), numbers)
        except barrier_edit.EditRefused as refusal:
            raise barrier_edit.EditRefused(f"{relative}: {refusal}") from None
        path.write_text("\n".join(edited) + ("\n" if text.endswith("\n") else ""))
    return tree


def test_removal(
    program: Program, removal: dict[str, Any], baseline: Baseline, out: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """Build the variant and compare it with the original; fills removal's result fields."""
    lines = removal["sites"]
    tree = make_variant(program, lines, out)
    binary = out / program.name
    build(program.build_command(tree, binary), what=f"nvcc {program.name} (barriers removed)", cwd=out)
    removal["built"] = str(binary)
    if args.dry_run:
        return removal
    before, again = baseline.native()
    after = native_run(binary, program, out, args)
    same, why = same_output((before.stdout, again.stdout), after.stdout)
    removal["output_same"] = same and before.status == after.status
    removal["output_difference"] = (
        why if not same else ("" if before.status == after.status else f"exit status {before.status} -> {after.status}")
    )
    for tool in sanitizer_check.TOOLS:
        original, changed = baseline.checked(tool), sanitize(tool, binary, program, out, args)
        removal[tool] = {
            "before": vars(original.summary),
            "after": vars(changed.summary),
            "status": [original.status, changed.status],
        }
        if changed.status != original.status:
            removal["output_same"] = False
            removal["output_difference"] = removal["output_difference"] or (
                f"under {tool}: exit status {original.status} -> {changed.status}"
            )
    removal["unsafe"] = unsafe_reasons(removal)
    return removal


def unsafe_reasons(removal: dict[str, Any]) -> list[str]:
    reasons = []
    race, sync = removal["racecheck"], removal["synccheck"]
    if (race["after"]["hazards"] or 0) > (race["before"]["hazards"] or 0):
        reasons.append(f"racecheck hazards {race['before']['hazards'] or 0} -> {race['after']['hazards']}")
    for tool, counts in (("racecheck", race), ("synccheck", sync)):
        if (counts["after"]["errors"] or 0) > (counts["before"]["errors"] or 0):
            reasons.append(f"{tool} errors {counts['before']['errors'] or 0} -> {counts['after']['errors']}")
    if not removal["output_same"]:
        reasons.append(f"different output: {removal['output_difference']}")
    return reasons


def test_program(program: Program, args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out) / program.name
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"program": program.name, "suite": program.suite, "removals": []}
    original = out / "original" / program.name
    try:
        build(program.build_command(program.root, original), what=f"nvcc {program.name}", cwd=original.parent)
        report = report_for(program, original, out, args)
    except (StepError, OSError, ValueError) as error:
        result["error"] = str(error)
        return result
    if report is None:
        result["note"] = "no report (dry run without --reports/--runs): nothing to edit"
        return result
    sets = barrier_edit.removal_sets(report, program.root)
    result["kernels_with_findings"] = len(sets)
    baseline = Baseline(program, original, original.parent, args)
    grouped: dict[tuple, dict[str, Any]] = {}
    for removal_set in sets:
        key = tuple(sorted(str(site) for site in removal_set.lines))
        entry = grouped.setdefault(
            key,
            {"kernels": [], "sites": removal_set.lines, "refused": [], "kept_on_same_line": []},
        )
        entry["kernels"].append(f"{removal_set.kernel} [{removal_set.config}]")
        entry["refused"] += [r for r in removal_set.refused if r not in entry["refused"]]
        entry["kept_on_same_line"] += [k for k in removal_set.kept_on_same_line if k not in entry["kept_on_same_line"]]
    for index, entry in enumerate(grouped.values()):
        entry["removed"] = [str(site) for site in entry["sites"]]
        if entry["refused"] or entry["kept_on_same_line"] or not entry["sites"]:
            entry["error"] = "; ".join(entry["refused"] + entry["kept_on_same_line"]) or "no barrier line to remove"
        else:
            try:
                test_removal(program, entry, baseline, out / f"removal{index}", args)
            except (StepError, barrier_edit.EditRefused, OSError) as error:
                entry["error"] = str(error)
        entry.pop("sites")
        result["removals"].append(entry)
    return result


def _counts(removal: dict[str, Any], tool: str, field: str) -> str:
    counts = removal.get(tool)
    if not counts:
        return "-"
    before, after = counts["before"][field], counts["after"][field]
    return f"{'-' if before is None else before} -> {'-' if after is None else after}"


def print_table(results: list[dict[str, Any]]) -> None:
    print(f"\n{'program':<26}{'kernel':<44}{'racecheck':>11}{'synccheck':>11}  {'same output':<12}removed barriers")
    for result in results:
        if "error" in result or "note" in result:
            print(f"{result['program']:<26}{'FAILED: ' + result['error'] if 'error' in result else result['note']}")
            continue
        if not result["removals"]:
            print(f"{result['program']:<26}(no removable-barrier finding)")
            continue
        for removal in result["removals"]:
            kernels = "; ".join(removal["kernels"])
            same = "-" if "output_same" not in removal else ("yes" if removal["output_same"] else "NO")
            verdict = (
                f"FAILED: {removal['error']}"
                if "error" in removal
                else ("UNSAFE: " + "; ".join(removal["unsafe"]))
                if removal.get("unsafe")
                else ("built (dry run)" if "racecheck" not in removal else "safe")
            )
            print(
                f"{result['program']:<26}{kernels[:43]:<44}{_counts(removal, 'racecheck', 'hazards'):>11}"
                f"{_counts(removal, 'synccheck', 'errors'):>11}  {same:<12}{', '.join(removal['removed'])}"
            )
            print(f"{'':<26}  -> {verdict}")


def exit_status(results: list[dict[str, Any]], dry_run: bool) -> tuple[int, str]:
    removals = [r for result in results for r in result["removals"]]
    if any(r.get("unsafe") for r in removals):
        return 1, "a barrier removal the report called safe broke the program (see UNSAFE rows)"
    failed = [result["program"] for result in results if "error" in result]
    failed += [
        f"{result['program']} ({'; '.join(r['kernels'])[:60]})"
        for result in results
        for r in result["removals"]
        if "error" in r
    ]
    if not removals:
        return 3, "no program had a removable-barrier finding: nothing was tested" + (
            f" (and {len(failed)} program(s) failed: {', '.join(failed)})" if failed else ""
        )
    if failed:
        return 3, f"incomplete: {len(failed)} step(s) failed, their advice is untested: {', '.join(failed)}"
    if dry_run:
        return 0, f"dry run: {len(removals)} removal set(s) edited and rebuilt; nothing was run"
    return 0, f"all {len(removals)} removal set(s) tested: no new hazard, no synccheck error, same output"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for builds, copies, logs and barrier_safety.json")
    parser.add_argument("--suite", choices=("patterns", "realapps", "all"), default="all")
    parser.add_argument(
        "--programs", help="comma-separated program names (pattern_suite, softmax_smem, cs_transpose...)"
    )
    parser.add_argument("--reports", action="append", metavar="NAME=REPORT", help="use this report.json for NAME")
    parser.add_argument("--runs", help="folder with NAME/report.json per program (e.g. an earlier profile)")
    parser.add_argument("--dry-run", action="store_true", help="build, edit and rebuild only; no GPU")
    parser.add_argument("--src", default=str(HERE / "realapps" / "src"), help="staged real-application sources")
    parser.add_argument("--manifest", default=str(realapps.MANIFEST))
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch of the pattern programs (default sm_90)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    parser.add_argument("--sanitizer", help="compute-sanitizer executable (default: PATH, then the CUDA toolkit's)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per native run and per profile")
    parser.add_argument("--sanitizer-timeout", type=float, default=600, help="seconds per sanitizer run")
    args = parser.parse_args(argv)
    if any("=" not in item for item in args.reports or []):
        parser.error("--reports takes NAME=PATH")
    args.sanitizer = sanitizer_check.find_sanitizer(args.sanitizer)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    programs = []
    if args.suite in ("patterns", "all"):
        programs += pattern_programs(args)
    if args.suite in ("realapps", "all"):
        programs += realapp_programs(args)
    programs = select(programs, args.programs)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results = []
    for program in programs:
        started = time.time()
        result = test_program(program, args)
        result["seconds"] = round(time.time() - started, 1)
        results.append(result)
        found = sum(len(r["kernels"]) for r in result["removals"])
        print(
            f"{program.name}: {result.get('error') or result.get('note') or f'{found} kernel(s) with removable barriers'}"
            f" ({result['seconds']} s)",
            flush=True,
        )
    print_table(results)
    status, verdict = exit_status(results, args.dry_run)
    print(f"\n{verdict}")
    document = {
        "format": "reuselens-barrier-safety",
        "version": 1,
        "dry_run": args.dry_run,
        "sanitizer": args.sanitizer,
        "programs": results,
        "verdict": verdict,
        "exit_status": status,
    }
    target = Path(args.out) / "barrier_safety.json"
    target.write_text(json.dumps(document, indent=1) + "\n")
    print(f"written {target}")
    return status


if __name__ == "__main__":
    sys.exit(main())
