"""Suite-wide: the `gpu` marker (pyproject registers it). A test marked gpu runs only where an NVIDIA GPU, its
driver, the built collector and nvcc are all present; elsewhere (CI, a laptop) it is skipped with the reason,
which `pytest -ra` prints. One check for the whole session, instead of a skipif in every GPU module."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile

import pytest


def pytest_configure(config):
    # The launcher remembers loadable tool libraries in the user's cache (collector/library_cache.py); the tests,
    # and the CLIs they start, keep theirs in a folder of their own, removed at the end.
    config._reuselens_cache = tempfile.mkdtemp(prefix="reuselens-test-cache-")
    os.environ["XDG_CACHE_HOME"] = config._reuselens_cache


def pytest_unconfigure(config):
    shutil.rmtree(getattr(config, "_reuselens_cache", ""), ignore_errors=True)
    from tests.native_build import remove_engine_objects

    remove_engine_objects()


@functools.cache
def gpu_missing() -> str | None:
    """Why GPU tests cannot run here, or None when they can."""
    from reuselens.collector import launcher
    from reuselens.collector.errors import NoGpuError, ToolLibraryMissingError

    try:
        launcher.check_gpu()
    except NoGpuError as error:
        return f"no GPU: {error}"
    try:
        launcher.find_tool_library()
    except ToolLibraryMissingError as error:
        return str(error)
    if not shutil.which("nvcc"):
        return "nvcc not found (it builds the tests' GPU programs)"
    return None


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if gpu_items and (reason := gpu_missing()) is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
