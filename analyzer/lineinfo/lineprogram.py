"""Decoder for `.debug_line` line-number programs (DWARF 2-4, §6.2), NVIDIA's inline opcode included.

ptxas writes a DWARF v2 line program per compilation unit with one sequence per `.text.<function>` section
(research/dwarf.md §1-3). We decode it by hand because pyelftools (a) starts the program at the end of the
file table, not at `header_length`, and ptxas pads the header with 4 zero bytes, and (b) silently skips the
NVIDIA extended opcode 0x90 that carries the inline chain:

    00 <ULEB len> 90 <ULEB inlined_at> <ULEB func_name>

`inlined_at` is the 1-based index, within the same sequence, of the row that is the call site (0: not
inlined); `func_name` is an offset into `.debug_str` of the mangled name of the inlined callee. Both are
sticky registers copied into every later row until the next 0x90 or end_sequence.

Every read is bounded by the unit's end, so malformed input raises LineTableError, never IndexError.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from reuselens.analyzer.lineinfo.errors import LineTableError

# Standard opcodes (DWARF 2 §6.2.5.2, plus the DWARF 3 additions 10-12).
DW_LNS_copy = 1
DW_LNS_advance_pc = 2
DW_LNS_advance_line = 3
DW_LNS_set_file = 4
DW_LNS_set_column = 5
DW_LNS_negate_stmt = 6
DW_LNS_set_basic_block = 7
DW_LNS_const_add_pc = 8
DW_LNS_fixed_advance_pc = 9
DW_LNS_set_prologue_end = 10
DW_LNS_set_epilogue_begin = 11
DW_LNS_set_isa = 12
# Extended opcodes (§6.2.5.3) and NVIDIA's inline-info extension.
DW_LNE_end_sequence = 1
DW_LNE_set_address = 2
DW_LNE_define_file = 3
DW_LNE_set_discriminator = 4
DW_LNE_NV_inline = 0x90

_MAX_LEB_BYTES = 10  # a 64-bit value; longer encodings are treated as corrupt


class Row(NamedTuple):
    """Field order of a row of the line table (rows are stored as plain tuples for speed; Row(*t) names
    them). `address` is the raw (unrelocated) register value."""

    address: int
    file: int
    line: int
    column: int
    inlined_at: int  # 1-based row index of the call site in this sequence; 0 = not inlined
    func_name: int  # .debug_str offset of the inlined callee's mangled name (meaningful when inlined_at)
    segment: int  # index into Sequence.segments: which DW_LNE_set_address the address is relative to


class AddressBase(NamedTuple):
    """A DW_LNE_set_address: where its operand lies in `.debug_line` (to find its relocation) and its value."""

    operand_offset: int
    operand_size: int
    value: int


@dataclass
class Sequence:
    """Rows from one DW_LNE_set_address to DW_LNE_end_sequence; the last row is the end_sequence row."""

    unit: "LineProgram"
    rows: list[tuple] = field(default_factory=list)  # tuples in Row's field order
    segments: list[AddressBase] = field(default_factory=list)


class FileEntry(NamedTuple):
    name: str
    dir_index: int


@dataclass
class LineProgram:
    """One unit (compilation unit) of `.debug_line`: its header tables and its sequences."""

    offset: int
    index: int
    version: int
    include_dirs: list[str]
    files: list[FileEntry]
    sequences: list[Sequence] = field(default_factory=list)

    def file_entry(self, number: int) -> FileEntry | None:
        """DWARF 2-4 file numbers are 1-based; 0 and out-of-range numbers have no entry."""
        if 1 <= number <= len(self.files):
            return self.files[number - 1]
        return None


def parse_debug_line(data: bytes) -> list[LineProgram]:
    """Decode every unit of a `.debug_line` section."""
    units = []
    offset = 0
    while offset < len(data):
        if len(data) - offset < 4:
            break  # trailing padding
        unit, offset = _parse_unit(data, offset, len(units))
        units.append(unit)
    return units


class _Reader:
    """Bounded little-endian cursor over `data[pos:end]`."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int, end: int):
        self.data, self.pos, self.end = data, pos, end

    def need(self, n: int) -> None:
        if self.pos + n > self.end:
            raise LineTableError(f"line table truncated at offset {self.pos:#x}")

    def u8(self) -> int:
        self.need(1)
        self.pos += 1
        return self.data[self.pos - 1]

    def unpack(self, fmt: str):
        size = struct.calcsize(fmt)
        self.need(size)
        value = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value if len(value) > 1 else value[0]

    def uleb(self) -> int:
        return _uleb(self.data, self, self.end)

    def sleb(self) -> int:
        start = self.pos
        value = _uleb(self.data, self, self.end)
        nbytes = self.pos - start
        if self.data[self.pos - 1] & 0x40:
            value -= 1 << (7 * nbytes)
        return value

    def cstr(self) -> str:
        nul = self.data.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise LineTableError(f"unterminated string in line table header at offset {self.pos:#x}")
        text = self.data[self.pos : nul].decode("utf-8", "backslashreplace")
        self.pos = nul + 1
        return text


