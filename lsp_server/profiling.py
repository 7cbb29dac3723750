"""Running the build and the profiler as subprocesses, each in its own process group so that a newer save,
a cancelled progress or a timeout kills the whole tree (app, collector, compilers), never just the parent.

The profiler is `reuselens profile` (the lead's CLI) unless the advanced setting reuselens.profiler.command
names another argv, to which `--run-dir D -- <app argv>` is appended (tests use a stand-in that writes a
recorded run).
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import sys
import time
from collections import deque
from pathlib import Path

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.patterns.settings import THRESHOLDS
from reuselens.lsp_server.compiler_output import CompilerMessage, parse
from reuselens.lsp_server.settings import Settings

TAIL_LINES = 20
# The default profiler analyses after the app ends; give it room beyond the app's own timeout.
ANALYSIS_MARGIN_S = 120.0


class ProfileError(ReuseLensError):
    """Building or profiling failed; str() is one sentence, `tail` the last lines of the output."""

    def __init__(self, message: str, tail: str = "", report: str | None = None):
        super().__init__(message)
        self.tail = tail
        self.report = report  # a report.json this failed run still wrote (e.g. the app exited non-zero)


class BuildError(ProfileError):
    """The build command failed; `messages` are the compiler errors found in its output."""

    def __init__(self, message: str, tail: str, messages: list[CompilerMessage]):
        super().__init__(message, tail)
        self.messages = messages


def profiler_argv(settings: Settings, run_dir: str) -> list[str]:
    if settings.profiler_command:
        return [*settings.profiler_command, "--run-dir", run_dir, "--", *settings.profile_command]
    argv = [sys.executable, "-m", "reuselens", "profile", "--run-dir", run_dir]
    if settings.kernel_filter:
        argv += ["--kernel-filter", settings.kernel_filter]
    if settings.launch_range:
        argv += ["--launch-range", settings.launch_range]
    if settings.per_configuration:
        argv.append("--per-configuration")
    if settings.memory_intra_object:
        argv.append("--intra-object")
    elif settings.memory_object_level:
        argv.append("--object-level")
    elif settings.values:  # the object-level modes record no access trace, so no values either
        argv += ["--values", "--values-approx", f"{settings.values_approximation:g}"]
    for threshold in THRESHOLDS:
        if threshold.key in settings.thresholds:
            argv += [threshold.option, f"{settings.thresholds[threshold.key]:g}"]
    argv += ["--timeout", f"{settings.timeout_seconds:g}", "--", *settings.profile_command]
    return argv


def what_runs(settings: Settings) -> tuple:
    """Everything that decides which code a profile runs: a trust answer is remembered for exactly this. PATH,
    PYTHONPATH, LD_PRELOAD or the cwd pick other programs for the same argv, so they count as much as the argv."""
    return (
        ("build", tuple(settings.build_command)),
        ("run", tuple(settings.profile_command)),
        ("profiler", tuple(settings.profiler_command)),
        ("in", settings.profile_cwd),
        ("with", tuple(sorted(settings.profile_env.items()))),
    )


def describe(what: tuple) -> str:
    """what_runs() for the user: "build: make; run: ./app -n 4; in /ws; with PATH=/x"."""
    parts = []
    for label, value in what:
        if label == "with":
            text = " ".join(f"{k}={v}" for k, v in value)
        else:
            text = " ".join(value) if isinstance(value, tuple) else value
        if text:
            parts.append(f"{label}: {text}" if label in ("build", "run", "profiler") else f"{label} {text}")
    return "; ".join(parts)


# Process groups of the builds and profilers running now, so that a server told to stop can stop them first.
RUNNING: set[int] = set()
STOP_GRACE_S = 5.0  # the default profiler passes a stop on to the app and finishes run.json within ~2 s


def stop_all(sig: int, grace: float = STOP_GRACE_S) -> None:
    """Send `sig` to every running command's process group, wait up to `grace` seconds for each leader to end
    (the profiler stops the app, which runs in its own session), then SIGKILL what is left. Blocking: it is
    called from a signal handler just before the server ends."""
    groups = list(RUNNING)
    for pgid in groups:
        _signal_group(pgid, sig)
    deadline = time.monotonic() + grace
    while any(_running(pgid) for pgid in groups) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for the event loop to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _kill_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    _signal_group(proc.pid, sig)


async def _stop(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the group, SIGKILL it after `grace` seconds (at once when grace is 0)."""
    _kill_group(proc, signal.SIGTERM if grace else signal.SIGKILL)
    try:
        await asyncio.wait_for(proc.wait(), grace or 5)
    except asyncio.TimeoutError:
        _kill_group(proc, signal.SIGKILL)
        await proc.wait()


