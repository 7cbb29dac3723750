"""Corrupt, truncated and hostile inputs: the mapper raises its own MappingError subclasses, never anything
else, never hangs (hypothesis deadline) and never allocates far beyond the input (tracemalloc)."""

from __future__ import annotations

import struct
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reuselens.analyzer.errors import MappingError
from reuselens.analyzer.lineinfo import ElfFormatError, FatbinError, SourceMapper, cubins_from_binary
from reuselens.analyzer.lineinfo.elf import ElfFile
from reuselens.analyzer.lineinfo.lineprogram import parse_debug_line
from reuselens.analyzer.lineinfo.mapper import clear_cache
from tests.lineinfo.conftest import FIXTURES

CUBIN_90 = (FIXTURES / "kernels.sm_90.lineinfo.cubin").read_bytes()
CUBIN_80 = (FIXTURES / "kernels.sm_80.lineinfo.cubin").read_bytes()  # REL relocations
CUBIN_G = (FIXTURES / "other.sm_89.G.cubin").read_bytes()  # .debug_info inline ranges
CUBINS = {"rela": CUBIN_90, "rel": CUBIN_80, "G": CUBIN_G}
APP = (FIXTURES / "app_zstd.elf").read_bytes()
FUZZ = settings(max_examples=150, deadline=10000, suppress_health_check=[HealthCheck.too_slow])  # deadline: hang guard


def map_everything(data: bytes) -> int:
    """Parse and look up every instruction of every function; returns how many were mapped."""
    clear_cache()
    mapper = SourceMapper({"m": data})
    table = mapper.table("m")
    mapped = 0
    for sym in table.kernels():
        size = min(table.elf.sections[sym.shndx].size, 1 << 16)
        for pc in range(0, size, 16):
            mapped += mapper.lookup("m", sym.name, pc) is not None
        mapper.kernel_location("m", sym.name)
    return mapped


