"""SourceMapper over a run directory: prefix map, notes, odd PCs, clones, kernel-level lines, cache, SASS."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from reuselens.analyzer.errors import RunDirectoryError
from reuselens.analyzer.lineinfo import SourceMapper, UnknownModuleError, demangle
from reuselens.analyzer.lineinfo import sass as sass_module
from reuselens.analyzer.lineinfo.paths import PathResolver
from tests.lineinfo.conftest import CU, FIXTURE_SRC, FIXTURES
from tests.lineinfo.nvdisasm_ref import find_tool
from tests.lineinfo.source_scan import function_ranges

WITH = "kernels.sm_90.lineinfo.cubin"
WITHOUT = "kernels.sm_90.nolineinfo.cubin"


@pytest.fixture
def run_dir(tmp_path):
    """A run directory as the collector writes it (docs/run-directory.md) holding two fixture modules."""
    modules = []
    for name in (WITH, WITHOUT):
        data = (FIXTURES / name).read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        (tmp_path / "modules").mkdir(exist_ok=True)
        shutil.copy(FIXTURES / name, tmp_path / "modules" / f"{sha}.cubin")
        modules.append({"sha256": sha, "path": f"modules/{sha}.cubin", "arch": "sm_90"})
    manifest = {"format": "reuselens-run", "version": 1, "cwd": FIXTURE_SRC, "modules": modules}
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    return tmp_path, modules[0]["sha256"], modules[1]["sha256"]


def test_lookup_with_prefix_map_gives_existing_workspace_files(run_dir):
    path, sha, _ = run_dir
    mapper = SourceMapper.from_run(path, prefix_map={FIXTURE_SRC + "/": str(CU) + "/"})
    loc = mapper.lookup(sha, "_Z5kernBPfPKfi", 0x80)
    assert loc.file == str(CU / "kernels.cu") and loc.exists and loc.column == 0
    assert loc.recorded_file == FIXTURE_SRC + "/kernels.cu"
    first, last = function_ranges(CU)[("kernels.cu", "kernB")]
    assert first <= loc.line <= last
    assert mapper.notes == []


def test_inline_chain_is_innermost_first_and_ends_in_the_kernel(run_dir):
    path, sha, _ = run_dir
    mapper = SourceMapper.from_run(path, prefix_map={FIXTURE_SRC: str(CU)})
    table = mapper.table(sha)
    size = table.elf.sections[table.function_symbol("_Z5kernBPfPKfi").shndx].size
    chains = [loc for pc in range(0, size, 16) if (loc := mapper.lookup(sha, "_Z5kernBPfPKfi", pc)) and loc.inline]
    assert chains
    deepest = max(chains, key=lambda loc: len(loc.inline))
    assert [f.function.split("(")[0] for f in deepest.inline] == ["sq", "poly", "combine", "kernB"][
        -len(deepest.inline) :
    ]
    assert (deepest.inline[0].file, deepest.inline[0].line) == (deepest.file, deepest.line)
    assert deepest.function == deepest.inline[0].function
    assert deepest.outermost == deepest.inline[-1]


def test_any_byte_of_an_instruction_maps_like_the_instruction(run_dir):
    """cp.async reports pc + 1 for its shared half: map the instruction that contains the PC."""
    path, sha, _ = run_dir
    mapper = SourceMapper.from_run(path)
    for pc in range(0, 0x400, 16):
        loc = mapper.lookup(sha, "_Z11call_kernelPfPKfi", pc)
        assert loc is not None
        assert mapper.lookup(sha, "_Z11call_kernelPfPKfi", pc + 1) == loc
        assert mapper.lookup(sha, "_Z11call_kernelPfPKfi", pc + 15) == loc


def test_outside_the_function_and_unknown_names(run_dir):
    path, sha, _ = run_dir
    mapper = SourceMapper.from_run(path)
    assert mapper.lookup(sha, "_Z5kernAPfPKfi", 1 << 20) is None
    assert mapper.lookup(sha, "_Z5kernAPfPKfi", -16) is None
    assert mapper.lookup(sha, "_Z7missingv", 0) is None
    assert mapper.notes == [f"module {sha[:12]}: has no function _Z7missingv"]
    with pytest.raises(UnknownModuleError, match="module deadbeef is not part of this run"):
        mapper.lookup("deadbeef", "_Z5kernAPfPKfi", 0)


def test_clone_of_a_noinline_callee(run_dir):
    path, sha, _ = run_dir
    mapper = SourceMapper.from_run(path)
    table = mapper.table(sha)
    clone = "$_Z11call_kernelPfPKfi$_Z6slowfnf"
    sym = table.function_symbol(clone)
    assert sym is not None and sym.value > 0
    # PCs are offsets in the code section, as the collector records them (docs/report-format.md): the clone's first
    # instruction is at its symbol's value there, under either name
    via_clone = mapper.lookup(sha, clone, sym.value)
    via_kernel = mapper.lookup(sha, "_Z11call_kernelPfPKfi", sym.value)
    assert via_clone == via_kernel
    assert via_clone.function == "call_kernel(float*, float const*, int)$slowfn(float)"
    last = sym.value + sym.size - 16
    assert mapper.lookup(sha, clone, last) == mapper.lookup(sha, "_Z11call_kernelPfPKfi", last)
    first, last = function_ranges(CU)[("kernels.cu", "slowfn")]
    assert first <= via_clone.line <= last


def test_kernel_location_is_the_first_line_of_the_kernel(run_dir):
    path, sha, nolines = run_dir
    mapper = SourceMapper.from_run(path)
    ranges = function_ranges(CU)
    for mangled, (file, name) in {
        "_Z5kernBPfPKfi": ("kernels.cu", "kernB"),
        "_Z11tmpl_kernelIfLi256EEvPT_PKS0_i": ("kernels.cu", "tmpl_kernel"),
        "c_kernel": ("kernels.cu", "c_kernel"),
    }.items():
        loc = mapper.kernel_location(sha, mangled)
        first, last = ranges[(file, name)]
        assert first <= loc.line <= last and loc.inline == ()
        assert loc.function == demangle(mangled)
    assert mapper.kernel_location(nolines, "_Z5kernBPfPKfi") is None


def test_no_line_info_module_is_reported_once(run_dir):
    path, sha, nolines = run_dir
    mapper = SourceMapper.from_run(path)
    assert mapper.lookup(nolines, "_Z5kernBPfPKfi", 0) is None
    assert mapper.lookup(nolines, "_Z5kernAPfPKfi", 16) is None
    assert mapper.notes == [
        f"module {nolines[:12]}: no line info; rebuild with -lineinfo (nvcc -lineinfo) to see findings on source lines"
    ]
    assert mapper.lookup(sha, "_Z5kernBPfPKfi", 0) is not None


def test_missing_source_files_are_named_once_with_the_fix(run_dir, tmp_path):
    path, sha, _ = run_dir
    moved = str(tmp_path / "moved")
    mapper = SourceMapper.from_run(path, prefix_map={FIXTURE_SRC: moved})
    loc = mapper.lookup(sha, "_Z5kernAPfPKfi", 0)
    mapper.lookup(sha, "_Z5kernAPfPKfi", 16)
    assert not loc.exists and loc.file == moved + "/kernels.cu"
    assert mapper.notes == [
        f"source file {moved}/kernels.cu not found (recorded in module {sha[:12]} as "
        f"{FIXTURE_SRC}/kernels.cu); if the build tree moved, map it with a path prefix map "
        "(reuselens.pathPrefixMap, or --prefix-map OLD=NEW)"
    ]


def test_each_cubin_is_parsed_once(run_dir):
    path, sha, _ = run_dir
    first = SourceMapper.from_run(path)
    second = SourceMapper.from_run(path, prefix_map={"/x": "/y"})
    assert first.table(sha) is second.table(sha)


def test_sass_text_when_nvdisasm_is_available(run_dir):
    path, sha, _ = run_dir
    if find_tool("nvdisasm") is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    mapper = SourceMapper.from_run(path)
    text = mapper.sass(sha, "_Z5kernBPfPKfi", 0)
    assert text.startswith("LDC R1, c[0x0][0x28]")  # every sm_90 kernel starts by loading its stack pointer
    assert mapper.sass(sha, "_Z5kernBPfPKfi", 0x13) == mapper.sass(sha, "_Z5kernBPfPKfi", 0x10)
    assert mapper.sass(sha, "_Z5kernBPfPKfi", 1 << 20) is None


def test_sass_disassembles_only_the_functions_asked_for(run_dir, monkeypatch):
    """Library modules hold hundreds of kernels: prepare_sass runs nvdisasm once per module, on the code
    sections of the functions asked for, and every instruction's text equals the whole-module listing: branch
    targets are named by their offset, not by nvdisasm's label numbers, which count over the sections printed."""
    path, sha, _ = run_dir
    if find_tool("nvdisasm") is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    data = (path / "modules" / f"{sha}.cubin").read_bytes()
    whole = sass_module.disassemble(data)
    calls = []
    real = sass_module.disassemble
    monkeypatch.setattr(
        "reuselens.analyzer.lineinfo.mapper.disassemble",
        lambda cubin, symbols=(): calls.append(sorted(symbols)) or real(cubin, symbols),
    )
    mapper = SourceMapper.from_run(path)
    table = mapper.table(sha)
    kernels = table.kernels()
    assert len(kernels) >= 3
    assert any("BRA `(.L_0x" in text for text in whole.values())  # branch targets by offset
    first, second, third = kernels[:3]
    only_first = real(data, [table.symbols.index(first)])
    assert {name for name, _ in only_first} == {table.elf.sections[first.shndx].name}
    mapper.prepare_sass({sha: [first.name, second.name]})
    assert len(calls) == 1 and len(calls[0]) == 2
    for sym in (first, second):
        section = table.elf.sections[sym.shndx].name
        offsets = [offset for (name, offset) in whole if name == section]
        assert offsets
        for offset in offsets:
            assert mapper.sass(sha, sym.name, offset - sym.value) == whole[(section, offset)]
    assert len(calls) == 1  # nothing disassembled twice
    third_section = table.elf.sections[third.shndx].name
    assert mapper.sass(sha, third.name, 0) == whole[(third_section, third.value)]
    assert len(calls) == 2 and len(calls[1]) == 1  # a function not prepared: its own section only


