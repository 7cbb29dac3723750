"""Launcher behaviour that needs no GPU: errors, run.json, partial runs, timeout and cancellation."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher
import reuselens.collector.manifest as run_manifest
from reuselens.analyzer.rundir import RunDirectoryError, open_run
from reuselens.collector.errors import (
    AppNotFoundError,
    CollectorError,
    InvalidFilterError,
    NoGpuError,
    RunDirectoryNotEmptyError,
    ToolLibraryMissingError,
)
from tests.collector.tool_library_layout import SOURCE as TOOL_LIBRARY_TEXT


def test_app_not_found_on_path(no_gpu_needed, tmp_path):
    with pytest.raises(AppNotFoundError, match="command not found"):
        launcher.profile(["reuselens-no-such-program-xyz"], run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_app_not_found_relative_to_cwd(no_gpu_needed, tmp_path):
    with pytest.raises(AppNotFoundError, match="no such file"):
        launcher.profile(["./missing"], run_dir=tmp_path / "run", cwd=tmp_path)


def test_app_not_executable(no_gpu_needed, tmp_path):
    script = tmp_path / "plain.txt"
    script.write_text("not a program")
    with pytest.raises(AppNotFoundError, match="not an executable"):
        launcher.profile([str(script)], run_dir=tmp_path / "run")


def test_errors_are_collector_errors_with_one_sentence(no_gpu_needed, tmp_path):
    with pytest.raises(CollectorError) as info:
        launcher.profile([], run_dir=tmp_path / "run")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kernel_filter": "softmax("}, "not a valid regex"),
        ({"launch_range": (5, 2)}, "launch range"),
        ({"kernel_list": "/no/such/list.txt"}, "kernel list file not found"),
        ({"buffer_bytes": 100}, "below the minimum"),
    ],
)
def test_invalid_filters(no_gpu_needed, fake_app, tmp_path, kwargs, match):
    app = fake_app("print('hi')\n")
    with pytest.raises(InvalidFilterError, match=match):
        launcher.profile([str(app)], run_dir=tmp_path / "run", **kwargs)


def test_no_driver(monkeypatch):
    def refuse(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(launcher.ctypes, "CDLL", refuse)
    with pytest.raises(NoGpuError, match="no NVIDIA driver"):
        launcher.check_gpu()


class _FakeDriver:
    def __init__(self, init_result=0, count=1):
        self.init_result, self.count = init_result, count
        self.inits = 0

    def cuInit(self, flags):
        self.inits += 1
        return self.init_result

    def cuDeviceGetCount(self, ref):
        ref._obj.value = self.count
        return 0

    def cuDeviceGet(self, ref, ordinal):
        return 100  # no name: check_gpu then returns ""


def test_driver_without_gpu(monkeypatch):
    monkeypatch.setattr(launcher.ctypes, "CDLL", lambda name: _FakeDriver(init_result=100))
    with pytest.raises(NoGpuError, match="cuInit error 100"):
        launcher.check_gpu()
    monkeypatch.setattr(launcher.ctypes, "CDLL", lambda name: _FakeDriver(count=0))
    with pytest.raises(NoGpuError, match="sees no GPU"):
        launcher.check_gpu()


def _with_driver(monkeypatch, driver: _FakeDriver) -> _FakeDriver:
    """The real driver checks of the launcher, over a stand-in libcuda (the no_gpu_needed fixture bypasses them)."""
    monkeypatch.setattr(launcher, "require_driver", _REQUIRE_DRIVER)
    monkeypatch.setattr(launcher, "check_gpu", _CHECK_GPU)
    monkeypatch.setattr(launcher.ctypes, "CDLL", lambda name: driver)
    return driver


_REQUIRE_DRIVER, _CHECK_GPU = launcher.require_driver, launcher.check_gpu  # before any fixture replaces them


def test_a_run_initialises_no_gpu_in_the_launcher(no_gpu_needed, monkeypatch, fake_app, tmp_path):
    """The app initialises its own GPU; the launcher only loads the driver library (cuInit cost ~0.18 s a run)."""
    driver = _with_driver(monkeypatch, _FakeDriver())
    summary = launcher.profile([str(fake_app("print('hi')\n"))], run_dir=tmp_path / "run")
    assert summary.exit_code == 0 and driver.inits == 0


def test_an_app_failing_for_want_of_a_gpu_gets_the_drivers_reason(no_gpu_needed, monkeypatch, fake_app, tmp_path):
    _with_driver(monkeypatch, _FakeDriver(init_result=100))
    app = fake_app("import sys\nsys.exit('CUDA error: no CUDA-capable device is detected')\n")
    with pytest.raises(NoGpuError, match="cuInit error 100"):
        launcher.profile([str(app)], run_dir=tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / run_manifest.MANIFEST).read_text())
    assert manifest["status"] == "partial" and "cuInit error 100" in manifest["partial_reason"]


def test_an_app_failing_with_a_working_gpu_is_its_own_failure(no_gpu_needed, monkeypatch, fake_app, tmp_path):
    driver = _with_driver(monkeypatch, _FakeDriver())
    summary = launcher.profile([str(fake_app("import sys\nsys.exit(3)\n"))], run_dir=tmp_path / "run")
    assert summary.exit_code == 3 and driver.inits == 1  # checked once, after the failure


def test_an_app_that_succeeds_without_cuda_needs_no_gpu_check(no_gpu_needed, monkeypatch, fake_app, tmp_path):
    driver = _with_driver(monkeypatch, _FakeDriver(init_result=100))
    summary = launcher.profile([str(fake_app("print('no cuda here')\n"))], run_dir=tmp_path / "run")
    assert summary.exit_code == 0 and driver.inits == 0


def test_profile_without_gpu_raises(tmp_path, fake_app):
    """On a machine with no NVIDIA driver (CI), profile() refuses with NoGpuError before starting anything."""
    try:
        launcher.ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("an NVIDIA driver is installed here; the no-driver path is covered by test_no_driver")
    app = fake_app("print('hi')\n")
    try:
        launcher.find_tool_library()
    except ToolLibraryMissingError:
        pytest.skip("collector library not built here")
    with pytest.raises(NoGpuError):
        launcher.profile([str(app)], run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_tool_library_missing(tmp_path):
    with pytest.raises(ToolLibraryMissingError, match="not built"):
        launcher.find_tool_library([tmp_path / "a" / launcher.TOOL_LIBRARY])
    lib = tmp_path / launcher.TOOL_LIBRARY
    lib.write_bytes(b"\x7fELF")
    with pytest.raises(ToolLibraryMissingError, match="device patch"):
        launcher.find_tool_library([lib])
    (tmp_path / launcher.PATCH_FATBIN).write_bytes(b"x")
    assert launcher.find_tool_library([lib]) == lib


def test_environment_handed_to_the_app(no_gpu_needed, fake_app, tmp_path):
    dump = tmp_path / "env.json"
    app = fake_app(f"""
        import json, os
        json.dump(dict(os.environ), open({str(dump)!r}, "w"))
    """)
    names = tmp_path / "kernels.txt"
    names.write_text("softmax\n")
    summary = launcher.profile(
        [str(app)],
        run_dir=tmp_path / "run",
        env={"MY_VAR": "1"},
        kernel_filter="soft.*max",
        kernel_list=names,
        launch_range=(2, 5),
        write_traces=True,
        buffer_bytes=8192,
        split_configurations=True,
    )
    env = json.loads(dump.read_text())
    assert env["REUSELENS_SPLIT_CONFIGURATIONS"] == "1"
    assert env["MY_VAR"] == "1"
    assert env["LD_PRELOAD"].split(":")[0] == str(no_gpu_needed)
    assert env["CUDA_INJECTION64_PATH"] == str(no_gpu_needed)
    assert env["REUSELENS_RUN_DIR"] == str((tmp_path / "run").resolve())
    assert env["REUSELENS_KERNEL_REGEX"] == "soft.*max"
    assert env["REUSELENS_KERNEL_NAMES_FILE"] == str(names.resolve())
    assert env["REUSELENS_LAUNCH_RANGE"] == "2:5"
    assert env["REUSELENS_WRITE_TRACES"] == "1"
    assert env["REUSELENS_BUFFER_BYTES"] == "8192"
    header = json.loads(env["REUSELENS_RUN_HEADER"])
    assert header["command"] == [str(app)]
    # The stand-in library never wrote run.json: the run says the collector did not start.
    assert summary.status == "partial"
    assert "collector did not start" in summary.partial_reason


def test_object_level_mode_is_handed_to_the_collector(no_gpu_needed, fake_app, tmp_path, monkeypatch):
    """--object-level: the collector gets REUSELENS_OBJECT_LEVEL=1 (and a value inherited from the caller's
    environment never turns it on by itself)."""
    dump = tmp_path / "env.json"
    app = fake_app(f"""
        import json, os
        json.dump(dict(os.environ), open({str(dump)!r}, "w"))
    """)
    (no_gpu_needed.parent / launcher.OBJECTS_PATCH_FATBIN).write_bytes(b"")
    monkeypatch.setenv("REUSELENS_OBJECT_LEVEL", "1")
    launcher.profile([str(app)], run_dir=tmp_path / "traced")
    assert "REUSELENS_OBJECT_LEVEL" not in json.loads(dump.read_text())
    launcher.profile([str(app)], run_dir=tmp_path / "objects", object_level=True)
    assert json.loads(dump.read_text())["REUSELENS_OBJECT_LEVEL"] == "1"


def test_object_level_mode_needs_its_patch(no_gpu_needed, fake_app, tmp_path):
    app = fake_app("print('hi')\n")
    with pytest.raises(ToolLibraryMissingError, match="object patch"):
        launcher.profile([str(app)], run_dir=tmp_path / "run", object_level=True)
    assert not (tmp_path / "run").exists()


def test_run_json_of_a_crashed_app(no_gpu_needed, fake_app, tmp_path):
    app = fake_app("""
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
    """)
    summary = launcher.profile([str(app), "--flag"], run_dir=tmp_path / "run", cwd=tmp_path)
    assert summary.status == "partial"
    assert summary.partial_reason == "app crashed (SIGSEGV)"
    assert summary.exit_code == -11
    run = open_run(tmp_path / "run")  # the analyzer's reader accepts it
    m = run.manifest
    assert m["format"] == "reuselens-run" and m["version"] == 1
    assert m["command"] == [str(app), "--flag"] and m["cwd"] == str(tmp_path.resolve())
    assert m["status"] == "partial" and m["exit_code"] == -11
    assert m["start_time"].endswith("Z") and m["end_time"].endswith("Z")


def _tool_manifest(run_dir: str, finished: bool, reason: str | None, status: str) -> str:
    """Python source that writes run.json the way the tool library does."""
    return textwrap.dedent(f"""
        import json, os
        m = json.load(open(os.path.join({run_dir!r}, "run.json")))
        m.update(status={status!r}, partial_reason={reason!r},
                 collector={{"finished": {finished!r}, "launches_seen": 3, "launches_instrumented": 2,
                             "records": 42}},
                 launches=[{{"id": 0, "instrumented": True, "status": "complete", "records": 42}}])
        tmp = os.path.join({run_dir!r}, "run.json.tmp")
        json.dump(m, open(tmp, "w"))
        os.replace(tmp, os.path.join({run_dir!r}, "run.json"))
    """)


def test_app_exits_before_collector_finishes(no_gpu_needed, fake_app, tmp_path):
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_tool_manifest(run_dir, False, "running", "partial") + "\nos._exit(0)\n")
    summary = launcher.profile([str(app)], run_dir=run_dir)
    assert summary.status == "partial"
    assert summary.partial_reason == "app exited before the collector finished (exit code 0)"
    assert summary.launches_instrumented == 2 and summary.records == 42


def test_collector_reason_is_kept(no_gpu_needed, fake_app, tmp_path):
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_tool_manifest(run_dir, False, "kernel fault in bad(float*)", "partial") + "\nraise SystemExit(1)\n")
    summary = launcher.profile([str(app)], run_dir=run_dir)
    assert (summary.status, summary.partial_reason, summary.exit_code) == ("partial", "kernel fault in bad(float*)", 1)


def test_complete_run(no_gpu_needed, fake_app, tmp_path):
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_tool_manifest(run_dir, True, None, "complete"))
    summary = launcher.profile([str(app)], run_dir=run_dir)
    assert (summary.status, summary.partial_reason, summary.exit_code) == ("complete", None, 0)
    m = json.loads((Path(run_dir) / "run.json").read_text())
    assert m["status"] == "complete" and m["launcher"]["stop_reason"] is None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (already dead, not reaped by its parent) counts as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _shell_app(tmp_path: Path, body: str) -> Path:
    """A /bin/sh fake application: it starts in milliseconds, so timeouts of a second or more leave it time to do
    its part first even on a loaded machine (a Python app's start alone took over a second there)."""
    app = tmp_path / "app.sh"
    app.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    app.chmod(0o755)
    return app


def test_timeout_kills_the_whole_process_group(no_gpu_needed, tmp_path):
    pid_file = tmp_path / "child.pid"
    app = _shell_app(
        tmp_path,
        f"""
        sleep 600 &
        echo $! > {shlex.quote(str(pid_file))}
        sleep 600
    """,
    )
    started = time.monotonic()
    summary = launcher.profile([str(app)], run_dir=tmp_path / "run", timeout=1.5)
    assert time.monotonic() - started < 60  # not the app's 600 s
    assert summary.status == "partial" and summary.partial_reason == "timeout after 1.5 s"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_cancel_event(no_gpu_needed, tmp_path):
    app = _shell_app(tmp_path, "sleep 600\n")
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    progress = []
    summary = launcher.profile(
        [str(app)], run_dir=tmp_path / "run", cancel=cancel, on_progress=lambda *a: progress.append(a)
    )
    assert summary.status == "partial" and summary.partial_reason == "cancelled"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["partial_reason"] == "cancelled"


def test_progress_is_reported(no_gpu_needed, tmp_path):
    """The app runs until the launcher has reported progress once, so no race with the app's own run time."""
    seen = tmp_path / "progress-seen"
    app = _shell_app(
        tmp_path,
        f"""
        while [ ! -e {shlex.quote(str(seen))} ]; do sleep 0.05; done
    """,
    )
    progress = []

    def on_progress(*args):
        progress.append(args)
        seen.touch()

    summary = launcher.profile([str(app)], run_dir=tmp_path / "run", on_progress=on_progress, timeout=300)
    assert summary.partial_reason != "timeout after 300 s"
    assert progress and progress[0][0].startswith("profiling")


def test_run_directory_reuse(no_gpu_needed, fake_app, tmp_path):
    app = fake_app("pass\n")
    run = tmp_path / "run"
    launcher.profile([str(app)], run_dir=run)
    (run / "traces").mkdir()
    (run / "traces" / "0.rltrace").write_bytes(b"old")
    launcher.profile([str(app)], run_dir=run)  # a previous run is replaced
    assert not (run / "traces").exists()
    (run / "notes.txt").write_text("mine")
    with pytest.raises(RunDirectoryNotEmptyError, match="notes.txt"):
        launcher.profile([str(app)], run_dir=run)
    assert (run / "notes.txt").exists()


def test_finalize_prefers_the_launcher_stop_reason():
    base = run_manifest.initial_manifest(["app"], Path("/"), "t", {}, launcher.TOOL_VERSION)
    tool = dict(base, status="complete", partial_reason=None, collector={"finished": True})
    data = run_manifest.finalize_manifest(tool, base, -9, "timeout after 3 s", 3.0)
    assert data["status"] == "partial" and data["partial_reason"] == "timeout after 3 s"
    data = run_manifest.finalize_manifest(tool, base, 0, None, 3.0)
    assert data["status"] == "complete" and data["partial_reason"] is None


def _app_env(fake_app, tmp_path, **kwargs):
    dump = tmp_path / "env.json"
    app = fake_app(f"""
        import json, os
        json.dump(dict(os.environ), open({str(dump)!r}, "w"))
    """)
    launcher.profile([str(app)], run_dir=tmp_path / "run", **kwargs)
    return json.loads(dump.read_text())


@pytest.mark.parametrize("value, expected", [("eager", "EAGER"), ("LAZY", "LAZY")])
def test_module_loading_sets_the_apps_cuda_module_loading(
    no_gpu_needed, fake_app, tmp_path, monkeypatch, value, expected
):
    monkeypatch.setenv("CUDA_MODULE_LOADING", "SOMETHING_ELSE")
    env = _app_env(fake_app, tmp_path, module_loading=value)
    assert env["CUDA_MODULE_LOADING"] == expected
    # eager loading must patch at MODULE_LOADED: deferring the patching to the first launch blocked on the H200
    assert env["REUSELENS_EAGER_PATCH"] == ("1" if expected == "EAGER" else "0")


def test_launches_are_serialised_unless_the_user_says_otherwise(no_gpu_needed, fake_app, tmp_path, monkeypatch):
    monkeypatch.delenv("SANITIZER_DISABLE_PARALLEL_LAUNCHES", raising=False)
    assert _app_env(fake_app, tmp_path)["SANITIZER_DISABLE_PARALLEL_LAUNCHES"] == "1"
    env = _app_env(fake_app, tmp_path, env={"SANITIZER_DISABLE_PARALLEL_LAUNCHES": "0"})
    assert env["SANITIZER_DISABLE_PARALLEL_LAUNCHES"] == "0"


def test_module_loading_from_the_environment(no_gpu_needed, fake_app, tmp_path, monkeypatch):
    monkeypatch.setenv("REUSELENS_MODULE_LOADING", "eager")
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    assert _app_env(fake_app, tmp_path)["CUDA_MODULE_LOADING"] == "EAGER"
    # the keyword wins over the variable
    assert _app_env(fake_app, tmp_path, module_loading="lazy")["CUDA_MODULE_LOADING"] == "LAZY"


def test_module_loading_default_leaves_the_app_alone(no_gpu_needed, fake_app, tmp_path, monkeypatch):
    monkeypatch.delenv("REUSELENS_MODULE_LOADING", raising=False)
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    assert "CUDA_MODULE_LOADING" not in _app_env(fake_app, tmp_path)
    monkeypatch.setenv("CUDA_MODULE_LOADING", "LAZY")
    assert _app_env(fake_app, tmp_path)["CUDA_MODULE_LOADING"] == "LAZY"


def test_module_loading_invalid(no_gpu_needed, fake_app, tmp_path):
    app = fake_app("print('hi')\n")
    with pytest.raises(InvalidFilterError, match="module loading 'sometimes'"):
        launcher.profile([str(app)], run_dir=tmp_path / "run", module_loading="sometimes")
    assert not (tmp_path / "run").exists()


def _pidfd_works() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
        return True
    except (AttributeError, OSError):
        return False


@pytest.mark.skipif(
    not _pidfd_works(),
    reason="no pidfd_open here (Linux < 5.3, or blocked): the launcher falls "
    "back to polling, which this test would catch",
)
def test_app_exit_is_seen_at_once(no_gpu_needed, tmp_path, monkeypatch):
    """profile() wakes when the app exits instead of polling for it: Popen.wait(timeout) sleeps up to 50 ms
    between checks, which added that much to every profile and quantised the overhead wall times. Polling shows
    as time.sleep calls made while the app runs (subprocess sleeps through the time module); timing the delay
    instead failed on loaded machines, where 25 ms is not 10 times what a wake-up takes."""
    app = _shell_app(tmp_path, "sleep 0.3\n")
    sleeps = []
    real_sleep = time.sleep

    def recording_sleep(seconds):
        if threading.current_thread() is threading.main_thread():
            sleeps.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", recording_sleep)
    summary = launcher.profile([str(app)], run_dir=tmp_path / "run")
    assert summary.exit_code == 0
    assert sleeps == []


LAUNCHER_WITHOUT_GPU = textwrap.dedent("""
    import sys
    from pathlib import Path
    import reuselens.collector.launcher as launcher
    fake = Path(sys.argv[1])
    launcher.check_gpu = lambda: ""
    launcher.require_driver = lambda: None
    launcher.find_tool_library = lambda *a, **k: fake
    from reuselens.cli.main import main
    sys.exit(main(sys.argv[2:]))
""")


# The same, with the signal sent to the launcher by itself the moment the app has started, before its wait loop.
LAUNCHER_SIGNALLED_AT_START = textwrap.dedent("""
    import os, signal, subprocess, sys
    from pathlib import Path
    import reuselens.collector.launcher as launcher
    fake, pid_file, sig = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    launcher.check_gpu = lambda: ""
    launcher.require_driver = lambda: None
    launcher.find_tool_library = lambda *a, **k: fake

    class SignalledAtStart(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if kwargs.get("start_new_session"):  # the app
                pid_file.write_text(str(self.pid))
                os.kill(os.getpid(), sig)

    launcher.subprocess.Popen = SignalledAtStart
    from reuselens.cli.main import main
    sys.exit(main(sys.argv[4:]))
""")


def _profile_no_analyze(run_dir: Path) -> list[str]:
    """`reuselens profile`'s arguments up to the app: a collect-only run with a timeout far beyond the tests'."""
    return ["profile", "--run-dir", str(run_dir), "--timeout", "120", "--no-analyze", "--"]


def _app_gone_and_run_stopped(app_pid: int, run_dir: Path, sig: signal.Signals) -> dict:
    """Checks that the app is gone (killing an orphan, which must not outlive the test) and run.json says the run
    was stopped by `sig`; returns run.json."""
    try:
        os.kill(app_pid, 0)
    except ProcessLookupError:
        pass
    else:
        os.kill(app_pid, signal.SIGKILL)
        pytest.fail("the app outlived the launcher")
    manifest = json.loads((run_dir / "run.json").read_text())
    assert (manifest["status"], manifest["partial_reason"]) == ("partial", f"stopped by {sig.name}")
    return manifest


def _default_stop_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


def _launcher_process(script: str, *args: str) -> subprocess.Popen:
    """`script` (a launcher run as a user's `reuselens profile` would be) in its own interpreter, stderr captured. A
    test run started under nohup or with `&` ignores SIGHUP or SIGINT, and ignored signals are inherited: the launcher
    and the app start from the defaults, as in a terminal."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stderr=subprocess.PIPE, text=True, preexec_fn=_default_stop_signals
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_stop_signal_to_the_launcher_stops_the_app_and_finishes_run_json(no_gpu_needed, fake_app, tmp_path, sig):
    # `reuselens profile` in its own process, as a user or a supervisor runs it; the app writes its pid, then sleeps
    app = fake_app(
        "import os, pathlib, sys, time\npathlib.Path(sys.argv[1]).write_text(str(os.getpid()))\ntime.sleep(300)\n"
    )
    pid_file, run_dir = tmp_path / "app.pid", tmp_path / "run"
    launcher_proc = _launcher_process(
        LAUNCHER_WITHOUT_GPU, str(no_gpu_needed), *_profile_no_analyze(run_dir), str(app), str(pid_file)
    )
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and launcher_proc.poll() is None, launcher_proc.stderr.read()
        time.sleep(0.05)
    app_pid = int(pid_file.read_text())
    # WHEN the launcher gets the signal
    launcher_proc.send_signal(sig)
    # THEN it ends soon (not at --timeout 120), the app is gone and run.json says why the run is partial
    launcher_proc.wait(timeout=30)
    manifest = _app_gone_and_run_stopped(app_pid, run_dir, sig)
    assert manifest["exit_code"] == -sig
    assert launcher_proc.returncode in (-sig, 130)  # the signal keeps its effect once the run is finished


def test_previous_run_with_a_symlinked_modules_directory_is_cleared(no_gpu_needed, fake_app, tmp_path):
    # the link goes, what it points to stays
    kept = tmp_path / "elsewhere"
    kept.mkdir()
    (kept / "keep.cubin").write_bytes(b"x")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    (run / "modules").symlink_to(kept)
    summary = launcher.profile([str(fake_app("print('hi')\n"))], run_dir=run)
    assert summary.exit_code == 0 and not (run / "modules").is_symlink()
    assert (kept / "keep.cubin").read_bytes() == b"x"


def test_run_directory_write_failure_is_one_line(no_gpu_needed, fake_app, tmp_path):
    # a file-size limit below run.json's size: the write fails with EFBIG (Python ignores SIGXFSZ)
    app = fake_app("print('hi')\n")
    limit = "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))\n"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            limit + LAUNCHER_WITHOUT_GPU,
            str(no_gpu_needed),
            "profile",
            "--run-dir",
            str(tmp_path / "run"),
            "--no-analyze",
            "--",
            str(app),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"reuselens: error: {tmp_path / 'run'}: cannot write the run directory (File too large)"
    )


def test_run_json_is_written_one_member_and_one_list_item_per_line_and_reads_back_equal(tmp_path):
    data = {"format": "reuselens-run", "launches": [{"id": 0, "grid": [1, 1, 1]}, {"id": 1}], "errors": [], "n": 2}
    path = tmp_path / "run.json"
    run_manifest.write_json_atomic(path, data)
    text = path.read_text()
    assert json.loads(text) == data
    assert text.splitlines() == [
        "{",
        ' "format": "reuselens-run",',
        ' "launches": [',
        '  {"id": 0, "grid": [1, 1, 1]},',
        '  {"id": 1}',
        " ],",
        ' "errors": [],',
        ' "n": 2',
        "}",
    ]


def test_a_run_opened_again_unchanged_is_not_read_twice_and_a_changed_one_is(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    manifest = json.loads(
        (Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "intra_waste" / "run.json").read_text()
    )
    (run / "run.json").write_text(json.dumps(manifest))
    first = open_run(run)
    assert open_run(run) is first
    manifest["exit_code"] = 1 - (manifest.get("exit_code") or 0)  # the same size, in place: only the bytes differ
    (run / "run.json").write_text(json.dumps(manifest))
    second = open_run(run)
    assert second is not first and second.manifest["exit_code"] == manifest["exit_code"]
    (run / "run.json").write_text("{")
    with pytest.raises(RunDirectoryError, match="run.json: unreadable run manifest"):
        open_run(run)


def _finished_manifest_then(run_dir: str, finished: bool, then: str) -> str:
    """Python source: run.json rewritten in the tool library's own layout (two-space members), the collector member
    saying whether it finished, then `then` (the app's teardown)."""
    return (
        TOOL_LIBRARY_TEXT
        + textwrap.dedent(f"""
        import json, os, sys, time
        m = json.load(open(os.path.join({run_dir!r}, "run.json")))
        m.update(status="complete", partial_reason=None, collector={{"pid": os.getpid(), "finished": {finished!r}}})
        tmp = os.path.join({run_dir!r}, "run.json.tmp")
        open(tmp, "w").write(tool_library_text(m))
        os.replace(tmp, os.path.join({run_dir!r}, "run.json"))
    """)
        + textwrap.dedent(then)
    )


def test_the_collectors_exit_files_are_announced_before_the_app_has_gone(no_gpu_needed, fake_app, tmp_path):
    # GIVEN an app whose tool library writes its exit files, and which then takes a while to tear down
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_finished_manifest_then(run_dir, True, "time.sleep(1.5)\n"))
    announced = []
    # WHEN it is profiled with on_collected
    summary = launcher.profile([str(app)], run_dir=run_dir, on_collected=lambda: announced.append(time.monotonic()))
    returned = time.monotonic()
    # THEN the launcher said so once, well before the app's exit, and finished the run as ever
    assert len(announced) == 1 and returned - announced[0] > 1.0
    assert (summary.status, summary.exit_code) == ("complete", 0)


def test_nothing_is_announced_while_the_collector_has_not_finished(no_gpu_needed, fake_app, tmp_path):
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_finished_manifest_then(run_dir, False, "time.sleep(0.3)\n"))
    announced = []
    summary = launcher.profile([str(app)], run_dir=run_dir, on_collected=lambda: announced.append(1))
    assert announced == [] and summary.status == "partial"


