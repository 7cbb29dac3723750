"""Shared helpers for the collector tests: fake applications and a launcher that needs no GPU."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher


@pytest.fixture
def no_gpu_needed(monkeypatch, tmp_path):
    """profile() without a GPU: the GPU check passes and LD_PRELOAD names an empty stand-in library (the
    dynamic loader warns and ignores it), so fake Python apps stand in for CUDA programs."""
    fake_lib = tmp_path / "fake" / launcher.TOOL_LIBRARY
    fake_lib.parent.mkdir()
    fake_lib.write_bytes(b"")
    (fake_lib.parent / launcher.PATCH_FATBIN).write_bytes(b"")
    monkeypatch.setattr(launcher, "check_gpu", lambda: "")
    monkeypatch.setattr(launcher, "require_driver", lambda: None)
    monkeypatch.setattr(launcher, "find_tool_library", lambda *a, **k: fake_lib)
    return fake_lib


@pytest.fixture
def fake_app(tmp_path):
    """Write a Python script as an executable fake application; returns its path."""

    def make(body: str, name: str = "app.py") -> Path:
        path = tmp_path / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
        path.chmod(0o755)
        return path

    return make
