"""The CLI on runs recorded on the H200 (tests/data/runs, the bundled demo): what a user sees end to end."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reuselens.cli.main import main

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def microbench_run(tmp_path):
    target = tmp_path / "microbench"
    shutil.copytree(RUNS / "microbench", target)
    return target


def test_demo_finds_the_bank_conflict_and_the_thread_private_buffer(capsys, tmp_path):
    code, out, err = run_cli(capsys, "demo", "--output", tmp_path / "demo")
    assert code == 0, err
    report = json.loads((tmp_path / "demo" / "report.json").read_text())
    demo_source = Path(sys.modules["reuselens"].__file__).parent / "demo" / "src" / "demo.cu"
    lines = demo_source.read_text().splitlines()
    by_pattern = {}
    for kernel in report["kernels"]:
        nodes = {n["id"]: n for n in kernel["nodes"]}
        for finding in kernel["findings"]:
            for pc in finding["pcs"]:
                source = nodes[pc]["source"]
                assert source["file"] == str(demo_source) and source["exists"] is True
                by_pattern.setdefault(finding["pattern"], set()).add(source["line"])
    conflict_line = next(iter(by_pattern["bank-conflict"]))
    assert "tile[" in lines[conflict_line - 1]
    assert by_pattern["abuse-smem"] and all("vals[c]" in lines[line - 1] for line in by_pattern["abuse-smem"])
    assert "bank-conflict" in out and "abuse-smem" in out and "demo.cu:" in out


def test_demo_refuses_a_non_empty_output(capsys, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    code, _, err = run_cli(capsys, "demo", "--output", tmp_path / "x")
    assert code == 2 and "exists and is not empty" in err
    assert (tmp_path / "x" / "keep.txt").read_text() == "mine"


def test_analyze_then_report_and_graph_on_the_microbenchmarks(capsys, microbench_run, tmp_path):
    code, out, err = run_cli(capsys, "analyze", microbench_run, "--workers", "2")
    assert code == 0, err
    report = json.loads((microbench_run / "report.json").read_text())
    names = {k["mangled"] for k in report["kernels"]}
    assert "_Z9td_levelsPKfPf" in names and len(report["kernels"]) == 23
    assert "23 kernel configuration(s) analysed" in out

    code, out, _ = run_cli(capsys, "graph", microbench_run, "--kernel", "td_levels", "--format", "dot")
    assert code == 0 and out.lstrip().startswith("digraph")
    code, out, _ = run_cli(capsys, "graph", microbench_run, "--kernel", "td_levels", "--format", "graphml")
    assert code == 0 and "<graphml" in out
    html = tmp_path / "g.html"
    code, _, _ = run_cli(capsys, "graph", microbench_run, "--kernel", "td_levels", "-o", html)
    assert code == 0 and "microbench.cu:" in html.read_text()

    code, _, err = run_cli(capsys, "graph", microbench_run)
    assert code == 2 and "several kernels, choose one with --kernel" in err


def test_thresholds_change_the_findings(capsys, microbench_run):
    assert run_cli(capsys, "analyze", microbench_run, "--quiet")[0] == 0
    default = json.loads((microbench_run / "report.json").read_text())
    assert run_cli(capsys, "analyze", microbench_run, "--quiet", "--bank-conflict", "40")[0] == 0
    strict = json.loads((microbench_run / "report.json").read_text())

    def conflicts(report):
        return sum(f["pattern"] == "bank-conflict" for k in report["kernels"] for f in k["findings"])

    assert conflicts(default) > 0 and conflicts(strict) == 0


def test_invalid_threshold_is_one_line(capsys, microbench_run):
    code, _, err = run_cli(capsys, "analyze", microbench_run, "--delta", "7")
    assert code == 2 and err.count("\n") == 1 and "delta" in err


def test_partial_run_is_analysed_and_marked(capsys, tmp_path):
    target = tmp_path / "abort"
    shutil.copytree(RUNS / "app_abort", target)
    code, out, err = run_cli(capsys, "analyze", target)
    assert code == 0, err
    assert "warning: partial run (" in out


def test_profile_without_a_gpu_is_one_line(capsys, tmp_path):
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0:
        pytest.skip("a GPU is present: profiling would really run (covered by tests/collector GPU tests)")
    code, _, err = run_cli(capsys, "profile", "--run-dir", tmp_path / "run", "--", sys.executable, "-c", "pass")
    assert code == 2
    assert err.startswith("reuselens: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_online_analysis_is_used_instead_of_traces(capsys, microbench_run, tmp_path):
    from reuselens.analyzer.replay import replay_run

    (microbench_run / "analysis.json").unlink()  # the recorded online result: this analysis replays the traces
    assert run_cli(capsys, "analyze", microbench_run, "--quiet")[0] == 0
    from_traces = json.loads((microbench_run / "report.json").read_text())
    online = replay_run(microbench_run, workers=1)
    (microbench_run / "analysis.json").write_text(json.dumps(online))
    shutil.rmtree(microbench_run / "traces")
    assert run_cli(capsys, "analyze", microbench_run, "--quiet")[0] == 0
    from_online = json.loads((microbench_run / "report.json").read_text())
    assert from_online["kernels"] == from_traces["kernels"]


def test_corrupt_online_analysis_is_one_line(capsys, microbench_run):
    (microbench_run / "analysis.json").write_text('{"format": "something-else"}')
    code, _, err = run_cli(capsys, "analyze", microbench_run)
    assert code == 2 and err.count("\n") == 1 and "analysis.json: not a version-2 ReuseLens engine result" in err


def test_profile_passes_module_loading_to_the_launcher(capsys, tmp_path, monkeypatch):
    from reuselens.collector import launcher

    seen = {}

    def fake_profile(argv, **kwargs):
        seen.update(kwargs, argv=argv)
        raise launcher.ProfileFailedError("stop here")

    monkeypatch.setattr(launcher, "profile", fake_profile)
    code, _, err = run_cli(capsys, "profile", "--module-loading", "eager", "--run-dir", tmp_path / "r", "--", "./app")
    assert code == 2 and "stop here" in err
    assert seen["module_loading"] == "eager" and seen["argv"] == ["./app"]
    with pytest.raises(SystemExit) as exit_info:  # argparse's own one-line usage error
        run_cli(capsys, "profile", "--module-loading", "sometimes", "--", "./app")
    assert exit_info.value.code == 2 and "invalid choice: 'sometimes'" in capsys.readouterr().err