def test_sass_without_nvdisasm_says_how_to_get_it(run_dir, monkeypatch):
    path, sha, _ = run_dir
    monkeypatch.setattr(sass_module, "find_nvdisasm", lambda: None)
    mapper = SourceMapper.from_run(path)
    assert mapper.sass(sha, "_Z5kernBPfPKfi", 0) is None
    assert mapper.notes == ["nvdisasm not found; install it (pip install nvidia-cuda-nvdisasm) to see SASS"]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, r"not a run directory \(no run.json"),
        ("{not json", "unreadable run manifest"),
        ('{"format": "other"}', "run.json: not a ReuseLens run manifest"),
        ('{"format": "reuselens-run", "version": 2}', "run format version 2 is not supported"),
    ],
)
def test_bad_run_directories(tmp_path, content, message):
    if content is not None:
        (tmp_path / "run.json").write_text(content)
    with pytest.raises(RunDirectoryError, match=message):
        SourceMapper.from_run(tmp_path)


def test_module_file_missing_from_the_run(run_dir):
    path, sha, _ = run_dir
    (path / "modules" / f"{sha}.cubin").unlink()
    with pytest.raises(Exception, match="cannot read CUBIN") as info:
        SourceMapper.from_run(path).lookup(sha, "_Z5kernBPfPKfi", 0)
    from reuselens.analyzer.errors import MappingError

    assert isinstance(info.value, MappingError)


