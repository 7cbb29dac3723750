"""The .debug_line decoder on hand-written programs, one comment per field (DWARF 2 §6.2)."""

from __future__ import annotations

import struct

import pytest

from reuselens.analyzer.errors import MappingError
from reuselens.analyzer.lineinfo.errors import LineTableError
from reuselens.analyzer.lineinfo.lineprogram import Row, parse_debug_line


def unit(
    program: bytes,
    *,
    version: int = 2,
    padding: bytes = b"\0\0\0\0",
    opcode_base: int = 10,
    dirs=(b"/src",),
    files=((b"k.cu", 1), (b"h.cuh", 1)),
    dwarf64: bool = False,
) -> bytes:
    """A line-table unit as ptxas writes it: header, tables, 4 zero bytes of padding, then the program."""
    header = bytes([1])  # minimum_instruction_length
    if version >= 4:
        header += bytes([1])  # maximum_operations_per_instruction
    header += bytes([1])  # default_is_stmt
    header += struct.pack("<b", -5)  # line_base
    header += bytes([14, opcode_base])  # line_range, opcode_base
    header += bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1][: opcode_base - 1])  # standard_opcode_lengths
    header += b"".join(d + b"\0" for d in dirs) + b"\0"  # include_directories
    header += b"".join(n + b"\0" + bytes([d, 0, 0]) for n, d in files) + b"\0"  # file_names
    header += padding
    if dwarf64:
        body = struct.pack("<H", version) + struct.pack("<Q", len(header)) + header + program
        return struct.pack("<IQ", 0xFFFFFFFF, len(body)) + body
    body = struct.pack("<H", version) + struct.pack("<I", len(header)) + header + program
    return struct.pack("<I", len(body)) + body


SET_ADDRESS_0 = bytes([0, 9, 2]) + bytes(8)  # DW_LNE_set_address 0
END_SEQUENCE = bytes([0, 1, 1])  # DW_LNE_end_sequence


def rows_of(data: bytes) -> list[Row]:
    (u,) = parse_debug_line(data)
    return [Row(*r) for seq in u.sequences for r in seq.rows]


def test_inline_opcode_chain_as_ptxas_writes_it():
    program = (
        SET_ADDRESS_0
        + bytes([3, 28])  # advance_line +28 -> 29
        + bytes([2, 0xE0, 0x01, 1])  # advance_pc 224 (two-byte ULEB) -> 0xe0; copy: row 1 k.cu:29
        + bytes([0, 3, 0x90, 1, 0])  # NV inline: inlined_at row 1, name .debug_str+0
        + bytes([3, 0x75, 1])  # advance_line -11 -> 18; copy: row 2 (in combine, called at row 1)
        + bytes([4, 2, 0, 3, 0x90, 2, 0x0D])  # set_file 2; inlined_at row 2, name +0x0d
        + bytes([3, 0x72, 1])  # advance_line -14 -> 4; copy: row 3 h.cuh:4
        + bytes([0, 3, 0x90, 0, 0])  # back in the kernel body
        + bytes([4, 1, 3, 25])  # set_file 1, advance_line +25 -> 29
        + bytes([10 + 5 + 14 * 16])  # special: address +16, line +0; row 4
        + bytes([2, 0x20])  # advance_pc 32
        + END_SEQUENCE  # row 5 at 0x110
    )
    rows = rows_of(unit(program))
    assert [(r.address, r.file, r.line, r.inlined_at, r.func_name) for r in rows] == [
        (0xE0, 1, 29, 0, 0),
        (0xE0, 1, 18, 1, 0),
        (0xE0, 2, 4, 2, 0x0D),
        (0xF0, 1, 29, 0, 0),
        (0x110, 1, 29, 0, 0),
    ]


def test_program_starts_at_header_length_not_after_the_tables():
    """ptxas pads 4 zero bytes after the file table; they are not opcodes (pyelftools misreads them)."""
    program = SET_ADDRESS_0 + bytes([1]) + END_SEQUENCE
    padded = rows_of(unit(program, padding=bytes([0, 5, 0x90, 7, 7])))  # padding that would set inlined_at
    assert [r.inlined_at for r in padded] == [0, 0]


