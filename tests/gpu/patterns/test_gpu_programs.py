"""On a GPU: every pattern program runs correctly, and profiling the 'before' programs finds their pattern.

Also the issue #8 suite (tests/gpu/pattern_suite.cu), built, profiled with traces and analysed live: every
implant found on its marked line, no control triggering its pattern (assertions shared with the replay test
tests/patterns/test_pattern_suite.py, in tests/patterns/pattern_suite_checks.py).

Skips with a reason when no GPU (or no nvcc) is present; the static checks that need only nvcc are in
tests/patterns/test_cuda_programs.py, and the before/after counter comparison is benchmarks/actionability.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reuselens.analyzer.patterns import PATTERNS
from tests.patterns.pattern_suite_checks import NVCC_FLAGS, SOURCE, check_control, check_implant

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CASES = json.loads((HERE / "cases.json").read_text())["cases"]
NVCC = shutil.which("nvcc")


pytestmark = pytest.mark.gpu


def build(source: str, out: Path) -> Path:
    binary = out / source[:-3]
    subprocess.run(
        [NVCC, "-O3", "-lineinfo", "-arch=sm_90", "-o", str(binary), str(HERE / source)], check=True, timeout=600
    )
    return binary


@pytest.mark.parametrize("source", sorted(p.name for p in HERE.glob("*.cu")))
def test_program_runs_and_checks_its_result(source, tmp_path):
    done = subprocess.run([str(build(source, tmp_path))], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ": ok" in done.stdout


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_profiling_the_before_program_finds_its_pattern(case, tmp_path):
    binary = build(case["before"], tmp_path)
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reuselens",
            "profile",
            "--run-dir",
            str(run_dir),
            "--kernel-filter",
            case["kernel"],
            "--",
            str(binary),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((run_dir / "report.json").read_text())
    patterns = {f["pattern"] for k in report["kernels"] for f in k.get("findings", [])}
    assert set(case["patterns"]) <= patterns, f"{case['name']}: found {sorted(patterns)}"


@pytest.fixture(scope="module")
def suite_report(tmp_path_factory):
    """tests/gpu/pattern_suite.cu built as tests/gpu/Makefile does, profiled with traces, then analysed."""
    from reuselens.analyzer.pipeline import build_report
    from reuselens.collector import launcher

    out = tmp_path_factory.mktemp("pattern_suite")
    binary = out / "pattern_suite"
    subprocess.run([NVCC, *NVCC_FLAGS, "-o", str(binary), str(SOURCE)], check=True, timeout=600)
    summary = launcher.profile([str(binary)], run_dir=out / "run", write_traces=True, timeout=600)
    assert summary.status == "complete" and summary.exit_code == 0, (summary.partial_reason, summary.errors)
    return build_report(out / "run", None, write=False)


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_pattern_suite_implant_is_found_live(pattern, suite_report):
    check_implant(suite_report, pattern)


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_pattern_suite_control_stays_clean_live(pattern, suite_report):
    check_control(suite_report, pattern)
