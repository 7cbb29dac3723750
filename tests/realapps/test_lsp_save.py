"""benchmarks/lsp_save.py without a GPU: the real server profiles on each save through a stand-in profiler that
writes a recorded run, and the benchmark times save -> diagnostics and app exit -> diagnostics from what the
server publishes and from the run's run.json."""

from __future__ import annotations

import asyncio
import importlib
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT / "benchmarks", ROOT / "tests" / "lsp"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
pytest.importorskip("pytest_lsp")
lsp_save = importlib.import_module("lsp_save")
FIXTURES = ROOT / "tests" / "lsp" / "fixtures"


def test_two_saves_give_their_times_from_the_save_and_from_the_app_exit(tmp_path):
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / "app", workspace)
    app = {"name": "standin", "files": ["stencil.cu"], "args": ["-c", "pass"]}
    profiler = [sys.executable, str(FIXTURES.parent / "standin_profiler.py"), "--recorded", str(FIXTURES / "run2")]
    figures = asyncio.run(
        lsp_save.measure(
            app, workspace, Path(sys.executable), "", 2, 60, profiler, prefix_map={"/build/app": str(workspace)}
        )
    )
    rows = figures["rounds"]
    assert len(rows) == 2
    for row in rows:
        # diagnostics come after the run is written, which comes after the save
        assert 0 <= row["exit_to_diagnostics_s"] <= row["save_to_diagnostics_s"] < 60
        assert row["diagnostics"] > 0 and row["progress_end"] == "5 finding(s)"
    assert set(figures["median"]) >= {"save_to_diagnostics_s", "exit_to_diagnostics_s"}


# A profiler that works once, then fails without writing a run (as the real CLI does, one line and exit 3).
WORKS_ONCE = """import pathlib, subprocess, sys
counter, standin, recorded = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
calls = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(calls + 1))
if calls:
    print("reuselens: error: stand-in failure", file=sys.stderr)
    sys.exit(3)
sys.exit(subprocess.call([sys.executable, standin, "--recorded", recorded, *sys.argv[4:]]))
"""


def test_a_save_whose_profile_writes_no_run_stops_with_one_line_not_the_last_runs_figures(tmp_path):
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / "app", workspace)
    script = tmp_path / "works_once.py"
    script.write_text(WORKS_ONCE)
    standin = str(FIXTURES.parent / "standin_profiler.py")
    profiler = [sys.executable, str(script), str(tmp_path / "calls"), standin, str(FIXTURES / "run2")]
    app = {"name": "standin", "files": ["stencil.cu"], "args": ["-c", "pass"]}
    with pytest.raises(SystemExit, match="round 1: "):
        asyncio.run(
            lsp_save.measure(
                app, workspace, Path(sys.executable), "", 2, 60, profiler, prefix_map={"/build/app": str(workspace)}
            )
        )
    assert (tmp_path / "calls").read_text() == "2"
