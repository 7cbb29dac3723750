"""benchmarks/teardown.py without a GPU: each line is stamped as the app prints it (a pseudo-terminal, so the C
library does not hold lines back until the exit), the time after the last line is the app's, the collector modes
run the launcher it is given with their settings, and a failed or silent app is an error, not a figure."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
teardown = importlib.import_module("teardown")

# An app that writes with C stdio (Python's print behaves the same: line-buffered on a terminal only), then idles.
APP = [sys.executable, "-c", "import time; print('a'); time.sleep(0.3); print('b'); time.sleep(0.5)"]


def test_lines_are_stamped_when_printed_and_the_rest_is_the_teardown():
    got = teardown.run_once(APP, {}, timeout=30)
    assert got["first"] is not None and got["last"] is not None
    assert got["last"] - got["first"] >= 0.25  # not both at the exit, as a pipe would deliver them
    assert got["exit"] - got["last"] >= 0.45
    assert got["maxrss_mib"] > 1 and got["minor_faults"] > 0


def test_collector_modes_run_the_given_launcher_with_their_settings(tmp_path):
    launcher = tmp_path / "fake-reuselens"
    seen = tmp_path / "seen.txt"
    launcher.write_text(
        textwrap.dedent(f"""\
            #!/bin/sh
            echo "$* queue=$REUSELENS_ENGINE_QUEUE_BYTES engine=$REUSELENS_ONLINE_ANALYSIS" >> {seen}
            while [ "$1" != "--" ]; do
              if [ "$1" = "--run-dir" ]; then shift; mkdir -p "$1"; touch "$1/analysis.json"; fi
              shift
            done
            shift
            exec "$@"
            """)
    )
    launcher.chmod(0o755)
    modes = ["native", "collect", "no-engine", "attach", "collect:REUSELENS_ENGINE_QUEUE_BYTES=268435456"]
    results = teardown.measure(["echo", "x"], modes, 1, str(launcher), timeout=30)
    lines = seen.read_text().splitlines()
    assert len(lines) == 4  # native runs the app alone
    assert all(line.split()[:2] == ["profile", "--no-analyze"] for line in lines)
    assert "engine=0" in lines[1]
    assert "--kernel-filter " + teardown.NO_KERNEL in lines[2]
    assert "queue=268435456" in lines[3] and "queue= " in lines[0]
    assert results["native"][0]["files"] is None  # no run directory
    assert all(results[m][0]["files"] is not None for m in modes[1:])  # the tool library's file, found


def test_a_failing_or_hanging_app_is_an_error():
    with pytest.raises(RuntimeError, match="exit status 3"):
        teardown.run_once([sys.executable, "-c", "print('a'); raise SystemExit(3)"], {}, timeout=30)
    with pytest.raises(TimeoutError):
        teardown.run_once([sys.executable, "-c", "import time; time.sleep(30)"], {}, timeout=0.5)


def test_modes_are_checked(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["teardown.py", "--modes", "native,collect:NOEQUALS", "--", "true"])
    with pytest.raises(SystemExit):
        teardown.main()
    assert "modes among" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["teardown.py", "--modes", "native,passive", "--", "true"])
    with pytest.raises(SystemExit):
        teardown.main()
    assert "needs --library" in capsys.readouterr().err


def test_passive_mode_injects_the_library_without_a_run_directory(monkeypatch):
    monkeypatch.setenv("REUSELENS_RUN_DIR", "/somewhere")
    monkeypatch.setenv("LD_PRELOAD", "/usr/lib/libother.so")
    command, env = teardown._command("passive", "reuselens", Path("/tmp/x"), ["./app", "1"], "/lib/libtool.so")
    assert command == ["./app", "1"]  # the app alone, no launcher
    assert env["LD_PRELOAD"] == "/lib/libtool.so:/usr/lib/libother.so"
    assert env["CUDA_INJECTION64_PATH"] == "/lib/libtool.so"
    assert "REUSELENS_RUN_DIR" not in env  # so the tool library stays passive
    with pytest.raises(ValueError, match="--library"):
        teardown._command("passive", "reuselens", Path("/tmp/x"), ["./app"])


def test_table_columns_stay_aligned_under_a_mode_with_settings(capsys):
    run = {"first": 0.1, "last": 0.3, "exit": 0.4, "files": 0.31, "maxrss_mib": 100.0, "minor_faults": 5000}
    long_mode = "collect:REUSELENS_ENGINE_WORKERS=12:REUSELENS_QUEUE_COPY_THREADS=2"
    teardown.print_table(["./app"], {"native": [dict(run, files=None)], long_mode: [run]})
    header, *rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2
    start = header.index("1st line")
    for row in rows:  # each row's first figure ends where the header's column does
        assert row[: start + len("1st line")].endswith("100.0")
    assert rows[1].lstrip().startswith(long_mode)
