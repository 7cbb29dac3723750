"""CUBINs out of host binaries: `.nv_fatbin` / `__nv_relfatbin` sections holding fatbinary containers.

Layout (research/dwarf.md §5, checked byte-identical against `cuobjdump -xelf all`):

    container: u32 magic 0xBA55ED50 | u16 version | u16 header_size (16) | u64 payload_bytes
               then entries back to back up to start + header_size + payload_bytes
    entry:     0x00 u16 kind (1 PTX, 2 ELF)   0x04 u32 header_size   0x08 u64 payload_size
               0x10 u32 compressed_size (0 = stored)                 0x1c u32 arch (90 for sm_90)
               0x28 u64 flags (0x2000 LZ4 raw block, 0x8000 ZSTD frame)  0x38 u64 uncompressed_size

Sections may hold several containers, each padded to 8 bytes. The first container of a translation unit
carries a link stub: an ELF without `.text.*`; those are skipped. ZSTD output is read in chunks and capped
at the size the entry declares; an LZ4 claim beyond what the block can expand to is refused, so a hostile
entry cannot make us allocate gigabytes.
"""

from __future__ import annotations

import struct
from pathlib import Path

from reuselens.analyzer.lineinfo.elf import ELF_MAGIC, EM_CUDA, ElfFile
from reuselens.analyzer.lineinfo.errors import ElfFormatError, FatbinError, MappingError, NoCubinError

FATBIN_MAGIC = 0xBA55ED50
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
KIND_PTX, KIND_ELF = 1, 2
FLAG_LZ4, FLAG_ZSTD = 0x2000, 0x8000
MAX_CUBIN_BYTES = 1 << 30  # 1 GiB: above any real module
_ET_EXEC = 2

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHI")  # kind, _, header_size, payload_size, compressed, _, minor, major, arch
_ENTRY_FLAGS = struct.Struct("<Q")
_ENTRY_RAW_SIZE = struct.Struct("<Q")


def cubins_from_binary(source: bytes | str | Path) -> list[tuple[str, bytes]]:
    """Every CUBIN in an executable, shared library, object, fatbinary or CUBIN, as ("sm_90", bytes).

    Device-linked CUBINs (`.nv_fatbin`) come before relocatable ones (`__nv_relfatbin`, -rdc); link stubs
    and duplicates are dropped. Raises MappingError subclasses for unreadable input.
    """
    data = _read(source)
    try:
        return _cubins_in(data)
    except MappingError as error:
        if isinstance(source, (str, Path)):  # name the file: the message alone may not say which one
            raise type(error)(f"{source}: {error}") from None
        raise


def _cubins_in(data: bytes) -> list[tuple[str, bytes]]:
    if data[:4] == ELF_MAGIC:
        elf = ElfFile.parse(data)
        if elf.machine == EM_CUDA:
            return [(_arch_name(elf), data)]
        blobs = [elf.section_data(s) for name in FATBIN_SECTIONS for s in elf.sections if s.name == name]
    elif len(data) >= 4 and struct.unpack_from("<I", data)[0] == FATBIN_MAGIC:
        blobs = [data]
    else:
        raise ElfFormatError("not an ELF file or fatbinary")
    out, seen = [], set()
    for blob in blobs:
        for arch, cubin in _cubins_in_section(blob):
            if cubin not in seen:
                seen.add(cubin)
                out.append((arch, cubin))
    return out


