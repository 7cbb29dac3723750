"""Builds the small C++ programs under benchmarks/native/ with the system compiler, for the benchmark scripts
that run them (parallel_ceiling.py, queue_drain.py)."""

from __future__ import annotations

import concurrent.futures
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


def cuda_include() -> pathlib.Path | None:
    """cuda.h's folder (the collector's headers take their types from it), looked for as
    collector/native/CMakeLists.txt looks for it: CUDA_HOME, nvcc's toolkit, /usr/local/cuda."""
    candidates = [pathlib.Path(os.environ["CUDA_HOME"]) / "include"] if os.environ.get("CUDA_HOME") else []
    if nvcc := shutil.which("nvcc"):
        candidates.append(pathlib.Path(nvcc).resolve().parent.parent / "include")
    candidates += [pathlib.Path("/usr/local/cuda/include"), pathlib.Path("/usr/local/cuda-13.0/include")]
    return next((c for c in candidates if (c / "cuda.h").is_file()), None)


@contextlib.contextmanager
def built(
    name: str, sources: list[pathlib.Path], includes: list[pathlib.Path] = (), flags: tuple[str, ...] = ("-O2",)
) -> Iterator[pathlib.Path]:
    """The executable built from `sources` (`flags`, C++17, threads) in a temporary folder, removed afterwards. Each
    source is compiled on a core of its own (benchmarks/pipeline.py builds the engine's ten files: on the GPU host,
    one compiler call for all of them took a minute of device time), then linked."""
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not cxx:
        raise NoCompiler(f"{name}: no C++ compiler found (set CXX)")
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / name
        compile_flags = [*flags, "-std=c++17", "-pthread", *(f"-I{i}" for i in includes)]
        objects = [pathlib.Path(tmp) / f"{k}_{source.stem}.o" for k, source in enumerate(sources)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            compiles = [
                pool.submit(subprocess.run, [cxx, *compile_flags, "-c", str(source), "-o", str(obj)], check=True)
                for source, obj in zip(sources, objects, strict=True)
            ]
            for done in compiles:
                done.result()  # the first failure raised here, as one compiler call would have failed
        subprocess.run([cxx, *flags, "-pthread", *map(str, objects), "-o", str(exe)], check=True)
        yield exe
