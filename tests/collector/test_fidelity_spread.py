"""benchmarks/fidelity.py against several ncu runs: a count is ok, within ncu's run-to-run spread, or a mismatch.

Synthetic ncu CSVs in the layout `ncu --csv --log-file` writes (as tests/data/runs/microbench/ncu.csv): one launch,
three ncu runs whose pred_on_any and wavefront counters wander while the l1tex and SASS-patched counters do not
(the pattern measured on a stencil kernel: 29,287 / 29,292 / 29,276 global loads, SASS and l1tex 29,240).
"""

import csv
import importlib.util
import io
from pathlib import Path

import pytest

KERNEL = "_Z7stencilPKfPf"


@pytest.fixture(scope="module")
def fidelity():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity.py"
    spec = importlib.util.spec_from_file_location("fidelity_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_ncu_csv(path: Path, metrics: dict[str, float]) -> Path:
    out = io.StringIO()
    out.write("==PROF== Connected to process 1 (/bench)\n")
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(
        [
            "ID",
            "Process ID",
            "Process Name",
            "Host Name",
            "Kernel Name",
            "Context",
            "Stream",
            "Block Size",
            "Grid Size",
            "Device",
            "CC",
            "Section Name",
            "Metric Name",
            "Metric Unit",
            "Metric Value",
        ]
    )
    for name, value in metrics.items():
        writer.writerow(
            [
                "0",
                "1",
                "bench",
                "127.0.0.1",
                KERNEL,
                "1",
                "7",
                "(128, 1, 1)",
                "(4, 1, 1)",
                "0",
                "9.0",
                "Command line profiler metrics",
                name,
                "",
                f"{value:,.0f}",
            ]
        )
    path.write_text(out.getvalue())
    return path


def ncu_runs(fidelity, tmp_path, varying: dict[str, list[float]], fixed: dict[str, float]):
    runs = []
    for n in range(3):
        metrics = {fidelity.NCU_METRICS[key]: values[n] for key, values in varying.items()}
        metrics.update({fidelity.NCU_METRICS[key]: value for key, value in fixed.items()})
        runs.append(fidelity.parse_ncu(write_ncu_csv(tmp_path / f"ncu{n + 1}.csv", metrics)))
    return runs


def trace(fidelity, **counts):
    derived = {row: 0 for row, _keys in fidelity.ROWS}
    derived.update({row.replace("_", " "): value for row, value in counts.items()})
    return [("trace", [(KERNEL, derived)])]


@pytest.mark.parametrize(
    "derived, measured, exact, verdict",
    [
        (29240, [29240, 29240, 29240], [], "ok"),
        (29240, [29287, 29292, 29276], [[29240, 29240, 29240]], "ok"),  # the exact SASS counter decides
        (29280, [29287, 29292, 29276], [[29240, 29240, 29240]], "within ncu's run-to-run spread"),
        (29240, [29287, 29292, 29276], [], "mismatch"),  # below the spread
        (29240, [29287, 29292, 29276], [[29241, 29241, 29241]], "mismatch"),
        (7, [8], [], "mismatch"),  # one run: no spread to be in
    ],
)
def test_classify(fidelity, derived, measured, exact, verdict):
    assert fidelity.classify(derived, measured, exact) == verdict


def test_table_over_three_ncu_runs(fidelity, tmp_path):
    runs = ncu_runs(
        fidelity,
        tmp_path,
        varying={"gld_inst": [29287, 29292, 29276], "sld_wf": [100, 104, 98]},
        fixed={"gld_inst_sass": 29240, "gld_req": 29240, "gld_sec": 117000, "gst_sec": 64},
    )
    table, mismatches = fidelity.compare(
        runs,
        trace(
            fidelity,
            global_ld_instructions=29240,
            global_ld_requests=29240,
            global_ld_sectors=117000,
            shared_ld_wavefronts=101,
            global_st_sectors=65,
        ),
    )
    rows = {r["metric"]: r for r in table}
    assert rows["global ld instructions"]["verdict"] == "ok"
    assert rows["global ld instructions"]["ncu_spread"] == "29276..29292"
    assert rows["global ld instructions"]["exact"] == {"gld_inst_sass": "29240"}
    assert rows["global ld requests"]["verdict"] == "ok" and rows["global ld sectors"]["verdict"] == "ok"
    assert rows["shared ld wavefronts"]["verdict"] == "within ncu's run-to-run spread"
    assert rows["global st sectors"]["verdict"] == "mismatch" and mismatches == 1
    assert fidelity.spread_summary(table) == [
        "global ld instructions: varied in 1 of 1 launches, by up to 16",
        "shared ld wavefronts: varied in 1 of 1 launches, by up to 6",
    ]


def test_a_counter_missing_from_every_run_is_not_compared(fidelity, tmp_path):
    runs = ncu_runs(fidelity, tmp_path, varying={}, fixed={"gld_req": 4})
    table, mismatches = fidelity.compare(runs, trace(fidelity, global_ld_requests=4, local_ld_instructions=3))
    rows = {r["metric"]: r for r in table}
    assert rows["local ld instructions"]["verdict"] is None and mismatches == 0
