"""Fixtures for the source-mapping tests: nvcc builds (once per session) and the nvdisasm reference."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.lineinfo.nvdisasm_ref import find_tool

CU = Path(__file__).parent / "cu"
FIXTURES = Path(__file__).parents[1] / "data" / "cubins"
FIXTURE_SRC = "/tmp/reuselens-fixture-src"  # where make_fixtures.sh compiled the committed CUBINs
WANTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def _nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for candidate in ("/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


class Builder:
    """Compiles test sources with nvcc into a session directory; each distinct command runs once."""

    def __init__(self, nvcc: str, root: Path):
        self.nvcc, self.root = nvcc, root
        self._done: dict[tuple, Path] = {}
        out = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, check=False).stdout
        self.archs = [a for a in WANTED_ARCHS if a in out.split()]

    def build(self, name: str, sources: list[str], flags: list[str]) -> Path:
        key = (name, tuple(sources), tuple(flags))
        if key not in self._done:
            out = self.root / name
            cmd = [self.nvcc, *flags, "-o", str(out), *[str(CU / s) for s in sources]]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
            self._done[key] = out
        return self._done[key]

    def build_many(self, jobs: list[tuple[str, list[str], list[str]]]) -> list[Path]:
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            return list(pool.map(lambda job: self.build(*job), jobs))


@pytest.fixture(scope="session")
def builder(tmp_path_factory) -> Builder:
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (install the CUDA toolkit to build test CUBINs)")
    return Builder(nvcc, tmp_path_factory.mktemp("cubins"))


@pytest.fixture(scope="session")
def nvdisasm() -> str:
    tool = find_tool("nvdisasm")
    if tool is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    return tool


@pytest.fixture
def fixture_prefix_map() -> dict[str, str]:
    return {FIXTURE_SRC: str(CU)}
