"""SASS text per instruction, from `nvdisasm` when it is installed (optional: hovers only).

nvdisasm is looked up on PATH, then in the PyPI wheel `nvidia-cuda-nvdisasm` (nvidia/cu13/bin, or cu12).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

_SECTION = re.compile(r"^\s*\.section\s+([^,\s]+)")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):\s*$")
_LABEL_USE = re.compile(r"\.L_x_\d+")
_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s*(.*?)\s*(?:/\*\s*0x[0-9a-fA-F]+\s*\*/\s*)?$")
NVDISASM_TIMEOUT_S = 120


def find_nvdisasm() -> str | None:
    found = shutil.which("nvdisasm")
    if found:
        return found
    for entry in sys.path:
        for cuda in ("cu13", "cu12"):
            candidate = Path(entry) / "nvidia" / cuda / "bin" / "nvdisasm"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


class SassUnavailable(Exception):
    """nvdisasm is missing or failed on this CUBIN; str() says which (internal: turned into a note)."""


def disassemble(cubin: bytes, symbols: Sequence[int] = ()) -> dict[tuple[str, int], str]:
    """{(section name, offset): instruction text} for every instruction nvdisasm prints: of the whole CUBIN, or
    only of the code sections holding the given symbol-table entries. Library modules hold hundreds of
    kernels (a PyTorch run loaded 14 MB CUBINs of 241 functions): all of one took nvdisasm 25 s, the sections
    of a few kernels 1 s."""
    tool = find_nvdisasm()
    if tool is None:
        raise SassUnavailable("nvdisasm not found; install it (pip install nvidia-cuda-nvdisasm) to see SASS")
    restrict = ["-fun", ",".join(str(i) for i in sorted(set(symbols)))] if symbols else []
    with tempfile.TemporaryDirectory(prefix="reuselens-sass-") as tmp:
        path = Path(tmp) / "module.cubin"
        path.write_bytes(cubin)
        try:
            proc = subprocess.run(
                [tool, "-c", *restrict, str(path)],
                capture_output=True,
                text=True,
                timeout=NVDISASM_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SassUnavailable(f"nvdisasm failed: {error}") from None
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise SassUnavailable(f"nvdisasm failed: {message}")
    return parse_listing(proc.stdout)


def parse_listing(text: str) -> dict[tuple[str, int], str]:
    """Instruction texts by (section, offset). nvdisasm names branch targets `.L_x_<n>`, numbered over the
    sections it printed; they are renamed after the target's offset in its section (`.L_0x0190`), so that an
    instruction reads the same however many functions were disassembled with it."""
    out = {}
    targets: dict[str, int] = {}
    pending: list[str] = []  # labels waiting for the instruction they name
    section = ""
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section, pending = m.group(1), []
            continue
        m = _LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = _INSTR.match(line)
        if m and section:
            offset = int(m.group(1), 16)
            for label in pending:
                targets[label] = offset
            pending = []
            out[(section, offset)] = m.group(2).rstrip(" ;") + " ;"

    def rename(use: re.Match) -> str:
        offset = targets.get(use.group(0))
        return use.group(0) if offset is None else f".L_{offset:#06x}"

    return {
        key: _LABEL_USE.sub(rename, instruction) if ".L_x_" in instruction else instruction
        for key, instruction in out.items()
    }
