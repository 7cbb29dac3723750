"""Steps shared by the GPU benchmark scripts (actionability.py, barrier_safety.py): run a command with a time
limit, run a program and keep its exit status, profile it with ReuseLens, measure it with Nsight Compute, and
compare two runs' output without the numbers that change from run to run (timings).

Every step that can hang has its own timeout; a failed step raises StepError with one line saying which and why.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

METRICS = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
)
SHORT = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global ld requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global ld sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "global st requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global st sectors",
    "smsp__inst_executed_op_shared_ld.sum": "shared ld instructions",
    "smsp__inst_executed_op_shared_st.sum": "shared st instructions",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared ld wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared st wavefronts",
}


class StepError(Exception):
    """One step failed; the message says which and why."""


@dataclass(frozen=True)
class Finished:
    """A program run to its end, whatever its exit status."""

    status: int
    stdout: str
    stderr: str


def run(
    command: list[str], *, timeout: float, what: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> str:
    """stdout of a command that must succeed."""
    done = run_to_end(command, timeout=timeout, what=what, env=env, cwd=cwd)
    if done.status != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise StepError(f"{what}: exit status {done.status}: {' | '.join(tail)}")
    return done.stdout


def run_to_end(
    command: list[str], *, timeout: float, what: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Finished:
    """A run whose exit status is data (a program under test may fail); only a missing tool or the time limit
    is a step failure."""
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=timeout, env=env, cwd=cwd
        )
    except FileNotFoundError:
        raise StepError(f"{what}: {command[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise StepError(f"{what}: timed out after {timeout:.0f} s") from None
    return Finished(done.returncode, done.stdout, done.stderr)


def nvcc_single_file(nvcc: str, arch: str, source: Path, binary: Path) -> list[str]:
    """The build command of the one-file programs of tests/gpu (tests/gpu/Makefile's flags)."""
    return [nvcc, "-O3", "-lineinfo", f"-arch={arch}", "-o", str(binary), str(source)]


def build(command: list[str], *, what: str, cwd: Path | None = None, timeout: float = 300) -> None:
    out = Path(command[command.index("-o") + 1])
    out.parent.mkdir(parents=True, exist_ok=True)
    run(command, timeout=timeout, what=what, cwd=cwd)


def reuselens_profile(
    argv: list[str],
    run_dir: Path,
    *,
    timeout: float,
    kernel_filter: str | None = None,
    cwd: Path | None = None,
    options: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Profile one program with `reuselens profile [OPTIONS]` (the installed package) and return its report.json."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    command = [
        sys.executable,
        "-m",
        "reuselens",
        "profile",
        *options,
        "--run-dir",
        str(run_dir),
        "--timeout",
        str(timeout),
    ]
    if kernel_filter:
        command += ["--kernel-filter", kernel_filter]
    # The app gets `timeout`, the analysis as long again plus a minute.
    done = run_to_end(
        [*command, "--", *argv], timeout=2 * timeout + 60, what="reuselens profile", cwd=cwd, env=dict(os.environ)
    )
    report = run_dir / "report.json"
    if not report.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise StepError(f"reuselens profile: exit status {done.status}, no report.json: {' | '.join(tail)}")
    return json.loads(report.read_text())


def parse_ncu_csv(text: str) -> dict[str, float]:
    """Sum each metric over all profiled kernel launches, from `ncu --csv` (details page; the raw page's one
    column per metric is read too)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        raise StepError("ncu printed no CSV rows (no kernel matched, or profiling is not permitted)")
    header, body = rows[0], rows[1:]
    totals: dict[str, float] = {}
    if "Metric Name" in header and "Metric Value" in header:
        name_col, value_col = header.index("Metric Name"), header.index("Metric Value")
        for row in body:
            if len(row) > max(name_col, value_col):
                value = _number(row[value_col])
                if value is not None:
                    totals[row[name_col]] = totals.get(row[name_col], 0.0) + value
        return totals
    for row in body:
        for name, cell in zip(header, row):
            if name in METRICS:
                value = _number(cell)
                if value is not None:  # the units row of the raw page has no numbers
                    totals[name] = totals.get(name, 0.0) + value
    return totals


def _number(cell: str) -> float | None:
    text = cell.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def ncu_measure(
    ncu: str,
    argv: list[str],
    kernel_regex: str,
    log: Path,
    *,
    timeout: float,
    cwd: Path | None = None,
    metrics: tuple[str, ...] = METRICS,
    window: tuple[int, int] | None = None,
) -> dict[str, float]:
    """METRICS summed over the launches of the kernels matching kernel_regex (same invocation as
    benchmarks/fidelity.py, verified on the H200: CSV of the details page into a log file, so the program's own
    output never mixes with it)."""
    log.unlink(missing_ok=True)
    command = [
        ncu,
        "--clock-control",
        "none",
        "--csv",
        "--print-units",
        "base",
        "--metrics",
        ",".join(metrics),
        "--kernel-name",
        f"regex:{kernel_regex}",
        # window (skip, count): only those launches of the matching kernels (a long launch loop, sampled alike in
        # the two builds compared)
        *(["--launch-skip", str(window[0]), "--launch-count", str(window[1])] if window else []),
        "--log-file",
        str(log),
        *argv,
    ]
    name = Path(argv[0]).name
    run(command, timeout=timeout, what=f"ncu {name}", cwd=cwd)
    if not log.is_file():
        raise StepError(f"ncu {name}: no output in {log}")
    totals = parse_ncu_csv(log.read_text())
    missing = [m for m in metrics if m not in totals]
    if missing:
        raise StepError(f"ncu {name}: no value for {', '.join(missing)}")
    return totals


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# Lines that report how long or how fast: their numbers change from run to run even when the results do not.
_TIMING = re.compile(
    r"(?i)\b(time|times|timing|elapsed|runtime|throughput|bandwidth|seconds?|secs?|msecs?|usecs?|ms|us|ns|"
    r"gflops?|gflop/s|gb/s|mb/s|gib/s|mkeys/s|melements/s|teps|rate|speed|performance)\b"
)


# An absolute path: the original and the variant run from different folders, and many apps print their
# argv[0] ("/tmp/x/original/app Starting..."); a path is never a result.
_PATH = re.compile(r"(?<![\w.])/(?:[\w.+-]+/)+[\w.+-]*")


def comparable_output(text: str, volatile: set[int] = frozenset()) -> list[str]:
    """The output's lines with absolute paths masked, and the numbers masked on timing lines and on the lines
    (by index) that differed between two runs of the unchanged program, so only results are compared."""
    out = []
    for index, line in enumerate(text.splitlines()):
        line = _PATH.sub("<path>", line.rstrip())
        if index in volatile or _TIMING.search(line):
            line = _NUMBER.sub("#", line)
        out.append(line)
    return out


def volatile_lines(first: str, second: str) -> set[int]:
    """Indexes of the lines that differ between two runs of the same program (timings the regex missed)."""
    a, b = first.splitlines(), second.splitlines()
    return {i for i in range(max(len(a), len(b))) if i >= len(a) or i >= len(b) or a[i] != b[i]}


def same_output(baseline: tuple[str, str], changed: str) -> tuple[bool, str]:
    """(True, "") when `changed` prints what both baseline runs print, up to timings; else (False, the first
    differing line pair)."""
    volatile = volatile_lines(*baseline)
    expected, got = comparable_output(baseline[0], volatile), comparable_output(changed, volatile)
    if expected == got:
        return True, ""
    for index in range(max(len(expected), len(got))):
        want = expected[index] if index < len(expected) else "<no line>"
        have = got[index] if index < len(got) else "<no line>"
        if want != have:
            return False, f"line {index + 1}: expected {want[:120]!r}, got {have[:120]!r}"
    return False, "outputs differ"


def predicted_by(report: dict[str, Any], kernel_regex: str, accept) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """The findings of the kernels matching kernel_regex that `accept(finding, kernel)` takes, and the sum of their
    `metrics.predicted` counters over every launch configuration of those kernels (report-format.md)."""
    predicted: dict[str, float] = {}
    found = []
    for kernel in report.get("kernels", []):
        if not re.search(kernel_regex, f"{kernel.get('mangled', '')} {kernel.get('name', '')}"):
            continue
        for finding in kernel.get("findings", []):
            if accept(finding, kernel):
                found.append({"id": finding["id"], "pattern": finding["pattern"], "message": finding["message"]})
                for metric, value in (finding.get("metrics", {}).get("predicted") or {}).items():
                    predicted[metric] = predicted.get(metric, 0.0) + value
    return found, predicted


def finding_lines(kernel: dict[str, Any], finding: dict[str, Any]) -> set[int]:
    """Source lines of a finding's PCs, with every frame of their inline chains (a helper's call site too)."""
    nodes = {node.get("id"): node for node in kernel.get("nodes", [])}
    lines = set()
    for node_id in finding.get("pcs", []):
        source = (nodes.get(node_id) or {}).get("source") or {}
        for frame in [source, *(source.get("inline") or [])]:
            if isinstance(frame, dict) and frame.get("line"):
                lines.add(int(frame["line"]))
    if finding.get("line"):
        lines.add(int(finding["line"]))
    return lines
