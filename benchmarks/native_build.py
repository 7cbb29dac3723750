"""Builds the small C++ programs under benchmarks/native/ with the system compiler, for the benchmark scripts
that run them (parallel_ceiling.py, queue_drain.py)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

REPO = pathlib.Path(__file__).resolve().parents[1]


class NoCompiler(RuntimeError):
    pass


@contextlib.contextmanager
def built(name: str, sources: list[pathlib.Path], includes: list[pathlib.Path] = ()) -> Iterator[pathlib.Path]:
    """The executable built from `sources` (-O2, C++17, threads) in a temporary folder, removed afterwards."""
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not cxx:
        raise NoCompiler(f"{name}: no C++ compiler found (set CXX)")
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / name
        subprocess.run(
            [cxx, "-O2", "-std=c++17", "-pthread", *(f"-I{i}" for i in includes), *map(str, sources), "-o", str(exe)],
            check=True,
        )
        yield exe
