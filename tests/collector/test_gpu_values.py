"""Value mode on a real GPU (issue 19; docs/engine.md "Value redundancy"): the implants of tests/gpu/value_redundancy.cu
against their controls (tests/value_cases.py), the online engine against a replay of the same run's traces, and a
run's other counts unchanged by values. Skipped, with the reason printed, where there is no GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher
from reuselens.analyzer import engine_result
from reuselens.analyzer.pipeline import build_report
from reuselens.analyzer.replay import replay_run

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import value_cases  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    out = tmp_path_factory.mktemp("values") / "value_redundancy"
    src = REPO / "tests/gpu/value_redundancy.cu"
    subprocess.run(["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(out), str(src)], check=True)
    return out


def profile(program: Path, run: Path, case: str, values: bool = True) -> dict:
    summary = launcher.profile([str(program), case], run_dir=run, write_traces=True, values=values, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    return json.loads((run / "run.json").read_text())


@pytest.mark.parametrize("case", value_cases.CASES)
def test_case(program, tmp_path, case):
    manifest = profile(program, tmp_path / "run", case)
    assert manifest["collector"]["values"] is True
    assert manifest["collector"]["values_approx"] == 0.01  # the default share of approximate redundancy
    value_cases.check(case, replay_run(tmp_path / "run"))
    # the whole analysis, the loads typed by nvdisasm's SASS (the GPU machine has it): the case's findings only
    report = build_report(tmp_path / "run", None, write=False)
    assert value_cases.value_findings(report) == value_cases.FINDINGS[case]


def test_online_equals_replay_and_values_change_no_other_count(program, tmp_path):
    run, plain = tmp_path / "run", tmp_path / "plain"
    manifest = profile(program, run, "table")
    baseline = profile(program, plain, "table", values=False)
    assert [l["records"] for l in manifest["launches"]] == [l["records"] for l in baseline["launches"]]
    online = engine_result.load(run / "analysis.json")
    replayed = replay_run(run)  # with names resolved: compared on what both front-ends count

    def counts(kernels, drop=("prior_kernel",)):
        return [[{f: v for f, v in e.items() if f not in drop} for e in k["edges"]] for k in kernels]

    assert counts(online["kernels"]) == counts(replayed["kernels"])
    assert any(e.get("same_value") for e in counts(online["kernels"])[0])
    value_fields = ("prior_kernel", "value_loads", "same_value")
    assert counts(replayed["kernels"], value_fields) == counts(replay_run(plain)["kernels"], value_fields)


def test_launch_sampling_records_values_on_the_sampled_launches_only(program, tmp_path):
    run = tmp_path / "run"
    summary = launcher.profile(
        [str(program), "table"], run_dir=run, write_traces=True, values=True, values_every=2, timeout=300
    )
    assert summary.status == "complete", summary.partial_reason
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["collector"]["values_every"] == 2
    k = value_cases.kernel(replay_run(run), "read_table")
    (load,) = value_cases.nodes(k, "read")
    assert load["values"]["lanes"] == value_cases.N  # launch 0 sampled, launch 1 not
    # launch 0's loads (first touches) have values, launch 1's none: nothing to find again
    assert value_cases.compared(value_cases.edges_from(k, load)) == (value_cases.N, 0)
