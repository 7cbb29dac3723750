"""The engine's parallel paths under ThreadSanitizer: tests/engine/native/parallel_driver.cpp runs one trace
through engines with 1, 2 and 5 workers; the reports must be equal and TSan must find no data race."""

from __future__ import annotations

import subprocess

import pytest

from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build, engine_objects


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("sanitizer", ["thread", "address,undefined"])
def test_workers_agree_with_no_data_race(tmp_path, sanitizer):
    exe = build(
        tmp_path / f"parallel_driver_{sanitizer}",
        [REPO / "tests/engine/native/parallel_driver.cpp"],
        [REPO / "analyzer/engine/include"],
        sanitizer,
        objects=engine_objects(sanitizer),
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "same", run.stdout + run.stderr[-4000:]
