"""Issue #8 pattern suite: tests/gpu/pattern_suite.cu has an implant and a control kernel for every pattern id.

The run recorded on the H200 (tests/data/runs/pattern_suite: run.json, modules/, traces/) is replayed through
analyzer.pipeline.build_report; per pattern, the implant kernel must carry a finding of that pattern on a line
marked `// implant: <pattern-id>`, and the control kernel none of it (and nothing but the allowed others of
pattern_suite_checks.ALLOWED_IN_CONTROL). The static tests check the source itself and that the implanted
accesses survive nvcc -O3 (SASS instruction counts); the live GPU version is in tests/gpu/patterns/.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from reuselens.analyzer.patterns import PATTERNS, VALUE_PATTERNS
from tests.lineinfo.nvdisasm_ref import find_tool
from tests.patterns.pattern_suite_checks import (
    NVCC_FLAGS,
    SOURCE,
    check_control,
    check_implant,
    find_kernel,
    kernel_name,
    marked_lines,
)

RUN = Path(__file__).resolve().parents[1] / "data" / "runs" / "pattern_suite"
NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)
# The value patterns need a run with values: their implants and controls are tests/gpu/value_redundancy.cu's
# (tests/engine/test_value_fixtures.py).
IDS = sorted(set(PATTERNS) - VALUE_PATTERNS)


@functools.cache
def recorded_report() -> dict[str, Any]:
    """The recorded run analysed with the default thresholds (on a copy: the pipeline may write next to it)."""
    from reuselens.analyzer.pipeline import build_report

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "pattern_suite"
        shutil.copytree(RUN, copy)
        return build_report(copy, None, write=False)


def report_or_fail() -> dict[str, Any]:
    if not (RUN / "run.json").is_file() or not (RUN / "traces").is_dir():
        pytest.fail(
            f"the recorded pattern-suite run is missing: {RUN} needs run.json, modules/ and traces/ "
            f"(record build/gpu/pattern_suite on the H200 with write_traces=True)"
        )
    return recorded_report()


# ---- the source ------------------------------------------------------------------------------------------------


def test_every_pattern_has_an_implant_a_control_and_a_marked_line():
    text = SOURCE.read_text()
    marks = marked_lines()
    assert set(marks) <= set(PATTERNS), f"markers name unknown pattern ids: {sorted(set(marks) - set(PATTERNS))}"
    for pattern in IDS:
        for prefix in ("implant", "control"):
            assert re.search(rf"__global__ void {kernel_name(prefix, pattern)}\(", text), (
                f"{SOURCE.name} has no kernel {kernel_name(prefix, pattern)}"
            )
        assert marks.get(pattern), f"no line is marked '// implant: {pattern}'"
        body = text.split(f"void {kernel_name('implant', pattern)}(", 1)[1].split("\n}\n", 1)[0]
        assert f"// implant: {pattern}" in body, f"the '{pattern}' marker is outside implant kernel"


# SASS opcode counts per kernel that show the implant survived -O3 (and that the fix removed it).
SASS_EXPECT: dict[str, dict[str, int]] = {
    "implant_redundant_rar": {"LDG": 2},  # the reload after the may-alias store
    "control_redundant_rar": {"LDG": 1},
    "implant_redundant_raw": {"LDG": 2, "STG": 3},  # out[i] stored, then loaded back
    "control_redundant_raw": {"LDG": 1, "STG": 3},
    "implant_redundant_waw": {"STG": 2},  # the dead zero store stays
    "control_redundant_waw": {"STG": 1},
    "implant_abuse_smem": {"STS": 8, "LDS": 8},  # zero-fill + 4 read-modify-writes + 4 reads
    "control_abuse_smem": {"STS": 0, "LDS": 0},
    "implant_broadcasting": {"LDG": 2, "BAR": 1},
    "implant_atomic_contention": {"RED": 1},
    "implant_constant_region": {"LDG": 9},  # x plus the 8 coefficients
    "control_constant_region": {"LDG": 1},
    "implant_hierarchical_reuse_block": {"LDG": 8},
    "control_hierarchical_reuse_block": {"LDG": 5, "LDS": 4},
    "control_streaming_access": {"LDG": 1, "STG": 1},  # one load PC: the loop stays rolled
    "implant_race_candidate": {"BAR": 2},
    "control_race_candidate": {"BAR": 3},
    "implant_removable_barrier": {"BAR": 1},
    "control_removable_barrier": {"BAR": 0},
}


def _opcode(instruction: str) -> str:
    op = re.sub(r"^@!?U?P\w+\s+", "", instruction.strip()).split(" ", 1)[0]
    base = op.split(".", 1)[0]
    return "RED" if base in ("RED", "REDG") else base


def test_implants_survive_nvcc_O3(tmp_path):
    cuobjdump = find_tool("cuobjdump")
    if NVCC is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump (PyPI nvidia-cuda-cuobjdump) to read the SASS")
    cubin = tmp_path / "pattern_suite.cubin"
    done = subprocess.run(
        [NVCC, *NVCC_FLAGS, "-Werror", "all-warnings", "-cubin", "-o", str(cubin), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"nvcc failed or warned:\n{done.stderr}"
    sass = subprocess.run(
        [cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    counts: dict[str, dict[str, int]] = {}
    for chunk in re.split(r"\n\s*Function : ", sass)[1:]:
        mangled = chunk.split("\n", 1)[0].strip()
        match = re.match(r"_Z\d+(\w+?)P", mangled)
        if not match:
            continue
        ops: dict[str, int] = {}
        for instruction in re.findall(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", chunk):
            op = _opcode(instruction)
            ops[op] = ops.get(op, 0) + 1
        counts[match.group(1)] = ops
    for kernel, expected in SASS_EXPECT.items():
        assert kernel in counts, f"{kernel} not in the SASS"
        got = {op: counts[kernel].get(op, 0) for op in expected}
        assert got == expected, f"{kernel}: SASS has {got}, expected {expected}"


# ---- the recorded run --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", IDS)
def test_recorded_implant_is_found_on_its_marked_line(pattern):
    check_implant(report_or_fail(), pattern)


@pytest.mark.parametrize("pattern", IDS)
def test_recorded_control_does_not_trigger_it(pattern):
    check_control(report_or_fail(), pattern)


# The redundant-access implants exist because a store (a load, for the dead store) through a pointer that may
# alias sits between the two accesses (tests/gpu/pattern_suite.cu says which); the finding must name it.
ALIAS_LINES = {
    "redundant-rar": "b[i] = 2.0f * x;",
    "redundant-raw": "aux[i] = x + 1.0f;",
    "redundant-waw": "float v = in[i];",
}


def line_in_kernel(kernel: str, text: str) -> int:
    """1-based line of the first line containing `text` at or after the start of `kernel`'s definition."""
    lines = SOURCE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if f"void {kernel}(" in line)
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


@pytest.mark.parametrize("pattern", sorted(ALIAS_LINES))
def test_recorded_alias_forced_redundancy_names_the_access_in_between_and_restrict(pattern):
    name = kernel_name("implant", pattern)
    kernel = find_kernel(report_or_fail(), name)
    finding = next(f for f in kernel["findings"] if f["pattern"] == pattern)
    line = line_in_kernel(name, ALIAS_LINES[pattern])
    assert f"{SOURCE.name}:{line} in between may alias it" in finding["message"]
    assert "__restrict__" in finding["message"]
