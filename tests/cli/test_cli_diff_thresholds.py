"""`diff` in each pattern's own unit and "(changed)" only for a change; threshold options on a saved report.

The run is the microbenchmark recorded on the H200 (tests/data/runs/microbench), analysed once with the default
thresholds; each test works on its own copy.
"""

import json
import shutil
from pathlib import Path

import pytest

from reuselens.cli.main import main

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def analysed_microbench(tmp_path_factory):
    run = tmp_path_factory.mktemp("analysed") / "microbench"
    shutil.copytree(RUNS / "microbench", run)
    assert main(["analyze", str(run), "--quiet", "--workers", "2"]) == 0
    return run


@pytest.fixture
def run_dir(analysed_microbench, tmp_path):
    target = tmp_path / "microbench"
    shutil.copytree(analysed_microbench, target)
    return target


def _findings_json(capsys, *argv):
    code, out, err = run_cli(capsys, "report", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)["findings"]


def _without_graph(report_path: Path) -> None:
    report = json.loads(report_path.read_text())
    for kernel in report["kernels"]:
        # What names node ids goes too (findings, subgraphs, barrier spans): the reader refuses a report that
        # names nodes it does not carry (analyzer/schema.py).
        del kernel["nodes"], kernel["edges"]
        for key in ("findings", "subgraphs", "barriers"):
            if key in kernel:
                kernel[key] = []
    report_path.write_text(json.dumps(report))


# ------------------------------------------------------------------------------------------------ diff


def test_a_run_compared_with_itself_shows_no_change(capsys, run_dir):
    code, out, err = run_cli(capsys, "diff", run_dir, run_dir, "--format", "json")
    assert code == 0, err
    kernels = json.loads(out)["kernels"]
    assert kernels and {k["status"] for k in kernels} == {"unchanged"}
    code, out, _ = run_cli(capsys, "diff", run_dir, run_dir)
    assert "(changed)" not in out and out.count("(unchanged)") == len(kernels)


def test_a_kernel_is_changed_when_one_finding_goes_and_the_others_stay_unchanged(capsys, run_dir, tmp_path):
    report = json.loads((run_dir / "report.json").read_text())
    kernel = next(k for k in report["kernels"] if k["name"].startswith("void bank_conflict<32>"))
    kernel["findings"] = [f for f in kernel["findings"] if f["pattern"] != "bank-conflict"]
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(report))
    code, out, err = run_cli(capsys, "diff", run_dir / "report.json", fixed, "--format", "json")
    assert code == 0, err
    status = {k["kernel"]: k["status"] for k in json.loads(out)["kernels"]}
    assert status.pop("bank_conflict<32>") == "changed"
    assert set(status.values()) == {"unchanged"}


def test_diff_prints_bank_conflict_waste_in_wavefronts_as_report_does(capsys, run_dir):
    rows = _findings_json(capsys, run_dir)
    wavefronts = sum(
        r["waste_wavefronts"] for r in rows if r["kernel"] == "bank_conflict<32>" and r["pattern"] == "bank-conflict"
    )
    assert wavefronts > 0
    code, out, err = run_cli(capsys, "diff", run_dir, run_dir, "--format", "json")
    assert code == 0, err
    kernel = next(k for k in json.loads(out)["kernels"] if k["kernel"] == "bank_conflict<32>")
    conflict = kernel["patterns"]["bank-conflict"]
    assert conflict["unit"] == "wavefronts" and conflict["before"]["waste"] == wavefronts
    assert kernel["patterns"]["streaming-access"]["unit"] == "bytes"
    code, out, _ = run_cli(capsys, "diff", run_dir, run_dir)
    conflict_lines = [line for line in out.splitlines() if "bank-conflict" in line]
    assert conflict_lines and all(
        "wavefronts" in line and " KB" not in line and " B " not in line for line in conflict_lines
    )
    assert f"waste {wavefronts:,} wavefronts -> {wavefronts:,} wavefronts" in out


# ------------------------------------------------------------------------------------------ thresholds


def test_threshold_option_on_a_run_directory_rederives_as_analyze_would(capsys, run_dir, analysed_microbench, tmp_path):
    saved = (run_dir / "report.json").read_bytes()
    default = _findings_json(capsys, run_dir)
    rederived = _findings_json(capsys, run_dir, "--min-share", "0.3")
    assert 0 < len(rederived) < len(default)
    assert (run_dir / "report.json").read_bytes() == saved  # a reading command leaves the saved report alone
    fresh = tmp_path / "fresh"
    shutil.copytree(RUNS / "microbench", fresh)
    assert main(["analyze", str(fresh), "--quiet", "--workers", "2", "--min-share", "0.3"]) == 0
    capsys.readouterr()
    assert rederived == _findings_json(capsys, fresh)


def test_threshold_option_on_a_report_file_rederives_its_findings(capsys, run_dir):
    before = {r["kernel"] for r in _findings_json(capsys, run_dir / "report.json") if r["pattern"] == "bank-conflict"}
    after = {
        r["kernel"]
        for r in _findings_json(capsys, run_dir / "report.json", "--bank-conflict", "20")
        if r["pattern"] == "bank-conflict"
    }
    assert {"bank_conflict<32>", "bank_conflict<16>"} <= before
    assert after == {"bank_conflict<32>"}  # 32-way is above 20, 16-way is not


def test_a_report_file_without_its_graph_is_refused_in_one_line(capsys, run_dir):
    report = run_dir / "report.json"
    _without_graph(report)
    for command in (["report", report], ["graph", report, "--kernel", "k0"], ["diff", report, report]):
        code, _, err = run_cli(capsys, *command, "--min-share", "0.3")
        assert code == 2, command
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "cannot apply --min-share" in err and str(report) in err


def test_a_run_directory_whose_report_lost_its_graph_is_analysed_again(capsys, run_dir):
    wanted = _findings_json(capsys, run_dir, "--min-share", "0.3")
    _without_graph(run_dir / "report.json")
    saved = (run_dir / "report.json").read_bytes()
    assert _findings_json(capsys, run_dir, "--min-share", "0.3") == wanted
    assert (run_dir / "report.json").read_bytes() == saved


def test_a_threshold_equal_to_the_recorded_one_keeps_the_saved_findings(capsys, run_dir, monkeypatch):
    def must_not_rederive(*args, **kwargs):
        raise AssertionError("findings re-derived although no threshold changed")

    monkeypatch.setattr("reuselens.analyzer.rederive.find_report_findings", must_not_rederive)
    # the value it was made with: nothing to re-derive, the saved findings are printed
    assert _findings_json(capsys, run_dir / "report.json", "--delta", "0.8")


def test_an_invalid_threshold_is_an_error_even_with_a_saved_report(capsys, run_dir):
    code, _, err = run_cli(capsys, "report", run_dir, "--delta", "5")
    assert code == 2 and err.count("\n") == 1 and "threshold delta = 5.0 is invalid" in err
