"""Building the C++ test drivers (the queue harness, the engine's parallel driver), optionally under a sanitizer.

A sanitizer build is skipped, with the compiler's own words, only when the compiler cannot build and link an
empty program with that sanitizer (no libtsan/libasan on the machine); any other failure fails the test.

The engine's sources are compiled once per sanitizer and session (`engine_objects`), one compiler per core: under
AddressSanitizer they take minutes, and two drivers link the same objects (CI's two cores spent 480 s building
them three times, one file at a time)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COMPILER = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
NO_COMPILER = "no C++ compiler on PATH (the package build needs one too)"
# The engine's C++ sources (analyzer/engine/CMakeLists.txt), without the pybind11 module.
ENGINE_SOURCES = sorted(p for p in (REPO / "analyzer/engine/src").glob("*.cpp") if p.name != "bindings.cpp")
SANITIZER_ENV = dict(os.environ, TSAN_OPTIONS="halt_on_error=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")


def _flags(sanitizer: str | None, optimize: str) -> list[str]:
    """Warnings as errors without a sanitizer, -fsanitize=`sanitizer` with one."""
    if sanitizer is None:
        return [optimize, "-Wall", "-Wextra", "-Werror"]
    return [optimize, "-g", f"-fsanitize={sanitizer}"]


def _skip_unless_supported(folder: Path, sanitizer: str | None, flags: list[str]) -> None:
    if sanitizer is None:
        return
    probe = folder / f"probe_{sanitizer.replace(',', '_')}"
    source = probe.with_suffix(".cpp")
    source.write_text("int main() { return 0; }\n")
    tried = subprocess.run([COMPILER, *flags, "-o", str(probe), str(source)], capture_output=True, text=True)
    if tried.returncode != 0:
        pytest.skip(f"{COMPILER} cannot build with -fsanitize={sanitizer}: {tried.stderr.strip()[-200:]}")


def build(
    exe: Path,
    sources: list[Path],
    includes: list[Path],
    sanitizer: str | None = None,
    optimize: str = "-O1",
    objects: tuple[Path, ...] = (),
) -> Path:
    """`exe` compiled from `sources` at `optimize` and linked with `objects` (built with the same flags)."""
    flags = _flags(sanitizer, optimize)
    _skip_unless_supported(exe.parent, sanitizer, flags)
    done = subprocess.run(
        [COMPILER, "-std=c++17", *flags, "-pthread", *(f"-I{d}" for d in includes), "-o", str(exe)]
        + [*map(str, sources), *map(str, objects)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return exe


_ENGINE_OBJECTS: dict[tuple[str | None, str], tuple[Path, ...]] = {}


def engine_objects(sanitizer: str | None, optimize: str = "-O1") -> tuple[Path, ...]:
    """The engine's sources (ENGINE_SOURCES) compiled with `build`'s flags, once per session and flags, in parallel.
    The objects live in a folder under TMPDIR that `remove_engine_objects` deletes at the session's end."""
    key = (sanitizer, optimize)
    if key not in _ENGINE_OBJECTS:
        folder = Path(tempfile.mkdtemp(prefix="reuselens-engine-objects-"))
        flags = _flags(sanitizer, optimize)
        try:
            _skip_unless_supported(folder, sanitizer, flags)
        except BaseException:  # pytest's skip is not an Exception
            shutil.rmtree(folder, ignore_errors=True)
            raise
        include = f"-I{REPO / 'analyzer/engine/include'}"

        def compile_one(source: Path) -> tuple[Path, subprocess.CompletedProcess]:
            obj = folder / f"{source.stem}.o"
            done = subprocess.run(
                [COMPILER, "-std=c++17", *flags, "-pthread", include, "-c", "-o", str(obj), str(source)],
                capture_output=True,
                text=True,
            )
            return obj, done

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            compiled = list(pool.map(compile_one, ENGINE_SOURCES))
        failed = [done.stderr for _, done in compiled if done.returncode != 0]
        assert not failed, failed[0]
        _ENGINE_OBJECTS[key] = tuple(sorted(obj for obj, _ in compiled))
    return _ENGINE_OBJECTS[key]


def remove_engine_objects() -> None:
    for objects in _ENGINE_OBJECTS.values():
        if objects:
            shutil.rmtree(objects[0].parent, ignore_errors=True)
    _ENGINE_OBJECTS.clear()
