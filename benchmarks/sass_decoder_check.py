"""Checks analyzer/address_origin.py's instruction decoder against nvdisasm on any CUBINs, and counts what it finds.

For every instruction the def-use walk follows (an ALU opcode of its table, a load or an atomic), the registers nvdisasm
names must be the ones the decoder reads and sets (the destination first; a register pair's second half unnamed); every
global load and store must be strong (analyzer/memory_order.py) exactly when nvdisasm says `.STRONG`; every atomic must
return its old value (analyzer/atomic_results.py) exactly when nvdisasm names a destination register. Per CUBIN it
prints the instructions checked, the mismatches (the first few in full), the opcodes the walk does not know (it takes
their results as origin-free), and how many global loads and stores have an address computed from a load, every load
counted as an origin (the report only counts loads whose lanes read more than one address).

    python benchmarks/sass_decoder_check.py DIR_OR_CUBIN... [--nvdisasm PATH]

Session 53: the suite's and the breadth set's sm_90 CUBINs built with nvcc 13.0 (`nvcc -cubin -lineinfo -O3
-arch=sm_90`) and the fixtures, 56,399 instructions' registers and 9,296 global accesses' ordering checked, no
mismatch. Session 54 (the decoder's table grown by DADD, F2I.F64, the generic ATOM and more forms): 84 CUBINs, the
suite's 17 and the breadth set's 62 source files and the fixtures, 63,899 instructions, no mismatch
(benchmarks/results/s54/sass_decoder_check.txt).
"""

from __future__ import annotations

import argparse
import collections
import re
import struct
import subprocess
import sys
from pathlib import Path

from reuselens.analyzer.address_origin import _ALU, _COMPARES, PREDICATE_BASE, _effect, address_origins
from reuselens.analyzer.atomic_results import returns_old_value
from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.lineinfo.sass import find_nvdisasm, parse_listing
from reuselens.analyzer.memory_order import is_strong

_REGISTER = re.compile(r"(?<![\w.])-?\|?R(\d+)\b")  # R7, -R7, |R7|; not UR7, not the .64 of [R2.64]
_GUARD = re.compile(r"^@!?U?P[0-7T]\s+")
_ORIGIN_FREE = {0x983, 0xB82, 0x919, 0x805}  # known to set registers without an origin (address_origin.py)


def registers_agree(text: str, lo: int, hi: int) -> bool | None:
    """Whether nvdisasm's text of one instruction names the registers the decoder reads and sets; None for an
    instruction the walk does not follow as an ALU operation or a load."""
    kind, dests, sources = _effect(lo, hi)
    named = [int(r) for r in _REGISTER.findall(_GUARD.sub("", text))]
    registers = {r for r in sources if r < PREDICATE_BASE}
    if lo & 0xFFF in _COMPARES:  # sets predicates only: the registers named are the sources
        return set(named) == registers - {255}
    if lo & 0xFFF in _ALU:
        if not dests:  # a destination of RZ
            return not named or named[0] != 255 and set(named) <= registers
        decoded = ({dests[0]} | registers) - {255}
        return set(named) <= decoded <= set(named) | {r + 1 for r in named} and bool(named) and named[0] == dests[0]
    if kind == "load":
        return not dests or bool(named) and named[0] == dests[0]
    return None


def ordering_agrees(text: str, lo: int, hi: int) -> bool | None:
    """Whether analyzer/memory_order.py calls a global load or store strong exactly when nvdisasm writes `.STRONG`;
    None for any other instruction."""
    strong = is_strong(lo, hi)
    return None if strong is None else strong == (".STRONG" in text)