def regions(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges worth mutating: ELF header, section headers, symtab, line table and its relocations."""
    elf = ElfFile.parse(data)
    out = [(0, 64)]
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    out.append((shoff, shoff + 64 * len(elf.sections)))
    for s in elf.sections:
        if s.name in (
            ".debug_line",
            ".rela.debug_line",
            ".rel.debug_line",
            ".symtab",
            ".debug_str",
            ".strtab",
            ".debug_info",
            ".debug_abbrev",
            ".rela.debug_info",
            ".rel.debug_info",
        ):
            out.append((s.offset, s.offset + s.size))
    return out


def test_fixtures_map_fully():
    assert map_everything(CUBIN_90) == 656 and map_everything(CUBIN_80) == 640  # every instruction


@pytest.mark.parametrize("name", sorted(CUBINS))
def test_every_truncation_is_a_mapping_error_or_a_smaller_map(name):
    data = CUBINS[name]
    cuts = sorted(set(range(0, len(data), 97)) | {b for r in regions(data) for b in r if b < len(data)})
    for cut in cuts:
        try:
            map_everything(data[:cut])
        except MappingError:
            pass


@pytest.mark.parametrize("name", sorted(CUBINS))
@FUZZ
@given(st.data())
def test_mutated_cubins_raise_only_mapping_errors(name, draw):
    data = CUBINS[name]
    spans = regions(data)
    mutated = bytearray(data)
    for _ in range(draw.draw(st.integers(1, 12))):
        start, end = draw.draw(st.sampled_from(spans))
        if end > start:
            pos = draw.draw(st.integers(start, end - 1))
            mutated[pos] = draw.draw(st.integers(0, 255))
    try:
        map_everything(bytes(mutated))
    except MappingError:
        pass


@FUZZ
@given(st.binary(max_size=4096))
def test_random_line_tables_raise_only_line_table_errors(blob):
    try:
        parse_debug_line(blob)
    except MappingError:
        pass


@FUZZ
@given(st.binary(max_size=600))
def test_random_programs_behind_a_valid_header(program):
    header = bytes([1, 1, 0xFB, 14, 10, 0, 1, 1, 1, 1, 0, 0, 0, 1]) + b"/d\0\0k.cu\0\1\0\0\0"
    body = struct.pack("<HI", 2, len(header)) + header + program
    try:
        parse_debug_line(struct.pack("<I", len(body)) + body)
    except MappingError:
        pass


@FUZZ
@given(st.binary(min_size=0, max_size=2048))
def test_random_files_and_fatbinaries(blob):
    for data in (blob, struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(blob)) + blob, b"\x7fELF\x02\x01" + blob):
        try:
            cubins_from_binary(data)
        except MappingError:
            pass


def test_inline_chains_that_loop_or_point_away_end():
    clear_cache()
    mapper = SourceMapper({"m": CUBIN_90})
    table = mapper.table("m")
    index = table.section_index(table.function_symbol("_Z5kernBPfPKfi").shndx)
    sequence = index.sequences[0]
    rows = sequence.rows
    for i in range(len(rows)):  # every row says it is inlined at itself, the next row, or nowhere valid
        r = rows[i]
        rows[i] = r[:4] + ([i + 1, i + 2, len(rows) + 5][i % 3], r[5], r[6])
    for pc in range(0, 0x200, 16):
        loc = mapper.lookup("m", "_Z5kernBPfPKfi", pc)
        assert loc is None or len(loc.inline) < 600
    clear_cache()


def _fatbin_entry(payload: bytes, flags: int, raw_size: int, kind: int = 2) -> bytes:
    header = struct.pack("<HHIQIIHHI", kind, 0x0101, 0x40, len(payload), len(payload), 0, 8, 1, 90)
    header += struct.pack("<IIQQQ", 0, 0, flags, 0, raw_size)
    entry = header + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


@pytest.mark.parametrize(
    "flags, payload, raw_size, message",
    [
        (0x8000, b"\x28\xb5\x2f\xfd" + b"garbage!", 4096, "cannot decompress a ZSTD"),
        (0x2000, b"\xff" * 16, 4096, "cannot decompress an LZ4"),
        (0x2000, b"\x10abc", 1 << 29, "claims"),
        (0x8000, b"\x28\xb5\x2f\xfd", 1 << 40, "invalid size"),
    ],
)
def test_hostile_compressed_entries(flags, payload, raw_size, message):
    with pytest.raises(FatbinError, match=message):
        cubins_from_binary(_fatbin_entry(payload, flags, raw_size))


def test_zstd_bomb_without_content_size_allocates_only_what_it_produces():
    import zstandard

    frame = zstandard.ZstdCompressor(write_content_size=False).compress(CUBIN_90)
    tracemalloc.start()
    try:
        out = cubins_from_binary(_fatbin_entry(frame, 0x8000, 1 << 30 - 1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == [("sm_90", CUBIN_90)]
    assert peak < 8 << 20  # a few 1 MiB read chunks, not the 1 GiB the entry claims
    with pytest.raises(FatbinError, match="more than it declares"):
        cubins_from_binary(_fatbin_entry(frame, 0x8000, 1000))


def test_entry_running_past_its_container():
    blob = bytearray(_fatbin_entry(CUBIN_90, 0, 0))
    struct.pack_into("<Q", blob, 16 + 8, 1 << 40)
    with pytest.raises(FatbinError, match="runs past the end of its container"):
        cubins_from_binary(bytes(blob))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "not an ELF file or fatbinary"),
        (b"MZ" + bytes(100), "not an ELF file or fatbinary"),
        (b"\x7fELF\x01\x01" + bytes(100), "only 64-bit little-endian"),
        (CUBIN_90[:100], "outside the file"),
    ],
)
def test_unreadable_inputs(data, message):
    with pytest.raises(ElfFormatError, match=message):
        cubins_from_binary(data)


def test_host_binary_is_not_a_cubin():
    with pytest.raises(ElfFormatError, match="not a CUBIN"):
        SourceMapper({"m": APP}).table("m")


HOSTILE = FIXTURES.parent / "hostile"
_SHDR = struct.Struct("<IIQQQQIIQQ")


def _with_section(data: bytes, name: str, **fields: int) -> bytes:
    """`data` with some fields (type, flags, offset, size) of section `name`'s header replaced."""
    elf = ElfFile.parse(data)
    index = next(s.index for s in elf.sections if s.name == name)
    at = struct.unpack_from("<Q", data, 0x28)[0] + index * _SHDR.size
    header = list(_SHDR.unpack_from(data, at))
    for field, value in fields.items():
        header[{"type": 1, "flags": 2, "offset": 4, "size": 5}[field]] = value
    out = bytearray(data)
    _SHDR.pack_into(out, at, *header)
    return bytes(out)


def test_code_section_without_bytes_names_the_file_and_the_section():
    """The recorded reproducer: `.text.*` of a kernel is SHT_NOBITS with sh_size 2^40; `reuselens lines` then
    walked range(0, 2^40, 16) for hours."""
    path = HOSTILE / "nobits_text_2_40.cubin"
    with pytest.raises(
        ElfFormatError,
        match=rf"{path}: section 30 '\.text\._ZN43_GLOBAL__N__01d1bcd4_10_kernels_cu_"
        r"53826c5911anon_kernelEPi' holds code but has no bytes in the file "
        r"\(SHT_NOBITS, 1099511627776 bytes\)",
    ):
        cubins_from_binary(path)


def test_lines_on_a_code_section_without_bytes_is_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "reuselens", "lines", str(HOSTILE / "nobits_text_2_40.cubin"), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "holds code but has no bytes in the file" in done.stderr, done.stderr


def test_function_in_a_section_without_bytes_is_not_walked():
    """A NOBITS section that does not claim to hold code (like `.nv.shared.*`) may be of any size, but a
    function symbol in it has no code: it is not offered to callers, who walk a kernel's section size."""
    name = "_Z5kernAPfPKfi"
    text = next(s for s in ElfFile.parse(CUBIN_90).sections if s.name == ".text." + name)
    data = _with_section(CUBIN_90, text.name, type=8, flags=text.flags & ~0x4, size=1 << 40)
    clear_cache()
    table = SourceMapper({"m": data}).table("m")
    kernels = [k.name for k in table.kernels()]
    assert name not in kernels and name not in table.functions() and kernels


def test_section_beyond_the_end_names_the_section():
    debug_line = next(s for s in ElfFile.parse(CUBIN_90).sections if s.name == ".debug_line")
    data = _with_section(CUBIN_90, ".debug_line", size=len(CUBIN_90))
    with pytest.raises(
        ElfFormatError,
        match=rf"section {debug_line.index} '\.debug_line' \(offset "
        rf"{debug_line.offset:#x}, {len(CUBIN_90)} bytes\) lies outside the "
        rf"{len(CUBIN_90)}-byte file",
    ):
        ElfFile.parse(data)
