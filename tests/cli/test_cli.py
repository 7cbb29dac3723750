"""The reuselens console script: every subcommand's output and its error paths (one line, exit 2)."""

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reuselens.analyzer.patterns.settings import THRESHOLDS
from reuselens.cli.common import add_analysis_options, settings_from_args
from reuselens.cli.main import main

FIXTURE_SOURCE = (Path(__file__).parent / "fixtures" / "scale.cu").as_posix()


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_table_lists_findings_most_wasteful_first(capsys, before_report):
    code, out, _ = run_cli(capsys, "report", str(before_report))
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:5] == ["#", "severity", "file:line", "kernel", "pattern"]
    # the file:line column fits long paths with a middle ellipsis, so only the end of the path is certain
    assert f"{Path(FIXTURE_SOURCE).name}:7" in lines[1] and "redundant-rar" in lines[1] and "4.1 KB" in lines[1]
    assert f"{Path(FIXTURE_SOURCE).name}:8" in lines[2] and "small-read-only-broadcast" in lines[2]


def test_report_reads_a_run_directory(capsys, run_dir_with_report):
    code, out, _ = run_cli(capsys, "report", str(run_dir_with_report), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["format"] == "reuselens-findings" and data["version"] == 1
    assert [f["pattern"] for f in data["findings"]] == ["redundant-rar", "small-read-only-broadcast"]
    assert data["findings"][0]["line"] == 7 and data["findings"][0]["fix"] == "register-promotion"


def test_report_csv_and_top(capsys, before_report):
    code, out, _ = run_cli(capsys, "report", str(before_report), "--format", "csv", "--top", "1")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1
    assert rows[0]["pattern"] == "redundant-rar" and rows[0]["line"] == "7" and rows[0]["waste_bytes"] == "4096"


def test_report_sarif_has_rules_levels_and_related_origins(capsys, before_report):
    code, out, _ = run_cli(capsys, "report", str(before_report), "--format", "sarif")
    assert code == 0
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == {"redundant-rar", "small-read-only-broadcast"}
    rar = next(r for r in run["results"] if r["ruleId"] == "redundant-rar")
    assert rar["level"] == "warning"
    assert rar["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert rar["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert rar["partialFingerprints"]["reuselensFindingId/v1"] == "scale:redundant-rar:0xa0"
    broadcast = next(r for r in run["results"] if r["ruleId"] == "small-read-only-broadcast")
    assert broadcast["level"] == "note"


def test_report_sarif_relative_to_source_root(capsys, before_report, tmp_path):
    target = tmp_path / "out.sarif"
    code, _, _ = run_cli(
        capsys,
        "report",
        str(before_report),
        "--format",
        "sarif",
        "--source-root",
        str(Path(FIXTURE_SOURCE).parent),
        "-o",
        str(target),
    )
    assert code == 0
    location = json.loads(target.read_text())["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "scale.cu", "uriBaseId": "SRCROOT"}


def test_graph_html_is_self_contained(capsys, before_report):
    code, out, _ = run_cli(capsys, "graph", str(before_report), "--format", "html")
    assert code == 0
    assert out.startswith("<!DOCTYPE html>") and "<svg" in out
    assert "http://" not in out.replace('xmlns="http://www.w3.org/2000/svg"', "").replace("https://", "")
    assert "<script" not in out
    assert "scale.cu:7" in out and "intra-thread" in out


def test_graph_unknown_kernel_is_one_line_error(capsys, before_report):
    code, out, err = run_cli(capsys, "graph", str(before_report), "--kernel", "nosuchkernel")
    assert code == 2
    assert err.count("\n") == 1 and "no kernel matches 'nosuchkernel'" in err


def test_diff_reports_removed_pattern_and_traffic(capsys, before_report, after_report):
    code, out, _ = run_cli(capsys, "diff", str(before_report), str(after_report), "--format", "json")
    assert code == 0
    kernel = json.loads(out)["kernels"][0]
    assert kernel["status"] == "changed"
    assert kernel["patterns"]["redundant-rar"]["verdict"] == "removed"
    assert kernel["patterns"]["small-read-only-broadcast"]["verdict"] == "kept"
    assert kernel["traffic"]["instructions"] == {"before": 128, "after": 96, "delta": -32}
    code, out, _ = run_cli(capsys, "diff", str(before_report), str(after_report))
    assert "removed  redundant-rar" in out and "instructions" in out and "-25.0%" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["report", "{tmp}/missing/run"], "no such file or directory"),
        (["analyze", "{tmp}/missing/run"], "no such directory"),
        (["profile"], "no command to profile"),
        (["profile", "--launch-range", "5:2", "--", "true"], "--launch-range '5:2'"),
        (["report", "--prefix-map", "nonsense", "{tmp}"], "not a run directory"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(capsys, tmp_path, argv, message):
    # {tmp}: a fresh folder of this test, never whatever an earlier run left in /tmp
    code, _, err = run_cli(capsys, *[arg.format(tmp=tmp_path) for arg in argv])
    assert code == 2
    assert err.startswith("reuselens: error: ") and message in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_not_a_run_directory(capsys, tmp_path):
    code, _, err = run_cli(capsys, "analyze", str(tmp_path))
    assert code == 2 and "not a run directory (no run.json" in err


def test_corrupt_report_file(capsys, tmp_path):
    broken = tmp_path / "report.json"
    broken.write_text("{not json")
    code, _, err = run_cli(capsys, "report", str(broken))
    assert code == 2 and str(broken) in err


def test_console_script_is_installed():
    result = subprocess.run([sys.executable, "-m", "reuselens", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("reuselens ")


def test_threshold_options_are_the_analyzers_thresholds():
    parser = argparse.ArgumentParser()
    add_analysis_options(parser)
    helps = {action.option_strings[0]: action.help for action in parser._actions if action.option_strings}
    for threshold in THRESHOLDS:
        assert helps[threshold.option] == threshold.help
        assert f"default {threshold.default:g})" in threshold.help
    argv = [word for threshold in THRESHOLDS for word in (threshold.option, "2")]
    assert settings_from_args(parser.parse_args(argv)) == {threshold.key: 2.0 for threshold in THRESHOLDS}
