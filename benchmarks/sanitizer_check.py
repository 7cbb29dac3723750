"""One program run under `compute-sanitizer --tool racecheck|synccheck`, and the summary lines it ends with.

    ========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
    ========= ERROR SUMMARY: 0 errors

The sanitizer's own report goes to a log file (--log-file), so the program's stdout stays comparable; lines
starting with "=========" are also taken out of stdout in case a sanitizer version prints there anyway.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from program_steps import StepError, run_to_end

TOOLS = ("racecheck", "synccheck")
PREFIX = "========="
_RACECHECK = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")
_ERRORS = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")


@dataclass(frozen=True)
class Summary:
    """What the sanitizer counted: hazards (racecheck, errors + warnings) and errors (both tools)."""

    hazards: int | None  # None: no RACECHECK SUMMARY line (synccheck prints none)
    hazard_errors: int | None
    hazard_warnings: int | None
    errors: int | None  # None: no ERROR SUMMARY line

    def problems(self) -> int:
        return (self.hazards or 0) + (self.errors or 0)


def parse_summary(text: str) -> Summary | None:
    """The counts of the last summary lines in a sanitizer log; None when it has neither (the run was cut)."""
    races = _RACECHECK.findall(text)
    errors = _ERRORS.findall(text)
    if not races and not errors:
        return None
    hazards, hazard_errors, hazard_warnings = (int(x) for x in races[-1]) if races else (None, None, None)
    return Summary(hazards, hazard_errors, hazard_warnings, int(errors[-1]) if errors else None)


def program_stdout(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(PREFIX))


def find_sanitizer(given: str | None) -> str:
    """The compute-sanitizer executable: the one asked for, on PATH, or where the CUDA toolkit installs it."""
    if given:
        return given
    for candidate in (
        shutil.which("compute-sanitizer"),
        "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
        "/usr/local/cuda/bin/compute-sanitizer",
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return "compute-sanitizer"


def command(sanitizer: str, tool: str, log: Path, argv: list[str]) -> list[str]:
    return [sanitizer, "--tool", tool, "--log-file", str(log), *argv]


@dataclass(frozen=True)
class Checked:
    tool: str
    status: int  # the program's exit status, passed through by the sanitizer
    stdout: str
    summary: Summary


def check(sanitizer: str, tool: str, argv: list[str], log: Path, *, timeout: float, cwd: Path) -> Checked:
    """Run argv under the tool; a run without a summary line (the sanitizer failed to start or was cut) is a
    step failure, not a clean result."""
    log.unlink(missing_ok=True)
    done = run_to_end(
        command(sanitizer, tool, log, argv), timeout=timeout, what=f"{tool} {Path(argv[0]).name}", cwd=cwd
    )
    text = (log.read_text(errors="replace") if log.is_file() else "") + "\n" + done.stdout + "\n" + done.stderr
    summary = parse_summary(text)
    if summary is None:
        tail = [line for line in text.strip().splitlines() if line.strip()][-3:]
        raise StepError(f"{tool} {Path(argv[0]).name}: no summary line (exit {done.status}): {' | '.join(tail)}")
    return Checked(tool, done.status, program_stdout(done.stdout), summary)
