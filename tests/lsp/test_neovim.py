"""A real editor as the client: headless Neovim (Debian's package, installed by .ci/steps/lsp.sh), set up with
the snippet of docs/lsp.md, attaches the server to a .cu file, receives diagnostics, code lenses (without a
manual refresh) and a hover, applies a quick fix whose edit
compiles, and saves to trigger a re-profile through the stand-in profiler."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, STANDIN

SCRIPT = Path(__file__).parent / "nvim" / "e2e.lua"


def test_neovim_headless_session(workspace, tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim not installed (apt-get install neovim; .ci/steps/lsp.sh does this)")
    settings = {
        "pathPrefixMap": {"/build/app": str(workspace)},
        "profileOnSave": True,
        "profile": {"command": [sys.executable, "-c", "pass"]},
        "profiler": {"command": [sys.executable, str(STANDIN), "--recorded", str(FIXTURES / "run2")]},
    }
    out = tmp_path / "nvim.json"
    # The documented snippet starts `reuselens lsp` from PATH: this Python's CLI.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "reuselens").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reuselens "$@"\n')
    (bin_dir / "reuselens").chmod(0o755)
    env = {
        **os.environ,
        "RL_OUT": str(out),
        "RL_ROOT": str(workspace),
        "RL_PYTHON": sys.executable,
        "RL_DOCS": str(Path(__file__).parents[2] / "docs" / "lsp.md"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "RL_SETTINGS": json.dumps(settings),
        "PYTHONPATH": str(Path(__file__).parents[2]),
        "XDG_STATE_HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path),
    }
    subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=workspace,
        timeout=120,
        capture_output=True,
    )
    result = json.loads(out.read_text())
    assert result["errors"] == []
    assert result["filetype"] == "cuda"
    assert sorted((d["line"], d["code"]) for d in result["diagnostics"]) == [
        (15, "bank-conflict"),
        (24, "poor-coalescing"),
        (24, "redundant-rar"),
        (26, "removable-barrier"),
    ]
    assert {d["source"] for d in result["diagnostics"]} == {"reuselens"}
    assert {l["line"]: l["title"] for l in result["lenses"]} == {
        11: "reuse 100% cold · 8.4 MB",
        15: "reuse 50% block · 50% cold · 8.4 MB",
        24: "reuse 75% thread · 25% cold · 16.8 MB",
        28: "reuse 100% cold · 4.1 KB",
    }
    assert "| `0x0120` | shared read 4 B | 32768 | 4.2 MB |" in result["hover"]
    assert "ReuseLens: Pad tile to [32][33] against bank conflicts" in result["actions"]
    assert result["line8"] == "    __shared__ float tile[32][33];"
    assert result["after_save"] == [24, 24]
    assert result["progress"][0] == "begin" and result["progress"][-1] == "end:5 finding(s)"
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found: the edited file's compilation is not checked")
    compiled = subprocess.run(
        [nvcc, "-arch=sm_90", "-c", "stencil.cu", "-o", str(tmp_path / "s.o")],
        cwd=workspace,
        capture_output=True,
        text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
