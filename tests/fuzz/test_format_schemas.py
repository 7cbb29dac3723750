"""Each reader checks its format against the documented schema (analyzer/schema.py): inputs the fuzz harnesses
turned into tracebacks end in one line naming the file and the field."""

from __future__ import annotations

import json
import shutil

import pytest

from reuselens.analyzer import engine_result, report, rundir
from reuselens.analyzer.errors import ReportError, RunDirectoryError, TraceError
from tests.fuzz.harnesses import REPO, run_cli

SEED = REPO / "tests/data/runs/multistream"


@pytest.fixture
def run_copy(tmp_path):
    target = tmp_path / "run"
    shutil.copytree(SEED, target)
    return target


def _edit(path, change):
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")


def test_deeply_nested_json_is_refused_by_every_reader(run_copy):
    deep = b'{"format": "reuselens-report", "version": 1, "kernels": [], "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ReportError, match="nested too deeply"):
        report.parse(deep, "report.json")
    (run_copy / "analysis.json").write_bytes(deep)
    with pytest.raises(TraceError, match=r"analysis.json: unreadable online analysis \(nested too deeply\)"):
        engine_result.load(run_copy / "analysis.json")
    (run_copy / "run.json").write_bytes(deep)
    with pytest.raises(RunDirectoryError, match="run.json: unreadable run manifest"):
        rundir.open_run(run_copy)


def test_analysis_edge_to_an_unknown_node_is_one_line(run_copy):
    _edit(run_copy / "analysis.json", lambda d: d["kernels"][0]["edges"][0].update(to=4096))
    assert run_cli(["analyze", str(run_copy), "--workers", "1", "--quiet"]) == "rejected"
    with pytest.raises(TraceError, match=r"kernels\[0\]\.edges\[0\]\.to: 4096 is not a node id"):
        engine_result.load(run_copy / "analysis.json")


def test_analysis_distribution_of_nan_is_refused(run_copy):
    _edit(run_copy / "analysis.json", lambda d: d["kernels"][0]["nodes"][1].update(lanes=[[float("nan"), 1]]))
    with pytest.raises(TraceError, match=r"kernels\[0\]\.nodes\[1\]\.lanes\[0\]\[0\]: expected an integer"):
        engine_result.load(run_copy / "analysis.json")


def test_trace_path_with_a_nul_character_is_refused_before_replay(run_copy):
    (run_copy / "analysis.json").unlink()
    _edit(run_copy / "run.json", lambda d: d["launches"][0].update(trace="traces/0.rl\0trace"))
    assert run_cli(["analyze", str(run_copy), "--workers", "1", "--quiet"]) == "rejected"
    with pytest.raises(RunDirectoryError, match=r"launches\[0\]\.trace: expected a path, .* NUL"):
        rundir.open_run(run_copy)


def test_function_id_that_is_not_an_integer_is_refused(run_copy):
    _edit(run_copy / "run.json", lambda d: d["functions"][0].update(id="seven"))
    with pytest.raises(RunDirectoryError, match=r"run.json: functions\[0\]\.id: expected an integer"):
        rundir.open_run(run_copy)


def test_report_with_a_string_line_names_the_field(tmp_path):
    doc = json.loads((REPO / "tests/lsp/fixtures/run1/report.json").read_text(encoding="utf-8"))
    doc["kernels"][0]["nodes"][1]["source"]["line"] = "forty"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run_cli(["report", str(path)]) == "rejected"
    with pytest.raises(ReportError, match=r"report.json: kernels\[0\]\.nodes\[1\]\.source\.line: expected an integer"):
        report.load(path)


def test_valid_documents_still_pass():
    for run in (*sorted((REPO / "tests/data/runs").iterdir()), REPO / "reuselens/demo/run"):
        rundir.open_run(run)
        if (run / "analysis.json").exists():
            engine_result.load(run / "analysis.json")
    for fixture in (REPO / "tests/lsp/fixtures").glob("run*/report.json"):
        report.load(fixture)


def test_report_kernel_without_an_id_is_refused(tmp_path):
    """`reuselens graph` on several kernels lists them by id: a kernel without one was a KeyError."""
    doc = json.loads((REPO / "tests/lsp/fixtures/run1/report.json").read_text(encoding="utf-8"))
    del doc["kernels"][1]["id"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run_cli(["graph", str(path)]) == "rejected"
    with pytest.raises(ReportError, match=r"report.json: kernels\[1\]\.id is missing"):
        report.load(path)


def test_report_instruction_node_without_a_pc_is_refused(tmp_path):
    """The DOT and GraphML writers title a node by its pc: a memory node without one was a KeyError."""
    doc = json.loads((REPO / "tests/lsp/fixtures/run1/report.json").read_text(encoding="utf-8"))
    del doc["kernels"][0]["nodes"][1]["pc"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run_cli(["graph", str(path), "--kernel", doc["kernels"][0]["id"], "--format", "dot"]) == "rejected"
    with pytest.raises(ReportError, match=r"report.json: kernels\[0\]\.nodes\[1\]\.pc: missing"):
        report.load(path)