def test_profile_object_level_makes_the_memory_report_while_the_app_tears_down(
    no_gpu_needed, fake_app, tmp_path, monkeypatch, capsys
):
    # GIVEN a recorded object-level run that a fake app writes as its tool library's exit files, then lingers
    import threading

    from reuselens.cli import main as cli_main
    from reuselens.cli import memory as memory_cli

    recorded = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "memory_waste_objects"
    (no_gpu_needed.parent / launcher.OBJECTS_PATCH_FATBIN).write_bytes(b"")
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(
        TOOL_LIBRARY_TEXT
        + textwrap.dedent(f"""
            import json, os, shutil, time
            shutil.copy({str(recorded / "object_touches.json")!r}, {run_dir!r})
            m = json.load(open({str(recorded / "run.json")!r}))
            m["collector"]["finished"] = True
            tmp = os.path.join({run_dir!r}, "run.json.tmp")
            open(tmp, "w").write(tool_library_text(m))
            os.replace(tmp, os.path.join({run_dir!r}, "run.json"))
            time.sleep(1.0)
        """)
    )
    made_on = []
    real_report_text = memory_cli.report_text

    def report_text(*args, **kwargs):
        made_on.append(threading.current_thread().name)
        return real_report_text(*args, **kwargs)

    monkeypatch.setattr(memory_cli, "report_text", report_text)
    # WHEN it is profiled at object level
    code = cli_main.main(["profile", "--object-level", "--run-dir", run_dir, "--", str(app)])
    # THEN the memory table was made once, on the thread started at the exit files, and printed after the exit
    assert code == 0
    assert made_on == ["reuselens-early-analysis"]
    assert "peak" in capsys.readouterr().out.lower()