def _uleb(data: bytes, reader: _Reader, end: int) -> int:
    pos = reader.pos
    value = shift = 0
    while True:
        if pos >= end:
            raise LineTableError(f"LEB128 value runs past the end of the line table unit at {reader.pos:#x}")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
        if shift >= 7 * _MAX_LEB_BYTES:
            raise LineTableError(f"LEB128 value too long at offset {reader.pos:#x}")
    reader.pos = pos
    return value


@dataclass
class _Header:
    end: int
    program_start: int
    min_inst: int
    default_is_stmt: int
    line_base: int
    line_range: int
    opcode_base: int
    opcode_lengths: list[int]


def _parse_unit(data: bytes, offset: int, index: int) -> tuple[LineProgram, int]:
    reader = _Reader(data, offset, len(data))
    unit_length = reader.unpack("<I")
    offset_size = 4
    if unit_length == 0xFFFFFFFF:  # 64-bit DWARF (§7.4)
        unit_length, offset_size = reader.unpack("<Q"), 8
    elif unit_length >= 0xFFFFFFF0:
        raise LineTableError(f"reserved unit length {unit_length:#x} at offset {offset:#x}")
    end = reader.pos + unit_length
    if end > len(data):
        raise LineTableError(f"line table unit at offset {offset:#x} runs past the end of .debug_line")
    reader.end = end
    version = reader.unpack("<H")
    if not 2 <= version <= 4:
        raise LineTableError(f"line table version {version} at offset {offset:#x} is not supported (2-4)")
    header_length = reader.unpack("<I" if offset_size == 4 else "<Q")
    program_start = reader.pos + header_length
    if program_start > end:
        raise LineTableError(f"line table header at offset {offset:#x} is longer than its unit")
    header = _parse_header_fields(reader, version, end, program_start)
    # The tables end at program_start; ptxas pads with zero bytes after them (research/dwarf.md §1).
    reader.end = program_start
    include_dirs, files = _parse_tables(reader)
    unit = LineProgram(offset, index, version, include_dirs, files)
    _run_program(data, header, unit)
    return unit, end


def _parse_header_fields(reader: _Reader, version: int, end: int, program_start: int) -> _Header:
    min_inst = reader.u8()
    if version >= 4:
        reader.u8()  # maximum_operations_per_instruction (VLIW only; 1 on every target we read)
    default_is_stmt = reader.u8()
    line_base = reader.unpack("<b")
    line_range = reader.u8()
    opcode_base = reader.u8()
    if line_range == 0:
        raise LineTableError("line table header has line_range 0")
    if opcode_base == 0:
        raise LineTableError("line table header has opcode_base 0")
    opcode_lengths = [reader.u8() for _ in range(opcode_base - 1)]
    return _Header(end, program_start, min_inst, default_is_stmt, line_base, line_range, opcode_base, opcode_lengths)


def _parse_tables(reader: _Reader) -> tuple[list[str], list[FileEntry]]:
    include_dirs = []
    while True:
        name = reader.cstr()
        if not name:
            break
        include_dirs.append(name)
    files = []
    while True:
        name = reader.cstr()
        if not name:
            break
        dir_index = reader.uleb()
        reader.uleb()  # modification time
        reader.uleb()  # length
        files.append(FileEntry(name, dir_index))
    return include_dirs, files


