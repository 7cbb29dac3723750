"""Inline ranges of -G CUBINs, from `.debug_info` (DW_TAG_inlined_subroutine, DWARF 2 §3.3.8).

At -G ptxas still inlines `__forceinline__` functions but writes no NVIDIA 0x90 op for them in `.debug_line`
(nvdisasm -gi shows no chain either). `.debug_info` does describe them: each inlined_subroutine has
low_pc/high_pc (relocated, like the line table, against the function's symbol), an abstract origin naming
the callee and call_file/call_line. -lineinfo CUBINs have no `.debug_info`; this module then finds nothing.

pyelftools parses these DIEs well (research/dwarf.md §1); it is given the relocated values through our own
relocation map (it cannot apply R_CUDA_64). Any failure of the third-party parser only loses this optional
information: the mapper then behaves as for nvdisasm -gi.
"""

from __future__ import annotations

import bisect
from io import BytesIO
from typing import NamedTuple

from reuselens.analyzer.lineinfo.elf import ElfFile, Symbol

_MAX_DIES = 1_000_000


class InlineRange(NamedTuple):
    """[low, high) of a section is code of `function` inlined at (call_file, call_line) of its parent."""

    low: int
    high: int
    function: str  # linkage (mangled) name, else the plain name
    call_file: int  # file number in the line-table unit `unit_offset`
    call_line: int
    unit_offset: int  # DW_AT_stmt_list of the compilation unit
    depth: int  # nesting depth inside the subprogram (1 = inlined directly into it)


class DebugInfo(NamedTuple):
    comp_dir: str | None
    inlines: dict[int, list[InlineRange]]  # section index -> ranges, outer before inner
    # unit offset -> file number -> sorted [(decl_line, function name)] of every subprogram declared there
    declarations: dict[int, dict[int, list[tuple[int, str]]]]

    def function_at(self, unit_offset: int, file: int, line: int) -> str | None:
        """The function whose declaration is the last one at or before `line` in `file`: the function that
        holds the line, for sources whose functions do not nest (C++ functions do not)."""
        decls = self.declarations.get(unit_offset, {}).get(file)
        if not decls:
            return None
        i = bisect.bisect_right(decls, (line, "\U0010ffff")) - 1
        return decls[i][1] if i >= 0 else None


def read_debug_info(elf: ElfFile, symbols: list[Symbol]) -> DebugInfo:
    info = elf.section_by_name(".debug_info")
    if info is None:
        return DebugInfo(None, {}, {})
    relocs = {}
    for section in elf.relocation_sections_for(info):
        for reloc in elf.relocations(section):
            relocs[reloc.offset] = reloc
    try:
        from elftools.elf.elffile import ELFFile

        dwarf = ELFFile(BytesIO(elf.data)).get_dwarf_info(relocate_dwarf_sections=False)
        return _walk(dwarf, relocs, symbols)
    except Exception:  # noqa: BLE001 - optional information from a third-party parser
        return DebugInfo(None, {}, {})


def _walk(dwarf, relocs, symbols) -> DebugInfo:
    comp_dir = None
    inlines: dict[int, list[InlineRange]] = {}
    declarations: dict[int, dict[int, list[tuple[int, str]]]] = {}
    budget = _MAX_DIES
    for cu in dwarf.iter_CUs():
        top = cu.get_top_DIE()
        if comp_dir is None and "DW_AT_comp_dir" in top.attributes:
            comp_dir = _text(top.attributes["DW_AT_comp_dir"].value)
        stmt = top.attributes.get("DW_AT_stmt_list")
        unit_offset = stmt.value if stmt is not None else -1
        stack = [(child, None, 0) for child in top.iter_children()]
        while stack and budget > 0:
            budget -= 1
            die, section, depth = stack.pop()
            if die.tag == "DW_TAG_subprogram":
                _declare(die, declarations.setdefault(unit_offset, {}))
                low = _address(die, "DW_AT_low_pc", relocs, symbols)
                section, depth = (low[0] if low else None), 0
            elif die.tag == "DW_TAG_inlined_subroutine" and section is not None:
                found = _inline_range(die, section, depth + 1, unit_offset, relocs, symbols)
                if found is not None:
                    inlines.setdefault(section, []).append(found)
                    depth += 1
            stack.extend((child, section, depth) for child in die.iter_children())
    for ranges in inlines.values():
        ranges.sort(key=lambda r: (r.low, r.depth))
    for files in declarations.values():
        for decls in files.values():
            decls.sort()
    return DebugInfo(comp_dir, inlines, declarations)


def _declare(die, files: dict[int, list[tuple[int, str]]]) -> None:
    file, line = die.attributes.get("DW_AT_decl_file"), die.attributes.get("DW_AT_decl_line")
    name = _name(die)
    if file is not None and line is not None and name:
        files.setdefault(int(file.value), []).append((int(line.value), name))


def _inline_range(die, section, depth, unit_offset, relocs, symbols) -> InlineRange | None:
    low = _address(die, "DW_AT_low_pc", relocs, symbols)
    high_attr = die.attributes.get("DW_AT_high_pc")
    if low is None or low[0] != section or high_attr is None:
        return None  # DW_AT_ranges (not written by ptxas) is not read
    if high_attr.form == "DW_FORM_addr":
        high = _address(die, "DW_AT_high_pc", relocs, symbols)
        if high is None or high[0] != section:
            return None
        high_value = high[1]
    else:  # DWARF 4: high_pc as a length
        high_value = low[1] + int(high_attr.value)
    origin = die.get_DIE_from_attribute("DW_AT_abstract_origin") if "DW_AT_abstract_origin" in die.attributes else die
    name = _name(origin)
    call_file = die.attributes.get("DW_AT_call_file")
    call_line = die.attributes.get("DW_AT_call_line")
    return InlineRange(
        low[1],
        high_value,
        name,
        int(call_file.value) if call_file else 0,
        int(call_line.value) if call_line else 0,
        unit_offset,
        depth,
    )


def _name(die) -> str:
    for key in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name"):
        if key in die.attributes:
            return _text(die.attributes[key].value)
    return ""


def _address(die, name, relocs, symbols) -> tuple[int, int] | None:
    """(section index, offset) of an address attribute, through its R_CUDA_64 relocation."""
    attr = die.attributes.get(name)
    if attr is None:
        return None
    reloc = relocs.get(attr.offset)
    if reloc is None or not 0 < reloc.symbol < len(symbols):
        return None
    sym = symbols[reloc.symbol]
    if sym.shndx == 0:
        return None
    addend = reloc.addend if reloc.addend is not None else int(attr.raw_value)
    return sym.shndx, sym.value + addend


def _text(value) -> str:
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value)
