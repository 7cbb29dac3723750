"""Committed CUBIN fixtures (tests/data/cubins, built by make_fixtures.sh): no toolchain needed.

Each fixture has its `nvdisasm -gi` listing committed next to it, so the full per-instruction comparison
also runs where nvdisasm is not installed.
"""

from __future__ import annotations

import gzip

import pytest

from reuselens.analyzer.lineinfo import NoCubinError, SourceMapper, cubins_from_binary, select_cubins
from tests.lineinfo.conftest import CU, FIXTURE_SRC, FIXTURES
from tests.lineinfo.nvdisasm_ref import compare, parse
from tests.lineinfo.source_scan import check_frames, function_ranges

LINEINFO = sorted(p.name for p in FIXTURES.glob("*.cubin") if "nolineinfo" not in p.name)


@pytest.mark.parametrize("name", LINEINFO)
def test_fixture_matches_its_nvdisasm_listing(name):
    mapper = SourceMapper({"m": FIXTURES / name})
    listing = parse(gzip.decompress((FIXTURES / name.replace(".cubin", ".gi.txt.gz")).read_bytes()).decode())
    result = compare(mapper, "m", mapper.table("m"), listing, inline=True, debug_info_chains=".G." in name)
    assert result.instructions == len(listing) > 0
    assert result.mismatches == [], "\n".join(result.mismatches[:20])


@pytest.mark.parametrize("name", LINEINFO)
def test_every_frame_names_the_function_whose_body_holds_its_line(name, fixture_prefix_map):
    """nvdisasm prints no function names; check them against the sources (catches wrong .debug_str bases)."""
    mapper = SourceMapper({"m": FIXTURES / name}, prefix_map=fixture_prefix_map)
    table = mapper.table("m")
    ranges = function_ranges(CU)
    checked_inline = 0
    for kernel in table.kernels():
        for pc in range(0, table.elf.sections[kernel.shndx].size, 16):
            loc = mapper.lookup("m", kernel.name, pc)
            if loc is None:
                continue
            assert loc.exists, loc.file
            assert check_frames(loc, ranges) == [], f"{kernel.name}+{pc:#x}"
            checked_inline += bool(loc.inline)
    assert checked_inline > 0  # -G too: its chains come from .debug_info


def test_rdc_linked_fixture_has_several_units_and_dropped_kernels():
    table = SourceMapper({"m": FIXTURES / "rdc_linked.sm_90.lineinfo.cubin"}).table("m")
    assert len(table.units) == 3
    assert table.orphan_sequences > 0
    # The second unit (other.cu) has inlined code whose names live after the first unit's strings.
    assert any(row[4] for seq in table.units[1].sequences for row in seq.rows)


def test_no_line_info_fixture_maps_nothing_and_says_so_once():
    mapper = SourceMapper({"abcdef0123456789": FIXTURES / "kernels.sm_90.nolineinfo.cubin"})
    for pc in (0, 0x10, 0x20):
        assert mapper.lookup("abcdef0123456789", "_Z5kernBPfPKfi", pc) is None
    assert mapper.kernel_location("abcdef0123456789", "_Z5kernBPfPKfi") is None
    assert mapper.notes == [
        "module abcdef012345: no line info; rebuild with -lineinfo (nvcc -lineinfo) to see findings on source lines"
    ]


def test_executable_with_zstd_fatbinary():
    cubins = cubins_from_binary(FIXTURES / "app_zstd.elf")
    assert sorted(arch for arch, _ in cubins) == ["sm_80", "sm_90"]
    assert [a for a, _ in select_cubins(cubins, None)] == ["sm_90"]
    assert [a for a, _ in select_cubins(cubins, "sm_80")] == ["sm_80"]
    assert [a for a, _ in select_cubins(cubins, "sm_86")] == ["sm_80"]  # what the driver runs on an sm_86 GPU
    with pytest.raises(NoCubinError, match="no CUBIN for sm_100"):
        select_cubins(cubins, "sm_100")
    with pytest.raises(NoCubinError, match="no CUBIN for sm_75; this binary has sm_80, sm_90"):
        select_cubins(cubins, "sm_75")
    ranges = function_ranges(CU)
    for arch, data in cubins:
        mapper = SourceMapper({arch: data}, prefix_map={FIXTURE_SRC: str(CU)})
        loc = mapper.lookup(arch, "_Z10app_kernelPfi", 0x10)
        assert loc is not None and loc.exists and loc.file == str(CU / "main.cu")
        first, last = ranges[("main.cu", "app_kernel")]
        assert first <= loc.line <= last


def _relocatable(cubin: bytes) -> bytes:
    """The CUBIN with its ELF type made ET_REL, as -rdc objects and libcudadevrt's CUBINs are."""
    return cubin[:16] + (1).to_bytes(2, "little") + cubin[18:]


def test_linked_cubins_come_before_relocatable_ones_of_any_architecture():
    # An -rdc executable: the device-linked sm_90 CUBIN, and relocatable ones (libcudadevrt's, for architectures
    # the app was not built for, and the app's own objects at sm_90) that the driver never loads.
    linked = (FIXTURES / "kernels.sm_90.lineinfo.cubin").read_bytes()
    own_object = _relocatable(linked)
    newer_library = _relocatable((FIXTURES / "kernels.sm_120.lineinfo.cubin").read_bytes())
    cubins = [("sm_90", linked), ("sm_90", own_object), ("sm_120", newer_library)]
    assert select_cubins(cubins, None) == [("sm_90", linked)]
    assert select_cubins(cubins, "sm_90") == [("sm_90", linked)]
    with pytest.raises(NoCubinError, match="no CUBIN for sm_120; this binary has sm_90"):
        select_cubins(cubins, "sm_120")
    # A relocatable object alone (nvcc -rdc -c) keeps its CUBINs, the highest architecture first as before.
    objects = [("sm_90", own_object), ("sm_120", newer_library)]
    assert select_cubins(objects, None) == [("sm_120", newer_library)]
    assert select_cubins(objects, "sm_90") == [("sm_90", own_object)]


def test_bare_fatbinary_with_lz4_entry():
    cubins = cubins_from_binary(FIXTURES / "app_lz4.fatbin")
    assert [a for a, _ in cubins] == ["sm_90"]
    mapper = SourceMapper({"m": cubins[0][1]})
    assert mapper.kernel_location("m", "_Z10app_kernelPfi").file == FIXTURE_SRC + "/main.cu"


def test_a_cubin_is_its_own_single_entry():
    data = (FIXTURES / "kernels.sm_80.lineinfo.cubin").read_bytes()
    assert cubins_from_binary(data) == [("sm_80", data)]
