"""Minimal ELF64 little-endian reader for CUBINs and host binaries.

Only what the source mapper needs: section headers, the symbol table and REL/RELA relocation sections.
Every offset and count read from the file is checked against the file size before use, so a corrupt or
hostile file raises ElfFormatError and never over-reads or allocates more than the file itself.
We do not use pyelftools here: it cannot apply EM_CUDA relocations (type 2, R_CUDA_64) and turning its
many internal exception types into ours would be less safe than 150 lines of struct (research/dwarf.md §1).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from reuselens.analyzer.lineinfo.errors import ElfFormatError

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
SHT_NULL, SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_SYMTAB_SHNDX = 0, 2, 4, 8, 9, 18
SHN_UNDEF, SHN_LORESERVE, SHN_XINDEX = 0, 0xFF00, 0xFFFF
SHF_EXECINSTR = 0x4
STT_FUNC = 2

# Elf64_Ehdr after e_ident: type, machine, version, entry, phoff, shoff, flags, ehsize, phentsize, phnum,
# shentsize, shnum, shstrndx.
_EHDR = struct.Struct("<HHIQQQIHHHHHH")
# Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize.
_SHDR = struct.Struct("<IIQQQQIIQQ")
# Elf64_Sym: name, info, other, shndx, value, size.
_SYM = struct.Struct("<IBBHQQ")
_REL = struct.Struct("<QQ")
_RELA = struct.Struct("<QQq")


class Section(NamedTuple):
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


class Symbol(NamedTuple):
    name: str
    type: int
    bind: int
    other: int
    shndx: int
    value: int
    size: int


class Relocation(NamedTuple):
    offset: int
    symbol: int
    type: int
    addend: int | None  # None for REL: the addend is stored in the relocated bytes


@dataclass
class ElfFile:
    """A parsed ELF64 LE image; `data` is the whole file, sections index into it."""

    data: bytes
    type: int
    machine: int
    flags: int
    sections: list[Section]

    @classmethod
    def parse(cls, data: bytes) -> "ElfFile":
        if len(data) < 64 or data[:4] != ELF_MAGIC:
            raise ElfFormatError("not an ELF file (bad magic)")
        if data[4] != 2 or data[5] != 1:
            raise ElfFormatError("only 64-bit little-endian ELF files are supported")
        (e_type, machine, _v, _entry, _phoff, shoff, flags, _ehsize, _phes, _phnum, shentsize, shnum, shstrndx) = (
            _EHDR.unpack_from(data, 16)
        )
        elf = cls(data=data, type=e_type, machine=machine, flags=flags, sections=[])
        if shoff == 0:
            return elf
        if shentsize != _SHDR.size:
            raise ElfFormatError(f"unexpected section header size {shentsize}")
        raw = _read_section_headers(data, shoff, shnum, shstrndx)
        elf.sections = _name_sections(data, raw)
        return elf

    def section_data(self, section: Section) -> bytes:
        if section.type == SHT_NOBITS:
            return b""
        return self.data[section.offset : section.offset + section.size]

    def section_by_name(self, name: str) -> Section | None:
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def symbols(self) -> list[Symbol]:
        """All entries of the first SHT_SYMTAB (index 0, the null symbol, included), [] without one."""
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is None:
            return []
        strtab = self._linked_data(symtab)
        data = self.section_data(symtab)
        count = len(data) // _SYM.size
        xindex = self._xindex_table(symtab.index, count)
        symbols = []
        for i in range(count):
            name_off, info, other, shndx, value, size = _SYM.unpack_from(data, i * _SYM.size)
            if shndx == SHN_XINDEX and xindex is not None:
                shndx = xindex[i]
            symbols.append(Symbol(_cstr(strtab, name_off), info & 0xF, info >> 4, other, shndx, value, size))
        return symbols

    def relocations(self, section: Section) -> list[Relocation]:
        """The entries of a REL or RELA section."""
        data = self.section_data(section)
        rela = section.type == SHT_RELA
        layout = _RELA if rela else _REL
        out = []
        for pos in range(0, len(data) - layout.size + 1, layout.size):
            fields = layout.unpack_from(data, pos)
            addend = fields[2] if rela else None
            out.append(Relocation(fields[0], fields[1] >> 32, fields[1] & 0xFFFFFFFF, addend))
        return out

    def relocation_sections_for(self, target: Section) -> list[Section]:
        return [s for s in self.sections if s.type in (SHT_REL, SHT_RELA) and s.info == target.index]

    def _linked_data(self, section: Section) -> bytes:
        if 0 < section.link < len(self.sections):
            return self.section_data(self.sections[section.link])
        return b""

    def _xindex_table(self, symtab_index: int, count: int) -> list[int] | None:
        for s in self.sections:
            if s.type == SHT_SYMTAB_SHNDX and s.link == symtab_index:
                data = self.section_data(s)
                n = min(count, len(data) // 4)
                return list(struct.unpack_from(f"<{n}I", data, 0)) + [0] * (count - n)
        return None


def _read_section_headers(data: bytes, shoff: int, shnum: int, shstrndx: int) -> list[tuple]:
    if shoff + _SHDR.size > len(data):
        raise ElfFormatError("section header table lies outside the file (truncated?)")
    first = _SHDR.unpack_from(data, shoff)
    if shnum == 0:  # extended numbering: the real count is sh_size of section 0
        shnum = first[5]
    if shstrndx == SHN_XINDEX:
        shstrndx = first[6]
    if shoff + shnum * _SHDR.size > len(data):
        raise ElfFormatError("section header table lies outside the file (truncated?)")
    raw = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
    return [(shstrndx,)] + raw


def _name_sections(data: bytes, raw: list[tuple]) -> list[Section]:
    shstrndx, headers = raw[0][0], raw[1:]
    names = b""
    if 0 < shstrndx < len(headers):
        h = headers[shstrndx]
        names = data[h[4] : h[4] + h[5]] if h[1] != SHT_NOBITS else b""
    sections = [
        Section(i, _cstr(names, h[0]), h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[9]) for i, h in enumerate(headers)
    ]
    for section in sections:
        _check_extent(section, len(data))
    return sections


def _check_extent(section: Section, file_size: int) -> None:
    """A section's bytes must lie in the file. SHT_NOBITS sections (.bss, `.nv.global`, `.nv.shared.*`) occupy
    none and may be of any size, but code cannot be NOBITS: consumers walk an executable section's size, and a
    hostile header claiming terabytes of code would make them run for hours."""
    where = f"section {section.index} {section.name!r}"
    if section.type == SHT_NOBITS:
        if section.flags & SHF_EXECINSTR:
            raise ElfFormatError(f"{where} holds code but has no bytes in the file (SHT_NOBITS, {section.size} bytes)")
        return
    if section.offset + section.size > file_size:
        raise ElfFormatError(
            f"{where} (offset {section.offset:#x}, {section.size} bytes) lies outside the "
            f"{file_size}-byte file (truncated?)"
        )


def _cstr(table: bytes, offset: int) -> str:
    """NUL-terminated string at `offset`; '' when out of range. Bytes that are not UTF-8 are escaped."""
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset)
    if end < 0:
        end = len(table)
    return table[offset:end].decode("utf-8", "backslashreplace")
