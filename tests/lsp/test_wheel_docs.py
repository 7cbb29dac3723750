"""The wheel carries the pattern docs that the diagnostics link (lsp_server/patterns.md), so the links of a
server installed with `pip install .` point at a file that exists. Builds the wheel: about 2 minutes."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_ships_the_linked_pattern_docs(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("reuselens-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("reuselens/lsp_server/patterns.md").decode()
    assert shipped == (REPO / "docs" / "patterns.md").read_text()
    assert '<a id="bank-conflict"></a>' in shipped