def test_path_resolver():
    resolver = PathResolver({"/build": "/home/me/src", "/build/gen/": "/tmp/gen/", "/b2": "w"}, "/cwd")
    assert resolver.resolve("/build/a/k.cu")[0] == "/home/me/src/a/k.cu"
    assert resolver.resolve("/build/gen/x.cu")[0] == "/tmp/gen/x.cu"  # longest prefix wins
    assert resolver.resolve("/build2/k.cu")[0] == "/build2/k.cu"  # only whole path components
    assert resolver.resolve("rel/k.cu")[0] == "/cwd/rel/k.cu"
    assert resolver.resolve("/build")[0] == "/home/me/src"
    assert PathResolver().resolve("rel/k.cu") == ("rel/k.cu", False)


def test_demangle():
    assert demangle("_Z11tmpl_kernelIfLi256EEvPT_PKS0_i") == "void tmpl_kernel<float, 256>(float*, float const*, int)"
    assert demangle("$_Z11call_kernelPfPKfi$_Z6slowfnf") == "call_kernel(float*, float const*, int)$slowfn(float)"
    assert (
        demangle("$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath") == "__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath"
    )
    assert demangle("c_kernel") == "c_kernel"
    assert demangle("_Zgarbage") == "_Zgarbage"
    assert (
        demangle(
            "__nv_static_32__e43aad3d_10_kernels_cu_53826c59__ZN43_GLOBAL__N__e43aad3d_10_kernels_cu_"
            "53826c5911anon_kernelEPi"
        )
        == "(anonymous namespace)::anon_kernel(int*)"
    )


@pytest.mark.parametrize(
    "module_path", ["/dev/zero", "../outside.cubin", "modules/../../outside.cubin", "modules/link.cubin"]
)
def test_module_paths_must_stay_inside_the_run_directory(tmp_path, module_path):
    # run.json is data: an absolute, `..` or symlinked module path would read any file, /dev/zero without end
    run = tmp_path / "run"
    (run / "modules").mkdir(parents=True)
    (run / "modules" / "link.cubin").symlink_to("/dev/zero")
    manifest = {
        "format": "reuselens-run",
        "version": 1,
        "cwd": str(tmp_path),
        "modules": [{"sha256": "aa", "path": "modules/aa.cubin"}, {"sha256": "m", "path": module_path}],
    }
    (run / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(RunDirectoryError) as info:
        SourceMapper.from_run(run)
    if module_path == "modules/link.cubin":  # only resolving the link shows that it leaves the directory
        expected = f"modules[1].path {module_path!r} is outside the run directory"
    else:  # the reader's schema refuses absolute and `..` paths as written
        expected = f"modules[1].path: expected a path inside the directory, found str {module_path!r}"
    assert str(info.value) == f"{run / 'run.json'}: {expected}"


def test_module_file_that_is_a_fifo_is_refused_not_waited_for(run_dir):
    path, sha, _ = run_dir
    cubin = path / "modules" / f"{sha}.cubin"
    cubin.unlink()
    os.mkfifo(cubin)
    with pytest.raises(Exception, match="not a regular file"):
        SourceMapper.from_run(path).lookup(sha, "_Z5kernBPfPKfi", 0)
