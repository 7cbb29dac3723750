"""The engine's C++ entry points under AddressSanitizer and UndefinedBehaviorSanitizer: the reproducers of
issue #20 replayed through tests/engine/native/hostile_driver.cpp, and random calls whose every field is
drawn from the edges of its range. Each call must succeed or throw EngineError; a sanitizer report (an
out-of-bounds index, an overflow, a misaligned access) fails the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build, engine_objects

HOSTILE = REPO / "tests/data/hostile"
ENV = dict(SANITIZER_ENV, ASAN_OPTIONS="abort_on_error=0:halt_on_error=1")


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    if COMPILER is None:
        pytest.skip(NO_COMPILER)
    out = tmp_path_factory.mktemp("hostile")
    return build(
        out / "hostile_driver",
        [REPO / "tests/engine/native/hostile_driver.cpp"],
        [REPO / "analyzer/engine/include"],
        "address,undefined",
        objects=engine_objects("address,undefined"),
    )


def run(driver: Path, *args: str) -> str:
    done = subprocess.run([str(driver), *args], capture_output=True, text=True, timeout=600, env=ENV)
    assert done.returncode == 0 and not done.stderr, done.stdout + done.stderr[-4000:]
    return done.stdout.strip()


@pytest.mark.parametrize(
    "fixture, block, allocation, expected",
    [
        ("alloc_size_2_62_run", ("32", "1", "1"), ("0", str(1 << 62)), "ok"),
        ("alloc_size_2_62_run", ("32", "1", "1"), ("0", str(1 << 63)), "ok"),
        ("alloc_size_2_62_run", ("32", "1", "1"), ("16", str((1 << 64) - 16)), "ok"),
        ("alloc_size_2_62_run", ("32", "1", "1"), ("16", str((1 << 64) - 15)), "error: allocation at 0x10 of"),
        ("shared_size_65535_run", ("32", "1", "1"), (), "ok"),
        ("block_2048_run", ("2048", "1", "1"), (), "error: launch 0: block of 2048x1x1 threads"),
        ("block_2048_run", ("65536", "65536", "1"), (), "error: launch 0: block of 65536x65536x1 threads"),
    ],
)
def test_reproducers_replay_cleanly_under_asan_ubsan(driver, fixture, block, allocation, expected):
    trace = HOSTILE / fixture / "traces" / "0.rltrace"
    assert run(driver, str(trace), *block, *allocation).startswith(expected)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_extreme_calls_under_asan_ubsan(driver, seed):
    assert run(driver, "--fuzz", str(seed)).startswith("ok ")
