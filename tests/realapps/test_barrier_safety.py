"""benchmarks/barrier_safety.py without a GPU: the barrier line edit, the sets read from a report (the recorded
pattern-suite run and hand-made inline chains), compute-sanitizer's summary lines, the output comparison, the
verdict, and a dry run that edits and rebuilds with nvcc."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
RUN = ROOT / "tests" / "data" / "runs" / "pattern_suite"


def _load(name: str):
    # Imported by name, as the scripts import each other, so that they share one program_steps.StepError.
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


barrier_edit = _load("barrier_edit")
sanitizer_check = _load("sanitizer_check")
program_steps = _load("program_steps")
barrier_safety = _load("barrier_safety")


# ---- the line edit ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("  __syncthreads();  // why", "  (void)0 /* removed by barrier_safety: __syncthreads() */;  // why"),
        (
            "  if (tid < 32) __syncthreads();",
            "  if (tid < 32) (void)0 /* removed by barrier_safety: __syncthreads() */;",
        ),
        ("    cg::sync(cta);", "    (void)0 /* removed by barrier_safety: cg::sync(cta) */;"),
        ("  cta.sync();", "  (void)0 /* removed by barrier_safety: cta.sync() */;"),
        (
            "  cg::this_thread_block().sync();",
            "  (void)0 /* removed by barrier_safety: cg::this_thread_block().sync() */;",
        ),
        ("  __syncwarp(0xffffffffu);", "  (void)0 /* removed by barrier_safety: __syncwarp(0xffffffffu) */;"),
        (
            "    t = s_data[idx -  1];  __syncthreads();",
            "    t = s_data[idx -  1];  (void)0 /* removed by barrier_safety: __syncthreads() */;",
        ),
    ],
)
def test_barrier_call_becomes_a_no_op_with_a_comment(line, expected):
    assert barrier_edit.remove_barriers(["int x;", line], [2]) == ["int x;", expected]


def test_every_barrier_call_of_a_line_goes():
    (edited,) = barrier_edit.remove_barriers(["__syncthreads(); a(); __syncwarp();"], [1])
    assert "__syncthreads(); a" not in edited and edited.count("(void)0") == 2 and "a();" in edited


@pytest.mark.parametrize(
    "line, reason",
    [
        ("  out[i] = 2.0f * v;", "no recognisable barrier call"),
        ("  // __syncthreads();", "no recognisable barrier call"),
        ('  printf("__syncthreads()\\n");', "no recognisable barrier call"),
        ("  int n = __syncthreads_count(p);", "returns a block-wide value"),
        ("  __syncwarp(mask_of(a,", "continues on the next line"),
    ],
)
def test_lines_without_a_plain_barrier_are_refused(line, reason):
    with pytest.raises(barrier_edit.EditRefused, match=reason):
        barrier_edit.remove_barriers([line], [1])


def test_a_line_outside_the_file_is_refused():
    with pytest.raises(barrier_edit.EditRefused, match="outside the file"):
        barrier_edit.remove_barriers(["__syncthreads();"], [3])


# ---- the sets read from a report ----------------------------------------------------------------------------


@functools.cache
def recorded_report() -> dict:
    from reuselens.analyzer.pipeline import build_report

    if not (RUN / "traces").is_dir():
        pytest.fail(f"the recorded pattern-suite run is missing: {RUN}")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(RUN, Path(tmp) / "pattern_suite")
        return build_report(Path(tmp) / "pattern_suite", None, write=False)


def test_recorded_pattern_suite_run_gives_one_set_on_the_implanted_line():
    # The run was recorded at another path (/work/main/...): the line is found by the path's tail in the tree.
    sets = barrier_edit.removal_sets(recorded_report(), ROOT / "tests" / "gpu")
    assert [(s.kernel.split("(")[0], [str(x) for x in s.lines], s.refused) for s in sets] == [
        ("implant_removable_barrier", ["pattern_suite.cu:362"], [])
    ]
    source = (ROOT / "tests" / "gpu" / "pattern_suite.cu").read_text().splitlines()
    assert "implant: removable-barrier" in source[361]


def _kernel(tree: Path, findings_frames: list[list], kept_frames: list[list] | None = None) -> dict:
    def source(frames):
        (file, line), *outer = frames
        return {"file": file, "line": line, "inline": [{"file": f, "line": n} for f, n in outer]}

    findings, barriers = [], []
    for pc, frames in enumerate(findings_frames):
        barrier = {"function": "_Z1kv", "pc": 16 * pc, "kind": "block", "source": source(frames)}
        barriers.append(dict(barrier))
        findings.append({"pattern": "removable-barrier", "barrier": barrier, "metrics": {"barrier_pcs": [16 * pc]}})
    for pc, frames in enumerate(kept_frames or [], start=100):
        barriers.append({"function": "_Z1kv", "pc": 16 * pc, "kind": "block", "source": source(frames)})
    return {"name": "k()", "grid": [4, 1, 1], "block": [128, 1, 1], "findings": findings, "barriers": barriers}


def test_a_cooperative_groups_barrier_is_placed_on_its_call_site(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "k.cu").write_text("x\n")
    header = "/usr/local/cuda/include/cooperative_groups/details/sync.h"
    kernel = _kernel(tmp_path, [[(header, 80), ("/elsewhere/build/app/k.cu", 1)], [(header, 80)]])
    (removal,) = barrier_edit.removal_sets({"kernels": [kernel]}, tmp_path)
    assert [str(x) for x in removal.lines] == ["app/k.cu:1"]
    assert removal.refused == [f"barrier at pc 16 is not in the program's sources ({header}:80)"]
    assert removal.config == "grid (4, 1, 1) block (128, 1, 1)"


def test_a_line_that_also_holds_a_kept_barrier_is_named(tmp_path):
    (tmp_path / "k.cu").write_text("x\n")
    kernel = _kernel(tmp_path, [[(str(tmp_path / "k.cu"), 1)]], kept_frames=[[(str(tmp_path / "k.cu"), 1)]])
    (removal,) = barrier_edit.removal_sets({"kernels": [kernel]}, tmp_path)
    assert removal.kept_on_same_line == ["k.cu:1 also holds the barrier at pc 1600, which stays"]


def test_kernels_without_the_finding_give_no_set():
    report = copy.deepcopy(recorded_report())
    for kernel in report["kernels"]:
        kernel["findings"] = [f for f in kernel.get("findings", []) if f["pattern"] != "removable-barrier"]
    assert barrier_edit.removal_sets(report, ROOT / "tests" / "gpu") == []


# ---- compute-sanitizer ----------------------------------------------------------------------------------------


def test_racecheck_summary():
    log = (
        "========= COMPUTE-SANITIZER\n========= Error: Race reported between Write access at k()+0x90\n"
        "========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)\n"
    )
    summary = sanitizer_check.parse_summary(log)
    assert (summary.hazards, summary.hazard_errors, summary.hazard_warnings, summary.errors) == (3, 2, 1, None)
    assert summary.problems() == 3


def test_clean_racecheck_and_synccheck_summaries():
    race = sanitizer_check.parse_summary("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)")
    sync = sanitizer_check.parse_summary("========= ERROR SUMMARY: 0 errors")
    assert (race.hazards, race.errors, sync.hazards, sync.errors) == (0, None, None, 0)
    assert sanitizer_check.parse_summary("========= ERROR SUMMARY: 1 error").errors == 1


def test_a_log_without_summary_is_not_clean():
    assert sanitizer_check.parse_summary("========= COMPUTE-SANITIZER\nkilled\n") is None


def test_sanitizer_lines_are_taken_out_of_the_program_output():
    assert sanitizer_check.program_stdout(
        "========= COMPUTE-SANITIZER\nresult 42\n========= ERROR SUMMARY: 0 errors"
    ) == ("result 42")


def test_a_sanitizer_that_prints_no_summary_is_a_step_failure(tmp_path):
    fake = tmp_path / "sanitizer"
    fake.write_text("#!/bin/sh\necho 'cannot start'\nexit 7\n")
    fake.chmod(0o755)
    with pytest.raises(program_steps.StepError, match="racecheck true: no summary line .exit 7.: cannot start"):
        sanitizer_check.check(str(fake), "racecheck", ["true"], tmp_path / "log", timeout=30, cwd=tmp_path)


# ---- output comparison and verdict -----------------------------------------------------------------------------


def test_timings_differ_results_do_not():
    first = "Test passed\nGPU Time in seconds:\n0.123\nbandwidth 812.5 GB/s\nsum = 4096\n"
    second = "Test passed\nGPU Time in seconds:\n0.119\nbandwidth 790.1 GB/s\nsum = 4096\n"
    assert program_steps.same_output((first, second), first.replace("0.123", "0.5").replace("812.5", "1.0")) == (
        True,
        "",
    )
    same, why = program_steps.same_output((first, second), first.replace("4096", "4095"))
    assert not same and why == "line 5: expected 'sum = 4096', got 'sum = 4095'"


def test_the_programs_own_path_is_no_result():
    """cuda-samples print argv[0]; the variant runs from another folder (seen on the GPU with reduction)."""
    original = "/tmp/bs/cs_reduction/original/cs_reduction Starting...\nresult = 42\n"
    variant = "/tmp/bs/cs_reduction/removal0/cs_reduction Starting...\nresult = 42\n"
    assert program_steps.same_output((original, original), variant) == (True, "")
    assert not program_steps.same_output((original, original), variant.replace("42", "41"))[0]


def _removal(hazards=(0, 0), errors=(0, 0), same=True):
    return {
        "racecheck": {
            "before": {"hazards": hazards[0], "errors": None},
            "after": {"hazards": hazards[1], "errors": None},
        },
        "synccheck": {
            "before": {"hazards": None, "errors": errors[0]},
            "after": {"hazards": None, "errors": errors[1]},
        },
        "output_same": same,
        "output_difference": "" if same else "line 1: expected 'ok', got 'bad'",
    }


def test_unsafe_reasons():
    assert barrier_safety.unsafe_reasons(_removal()) == []
    assert barrier_safety.unsafe_reasons(_removal(hazards=(1, 1))) == []  # the original already had it
    assert barrier_safety.unsafe_reasons(_removal(hazards=(0, 4), errors=(0, 1), same=False)) == [
        "racecheck hazards 0 -> 4",
        "synccheck errors 0 -> 1",
        "different output: line 1: expected 'ok', got 'bad'",
    ]


def test_exit_status_says_when_nothing_was_tested():
    assert barrier_safety.exit_status([{"program": "a", "removals": []}], False) == (
        3,
        "no program had a removable-barrier finding: nothing was tested",
    )
    unsafe = {"program": "a", "removals": [{"kernels": ["k"], "unsafe": ["racecheck hazards 0 -> 4"]}]}
    assert barrier_safety.exit_status([unsafe], False)[0] == 1
    failed = {"program": "a", "removals": [{"kernels": ["k"], "error": "nvcc failed"}]}
    assert barrier_safety.exit_status([failed], False)[0] == 3


# ---- dry run: edit and rebuild with the real nvcc ----------------------------------------------------------------


def _nvcc() -> str:
    found = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").is_file() else None)
    if not found:
        pytest.skip("nvcc is not installed: the dry run builds the programs")
    return found


def test_dry_run_edits_and_rebuilds_the_pattern_suite(tmp_path, capsys):
    nvcc = _nvcc()
    report = tmp_path / "report.json"
    report.write_text(json.dumps(recorded_report()))
    out = tmp_path / "out"
    status = barrier_safety.main(
        [
            "--out",
            str(out),
            "--suite",
            "patterns",
            "--programs",
            "pattern_suite",
            "--dry-run",
            "--nvcc",
            nvcc,
            "--reports",
            f"pattern_suite={report}",
        ]
    )
    assert status == 0, capsys.readouterr().out
    edited = (out / "pattern_suite" / "removal0" / "gpu" / "pattern_suite.cu").read_text().splitlines()
    assert edited[361].startswith("  (void)0 /* removed by barrier_safety: __syncthreads() */;")
    assert (out / "pattern_suite" / "removal0" / "pattern_suite").is_file()
    document = json.loads((out / "barrier_safety.json").read_text())
    assert document["format"] == "reuselens-barrier-safety" and document["programs"][0]["removals"][0]["removed"] == [
        "pattern_suite.cu:362"
    ]


def test_dry_run_without_findings_exits_3(tmp_path, capsys):
    nvcc = _nvcc()
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"kernels": []}))
    status = barrier_safety.main(
        [
            "--out",
            str(tmp_path / "out"),
            "--suite",
            "patterns",
            "--programs",
            "pattern_suite",
            "--dry-run",
            "--nvcc",
            nvcc,
            "--reports",
            f"pattern_suite={report}",
        ]
    )
    assert status == 3
    assert "no program had a removable-barrier finding: nothing was tested" in capsys.readouterr().out