def _run_program(data: bytes, h: _Header, unit: LineProgram) -> None:
    """Run the line-number state machine (§6.2.2) and collect rows per sequence.

    One if/elif chain on purpose: this loop runs once per opcode of a 100k-instruction CUBIN, so the state
    registers and the cursor live in locals, rows are plain tuples in Row's field order, and one-byte
    LEB128 operands (nearly all of them) are decoded inline.
    """
    r = _Reader(data, h.program_start, h.end)
    end = h.end
    opcode_base, line_base, line_range, min_inst = h.opcode_base, h.line_base, h.line_range, h.min_inst
    const_add = ((255 - opcode_base) // line_range) * min_inst
    seq = Sequence(unit)
    rows = seq.rows
    emit = rows.append
    address, file, line, column, inlined_at, func_name, segment = 0, 1, 1, 0, 0, 0, -1
    pos = h.program_start
    while pos < end:
        op = data[pos]
        pos += 1
        if op >= opcode_base:  # special opcode (§6.2.5.1)
            adjusted = op - opcode_base
            address += (adjusted // line_range) * min_inst
            line += line_base + adjusted % line_range
            emit((address, file, line, column, inlined_at, func_name, segment))
            continue
        if op == DW_LNS_copy:
            emit((address, file, line, column, inlined_at, func_name, segment))
            continue
        if op == DW_LNS_advance_pc or op == DW_LNS_advance_line or op == DW_LNS_set_file:
            if pos < end and data[pos] < 0x80:  # one-byte LEB128
                value = data[pos]
                pos += 1
                if op == DW_LNS_advance_line and value & 0x40:
                    value -= 0x80
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two-byte LEB128 (advance_pc of 8+ instructions)
                value = (data[pos] & 0x7F) | (data[pos + 1] << 7)
                pos += 2
                if op == DW_LNS_advance_line and value & 0x2000:
                    value -= 0x4000
            else:
                r.pos = pos
                value = r.sleb() if op == DW_LNS_advance_line else r.uleb()
                pos = r.pos
            if op == DW_LNS_advance_pc:
                address += value * min_inst
            elif op == DW_LNS_advance_line:
                line += value
            else:
                file = value
            continue
        if op == 0 and pos + 3 < end and data[pos + 1] == DW_LNE_NV_inline:
            # NVIDIA inline op with operands of 1 or 2 LEB128 bytes each, decoded in place (hot path).
            length = data[pos]
            if 3 <= length <= 5:
                q, stop = pos + 2, pos + 1 + length
                b = data[q]
                value1 = b
                q += 1
                if b >= 0x80 and q < stop:
                    value1 = (b & 0x7F) | (data[q] << 7)
                    q += 1
                if q < stop and data[q - 1] < 0x80:
                    b = data[q]
                    value2 = b
                    q += 1
                    if b >= 0x80 and q < stop:
                        value2 = (b & 0x7F) | (data[q] << 7)
                        q += 1
                    if q == stop and data[q - 1] < 0x80 and stop <= end:
                        inlined_at, func_name = value1, value2
                        pos = stop
                        continue
        r.pos = pos
        if op == 0:
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                r.pos = pos + 1
            else:
                length = r.uleb()
            if length == 0:
                pos = r.pos
                continue
            ext_end = r.pos + length
            if ext_end > end:
                raise LineTableError(f"extended opcode at {r.pos:#x} runs past the end of its unit")
            sub = data[r.pos]
            r.pos += 1
            if sub == DW_LNE_end_sequence:
                emit((address, file, line, column, inlined_at, func_name, segment))
                unit.sequences.append(seq)
                seq = Sequence(unit)
                rows = seq.rows
                emit = rows.append
                address, file, line, column, inlined_at, func_name, segment = 0, 1, 1, 0, 0, 0, -1
            elif sub == DW_LNE_set_address:
                size = length - 1
                if size not in (4, 8):
                    raise LineTableError(f"DW_LNE_set_address with a {size}-byte operand at {r.pos:#x}")
                address = int.from_bytes(data[r.pos : r.pos + size], "little")
                seq.segments.append(AddressBase(r.pos, size, address))
                segment = len(seq.segments) - 1
            elif sub == DW_LNE_define_file:
                sub_reader = _Reader(data, r.pos, ext_end)
                name = sub_reader.cstr()
                unit.files.append(FileEntry(name, sub_reader.uleb()))
            elif sub == DW_LNE_NV_inline:
                r.end = ext_end  # operands must stay inside the op
                inlined_at = r.uleb()
                func_name = r.uleb()
                r.end = end
            # DW_LNE_set_discriminator and unknown extended opcodes: skipped by their length.
            pos = ext_end
            continue
        if op == DW_LNS_set_column:
            column = r.uleb()
        elif op == DW_LNS_const_add_pc:
            address += const_add
        elif op == DW_LNS_fixed_advance_pc:
            address += r.unpack("<H")
        elif op in (DW_LNS_negate_stmt, DW_LNS_set_basic_block, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin):
            pass  # flags we do not use
        else:  # DW_LNS_set_isa and opcodes unknown to us: skip their ULEB operands (§6.2.5.2)
            for _ in range(h.opcode_lengths[op - 1]):
                r.uleb()
        pos = r.pos
    if rows:
        raise LineTableError(f"line table unit at offset {unit.offset:#x} ends inside a sequence")
