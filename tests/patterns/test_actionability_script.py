"""benchmarks/actionability.py end to end with stand-in nvcc and ncu (the real run needs a GPU)."""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("actionability", ROOT / "benchmarks" / "actionability.py")
actionability = importlib.util.module_from_spec(spec)
spec.loader.exec_module(actionability)

RAW_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC",' + ",".join(f'"{m}"' for m in actionability.METRICS)
)
RAW_UNITS = '"","","","","","","","","","","",' + ",".join('"request"' for _ in actionability.METRICS)


def raw_row(values: list[int], kernel: str = "transpose(const float *, float *, int, int)") -> str:
    return f'"0","1","app","localhost","{kernel}","1","7","(32, 8, 1)","(64, 64, 1)","0","9.0",' + ",".join(
        f'"{v:,}"' for v in values
    )


def test_parse_raw_page_sums_launches_and_skips_the_units_row():
    text = "\n".join(
        [
            "==PROF== Connected to process 1",
            RAW_HEADER,
            RAW_UNITS,
            raw_row([1, 2, 3, 4, 5, 6, 7, 1024]),
            raw_row([1, 2, 3, 4, 5, 6, 7, 1024]),
            "transpose_conflict: ok",
            "==PROF== Disconnected from process 1",
        ]
    )
    totals = actionability.parse_ncu_csv(text)
    assert totals["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 2048
    assert totals["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2


def test_parse_details_page():
    header = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
        '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
    )
    row = (
        '"0","1","app","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics",'
        '"smsp__inst_executed_op_shared_ld.sum","inst","65,536"'
    )
    assert actionability.parse_ncu_csv(f"{header}\n{row}") == {"smsp__inst_executed_op_shared_ld.sum": 65536.0}


def test_parse_without_rows_names_the_likely_cause():
    with pytest.raises(actionability.StepError, match="no kernel matched, or profiling is not permitted"):
        actionability.parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM")


def write_tool(path: Path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.fixture()
def tools(tmp_path):
    # nvcc stand-in: writes an executable that prints what the real program prints
    nvcc = write_tool(
        tmp_path / "nvcc",
        """
import sys, os, stat
out = sys.argv[sys.argv.index("-o") + 1]
name = os.path.basename(out)
open(out, "w").write("#!/bin/sh\\necho '" + name + ": ok'\\n")
os.chmod(out, 0o755)
""",
    )
    # ncu stand-in: 32-way conflicting reads before the fix, conflict-free after
    values = {
        "before": [0, 0, 4096, 131072, 32768, 32768, 1048576, 32768],
        "after": [0, 0, 4096, 131072, 32768, 32768, 32768, 32768],
    }
    # ncu stand-in: details-page CSV into --log-file, one row per metric, like ncu --csv
    ncu = write_tool(
        tmp_path / "ncu",
        f"""
import sys
side = "before" if sys.argv[-1].endswith("_before") else "after"
values = {values!r}[side]
metrics = sys.argv[sys.argv.index("--metrics") + 1].split(",")
assert sys.argv[sys.argv.index("--clock-control") + 1] == "none"
header = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
rows = ['"0","1","app","h","transpose(const float *, float *, int, int)","1","7","(32, 8, 1)","(64, 64, 1)",'
        '"0","9.0","Command line profiler metrics","%s","","%s"' % (m, format(v, ",")) for m, v in zip(metrics, values)]
with open(sys.argv[sys.argv.index("--log-file") + 1], "w") as log:
    log.write("==PROF== Connected to process 1\\n" + header + "\\n" + "\\n".join(rows) + "\\n")
print("transpose_conflict: ok")
""",
    )
    return nvcc, ncu


def test_script_measures_a_pair_and_writes_json(tools, tmp_path, capsys):
    nvcc, ncu = tools
    status = actionability.main(
        ["--out", str(tmp_path / "out"), "--cases", "transpose_conflict", "--no-profile", "--nvcc", nvcc, "--ncu", ncu]
    )
    assert status == 0
    document = json.loads((tmp_path / "out" / "actionability.json").read_text())
    assert document["format"] == "reuselens-actionability" and document["version"] == 1
    (case,) = document["cases"]
    assert case["removed"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 1048576 - 32768
    assert case["before_output"] == "transpose_conflict_before: ok"
    assert case["predicted_error"] == "not asked for (--no-profile)"
    printed = capsys.readouterr().out
    assert "== transpose_conflict  (expected: bank-conflict)" in printed
    assert "shared ld wavefronts" in printed and "1,015,808" in printed


def test_script_reports_a_failed_step_and_exits_1(tools, tmp_path, capsys):
    _nvcc, ncu = tools
    broken = write_tool(
        tmp_path / "broken-nvcc", "import sys\nprint('error: no such arch', file=sys.stderr)\nsys.exit(1)\n"
    )
    status = actionability.main(
        ["--out", str(tmp_path / "out"), "--cases", "lut_constant", "--no-profile", "--nvcc", broken, "--ncu", ncu]
    )
    assert status == 1
    assert "FAILED: nvcc lut_constant.cu: exit status 1: error: no such arch" in capsys.readouterr().out


def test_unknown_case_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="unknown case"):
        actionability.main(["--out", str(tmp_path), "--cases", "nope"])


def test_prediction_failure_keeps_the_measurements(tools, tmp_path):
    # no GPU here: `reuselens profile` cannot run the program, so the prediction says why and the table stays
    nvcc, ncu = tools
    status = actionability.main(
        [
            "--out",
            str(tmp_path / "out"),
            "--cases",
            "transpose_conflict",
            "--nvcc",
            nvcc,
            "--ncu",
            ncu,
            "--timeout",
            "120",
        ]
    )
    (case,) = json.loads((tmp_path / "out" / "actionability.json").read_text())["cases"]
    assert status == 0 and "removed" in case
    assert case["predicted_error"].startswith(("prediction unavailable: ", "ReuseLens reported no"))