def _unstartable(argv: list[str], cwd: str, env: dict[str, str]) -> str | None:
    """Why settings that validated still cannot start a process (the OS refuses them), or None."""
    if not os.path.isdir(cwd):
        return f"working directory {cwd!r} does not exist"
    for arg in argv:
        if "\0" in arg:
            return f"argument {arg[:60]!r} contains a NUL character"
    for name, value in env.items():
        if not name or "=" in name or "\0" in name:
            return f"environment variable name {name[:60]!r} is not valid (empty, or holds '=' or NUL)"
        if "\0" in value:
            return f"environment variable {name} contains a NUL character"
    return None


async def run_command(argv: list[str], cwd: str, env: dict[str, str], timeout: float, what: str) -> tuple[int, str]:
    """(exit code, whole output) of argv with stdout+stderr merged. Raises ProfileError when it cannot start
    or runs past `timeout`; on cancellation the process group is killed before CancelledError propagates."""
    problem = _unstartable(argv, cwd, env)
    if problem:
        raise ProfileError(f"Cannot start the {what} command: {problem}.")
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ProfileError(f"Cannot start the {what} command: {argv[0]!r} was not found.") from None
    except PermissionError:
        raise ProfileError(f"Cannot start the {what} command: {argv[0]!r} is not executable.") from None
    except OSError as error:
        reason = (
            "its arguments and environment are longer than the system allows"
            if error.errno == errno.E2BIG
            else error.strerror or str(error)
        )
        raise ProfileError(f"Cannot start the {what} command: {reason}.") from None
    RUNNING.add(proc.pid)
    try:
        return await _collect(proc, timeout, what)
    finally:
        RUNNING.discard(proc.pid)


async def _collect(proc: asyncio.subprocess.Process, timeout: float, what: str) -> tuple[int, str]:
    chunks: deque[bytes] = deque(maxlen=4096)

    async def pump() -> None:
        while block := await proc.stdout.read(65536):
            chunks.append(block)
        await proc.wait()

    try:
        await asyncio.wait_for(pump(), timeout)
    except asyncio.TimeoutError:
        await _stop(proc, grace=2.0)
        text = b"".join(chunks).decode(errors="replace")
        raise ProfileError(f"The {what} command timed out after {timeout:g} s and was stopped.", tail(text)) from None
    except asyncio.CancelledError:
        await asyncio.shield(_stop(proc, grace=0))
        raise
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


PROGRAM_PREFIXES = ("reuselens: error: ", "reuselens: ")  # how the reuselens CLI starts its one error line


def _cause_and_context(output: str) -> tuple[str, str]:
    """(the output's last line, the tail before it): messages name the cause first and only once, so a
    collapsed notification still shows it and the tail shown below does not repeat it."""
    lines = output.rstrip().splitlines()
    if not lines:
        return "no output", ""
    cause = lines[-1].strip()
    for prefix in PROGRAM_PREFIXES:
        if cause.startswith(prefix) and len(cause) > len(prefix):
            cause = cause[len(prefix) :]
            break
    return cause, tail("\n".join(lines[:-1]))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


async def build(settings: Settings) -> None:
    if not settings.build_command:
        return
    code, output = await run_command(
        settings.build_command, settings.profile_cwd, settings.profile_env, settings.timeout_seconds, "build"
    )
    if code != 0:
        messages = [m for m in parse(output, settings.profile_cwd) if m.severity == "error"]
        if messages:
            first = messages[0]
            cause, context = (
                (
                    f"{len(messages)} compiler error(s), the first at {os.path.basename(first.path)}:"
                    f"{first.line}: {first.message}"
                ),
                tail(output),
            )
        else:
            cause, context = _cause_and_context(output)
        raise BuildError(f"{cause} (the build failed, exit {code})", context, messages)


async def profile(settings: Settings, run_dir: str) -> str:
    """Run the profiler into run_dir; the path of the report.json it wrote."""
    if not settings.profile_command:
        raise ProfileError("Nothing to profile: set reuselens.profile.command to the application's argv.")
    try:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ProfileError(f"Cannot create the run directory {run_dir}: {error.strerror or error}.") from None
    limit = settings.timeout_seconds + (0 if settings.profiler_command else ANALYSIS_MARGIN_S)
    report = Path(run_dir) / "report.json"
    before = _stamp(report)
    code, output = await run_command(
        profiler_argv(settings, run_dir), settings.profile_cwd, settings.profile_env, limit, "profile"
    )
    if code != 0:
        fresh = str(report) if report.is_file() and _stamp(report) != before else None
        cause, context = _cause_and_context(output)
        raise ProfileError(
            f"{cause} (profiling {' '.join(settings.profile_command)} failed, exit {code})", context, fresh
        )
    if not report.is_file():
        raise ProfileError(f"The profiler finished but wrote no {report}.", tail(output))
    return str(report)
