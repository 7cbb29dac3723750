"""The pattern test programs (tests/gpu/patterns/) compile with nvcc, and each fix changes what it should.

Static checks on the PTX nvcc keeps: the fixed softmax has no shared-memory row copy, the fixed LUT reads its
table from the constant bank, the fixed transpose pads its tile, the fixed reduction loads each element once.
Running them needs a GPU: tests/gpu/patterns/test_gpu_programs.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reuselens.analyzer.patterns import PATTERNS

PROGRAMS = Path(__file__).resolve().parents[1] / "gpu" / "patterns"
NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)
SOURCES = sorted(p.name for p in PROGRAMS.glob("*.cu"))


def test_cases_file_names_existing_programs_and_patterns():
    cases = json.loads((PROGRAMS / "cases.json").read_text())
    assert cases["format"] == "reuselens-pattern-cases" and cases["version"] == 1
    assert {c["name"] for c in cases["cases"]} == {
        "softmax_smem",
        "lut_constant",
        "transpose_conflict",
        "reduction_reread",
    }
    for case in cases["cases"]:
        assert (PROGRAMS / case["before"]).is_file() and (PROGRAMS / case["after"]).is_file()
        assert set(case["patterns"]) <= set(PATTERNS)
        assert re.search(case["kernel"], (PROGRAMS / case["before"]).read_text())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    """Build every program as the benchmark does (-O3 -lineinfo -arch=sm_90), keeping the PTX."""
    if NVCC is None:
        pytest.skip("nvcc not found on PATH: cannot compile the CUDA pattern programs")
    out = tmp_path_factory.mktemp("cuda")

    def one(name: str) -> tuple[str, str]:
        stem = name[:-3]
        keep = out / f"{stem}.keep"
        keep.mkdir()
        done = subprocess.run(
            [
                NVCC,
                "-O3",
                "-lineinfo",
                "-arch=sm_90",
                "--keep",
                "--keep-dir",
                str(keep),
                "-o",
                str(out / stem),
                str(PROGRAMS / name),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"nvcc {name} failed:\n{done.stderr}"
        ptx = list(keep.glob("*.ptx"))
        assert ptx, f"nvcc kept no PTX for {name}"
        return stem, ptx[0].read_text()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, SOURCES))


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


def test_every_program_compiles(built):
    assert sorted(built) == sorted(name[:-3] for name in SOURCES) and len(built) == 8


def test_softmax_fix_removes_the_shared_row_copy(built):
    before, after = built["softmax_smem"], built["softmax_smem_fixed"]
    assert ".extern .shared" in before and ".extern .shared" not in after
    assert count(r"\b(ld|st)\.shared", before) > count(r"\b(ld|st)\.shared", after) > 0  # reduction buffer stays
    assert ".local" not in after  # the register copy did not spill


def test_lut_fix_reads_the_table_from_the_constant_bank(built):
    before, after = built["lut_constant"], built["lut_constant_fixed"]
    assert count(r"\bld\.const", before) == 0 and count(r"\bld\.const", after) > 0
    assert count(r"\bld\.global", after) == 1 < count(r"\bld\.global", before)  # only x[i] is left


def test_transpose_fix_pads_the_tile(built):
    assert re.search(r"\.shared \.align 4 \.b8 \w*tile\[4096\]", built["transpose_conflict"])
    assert re.search(r"\.shared \.align 4 \.b8 \w*tile\[4224\]", built["transpose_conflict_fixed"])


def test_reduction_fix_loads_each_element_once(built):
    before, after = built["reduction_reread"], built["reduction_reread_fixed"]
    # three loops over the row (each a load site) before; one unrolled load per register slot after
    assert count(r"\bld\.global", after) == 2048 // 256
    assert ".local" not in after
    assert count(r"\bld\.global", before) >= 3
