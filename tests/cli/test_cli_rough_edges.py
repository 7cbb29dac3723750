"""What a first user runs into: output paths, values that select nothing, the app's exit status, one wording per
broken run.json, and messages that name what is wrong (issue #16)."""

import json
import shutil
import sys
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher
from reuselens.analyzer.errors import RunDirectoryError
from reuselens.analyzer.lineinfo import SourceMapper
from reuselens.analyzer.replay import RECORD_BYTES, replay_run
from reuselens.cli.main import main
from reuselens.collector.manifest import read_back

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
DEMO_SOURCE = Path(sys.modules["reuselens"].__file__).parent / "demo" / "src" / "demo.cu"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, message):
    assert code == 2, err
    assert err.startswith("reuselens: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert message in err, err


@pytest.fixture
def microbench_run(tmp_path):
    target = tmp_path / "microbench"
    shutil.copytree(RUNS / "microbench", target)
    return target


# -- output paths ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["report"], ["graph", "--format", "dot"]])
def test_output_into_a_missing_folder_is_one_line(capsys, before_report, tmp_path, command):
    target = tmp_path / "no-such-folder" / "out.txt"
    code, _, err = run_cli(capsys, command[0], before_report, *command[1:], "-o", target)
    assert_one_line_error(code, err, f"folder {target.parent} does not exist")


def test_output_onto_a_folder_is_one_line(capsys, before_report, tmp_path):
    code, _, err = run_cli(capsys, "report", before_report, "-o", tmp_path)
    assert_one_line_error(code, err, "is a directory; -o takes a file name")


def test_demo_output_that_is_a_file_is_one_line(capsys, tmp_path):
    existing = tmp_path / "notes.txt"
    existing.write_text("mine")
    code, _, err = run_cli(capsys, "demo", "--output", existing)
    assert_one_line_error(code, err, "exists and is a file")
    assert existing.read_text() == "mine"


# -- values that select nothing --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["report", "analyze", "demo"])
@pytest.mark.parametrize("top", ["0", "-1", "two"])
def test_top_must_be_a_positive_count(capsys, before_report, command, top):
    with pytest.raises(SystemExit) as exit_info:
        run_cli(capsys, command, *([before_report] if command != "demo" else []), "--top", top)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "argument --top: " in err
    assert "positive number" in err or "not a whole number" in err


# -- the application's exit status ---------------------------------------------------------------------------


@pytest.fixture
def fake_collector(monkeypatch, tmp_path):
    """profile() without a GPU: an empty stand-in tool library (the loader ignores it) and no GPU check."""
    fake_lib = tmp_path / "fake" / launcher.TOOL_LIBRARY
    fake_lib.parent.mkdir()
    fake_lib.write_bytes(b"")
    (fake_lib.parent / launcher.PATCH_FATBIN).write_bytes(b"")
    monkeypatch.setattr(launcher, "check_gpu", lambda: "")
    monkeypatch.setattr(launcher, "require_driver", lambda: None)
    monkeypatch.setattr(launcher, "find_tool_library", lambda *a, **k: fake_lib)


def _app(tmp_path, body):
    app = tmp_path / "app.sh"
    app.write_text(f"#!/bin/sh\n{body}\n")
    app.chmod(0o755)
    return app


@pytest.mark.parametrize("analyse", [[], ["--no-analyze"]])
def test_profile_passes_the_apps_exit_status_through(capsys, fake_collector, tmp_path, analyse):
    app = _app(tmp_path, "exit 7")
    code, out, err = run_cli(capsys, "profile", "--run-dir", tmp_path / "run", *analyse, "--", app)
    assert code == 7
    assert "warning: the application failed (exit status 7)" in (err if analyse else out)


def test_profile_reports_an_app_killed_by_a_signal_as_128_plus_n(capsys, fake_collector, tmp_path):
    app = _app(tmp_path, "kill -SEGV $$")
    code, _, err = run_cli(capsys, "profile", "--run-dir", tmp_path / "run", "--no-analyze", "--", app)
    assert code == 128 + 11
    assert "partial run: app crashed (SIGSEGV)" in err


def test_profile_of_a_successful_app_exits_0(capsys, fake_collector, tmp_path):
    app = _app(tmp_path, "exit 0")
    code, out, _ = run_cli(capsys, "profile", "--run-dir", tmp_path / "run", "--", app)
    assert code == 0 and "application failed" not in out


# -- one reader of run.json, one wording per error -----------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "unreadable run manifest"),
        ('{"format": "something-else", "version": 1}', "not a ReuseLens run manifest"),
        ('{"format": "reuselens-run", "version": 99}', "run format version 99 is not supported"),
    ],
)
def test_a_broken_run_json_reads_the_same_everywhere(capsys, microbench_run, content, message):
    manifest = microbench_run / "run.json"
    manifest.write_text(content)
    (microbench_run / "analysis.json").unlink()  # so analyze replays, through analyzer.replay
    seen = set()
    for argv in (["analyze", microbench_run], ["report", microbench_run], ["lines", microbench_run]):
        code, _, err = run_cli(capsys, *argv)
        assert_one_line_error(code, err, message)
        seen.add(err.strip().removeprefix("reuselens: error: ").split(" (")[0])
    for reader in (lambda: replay_run(microbench_run), lambda: SourceMapper.from_run(microbench_run)):
        with pytest.raises(RunDirectoryError) as info:
            reader()
        seen.add(str(info.value).split(" (")[0])
    assert len(seen) == 1, seen
    assert str(manifest.resolve()) in seen.pop()
    assert read_back(microbench_run) is None


