"""Reference data from `nvdisasm -g` / `-gi`: the source comments nvdisasm prints per instruction.

nvdisasm prints a `//## File "...", line N` block only when the innermost file:line changes; with -gi the
block has one line per inline level, innermost first, each `inlined at` its caller, the outermost last.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_SECTION = re.compile(r"^\s*\.section\s+([^,\s]+)")
_COMMENT = re.compile(r'^\s*//## File "(.*?)", line (\d+)(?: inlined at "(.*?)", line (\d+))?\s*$')
_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")


@dataclass
class Instruction:
    section: str
    offset: int
    block: list[tuple[str, int]] | None  # the (file, line) chain printed right before it, innermost first


def find_tool(name: str) -> str | None:
    """On PATH, else from the PyPI wheel nvidia-cuda-<name> (nvidia/cu13/bin)."""
    found = shutil.which(name)
    if found:
        return found
    for entry in sys.path:
        candidate = Path(entry) / "nvidia" / "cu13" / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def disassemble(cubin: Path, inline: bool) -> list[Instruction]:
    tool = find_tool("nvdisasm")
    assert tool is not None
    flag = "-gi" if inline else "-g"
    text = subprocess.run([tool, flag, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    return parse(text)


def parse(text: str) -> list[Instruction]:
    out = []
    section = ""
    block: list[tuple[str, int]] = []
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section, block = m.group(1), []
            continue
        m = _COMMENT.match(line)
        if m:
            block.append((os.path.normpath(m.group(1)), int(m.group(2))))
            continue
        m = _INSTR.match(line)
        if m:
            out.append(Instruction(section, int(m.group(1), 16), block or None))
            block = []
    return out
