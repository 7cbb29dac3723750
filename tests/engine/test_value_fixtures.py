"""The value-mode runs recorded on the H200 (tests/data/value_runs, README there), replayed without a GPU: each
case's implant against its control (tests/value_cases.py), and the engine that ran inside the collector on the GPU
(each run's analysis.json) against the replay of the same traces."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from reuselens.analyzer import engine_result
from reuselens.analyzer.patterns import VALUE_PATTERNS
from reuselens.analyzer.pipeline import build_report
from reuselens.analyzer.replay import replay_run

TESTS = Path(__file__).resolve().parents[1]
RUNS = TESTS / "data" / "value_runs"
sys.path.insert(0, str(TESTS))
import value_cases  # noqa: E402


@pytest.mark.parametrize("case", value_cases.CASES)
def test_recorded_case(case):
    value_cases.check(case, replay_run(RUNS / case, workers=2))


@pytest.fixture
def recorded_sass(monkeypatch):
    """nvdisasm's listing of each case's module as recorded beside the runs (tests/data/value_runs/<sha>.sass),
    in place of nvdisasm, which CI does not have: the approximate cases need their loads' types."""
    from reuselens.analyzer.lineinfo import mapper, sass

    def disassemble(cubin: bytes, symbols=()):
        import hashlib

        listing = RUNS / f"{hashlib.sha256(cubin).hexdigest()}.sass"
        if not listing.is_file():
            raise sass.SassUnavailable(f"no recorded listing {listing.name}")
        return sass.parse_listing(listing.read_text())

    monkeypatch.setattr(mapper, "disassemble", disassemble)


@pytest.mark.parametrize("case", value_cases.CASES)
def test_recorded_case_findings(case, tmp_path, recorded_sass):
    """The whole pipeline on the recorded run (its CUBIN's line table, the thresholds, the overlap rules, the loads'
    types from the recorded SASS): the implants' value findings and none on the controls."""
    run = tmp_path / case
    shutil.copytree(RUNS / case, run)
    assert value_cases.value_findings(build_report(run, None, write=False)) == value_cases.FINDINGS[case]


def test_approximate_redundancy_needs_the_loads_types(tmp_path, monkeypatch):
    """Without SASS (no nvdisasm), no load is typed: no approximate finding, and a note says why."""
    from reuselens.analyzer.lineinfo import mapper, sass

    def unavailable(cubin: bytes, symbols=()):
        raise sass.SassUnavailable("nvdisasm not found")

    monkeypatch.setattr(mapper, "disassemble", unavailable)
    run = tmp_path / "approx"
    shutil.copytree(RUNS / "approx", run)
    report = build_report(run, None, write=False)
    assert value_cases.value_findings(report) == set()
    assert any("approximate value redundancy left out" in note for note in report["notes"])


@pytest.mark.parametrize("case", value_cases.CASES)
def test_online_analysis_equals_replay(case):
    """The collector's engine (online, on the H200) and the replay counted the same edges, values included."""
    online = engine_result.load(RUNS / case / "analysis.json")
    replayed = replay_run(RUNS / case, workers=3)

    def edges(kernels):
        return [[{f: v for f, v in e.items() if f != "prior_kernel"} for e in k["edges"]] for k in kernels]

    assert edges(online["kernels"]) == edges(replayed["kernels"])
    assert [[n.get("values") for n in k["nodes"]] for k in online["kernels"]] == [
        [n.get("values") for n in k["nodes"]] for k in replayed["kernels"]
    ]


def test_every_value_pattern_has_a_recorded_implant():
    implanted = {pattern for found in value_cases.FINDINGS.values() for pattern, _ in found}
    assert implanted == VALUE_PATTERNS


def test_program_summary_of_a_recorded_run():
    from reuselens.analyzer.values import program_summary

    replayed = replay_run(RUNS / "table", workers=2)
    # the second launch reloads every element unchanged and stores what the first stored
    assert program_summary(replayed["kernels"]) == {"redundant_loads": 0.5, "zero_loads": 0.0, "silent_stores": 0.5}
    plain = [
        {**k, "nodes": [{f: v for f, v in n.items() if f != "values"} for n in k["nodes"]]} for k in replayed["kernels"]
    ]
    assert program_summary(plain) is None


def test_per_object_value_redundancy_reaches_the_allocation_hover_clause(tmp_path):
    """The table case: its table's 8,192 word loads (two launches) of which the second launch's 4,096 found the
    value again; the output array is only stored to."""
    from reuselens.analyzer.engine_result import OBJECT_TOUCHES
    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.memory.intra import element_use

    run = tmp_path / "table"
    shutil.copytree(RUNS / "table", run)
    replay_run(run, workers=2, object_touches_to=run / OBJECT_TOUCHES)
    profiles = analyze_run(run).memory.profiles
    by_size = {p.size: p for p in profiles.values()}
    table, out = by_size[16384], by_size[65536]
    assert (table.value_loads, table.same_value) == (8192, 4096)
    assert "50% of its 8,192 word loads returned the value their location's last load returned" in element_use(table)
    assert (out.value_loads, out.same_value) == (0, 0) and "word loads" not in element_use(out)


def test_summary_states_the_approximate_share_of_a_run_that_counted_it(tmp_path, recorded_sass):
    """The CLI's values line: the relaxation reloads every element 0.1% from its last value, 3 launches of 4."""
    import io

    from reuselens.cli.summary import print_summary

    run = tmp_path / "approx"
    shutil.copytree(RUNS / "approx", run)
    out = io.StringIO()
    print_summary(build_report(run, None, write=False), out)
    (line,) = [text for text in out.getvalue().splitlines() if text.startswith("values:")]
    assert "0% of loads returned what their location's last load returned" in line
    assert "75% of loads returned a float (double) within 1% of their location's last loaded one" in line