def select_cubins(cubins: list[tuple[str, bytes]], arch: str | None) -> list[tuple[str, bytes]]:
    """The CUBINs a GPU of `arch` ("sm_86") runs, as the driver picks them: the exact arch if present, else
    the highest one of the same major version that is not newer (an sm_86 GPU runs sm_80 code). Without
    `arch`, those of the highest architecture present.

    Where the binary holds device-linked CUBINs, only those count: the driver loads them, never the relocatable
    ones an -rdc executable also carries (its own objects' and libcudadevrt's, the latter for every architecture
    the toolkit knows: an sm_90 build of cuda-samples' cdpSimpleQuicksort then "had" sm_121, with no kernel of the
    app in it, and its kernels twice at sm_90). A relocatable object alone keeps its relocatable CUBINs."""
    if not cubins:
        raise NoCubinError("no CUBIN found (the binary has no device code, or only PTX)")
    linked = [c for c in cubins if _is_linked(c[1])]
    if linked:
        cubins = linked
    if arch is None:
        arch = max((a for a, _ in cubins), key=_arch_number)
    chosen = [c for c in cubins if c[0] == arch]
    if not chosen:
        want = _arch_number(arch)
        compatible = [a for a, _ in cubins if _arch_number(a) // 10 == want // 10 and _arch_number(a) <= want]
        if compatible:
            best = max(compatible, key=_arch_number)
            chosen = [c for c in cubins if c[0] == best]
    if not chosen:
        have = ", ".join(sorted({a for a, _ in cubins}, key=_arch_number))
        raise NoCubinError(f"no CUBIN for {arch}; this binary has {have}")
    return chosen


def _is_linked(cubin: bytes) -> bool:
    """An executable CUBIN (ELF type ET_EXEC), as nvlink or a whole-program build writes it."""
    return len(cubin) >= 18 and struct.unpack_from("<H", cubin, 16)[0] == _ET_EXEC


def _read(source: bytes | str | Path) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    try:
        return Path(source).read_bytes()
    except OSError as error:
        raise MappingError(f"cannot read {source}: {error.strerror or error}") from None


def _cubins_in_section(blob: bytes):
    pos = 0
    while pos + _CONTAINER.size <= len(blob):
        magic, _version, header_size, payload = _CONTAINER.unpack_from(blob, pos)
        if magic != FATBIN_MAGIC:
            if magic == 0:  # padding between containers
                pos += 8
                continue
            raise FatbinError(f"bad fatbinary container magic {magic:#x} at offset {pos:#x}")
        start = pos + header_size
        end = start + payload
        if header_size < _CONTAINER.size or end > len(blob):
            raise FatbinError(f"fatbinary container at offset {pos:#x} runs past the end of its section")
        yield from _entries(blob, start, end)
        pos = (end + 7) & ~7


def _entries(blob: bytes, pos: int, end: int):
    while pos + 0x40 <= end:
        kind, _, header_size, payload_size, compressed, _, _minor, _major, arch = _ENTRY.unpack_from(blob, pos)
        flags = _ENTRY_FLAGS.unpack_from(blob, pos + 0x28)[0]
        raw_size = _ENTRY_RAW_SIZE.unpack_from(blob, pos + 0x38)[0]
        if header_size < 0x40 or pos + header_size + payload_size > end:
            raise FatbinError(f"fatbinary entry at offset {pos:#x} runs past the end of its container")
        payload = blob[pos + header_size : pos + header_size + payload_size]
        pos += header_size + payload_size
        if kind != KIND_ELF:
            continue
        cubin = _payload(payload, compressed, flags, raw_size)
        if _has_code(cubin):
            yield f"sm_{arch}", cubin


def _payload(payload: bytes, compressed: int, flags: int, raw_size: int) -> bytes:
    if compressed == 0 or not flags & (FLAG_LZ4 | FLAG_ZSTD):
        return _trim_elf(payload)
    if raw_size == 0 or raw_size > MAX_CUBIN_BYTES:
        raise FatbinError(f"compressed fatbinary entry declares an invalid size ({raw_size} bytes)")
    blob = payload[:compressed]
    if flags & FLAG_ZSTD:
        out = _unzstd(blob, raw_size)
    else:
        out = _unlz4(blob, raw_size)
    return _trim_elf(out)


def _unzstd(blob: bytes, raw_size: int) -> bytes:
    """ZSTD frame, read in chunks: memory follows the real output, not the size a header claims."""
    import io

    import zstandard

    chunks, total = [], 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)) as reader:
            while True:
                chunk = reader.read(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
                if total > raw_size:
                    raise FatbinError("a ZSTD fatbinary entry decompresses to more than it declares")
                chunks.append(chunk)
    except zstandard.ZstdError as error:
        raise FatbinError(f"cannot decompress a ZSTD fatbinary entry: {error}") from None
    return b"".join(chunks)


def _unlz4(blob: bytes, raw_size: int) -> bytes:
    """Raw LZ4 block. A block cannot expand more than 255-fold, so a larger claim is refused before the
    output buffer (which lz4 allocates up front) exists."""
    import lz4.block

    if raw_size > 255 * len(blob) + 64:
        raise FatbinError(f"an LZ4 fatbinary entry claims {raw_size} bytes from {len(blob)} compressed bytes")
    try:
        return lz4.block.decompress(blob, uncompressed_size=raw_size)
    except (lz4.block.LZ4BlockError, ValueError) as error:
        raise FatbinError(f"cannot decompress an LZ4 fatbinary entry: {error}") from None


def _trim_elf(data: bytes) -> bytes:
    """Stored ELFs are padded to 8 bytes: cut after the last of the section headers, program headers
    (which ptxas writes after the section headers) and section contents."""
    if len(data) < 64 or data[:4] != ELF_MAGIC or data[4] != 2:
        return data
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    end = max(64, phoff + phentsize * phnum if phnum else 0, shoff + shentsize * shnum if shnum else 0)
    if shnum and shentsize == 64 and shoff + 64 * shnum <= len(data):
        for i in range(shnum):
            (sh_type,) = struct.unpack_from("<I", data, shoff + 64 * i + 4)
            offset, size = struct.unpack_from("<QQ", data, shoff + 64 * i + 24)
            if sh_type != 8:  # SHT_NOBITS occupies no file bytes
                end = max(end, offset + size)
    return data[:end] if end <= len(data) else data


def _has_code(cubin: bytes) -> bool:
    try:
        elf = ElfFile.parse(cubin)
    except ElfFormatError as error:
        raise FatbinError(f"a fatbinary ELF entry is not a readable CUBIN: {error}") from None
    return any(s.name.startswith(".text.") for s in elf.sections)


def _arch_name(elf: ElfFile) -> str:
    return f"sm_{(elf.flags >> 8) & 0xFF}"


def _arch_number(arch: str) -> int:
    digits = "".join(ch for ch in arch if ch.isdigit())
    return int(digits) if digits else 0
