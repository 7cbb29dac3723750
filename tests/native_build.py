"""Building the C++ test drivers (the queue harness, the engine's parallel driver), optionally under a sanitizer.

A sanitizer build is skipped, with the compiler's own words, only when the compiler cannot build and link an
empty program with that sanitizer (no libtsan/libasan on the machine); any other failure fails the test."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COMPILER = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
NO_COMPILER = "no C++ compiler on PATH (the package build needs one too)"
# The engine's C++ sources (analyzer/engine/CMakeLists.txt), without the pybind11 module.
ENGINE_SOURCES = sorted(p for p in (REPO / "analyzer/engine/src").glob("*.cpp") if p.name != "bindings.cpp")
SANITIZER_ENV = dict(os.environ, TSAN_OPTIONS="halt_on_error=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")


def build(
    exe: Path, sources: list[Path], includes: list[Path], sanitizer: str | None = None, optimize: str = "-O1"
) -> Path:
    """`exe` compiled from `sources` at `optimize`: warnings as errors without a sanitizer, -fsanitize=`sanitizer`
    with one."""
    flags = (
        [optimize, "-Wall", "-Wextra", "-Werror"] if sanitizer is None else [optimize, "-g", f"-fsanitize={sanitizer}"]
    )
    if sanitizer is not None:
        probe = exe.with_name(exe.name + "_probe")
        source = probe.with_suffix(".cpp")
        source.write_text("int main() { return 0; }\n")
        tried = subprocess.run([COMPILER, *flags, "-o", str(probe), str(source)], capture_output=True, text=True)
        if tried.returncode != 0:
            pytest.skip(f"{COMPILER} cannot build with -fsanitize={sanitizer}: {tried.stderr.strip()[-200:]}")
    done = subprocess.run(
        [COMPILER, "-std=c++17", *flags, "-pthread", *(f"-I{d}" for d in includes), "-o", str(exe), *map(str, sources)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return exe
