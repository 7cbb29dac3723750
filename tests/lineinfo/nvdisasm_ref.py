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


@dataclass
class Comparison:
    instructions: int = 0
    printed_blocks: int = 0
    inline_chains: int = 0  # instructions whose chain has 2+ levels
    mismatches: list[str] | None = None


def compare(
    mapper, module: str, table, listing: list[Instruction], inline: bool, debug_info_chains: bool = False
) -> Comparison:
    """Check the mapper against nvdisasm on every instruction of `listing`.

    nvdisasm prints a comment block exactly where the innermost file:line changes within a section, and
    every instruction inherits the last block. So for each instruction: our innermost (file, line) must
    equal the block in force; a block must be printed iff ours changed; and with -gi the printed chain must
    equal our whole chain, innermost first. With `debug_info_chains` (-G CUBINs) our chains also come from
    .debug_info, which nvdisasm does not read: its -gi block must then be the innermost location alone.
    """
    result = Comparison(mismatches=[])
    current: list[tuple[str, int]] | None = None
    previous: tuple[str, int] | None = None
    section_name = None
    for ins in listing:
        if ins.section != section_name:
            section_name, current, previous = ins.section, None, None
        function = section_name[len(".text.") :]
        loc = mapper.lookup(module, function, ins.offset)
        ours = None if loc is None else (loc.file, loc.line)
        chain = None
        if loc is not None:
            chain = [(f.file, f.line) for f in loc.inline] or [ours]
            if len(chain) > 1:
                result.inline_chains += 1
            if debug_info_chains:
                chain = [ours]
        printed = ins.block is not None
        if printed:
            current = ins.block
            result.printed_blocks += 1
        result.instructions += 1
        expected = current[0] if current else None
        problem = None
        if ours != expected:
            problem = f"innermost {ours} != nvdisasm {expected}"
        elif printed != (ours != previous):
            problem = f"nvdisasm {'printed' if printed else 'did not print'} a block, ours changed: {ours != previous}"
        elif inline and printed and chain != current:
            problem = f"chain {chain} != nvdisasm {current}"
        if problem:
            result.mismatches.append(f"{section_name}+{ins.offset:#x}: {problem}")
        previous = ours
    return result
