"""Every instruction of CUBINs built here with nvcc, mapped by SourceMapper, against `nvdisasm -g` and `-gi`.

Variants: every architecture nvcc offers among sm_80..sm_120, -O3 -lineinfo and -G, plain and -rdc
(relocatable CUBINs and the device-linked CUBIN of an executable), CUBINs pulled out of an executable's
fatbinary (stored, ZSTD, LZ4). The sources have force-inlined chains across a header, a __noinline__ callee
(ptxas clone `$kernel$callee`), a template kernel with two instantiations and an extern "C" kernel.
"""

from __future__ import annotations

import pytest

from reuselens.analyzer.lineinfo import SourceMapper, cubins_from_binary, select_cubins
from reuselens.analyzer.lineinfo.elf import ElfFile
from tests.lineinfo.conftest import CU, WANTED_ARCHS
from tests.lineinfo.nvdisasm_ref import compare, disassemble
from tests.lineinfo.source_scan import check_frames, function_ranges

KERNELS = ["kernels.cu"]


def _check(path, data=None, *, expect_inline=True):
    """Compare one CUBIN (path on disk; data when it came out of a fatbinary) with -g and -gi."""
    mapper = SourceMapper({"m": data if data is not None else path})
    table = mapper.table("m")
    assert table.has_line_info
    for inline in (False, True):
        g_build = table.elf.section_by_name(".debug_info") is not None
        result = compare(mapper, "m", table, disassemble(path, inline), inline, debug_info_chains=g_build)
        assert result.instructions > 0
        assert result.mismatches == [], f"{path}: {len(result.mismatches)} of {result.instructions}:\n" + "\n".join(
            result.mismatches[:20]
        )
        if inline and expect_inline:
            assert result.inline_chains > 0, "the test CUBIN should contain inlined code"
    # nvdisasm prints no function names (and no -G chains): check those against the sources.
    ranges = function_ranges(CU)
    for kernel in table.kernels():
        for pc in range(0, table.elf.sections[kernel.shndx].size, 16):
            loc = mapper.lookup("m", kernel.name, pc)
            if loc is not None:
                assert check_frames(loc, ranges) == [], f"{path}: {kernel.name}+{pc:#x}"
    return table


@pytest.fixture(scope="module")
def arch_builds(builder):
    jobs = []
    for arch in builder.archs:
        jobs.append((f"kernels.{arch}.O3.cubin", KERNELS, ["-cubin", f"-arch={arch}", "-O3", "-lineinfo"]))
        jobs.append((f"kernels.{arch}.G.cubin", KERNELS, ["-cubin", f"-arch={arch}", "-G"]))
    paths = builder.build_many(jobs)
    return dict(zip([j[0] for j in jobs], paths))


@pytest.mark.parametrize("arch", WANTED_ARCHS)
@pytest.mark.parametrize("mode", ["O3", "G"])
def test_every_instruction_matches_nvdisasm(arch, mode, builder, arch_builds, nvdisasm):
    if arch not in builder.archs:
        pytest.skip(f"this nvcc cannot build {arch}")
    path = arch_builds[f"kernels.{arch}.{mode}.cubin"]
    table = _check(path)
    names = table.functions()
    # The variants the source was written to produce are really there.
    assert any(n.startswith("$_Z11call_kernel") for n in names) or mode == "G"
    assert "_Z11tmpl_kernelIfLi256EEvPT_PKS0_i" in names and "c_kernel" in names
    if mode == "G":  # -G: every device function has its own section and sequence
        assert any(k.name == "_Z6slowfnf" for k in table.kernels())


@pytest.fixture(scope="module")
def rdc_builds(builder):
    jobs = [
        ("kernels.rdc.sm_89.cubin", KERNELS, ["-cubin", "-rdc=true", "-arch=sm_89", "-lineinfo", "-DWITH_EXTERNAL"]),
        ("other.rdc.sm_90.cubin", ["other.cu"], ["-cubin", "-rdc=true", "-arch=sm_90", "-lineinfo"]),
        (
            "rdcapp",
            ["kernels.cu", "other.cu", "rdc_main.cu"],
            ["-rdc=true", "-arch=sm_90", "-lineinfo", "-DWITH_EXTERNAL", "-cudart", "shared"],
        ),
    ]
    return dict(zip([j[0] for j in jobs], builder.build_many(jobs)))


