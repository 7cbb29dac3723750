"""benchmarks/thread_times.py without a GPU: the scheduler's figures of every thread of a command's process tree,
grouped by thread name, a child process's threads included, and a failing command is an error."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
thread_times = importlib.import_module("thread_times")

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/schedstat").exists(), reason="needs Linux's /proc/PID/schedstat (CONFIG_SCHED_INFO)"
)

# A process that starts a child process; the child names two threads as the collector's engine workers are named
# and keeps them busy for a while, so that their time on a core is well above one sampling interval.
CHILD = textwrap.dedent("""\
    import ctypes, threading, time
    libc = ctypes.CDLL(None)
    def work(name):
        libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME: this thread's comm
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            pass
    threads = [threading.Thread(target=work, args=(f"rl-engine-{i}",)) for i in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
""")
PARENT = f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', {CHILD!r}]))"


def test_threads_of_a_child_process_are_grouped_by_name():
    returncode, wall, threads = thread_times.run([sys.executable, "-c", PARENT], interval=0.02)
    assert returncode == 0 and wall >= 0.6
    groups = {g["name"]: g for g in thread_times.summarize(threads)}
    engine = groups["rl-engine-"]
    assert engine["threads"] == 2
    assert engine["on_core_s"] > 0.3  # two threads busy for most of 0.6 s each (one core may be shared)
    assert len({t["pid"] for t in threads}) == 2  # the parent and its child


def test_group_names_drop_a_pool_index_only():
    assert thread_times.group_name("rl-engine-11") == "rl-engine-"
    assert thread_times.group_name("rl-drain") == "rl-drain"
    assert thread_times.group_name("cs_mergeSort") == "cs_mergeSort"


def test_a_failing_command_is_reported(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["thread_times.py", "--", sys.executable, "-c", "raise SystemExit(3)"])
    assert thread_times.main() == 1
    assert "exited with status 3" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["thread_times.py"])
    with pytest.raises(SystemExit):
        thread_times.main()