def test_profile_builds_the_report_while_the_app_tears_down_and_writes_the_runs_exit_code(
    no_gpu_needed, fake_app, tmp_path, monkeypatch
):
    # GIVEN a recorded traced run whose exit files a fake app writes (analysis.json, run.json finished), before it
    # lingers and exits with status 3
    import threading

    from reuselens.cli import main as cli_main
    from reuselens.cli import profile as profile_cli

    recorded = Path(__file__).resolve().parents[1] / "data" / "runs" / "pattern_suite"
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(
        TOOL_LIBRARY_TEXT
        + textwrap.dedent(f"""
            import json, os, shutil, time
            for name in os.listdir({str(recorded)!r}):
                source = os.path.join({str(recorded)!r}, name)
                if name in ("run.json", "report.json"):
                    continue
                if os.path.isdir(source):
                    shutil.copytree(source, os.path.join({run_dir!r}, name))
                else:
                    shutil.copy(source, {run_dir!r})
            m = json.load(open(os.path.join({str(recorded)!r}, "run.json")))
            m["collector"]["finished"] = True
            tmp = os.path.join({run_dir!r}, "run.json.tmp")
            open(tmp, "w").write(tool_library_text(m))
            os.replace(tmp, os.path.join({run_dir!r}, "run.json"))
            time.sleep(1.0)
            raise SystemExit(3)
        """)
    )
    built_on = []
    real_report = profile_cli._report

    def report(*args):
        built_on.append(threading.current_thread().name)
        return real_report(*args)

    monkeypatch.setattr(profile_cli, "_report", report)
    # WHEN it is profiled
    code = cli_main.main(["profile", "--run-dir", run_dir, "--", str(app)])
    # THEN the report was built once, on the thread started at the exit files, and report.json has the run's
    # fields as the launcher finished them (the app's exit status, which the tool library could not know)
    assert code == 3
    assert built_on == ["reuselens-early-analysis"]
    saved = json.loads((Path(run_dir) / "report.json").read_text())
    assert saved["run"]["exit_code"] == 3 and saved["kernels"]