def test_relocatable_cubins_match_nvdisasm(rdc_builds, nvdisasm):
    _check(rdc_builds["kernels.rdc.sm_89.cubin"])  # REL relocations (sm_89)
    _check(rdc_builds["other.rdc.sm_90.cubin"])


def test_rdc_linked_cubin_matches_nvdisasm(rdc_builds, nvdisasm, tmp_path):
    cubins = cubins_from_binary(rdc_builds["rdcapp"])
    linked = [c for arch, c in cubins if ElfFile.parse(c).type == 2]
    assert len(linked) == 1
    assert [c for _, c in select_cubins(cubins, None)] == linked  # the relocatable ones are never loaded
    path = tmp_path / "linked.cubin"
    path.write_bytes(linked[0])
    table = _check(path, linked[0])
    assert len(table.units) >= 2, "nvlink output should hold one line-table unit per translation unit"
    assert table.orphan_sequences > 0, "kernels the host never launches leave sequences without relocation"


def test_rdc_linked_inline_names_match_the_relocatable_cubins(rdc_builds):
    """nvlink does not relocate the .debug_str offsets of later units: names must still be right."""
    cubins = cubins_from_binary(rdc_builds["rdcapp"])
    linked = SourceMapper({"l": next(c for _, c in cubins if ElfFile.parse(c).type == 2)})
    relocatable = SourceMapper({str(i): c for i, (_, c) in enumerate(cubins) if ElfFile.parse(c).type == 1})
    compared = 0
    for kernel in linked.table("l").kernels():
        size = linked.table("l").elf.sections[kernel.shndx].size
        for module in relocatable.module_ids:
            if relocatable.table(module).function_symbol(kernel.name) is None:
                continue
            for pc in range(0, size, 16):
                ours = linked.lookup("l", kernel.name, pc)
                theirs = relocatable.lookup(module, kernel.name, pc)
                assert ours == theirs, f"{kernel.name}+{pc:#x}"
                if kernel.name == "_Z12other_kernelPfi":  # defined in the second translation unit
                    compared += bool(ours and ours.inline)
    assert compared > 0, "expected inlined code in the kernel of the second translation unit"


@pytest.mark.parametrize("compression", ["stored", "zstd", "lz4"])
def test_cubins_from_an_executable_match_nvdisasm(compression, builder, nvdisasm, tmp_path):
    flags = {
        "stored": ["--no-compress"],
        "zstd": ["-Xfatbin=-compress-all"],
        "lz4": ["-Xfatbin=-compress-all", "--compress-mode=speed"],
    }[compression]
    archs = [a for a in ("sm_80", "sm_90") if a in builder.archs]
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    app = builder.build(f"app.{compression}", ["main.cu"], ["-lineinfo", "-cudart", "shared", *flags, *gencode])
    cubins = cubins_from_binary(app)
    assert sorted(a for a, _ in cubins) == sorted(archs)
    for arch, data in cubins:
        path = tmp_path / f"{arch}.cubin"
        path.write_bytes(data)
        _check(path, data, expect_inline=False)


def test_extraction_is_byte_identical_to_cuobjdump(rdc_builds, tmp_path):
    import subprocess

    from tests.lineinfo.nvdisasm_ref import find_tool

    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
    subprocess.run(
        [cuobjdump, "-all", "-xelf", "all", str(rdc_builds["rdcapp"])], cwd=tmp_path, check=True, capture_output=True
    )
    theirs = {p.read_bytes() for p in tmp_path.glob("*.cubin")}
    ours = [c for _, c in cubins_from_binary(rdc_builds["rdcapp"])]
    assert len(ours) >= 3
    assert all(c in theirs for c in ours)


@pytest.mark.parametrize("kind", ["object", "rdc-object", "shared-library"])
def test_cubins_from_objects_and_shared_libraries(kind, builder, nvdisasm, tmp_path):
    flags = {
        "object": ["-c"],
        "rdc-object": ["-c", "-rdc=true"],
        "shared-library": ["-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"],
    }[kind]
    built = builder.build(f"kernels.{kind}", KERNELS, [*flags, "-lineinfo", "-arch=sm_90"])
    cubins = cubins_from_binary(built)
    assert [a for a, _ in cubins] == ["sm_90"]
    path = tmp_path / "k.cubin"
    path.write_bytes(cubins[0][1])
    table = _check(path, cubins[0][1])
    assert table.function_symbol("_Z5kernBPfPKfi") is not None