def result_agrees(text: str, lo: int, hi: int) -> bool | None:
    """Whether analyzer/atomic_results.py says an atomic returns its old value exactly when nvdisasm names a
    destination register other than RZ (REDG names none); None for any other instruction."""
    returns = returns_old_value(lo, hi)
    if returns is None:
        return None
    opcode, _space, operands = _GUARD.sub("", text).rstrip(" ;").partition(" ")
    registers = [o.strip() for o in operands.split(",") if re.fullmatch(r"R(\d+|Z)", o.strip())]
    named = not opcode.startswith("RED") and bool(registers) and registers[0] != "RZ"
    return returns == named


def listed_instructions(cubin: Path, listing: str):
    """(function, pc, text, low word, high word) of every listed instruction of the CUBIN's functions."""
    table = CubinLineTable(cubin.read_bytes())
    for (section, pc), text in parse_listing(listing).items():
        function = section.removeprefix(".text.")
        symbol = table.function_symbol(function)
        if symbol is None:
            continue
        data = table.elf.section_data(table.elf.sections[symbol.shndx])
        lo, hi = struct.unpack_from("<QQ", data, symbol.value + pc)
        yield function, pc, text, lo, hi


def check(cubin: Path, nvdisasm: str) -> tuple[int, int]:
    listing = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    checked, wrong, unknown = 0, [], collections.Counter()
    accesses: dict[str, list[int]] = collections.defaultdict(list)
    for function, pc, text, lo, hi in listed_instructions(cubin, listing):
        if ordering_agrees(text, lo, hi) is False:
            wrong.append(f"{function} {pc:#x} (ordering): {text}")
        if result_agrees(text, lo, hi) is False:
            wrong.append(f"{function} {pc:#x} (atomic result): {text}")
        agrees = registers_agree(text, lo, hi)
        if agrees is None:
            if _effect(lo, hi)[0] == "free" and lo & 0xFFF not in _ORIGIN_FREE:
                unknown[f"{lo & 0xFFF:#05x} {_GUARD.sub('', text).split(' ')[0]}"] += 1
        else:
            checked += 1
            if not agrees:
                wrong.append(f"{function} {pc:#x}: {text}")
        if lo & 0xFFF in (0x981, 0x986):
            accesses[function].append(pc)
    table = CubinLineTable(cubin.read_bytes())
    gathered = 0
    for function, pcs in accesses.items():
        symbol = table.function_symbol(function)
        code = table.elf.section_data(table.elf.sections[symbol.shndx])[symbol.value : symbol.value + symbol.size]
        found = address_origins(code, table.arch, pcs, lambda pc: True) or {}
        gathered += sum(1 for origins in found.values() if origins)
    total = sum(len(pcs) for pcs in accesses.values())
    print(f"{cubin.name}: {checked} checked, {len(wrong)} mismatches; {gathered} of {total} global accesses gathered")
    for line in wrong[:5]:
        print(f"  mismatch {line}")
    if unknown:
        print("  not followed: " + ", ".join(f"{name} x{n}" for name, n in unknown.most_common(8)))
    return checked, len(wrong)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="CUBIN files or directories of them")
    parser.add_argument("--nvdisasm", default=None, help="nvdisasm to use (default: PATH, then the PyPI wheel's)")
    args = parser.parse_args(argv)
    nvdisasm = args.nvdisasm or find_nvdisasm()
    if nvdisasm is None:
        print("error: nvdisasm not found (pip install nvidia-cuda-nvdisasm, or pass --nvdisasm)", file=sys.stderr)
        return 2
    cubins = [p for path in args.paths for p in (sorted(path.glob("*.cubin")) if path.is_dir() else [path])]
    if not cubins:
        print("error: no CUBIN given", file=sys.stderr)
        return 2
    checked = wrong = 0
    for cubin in cubins:
        try:
            one = check(cubin, nvdisasm)
        except (subprocess.CalledProcessError, OSError, ValueError) as error:
            print(f"{cubin.name}: not checked ({error})")
            continue
        checked, wrong = checked + one[0], wrong + one[1]
    print(f"all: {checked} instructions checked, {wrong} mismatches over {len(cubins)} CUBINs")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
