"""benchmarks/realapps.py's timed runs without a GPU: a blocking wait (no polling steps in the wall time), the exit
status, and a command that outlives its timeout killed and reported as such; and the memory-fix declarations of
benchmarks/memory_fixes.py applied to the staged sources they name (when staged)."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
realapps = importlib.import_module("realapps")


def test_the_wait_blocks_instead_of_polling_so_the_time_is_not_rounded_up(tmp_path, monkeypatch):
    # Popen.wait(timeout=...) polls in sleeps growing to 50 ms: a 0.37 s app then reads 0.41 s. The wait must block.
    timeouts = []
    real_wait = realapps.subprocess.Popen.wait

    def wait(self, timeout=None):
        timeouts.append(timeout)
        return real_wait(self, timeout)

    monkeypatch.setattr(realapps.subprocess.Popen, "wait", wait)
    with open(tmp_path / "log", "w") as out:
        done = realapps.timed_run([sys.executable, "-c", "pass"], out, tmp_path, 30)
    assert done is not None and done[0] == 0 and 0 < done[1] < 30
    assert timeouts and all(t is None for t in timeouts)


def test_the_exit_status_comes_back_and_a_command_past_its_timeout_is_killed(tmp_path):
    with open(tmp_path / "log", "w") as out:
        assert realapps.timed_run([sys.executable, "-c", "raise SystemExit(3)"], out, tmp_path, 30)[0] == 3
        t0 = time.perf_counter()
        assert realapps.timed_run([sys.executable, "-c", "import time; time.sleep(30)"], out, tmp_path, 0.3) is None
    assert time.perf_counter() - t0 < 10


memory_fixes = importlib.import_module("memory_fixes")


@pytest.mark.parametrize("fix", [f for f in memory_fixes.MEMORY_FIXES if f.file], ids=lambda f: f.name)
def test_each_memory_fix_applies_to_the_staged_source_and_names_its_allocation_lines(fix):
    manifest = realapps.load_manifest(realapps.MANIFEST)
    app = next(a for a in manifest["apps"] if a["name"] == fix.app)
    path = BENCH / "realapps" / "src" / app["source"] / fix.file
    if not path.is_file():
        pytest.skip(f"real-application sources not staged ({path}); benchmarks/realapps_stage.py stages them")
    text = path.read_text()
    lines = text.splitlines()
    assert all("cudaMalloc" in lines[site - 1] for site in fix.sites), "the sites are the allocation lines"
    fixed = memory_fixes.apply_fix(text, fix)
    assert fixed != text and all(r.new in fixed for r in fix.patch)
