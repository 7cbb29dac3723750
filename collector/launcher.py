"""Run a user's command under the ReuseLens collector and leave a run directory (docs/run-directory.md).

The tool library (collector/native, C++) is loaded into the application with LD_PRELOAD and
CUDA_INJECTION64_PATH; it is configured through REUSELENS_* variables (docs/collector.md) and rewrites
RUN/run.json atomically while the application runs. This module starts the application in its own process
group, enforces the timeout and cancellation (the whole group is killed), and finalises run.json with the
exit status and, when the run did not finish normally, the reason it is partial.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import namedtuple
from pathlib import Path

from reuselens.collector import library_cache
from reuselens.collector.errors import (
    AppNotFoundError,
    InvalidFilterError,
    NoGpuError,
    ProfileFailedError,
    RunDirectoryNotEmptyError,
    RunDirectoryWriteError,
    ToolLibraryMissingError,
    ToolLibraryUnloadableError,
)
from reuselens.collector.finish_watch import FinishWatch
from reuselens.collector.kernel_regex import kernel_regex_problem
from reuselens.collector.manifest import (
    MANIFEST,
    finalize_manifest,
    initial_manifest,
    read_back,
    read_back_members,
    signal_name,
    utc_now,
    write_json_atomic,
)

TOOL_LIBRARY = "libreuselens_collector.so"
PATCH_FATBIN = "reuselens_patch.fatbin"
OBJECTS_PATCH_FATBIN = "reuselens_objects_patch.fatbin"  # object-level mode's patch, built beside the other
VALUES_PATCH_FATBIN = "reuselens_values_patch.fatbin"  # value mode's patch (patch.cu built with RL_VALUES)
TOOL_VERSION = "0.1.0"
# Files a previous run leaves; a run directory holding only these may be reused.
_RUN_ENTRIES = {
    MANIFEST,
    "modules",
    "traces",
    "collector.log",
    "report.json",
    "analysis.json",
    "object_touches.json",
    ".collector.pid",
    "app.stdout",
    "app.stderr",
}
MIN_BUFFER_BYTES = 16 * 288  # the smallest buffer the tool library accepts (16 records)
# profile(module_loading=...) / REUSELENS_MODULE_LOADING -> the app's CUDA_MODULE_LOADING
MODULE_LOADING_MODES = {"eager": "EAGER", "lazy": "LAZY"}
# Tool-library variables the launcher sets from its own arguments: the caller's environment never reaches the app
# with them (the other REUSELENS_* variables pass through, docs/collector.md).
LAUNCHER_SETTINGS = (
    "REUSELENS_KERNEL_REGEX",
    "REUSELENS_KERNEL_NAMES_FILE",
    "REUSELENS_LAUNCH_RANGE",
    "REUSELENS_BUFFER_BYTES",
    "REUSELENS_BUFFERS",
    "REUSELENS_SPLIT_CONFIGURATIONS",
    "REUSELENS_OBJECT_LEVEL",
    "REUSELENS_OBJECT_ELEMENTS",
    "REUSELENS_VALUES",
    "REUSELENS_VALUES_EVERY",
    "REUSELENS_VALUES_APPROX",
)
# The Sanitizer's switch that serialises launches (see profile()); the user's own value wins.
SERIAL_LAUNCHES_VAR = "SANITIZER_DISABLE_PARALLEL_LAUNCHES"

TYPE_CHECKING = False  # typing itself is not imported at run time: 4-5 ms of every start on the H200 host
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Sequence

    ProgressCallback = Callable[..., None]


class RunSummary(
    namedtuple(
        "RunSummary",
        "run_dir status partial_reason exit_code launches_seen launches_instrumented records wall_seconds errors "
        "collection manifest manifest_text",
        defaults=(0, 0, 0, 0.0, (), None, None, None),
    )
):
    """What profile() returns; the run directory holds the details: run_dir (Path), status ("complete" or
    "partial"), partial_reason, exit_code (the application's; negative: killed by that signal), launches_seen,
    launches_instrumented, records, wall_seconds, errors (tuple of str), collection (run.json's
    collector.collection, "trace" or "objects"; None when no collector ran), manifest and manifest_text (run.json
    as the launcher finished it, decoded and as written: the analysis that follows need not read it again;
    treat the manifest as read-only). A named tuple (not a dataclass, not
    typing's NamedTuple): the launcher's start-up imports neither `dataclasses` nor `typing`."""

    __slots__ = ()


# ---------------------------------------------------------------------------------------------- lookup


def find_tool_library(candidates: Sequence[Path] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The tool library, with its device patch beside it, checked to load; ToolLibraryMissingError otherwise.

    Without `candidates`: REUSELENS_COLLECTOR_LIB, else the copy installed with the package (a wheel and an
    editable install alike put it in site-packages/reuselens/collector/native). Never a copy in the build tree:
    its RPATH names the Sanitizer wheel in pip's build environment, which pip deletes after the build. `env` is
    the environment the application will run with (default: this process's)."""
    if candidates is not None:
        return _first_library(list(candidates))
    env = os.environ if env is None else env
    if env.get("REUSELENS_COLLECTOR_LIB"):
        candidates = [Path(env["REUSELENS_COLLECTOR_LIB"])]
    else:
        candidates = _installed_libraries()
    library = _first_library(candidates)
    check_library_loads(library, env)
    return library


def _installed_libraries() -> list[Path]:
    """site-packages/reuselens/collector/native; an editable (redirect) install lists site-packages and the
    source folder in the package's __path__, and only the former holds the library."""
    import reuselens.collector as package

    folders = [*map(Path, package.__path__), Path(__file__).resolve().parent]
    return [folder / "native" / TOOL_LIBRARY for folder in folders]


def _first_library(candidates: list[Path]) -> Path:
    for lib in candidates:
        if lib.is_file():
            if not (lib.parent / PATCH_FATBIN).is_file():
                raise ToolLibraryMissingError(
                    f"the collector's device patch {lib.parent / PATCH_FATBIN} is missing; install the CUDA "
                    f"toolkit (nvcc) or `pip install nvidia-cuda-nvcc`, then reinstall reuselens"
                )
            return lib
    raise ToolLibraryMissingError(
        "the collector library is not built; reinstall reuselens with `pip install .` on a machine with "
        "nvcc and the nvidia-cuda-sanitizer-api wheel"
    )


# Loads the library in a child process: the dynamic loader's own answer, without running the library (or the
# Sanitizer) in the launcher. The library stays passive without REUSELENS_RUN_DIR and says so on stderr.
_LOAD_PROBE = (
    "import ctypes, sys\n"
    "try:\n ctypes.CDLL(sys.argv[1])\nexcept OSError as e:\n print(e); sys.exit(3)\n"
    "for line in open('/proc/self/maps'):\n"
    " fields = line.split(None, 5)\n"
    " if len(fields) == 6 and fields[5].startswith('/') and '.so' in fields[5]: print(fields[5].strip())\n"
)
_LOADABLE: set[tuple[Any, ...]] = set()


def check_library_loads(library: Path, env: Mapping[str, str]) -> None:
    """Raise ToolLibraryUnloadableError unless the dynamic loader can load `library` with every dependency
    (libsanitizer-public.so above all) in `env`; otherwise every profiled app would exit with status 127.

    The answer is a child interpreter's dlopen (20-50 ms). A success is remembered in the user's cache
    (~/.cache/reuselens) with every file the loader mapped: while none of them changes, later launchers skip it."""
    probe_env = {
        k: v
        for k, v in env.items()
        if not k.startswith("REUSELENS_") and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")
    }
    stat = library.stat()
    key = (str(library), stat.st_mtime_ns, stat.st_size, probe_env.get("LD_LIBRARY_PATH"))
    if key in _LOADABLE:  # a server profiles again and again with the same library
        return
    cache_key = json.dumps([str(library), probe_env.get("LD_LIBRARY_PATH")])
    if library_cache.loads(cache_key):
        _LOADABLE.add(key)
        return
    try:
        probe = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _LOAD_PROBE, str(library)],
            env=probe_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolLibraryUnloadableError(f"cannot check that the collector library {library} loads ({error})") from None
    if probe.returncode == 0:
        _LOADABLE.add(key)
        mapped = sorted(set(probe.stdout.split()))
        if str(library.resolve()) in mapped or str(library) in mapped:
            library_cache.remember(cache_key, mapped)
        return
    reason = (probe.stdout.strip() or probe.stderr.strip() or f"exit status {probe.returncode}").splitlines()[-1]
    raise ToolLibraryUnloadableError(
        f"the collector library {library} cannot be loaded ({reason}); every profiled app would fail to start. "
        f"Install the Sanitizer wheel into this environment (`pip install nvidia-cuda-sanitizer-api==13.0.85`) "
        f"and reinstall reuselens there, or point REUSELENS_COLLECTOR_LIB at a library that loads"
    )


def require_driver() -> ctypes.CDLL:
    """Raise NoGpuError unless the NVIDIA driver library loads (a few milliseconds; no GPU initialisation)."""
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise NoGpuError(
            "no NVIDIA driver found (libcuda.so.1 cannot be loaded); profiling needs an "
            "NVIDIA GPU with its driver installed"
        ) from None


def check_gpu() -> str:
    """Raise NoGpuError unless the NVIDIA driver loads and sees at least one GPU; returns the first's name."""
    cuda = require_driver()
    result = cuda.cuInit(0)
    if result != 0:
        raise NoGpuError(f"the NVIDIA driver cannot initialise a GPU (cuInit error {result}); check nvidia-smi")
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        raise NoGpuError("the NVIDIA driver sees no GPU; profiling needs one")
    name = ctypes.create_string_buffer(256)
    device = ctypes.c_int(0)
    if cuda.cuDeviceGet(ctypes.byref(device), 0) == 0 and cuda.cuDeviceGetName(name, 256, device) == 0:
        return name.value.decode(errors="replace")
    return ""


def resolve_program(argv0: str, cwd: Path, path_env: str | None) -> str:
    if "/" in argv0:
        program = (cwd / argv0) if not os.path.isabs(argv0) else Path(argv0)
        if not program.exists():
            raise AppNotFoundError(f"{argv0}: no such file (relative to {cwd})")
        if program.is_dir() or not os.access(program, os.X_OK):
            raise AppNotFoundError(f"{argv0}: not an executable file")
        return str(program)
    import shutil  # here, not at the top: with its archive modules, 3 ms of every start before the app's

    found = shutil.which(argv0, path=path_env)
    if not found:
        raise AppNotFoundError(f"{argv0}: command not found on PATH")
    return found


# ---------------------------------------------------------------------------------------------- run.json


def _prepare_run_dir(run_dir: Path) -> None:
    if run_dir.exists():
        if not run_dir.is_dir():
            raise RunDirectoryNotEmptyError(f"{run_dir}: exists and is not a directory")
        entries = {p.name for p in run_dir.iterdir()}
        stray = {e for e in entries if e not in _RUN_ENTRIES and not e.startswith(f"{MANIFEST}.tmp")}
        if stray:
            raise RunDirectoryNotEmptyError(
                f"{run_dir}: not empty and not a previous run (holds {sorted(stray)[0]}); choose another run directory"
            )
        for name in entries:
            path = run_dir / name
            if path.is_dir() and not path.is_symlink():  # a link is removed, never what it points to
                import shutil

                shutil.rmtree(path)
            else:
                path.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def _writing(run_path: Path):
    """An OSError while clearing or writing the run directory becomes one sentence, not a traceback."""
    try:
        yield
    except OSError as error:
        raise RunDirectoryWriteError(
            f"{run_path}: cannot write the run directory ({error.strerror or error})"
        ) from None


def _kill_group(proc: subprocess.Popen, grace: float = 2.0, first: int = signal.SIGTERM) -> None:
    try:
        os.killpg(proc.pid, first)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


# ---------------------------------------------------------------------------------------------- profile

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class _StopSignals:
    """While the app runs, SIGTERM/SIGHUP/SIGINT to the launcher are recorded instead of ending it at once: the
    app runs in its own session, so a launcher that just died would leave it running past any timeout and
    run.json at "starting". After the run is finished, redeliver() gives the signal its old effect. Handlers
    can only be installed from the main thread; elsewhere nothing is caught."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "_StopSignals":
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._record)
        return self

    def _record(self, number: int, frame: Any) -> None:
        if self.received is None:
            self.received = number

    def __exit__(self, *exc: Any) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def redeliver(self) -> None:
        """Raise the recorded signal again with the launcher's old handlers back (SIGINT: KeyboardInterrupt)."""
        if self.received is not None and self._previous:
            signal.raise_signal(self.received)


class _ExitWatch:
    """Waits for the app's exit and wakes the moment it happens. Popen.wait(timeout) polls with sleeps that grow
    to 50 ms, which added up to 50 ms to every profile (and quantised the wall times benchmarks/overhead.py
    measures); a pidfd (Linux 5.3+) becomes readable when the process exits. Without one, Popen.wait."""

    def __init__(self, proc: subprocess.Popen, also: int = -1) -> None:
        """also: another descriptor whose readiness ends a wait early (the FinishWatch's)."""
        self._proc = proc
        self._poller = None
        self._fd = -1
        self._also = -1
        try:
            self._fd = os.pidfd_open(proc.pid)
            self._poller = select.poll()
            self._poller.register(self._fd, select.POLLIN)
            if also >= 0:
                self._poller.register(also, select.POLLIN)
                self._also = also
        except (AttributeError, OSError):
            self.close()

    def forget_also(self) -> None:
        """Stop watching the other descriptor (before it is closed)."""
        if self._poller is not None and self._also >= 0:
            self._poller.unregister(self._also)
        self._also = -1

    def exited(self, timeout: float) -> bool:
        """True once the app has exited (and is reaped), else False after `timeout` seconds."""
        if self._poller is not None and self._proc.poll() is None:
            self._poller.poll(int(timeout * 1000))
        try:
            self._proc.wait(timeout=0 if self._poller is not None else timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._poller = -1, None


def profile(
    argv: Sequence[str],
    *,
    run_dir: str | os.PathLike,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    kernel_filter: str | None = None,
    kernel_list: str | os.PathLike | None = None,
    launch_range: tuple[int, int | None] | None = None,
    timeout: float | None = None,
    write_traces: bool = False,
    buffer_bytes: int | None = None,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    buffers: int | None = None,
    module_loading: str | None = None,
    split_configurations: bool = False,
    object_level: bool = False,
    element_maps: bool = False,
    values: bool = False,
    values_every: int | None = None,
    values_approx: float | None = None,
    on_start: Callable[[], None] | None = None,
    on_collected: Callable[[], None] | None = None,
) -> RunSummary:
    """Run `argv` under the collector and return a summary; the run directory holds the results.

        env: variables added to (overriding) this process's environment. kernel_filter: regex searched in the
        mangled and the demangled kernel name. kernel_list: file of kernel names (mangled, demangled, or the
        demangled name without parameters), one per line. launch_range: (first, end) over the launches that pass
        the name filters, end exclusive or None. timeout: seconds before the whole process group is killed and the
        run marked partial. cancel: set it to stop the run the same way. on_progress(stage, done, total) is
        called about once a second. module_loading: "eager" sets CUDA_MODULE_LOADING=EAGER for the app and patches
        every module when it loads, "lazy" sets CUDA_MODULE_LOADING=LAZY (None: REUSELENS_MODULE_LOADING from env /
        this process's environment if set, else the app's own setting). split_configurations: the online analysis
    keeps one result entry per kernel and launch configuration instead of one per kernel. object_level: record
    only which allocations each kernel read and wrote (object_touches.json, for `reuselens memory`), without the
    access trace the reuse analysis needs (docs/memory.md, "Object-level mode"); element_maps (with object_level):
    also count each object's touched bytes and accesses per slice on the GPU ("Element maps"). values: record each
    lane's loaded or stored value beside its address (the value patch, docs/trace-format.md "Value companions"),
    for the value redundancy analysis; not with object_level. values_every: values on the first of every k
    instrumented launches only (launch sampling). values_approx: the share within which a float load counts as
    approximately redundant (None: the collector's 0.01; 0: not counted). on_start() is called once the app
    has started (the CLI loads the analysis meanwhile); on_collected(), from the launcher's thread, once the tool
    library has written its exit files while the app has not yet exited (the CLI analyses them meanwhile; never
    called when the app exits first, or without inotify). Raises a CollectorError subclass (one clear sentence) when
    profiling cannot start.

        Launches are serialised by the Sanitizer (SANITIZER_DISABLE_PARALLEL_LAUNCHES=1) unless env sets that
        variable: with parallel launches, an app that creates its own streams blocks forever in the first
        patching (measured on the H200, docs/collector.md "Multi-stream applications"). Instrumented launches
        run one at a time anyway, so only launches outside the kernel filter lose their overlap.
    """
    if not argv:
        raise AppNotFoundError("no command to profile")
    cwd_path = Path(cwd).expanduser().resolve() if cwd is not None else Path.cwd()
    if not cwd_path.is_dir():
        raise AppNotFoundError(f"{cwd_path}: working directory does not exist")
    full_env = dict(os.environ)
    if env:
        full_env.update({str(k): str(v) for k, v in env.items()})
    program = resolve_program(str(argv[0]), cwd_path, full_env.get("PATH"))
    if kernel_filter:
        problem = kernel_regex_problem(kernel_filter)
        if problem is not None:
            raise InvalidFilterError(
                f"kernel filter {kernel_filter!r} is not a valid regex ({problem}); the "
                f"collector reads POSIX extended regexes"
            )
    names_file = None
    if kernel_list:
        names_file = Path(kernel_list).expanduser().resolve()
        if not names_file.is_file():
            raise InvalidFilterError(f"{kernel_list}: kernel list file not found")
    first, end = 0, None
    if launch_range is not None:
        first, end = int(launch_range[0]), (None if launch_range[1] is None else int(launch_range[1]))
        if first < 0 or (end is not None and end <= first):
            raise InvalidFilterError(f"launch range {launch_range}: expected 0 <= first < end")
    if module_loading is None:
        module_loading = full_env.get("REUSELENS_MODULE_LOADING") or None
    if module_loading is not None and str(module_loading).lower() not in MODULE_LOADING_MODES:
        raise InvalidFilterError(
            f"module loading {module_loading!r}: expected one of {', '.join(sorted(MODULE_LOADING_MODES))}"
        )
    if buffer_bytes is not None and buffer_bytes < MIN_BUFFER_BYTES:
        raise InvalidFilterError(f"buffer size {buffer_bytes} bytes is below the minimum of {MIN_BUFFER_BYTES}")
    library = find_tool_library(env=full_env)
    if (
        object_level
        and not full_env.get("REUSELENS_PATCH")
        and not (Path(library).parent / OBJECTS_PATCH_FATBIN).is_file()
    ):
        raise ToolLibraryMissingError(
            f"{Path(library).parent / OBJECTS_PATCH_FATBIN} is missing: the object-level mode needs the object "
            f"patch, built with the collector when nvcc is available; reinstall reuselens"
        )
    if (
        values
        and not object_level
        and not full_env.get("REUSELENS_PATCH")
        and not (Path(library).parent / VALUES_PATCH_FATBIN).is_file()
    ):
        raise ToolLibraryMissingError(
            f"{Path(library).parent / VALUES_PATCH_FATBIN} is missing: value mode needs the value patch, built "
            f"with the collector when nvcc is available; reinstall reuselens"
        )
    # Only the driver library before the start: initialising a GPU here took ~0.18 s of every run on the H200
    # host (benchmarks/results/h200-2026-12-02-s8, call 2), and the app initialises its own. When the app then
    # fails without the collector having seen a GPU, check_gpu says why (below).
    require_driver()

    run_path = Path(run_dir).expanduser().resolve()
    start_time = utc_now()
    filter_info = {
        "regex": kernel_filter or None,
        "names_file": str(names_file) if names_file else None,
        "launch_range": [first, end],
    }
    base = initial_manifest(argv, cwd_path, start_time, filter_info, TOOL_VERSION)
    with _writing(run_path):
        _prepare_run_dir(run_path)
        write_json_atomic(run_path / MANIFEST, base)

    header = {"command": list(argv), "cwd": str(cwd_path), "start_time": start_time}
    preload = full_env.get("LD_PRELOAD", "")
    full_env.update(
        {
            "LD_PRELOAD": f"{library}{':' + preload if preload else ''}",
            "CUDA_INJECTION64_PATH": str(library),
            "REUSELENS_RUN_DIR": str(run_path),
            "REUSELENS_RUN_HEADER": json.dumps(header),
            "REUSELENS_WRITE_TRACES": "1" if write_traces else "0",
        }
    )
    for key in LAUNCHER_SETTINGS:
        full_env.pop(key, None)
    if object_level:
        full_env["REUSELENS_OBJECT_LEVEL"] = "1"
        if element_maps:
            full_env["REUSELENS_OBJECT_ELEMENTS"] = "1"
    if values and not object_level:
        full_env["REUSELENS_VALUES"] = "1"
        if values_every is not None:
            if int(values_every) < 1:
                raise InvalidFilterError(f"values_every {values_every}: expected a whole number >= 1")
            full_env["REUSELENS_VALUES_EVERY"] = str(int(values_every))
        if values_approx is not None:
            if not 0 <= float(values_approx) <= 1:
                raise InvalidFilterError(f"values_approx {values_approx}: expected a share between 0 and 1")
            full_env["REUSELENS_VALUES_APPROX"] = repr(float(values_approx))
    if split_configurations:
        full_env["REUSELENS_SPLIT_CONFIGURATIONS"] = "1"
    if kernel_filter:
        full_env["REUSELENS_KERNEL_REGEX"] = kernel_filter
    if names_file:
        full_env["REUSELENS_KERNEL_NAMES_FILE"] = str(names_file)
    if launch_range is not None:
        full_env["REUSELENS_LAUNCH_RANGE"] = f"{first}:{'' if end is None else end}"
    if buffer_bytes is not None:
        full_env["REUSELENS_BUFFER_BYTES"] = str(int(buffer_bytes))
    if buffers is not None:
        full_env["REUSELENS_BUFFERS"] = str(int(buffers))
    if module_loading is not None:
        mode = MODULE_LOADING_MODES[str(module_loading).lower()]
        full_env["CUDA_MODULE_LOADING"] = mode
        # Eager loading with patching deferred to the first launch blocks the same way parallel launches do.
        full_env["REUSELENS_EAGER_PATCH"] = "1" if mode == "EAGER" else "0"
    full_env.setdefault(SERIAL_LAUNCHES_VAR, "1")

    # Watched from before the start, so that no rename of the tool library's is missed.
    finish_watch = FinishWatch(run_path) if on_collected is not None else None
    collected = False  # on_collected was called
    started = time.monotonic()
    # Caught from before the app starts: the app runs in its own session, so a stop that came between its start
    # and the handlers (a server told to stop just then, tests/lsp/test_server_signals.py under load) ended the
    # launcher and left the app running.
    stop_signals = _StopSignals()
    stop_signals.__enter__()
    try:
        proc = subprocess.Popen([program, *map(str, argv[1:])], cwd=cwd_path, env=full_env, start_new_session=True)
    except OSError as error:
        stop_signals.__exit__()
        base.update(status="partial", partial_reason=f"app could not be started ({error.strerror})")
        write_json_atomic(run_path / MANIFEST, base)
        raise ProfileFailedError(f"{argv[0]}: cannot start ({error.strerror})") from None

    stop_reason: str | None = None
    last_progress = 0.0
    exit_watch: _ExitWatch | None = None
    try:
        # inside the try: an interrupt from here on still stops the app
        if on_start is not None:
            on_start()
        exit_watch = _ExitWatch(proc, also=finish_watch.fileno() if finish_watch is not None else -1)
        while True:
            if exit_watch.exited(0.1):
                break
            if finish_watch is not None and not collected and finish_watch.finished():
                collected = True
                exit_watch.forget_also()
                finish_watch.close()
                on_collected()  # type: ignore[misc]  (set with finish_watch)
                finish_watch.decode_final()  # for _finish, while the app tears down
            if stop_signals.received is not None:
                stop_reason = f"stopped by {signal_name(stop_signals.received)}"
                _kill_group(proc, first=stop_signals.received)  # the app gets the signal the launcher got
                break
            elapsed = time.monotonic() - started
            if timeout is not None and elapsed > timeout:
                stop_reason = f"timeout after {timeout:g} s"
                _kill_group(proc)
                break
            if cancel is not None and cancel.is_set():
                stop_reason = "cancelled"
                _kill_group(proc)
                break
            if on_progress is not None and elapsed - last_progress >= 1.0:
                last_progress = elapsed
                manifest = read_back(run_path) or {}
                done = (manifest.get("collector") or {}).get("launches_instrumented", 0)
                on_progress("profiling: kernel launches instrumented", done, None)
    except BaseException:
        # KeyboardInterrupt or a failing progress callback: never leave the app running.
        if proc.poll() is None:
            _kill_group(proc)
        stop_reason = stop_reason or "cancelled"
        _finish(run_path, base, proc.returncode, stop_reason, time.monotonic() - started)
        raise
    finally:
        if exit_watch is not None:
            exit_watch.close()
        if finish_watch is not None:
            finish_watch.close()
        stop_signals.__exit__()
    # Children the app left behind in its group die with the run.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    no_gpu = _no_gpu_behind_a_failure(run_path, proc.returncode) if stop_reason is None else None
    if no_gpu is not None:
        stop_reason = str(no_gpu)
    final = finish_watch.final_if_unchanged() if finish_watch is not None else None
    summary = _finish(run_path, base, proc.returncode, stop_reason, time.monotonic() - started, final)
    stop_signals.redeliver()
    if no_gpu is not None:
        raise no_gpu
    return summary


def _no_gpu_behind_a_failure(run_path: Path, returncode: int | None) -> NoGpuError | None:
    """An app that failed before any CUDA context existed (run.json names no GPU) may have failed for want of a
    usable GPU: check_gpu's error then, else None."""
    if returncode in (0, None):
        return None
    gpu = ((read_back(run_path) or {}).get("gpu") or {}).get("name")
    if gpu:
        return None
    try:
        check_gpu()
    except NoGpuError as failure:
        return failure
    return None


def _finish(
    run_path: Path,
    base: dict[str, Any],
    returncode: int | None,
    stop_reason: str | None,
    wall: float,
    final: tuple[Any, Any] | None = None,
) -> RunSummary:
    """final: run.json's members as read when the tool library finished (during the app's teardown), when the file
    is still that one (FinishWatch.final_if_unchanged): 4-8 ms of decoding saved after a thousand-launch app."""
    written = final if final is not None else read_back_members(run_path)
    data = finalize_manifest(written[0] if written else None, base, returncode, stop_reason, wall)
    with _writing(run_path):
        text = write_json_atomic(run_path / MANIFEST, data, verbatim=written[1] if written else None)
    collector = data.get("collector") or {}
    return RunSummary(
        run_dir=run_path,
        status=data["status"],
        partial_reason=data["partial_reason"],
        exit_code=returncode,
        launches_seen=int(collector.get("launches_seen", 0) or 0),
        launches_instrumented=int(collector.get("launches_instrumented", 0) or 0),
        records=int(collector.get("records", 0) or 0),
        wall_seconds=wall,
        errors=tuple(data.get("errors", [])),
        collection=collector.get("collection"),
        manifest=data,
        manifest_text=text,
    )