def test_without_inotify_the_exit_files_are_simply_not_announced(no_gpu_needed, fake_app, tmp_path, monkeypatch):
    # GIVEN a C library without inotify (or none at all)
    from reuselens.collector import finish_watch

    class NoInotify:
        def __getattr__(self, name):
            raise AttributeError(name)

    monkeypatch.setattr(finish_watch.ctypes, "CDLL", lambda *a, **k: NoInotify())
    run_dir = str((tmp_path / "run").resolve())
    app = fake_app(_finished_manifest_then(run_dir, True, "time.sleep(0.2)\n"))
    announced = []
    # WHEN an app is profiled with on_collected
    summary = launcher.profile([str(app)], run_dir=run_dir, on_collected=lambda: announced.append(1))
    # THEN the run finishes as ever, and nothing was announced (the analysis then waits for the exit)
    assert announced == [] and (summary.status, summary.exit_code) == ("complete", 0)


def test_run_json_read_at_the_exit_files_is_the_one_finished_unless_it_changed(
    no_gpu_needed, fake_app, tmp_path, monkeypatch
):
    # GIVEN an app whose tool library finishes, and a second one that rewrites run.json after that
    run_dir = str((tmp_path / "run").resolve())
    rewrite = """
        time.sleep(0.3)
        m["collector"]["records"] = 99
        open(tmp, "w").write(tool_library_text(m))
        os.replace(tmp, os.path.join(RUN, "run.json"))
    """.replace("RUN", repr(run_dir))
    calm = fake_app(_finished_manifest_then(run_dir, True, "time.sleep(0.3)\n"), name="calm.py")
    late = fake_app(_finished_manifest_then(run_dir, True, rewrite), name="late.py")
    reads = []
    real_read = launcher.read_back_members
    monkeypatch.setattr(launcher, "read_back_members", lambda path: reads.append(path) or real_read(path))
    # WHEN each is profiled with on_collected
    launcher.profile([str(calm)], run_dir=run_dir, on_collected=lambda: None)
    calm_reads = len(reads)
    summary = launcher.profile([str(late)], run_dir=run_dir, on_collected=lambda: None)
    # THEN the finish takes run.json as read at the exit files when it is still that file, and reads it again when not
    assert calm_reads == 0
    assert len(reads) == 1 and summary.records == 99


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_stop_signal_as_the_app_starts_still_stops_it(no_gpu_needed, fake_app, tmp_path, sig):
    # GIVEN a launcher that gets the signal right after the app's start, before it waits for it (a server told to
    # stop just then); the app sleeps
    app = fake_app("import time\ntime.sleep(300)\n")
    pid_file, run_dir = tmp_path / "app.pid", tmp_path / "run"
    launcher_proc = _launcher_process(
        LAUNCHER_SIGNALLED_AT_START,
        str(no_gpu_needed),
        str(pid_file),
        str(int(sig)),
        *_profile_no_analyze(run_dir),
        str(app),
    )
    # THEN the launcher ends soon, the app is gone and run.json says why the run is partial
    launcher_proc.wait(timeout=30)
    _app_gone_and_run_stopped(int(pid_file.read_text()), run_dir, sig)