def test_multi_byte_inline_operands_and_negative_two_byte_line_advance():
    program = (
        SET_ADDRESS_0
        + bytes([3, 0xE7, 0x07, 1])  # advance_line +999 -> 1000; copy
        + bytes([0, 4, 0x90, 0x80, 0x01, 0x10])  # inlined_at=128, name=+0x10
        + bytes([3, 0x99, 0x78, 1])  # advance_line -999 -> 1; copy
        + END_SEQUENCE
    )
    rows = rows_of(unit(program))
    assert [(r.line, r.inlined_at, r.func_name) for r in rows] == [(1000, 0, 0), (1, 128, 0x10), (1, 128, 0x10)]


def test_other_standard_opcodes():
    program = (
        SET_ADDRESS_0
        + bytes([5, 7])  # set_column 7
        + bytes([8])  # const_add_pc: (255-10)//14 = 17
        + bytes([9, 0x00, 0x01])  # fixed_advance_pc 256
        + bytes([6, 7, 1])  # negate_stmt, set_basic_block, copy
        + bytes([0, 2, 4, 3])  # set_discriminator 3 (skipped)
        + bytes([0, 3, 0x77, 1, 2])  # unknown extended opcode: skipped by its length
        + END_SEQUENCE
    )
    rows = rows_of(unit(program))
    assert [(r.address, r.column) for r in rows] == [(273, 7), (273, 7)]


def test_opcode_base_13_and_version_4_and_dwarf64():
    # set_prologue_end, set_epilogue_begin, set_isa 5, copy; special +1 address; end.
    program = SET_ADDRESS_0 + bytes([10, 11, 12, 5, 1]) + bytes([13 + 5 + 14]) + END_SEQUENCE
    for data in (unit(program, version=4, opcode_base=13), unit(program, version=3, opcode_base=13, dwarf64=True)):
        rows = rows_of(data)
        assert [(r.address, r.line) for r in rows] == [(0, 1), (1, 1), (1, 1)]  # set_isa took its operand


def test_define_file_and_several_units():
    program = SET_ADDRESS_0 + bytes([0, 7, 3]) + b"x.cu\0" + bytes([1]) + bytes([4, 3, 1]) + END_SEQUENCE
    data = unit(program) + unit(SET_ADDRESS_0 + bytes([1]) + END_SEQUENCE, files=((b"y.cu", 1),))
    first, second = parse_debug_line(data)
    assert first.file_entry(3).name == "x.cu" and first.file_entry(3).dir_index == 1
    assert (
        second.files[0].name == "y.cu"
        and second.index == 1
        and second.offset == len(data) - len(unit(SET_ADDRESS_0 + bytes([1]) + END_SEQUENCE, files=((b"y.cu", 1),)))
    )
    assert first.file_entry(0) is None and first.file_entry(99) is None


@pytest.mark.parametrize(
    "data, message",
    [
        (unit(SET_ADDRESS_0)[:-3], "truncated|past the end"),
        (unit(SET_ADDRESS_0 + bytes([1])), "ends inside a sequence"),
        (unit(bytes([0, 4, 2, 0, 0, 0]) + END_SEQUENCE), "3-byte operand"),
        (unit(bytes([0, 3, 2, 0, 0]) + END_SEQUENCE), "2-byte operand"),
        (unit(bytes([2]) + b"\xff" * 12), "LEB128 value too long"),
        (unit(bytes([0, 0x40, 0x90])), "runs past the end of its unit"),
        (unit(b"", version=5), "version 5"),
        (struct.pack("<I", 0xFFFFFFF5) + bytes(8), "reserved unit length"),
        (struct.pack("<I", 1000) + bytes(8), "runs past the end of .debug_line"),
    ],
)
def test_malformed_programs_raise_line_table_error(data, message):
    with pytest.raises(LineTableError, match=message) as info:
        parse_debug_line(data)
    assert isinstance(info.value, MappingError)


def test_zero_line_range_is_refused():
    data = bytearray(unit(SET_ADDRESS_0 + END_SEQUENCE))
    data[4 + 2 + 4 + 3] = 0  # line_range
    with pytest.raises(LineTableError, match="line_range 0"):
        parse_debug_line(bytes(data))