# -- messages that name what is wrong ------------------------------------------------------------------------


def test_reanalysing_the_demo_copy_keeps_pointing_at_the_packaged_sources(capsys, tmp_path):
    copy = tmp_path / "demo"
    assert run_cli(capsys, "demo", "--output", copy)[0] == 0
    assert run_cli(capsys, "analyze", copy, "--quiet")[0] == 0
    report = json.loads((copy / "report.json").read_text())
    files = {node["source"]["file"] for kernel in report["kernels"] for node in kernel["nodes"] if node.get("source")}
    assert files == {str(DEMO_SOURCE)}


def test_a_truncated_trace_says_how_many_whole_records_it_holds(capsys, microbench_run):
    (microbench_run / "analysis.json").unlink()
    trace = microbench_run / "traces" / "0.rltrace"
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) - RECORD_BYTES + 72])  # the last record keeps 72 of its bytes
    code, _, err = run_cli(capsys, "analyze", microbench_run)
    assert_one_line_error(
        code,
        err,
        f"{trace.resolve()}: corrupt or truncated trace: the header says 128 records, "
        f"the file holds 127 whole {RECORD_BYTES}-byte records and 72 bytes of a "
        "cut-off one",
    )


def test_a_corrupt_modules_note_names_its_file(capsys, microbench_run):
    (module,) = (microbench_run / "modules").iterdir()
    module.write_bytes(module.read_bytes()[:3000])
    code, out, _ = run_cli(capsys, "analyze", microbench_run)
    assert code == 0
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert f"note: {module.resolve()}: section header table lies outside the file (truncated?)" in notes


def test_dot_labels_carry_file_and_line(capsys, before_report):
    code, out, _ = run_cli(capsys, "graph", before_report, "--format", "dot")
    assert code == 0
    node_lines = [line for line in out.splitlines() if "[label=" in line and "->" not in line]
    assert any(line.endswith('\\nscale.cu:7"];') for line in node_lines), node_lines


def test_profile_object_level_prints_the_memory_table_and_writes_a_report_without_kernels(
    capsys, fake_collector, tmp_path
):
    # GIVEN an app whose collector writes what an object-level run of tests/gpu/memory_waste.cu wrote on the H200
    recorded = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "memory_waste_objects"
    (launcher.find_tool_library().parent / launcher.OBJECTS_PATCH_FATBIN).write_bytes(b"")
    app = _app(tmp_path, f'cp "{recorded}/run.json" "{recorded}/object_touches.json" "$REUSELENS_RUN_DIR"/')
    code, out, _ = run_cli(capsys, "profile", "--object-level", "--run-dir", tmp_path / "run", "--", app)
    # THEN the memory table is printed, and report.json (what an editor loads the run through) has no kernel
    assert code == 0
    assert "peak device memory" in out and "unused_allocation" in out
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["kernels"] == [] and report["notes"][0].startswith("object-level profile")


@pytest.mark.parametrize(
    "value, message",
    [
        ("2", "2 is not a share between 0 and 1"),
        ("nan", "nan is not a share between 0 and 1"),
        ("one", "'one' is not a number"),
    ],
)
def test_profile_refuses_an_approximation_share_out_of_range(capsys, tmp_path, value, message):
    with pytest.raises(SystemExit) as exit_info:  # argparse's own usage error
        main(["profile", "--run-dir", str(tmp_path / "run"), "--values", "--values-approx", value])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert f"error: argument --values-approx: {message}" in err


def test_profile_refuses_an_approximation_share_without_values(capsys, tmp_path):
    code, _out, err = run_cli(capsys, "profile", "--run-dir", tmp_path / "run", "--values-approx", "0.01", "--", "./a")
    assert_one_line_error(code, err, "--values-approx sets the approximate redundancy of a --values profile")
