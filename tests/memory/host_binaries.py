"""Addresses in host binaries the tests compile, read from their own DWARF line tables and symbol tables, so no
test hard-codes an address (tests/memory, tests/lsp)."""

from __future__ import annotations

from pathlib import Path

from elftools.elf.elffile import ELFFile


def first_address_of_line(binary: Path, line: int) -> int:
    """The lowest address the binary's line table gives `line` (of its one source file)."""
    with binary.open("rb") as stream:
        dwarf = ELFFile(stream).get_dwarf_info()
        found = [
            entry.state.address
            for cu in dwarf.iter_CUs()
            for entry in dwarf.line_program_for_CU(cu).get_entries()
            if entry.state is not None and entry.state.line == line and not entry.state.end_sequence
        ]
    assert found, f"line {line} not in the line table of {binary}"
    return min(found)


def function_address(binary: Path, name: str) -> int:
    """The symbol table's address of function `name`."""
    with binary.open("rb") as stream:
        return next(
            s["st_value"] for s in ELFFile(stream).get_section_by_name(".symtab").iter_symbols() if s.name == name
        )
