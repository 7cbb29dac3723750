"""benchmarks/replay_speed.py on a run recorded on the H200 (tests/data/runs/multistream): per worker count, the
engine comparison (--engine) and the independent engines' ceiling (--independent) are printed; a run without
traces is refused with its reason."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
replay_speed = importlib.import_module("replay_speed")
RUN = ROOT / "tests" / "data" / "runs" / "multistream"


def test_worker_counts_engines_and_the_independent_ceiling_are_printed(capsys):
    code = replay_speed.main(
        [str(RUN), "--workers", "1,2", "--repeat", "1", "--engine", "installed,installed", "--independent", "2"]
    )
    out = capsys.readouterr().out
    assert code == 0
    records = int(out.splitlines()[0].split("launches with traces, ")[1].split(" records")[0].replace(",", ""))
    assert records > 0
    for workers in (1, 2):
        rows = [line for line in out.splitlines() if line.startswith(f"workers {workers:2d}:")]
        assert len(rows) == 2 and all(row.endswith("[installed]") for row in rows)
        for row in rows:  # the workers' busy share of the engine's consume time
            busy = int(row.split("busy")[1].split("%")[0])
            assert 0 < busy <= 101
    assert "independent  2:" in out and "2 one-worker engines at once" in out
    share = float(out.split("the 2-worker engine reaches ")[1].split(" of that")[0])
    assert 0 < share < 10


def test_a_run_without_traces_is_refused(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    manifest = json.loads((run / "run.json").read_text())
    for launch in manifest["launches"]:
        launch["trace"] = None
    (run / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(SystemExit, match="holds no traces"):
        replay_speed.main([str(run), "--workers", "1"])


def test_a_missing_trace_file_is_one_clear_line(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    shutil.rmtree(run / "traces")
    with pytest.raises(SystemExit, match=r"replay_speed: .*traces/0\.rltrace"):
        replay_speed.main([str(run), "--workers", "1"])


def test_bad_counts_are_refused(capsys):
    with pytest.raises(SystemExit):
        replay_speed.main([str(RUN), "--independent", "-1"])
    assert "--independent" in capsys.readouterr().err


def test_each_engine_of_a_comparison_is_loaded_in_its_own_process(tmp_path):
    """Python keeps one extension module per name in a process: a second engine file loaded under the same name
    hands back the first, and a comparison in one process would compare one engine with itself. The script, in a
    fresh interpreter, replays each engine in a child of its own; a file that is no engine is one clear line."""
    installed = replay_speed.engine_module("installed").__file__
    copy = tmp_path / Path(installed).name
    shutil.copy(installed, copy)
    script = [sys.executable, str(BENCH / "replay_speed.py"), str(RUN), "--workers", "1", "--repeat", "1"]
    done = subprocess.run([*script, "--engine", f"installed,{copy}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("workers  1:")]
    assert [row.rsplit("[", 1)[1] for row in rows] == ["installed]", f"{copy}]"]
    fake = tmp_path / "_engine.cpython-x.so"
    fake.write_bytes(b"not an ELF file")
    done = subprocess.run([*script, "--engine", f"installed,{fake}"], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(f"replay_speed: the replay with {fake} failed: ImportError")
    with pytest.raises(RuntimeError, match="under the same name"):  # the guard, in this process
        replay_speed.engine_module(str(copy))


def test_check_equal_passes_when_every_replay_agrees(capsys):
    code = replay_speed.main([str(RUN), "--workers", "1,2", "--repeat", "1", "--check-equal"])
    out = capsys.readouterr().out
    assert code == 0
    assert "results: every replay's the same (1 engine(s) x 1,2 workers x 1)" in out


def test_check_equal_stops_at_the_first_replay_that_differs(monkeypatch, capsys):
    """A result that differs (here: the two-worker replay's, made to) stops the benchmark with exit code 1 and names
    the replays; the timings, which differ between any two replays, are not part of what is compared."""
    real = replay_speed.replay_once

    def differing(run, allocations, launches, workers, module, digest=False):
        wall, stats, result = real(run, allocations, launches, workers, module, digest=digest)
        return wall, stats, (result + "x" if workers == 2 else result)

    monkeypatch.setattr(replay_speed, "replay_once", differing)
    code = replay_speed.main([str(RUN), "--workers", "1,2", "--repeat", "2", "--check-equal"])
    out = capsys.readouterr().out
    assert code == 1
    assert "the result of installed at 2 workers differs from that of installed at 1 workers" in out
    assert "every replay's the same" not in out
