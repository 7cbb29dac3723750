"""Allocation call paths symbolised from host binaries built here with the system C compiler: DWARF 5 and 4, PIE
and non-PIE, with and without -g, and a missing module; offsets are return addresses minus the load bias, as
the collector records them, worked out from each binary's own line table rather than hard-coded."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from host_binaries import first_address_of_line, function_address
from run_dirs import RunWriter

from reuselens.analyzer.memory.analysis import analyze_run
from reuselens.analyzer.memory.symbols import Symbolizer

SOURCE = """#include <stdlib.h>

void *make_buffer(size_t n)
{
    void *p = malloc(n); /* allocation site */
    return p;
}

int main(void)
{
    free(make_buffer(64));
    return 0;
}
"""
SITE_LINE = SOURCE.splitlines().index("    void *p = malloc(n); /* allocation site */") + 1
NEXT_LINE = SITE_LINE + 1
CALL_LINE = SOURCE.splitlines().index("    free(make_buffer(64));") + 1
COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def build(tmp_path: Path, name: str, *flags: str) -> Path:
    if COMPILER is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH to build the host binary")
    source = tmp_path / "app.c"
    source.write_text(SOURCE)
    binary = tmp_path / name
    subprocess.run([COMPILER, "-O0", *flags, "-o", str(binary), str(source)], check=True, capture_output=True)
    return binary


@pytest.mark.parametrize(
    "flags",
    [("-g", "-fPIE", "-pie"), ("-gdwarf-4", "-fno-pie", "-no-pie"), ("-gdwarf-5", "-fno-pie", "-no-pie")],
    ids=["pie", "non-pie-dwarf4", "non-pie-dwarf5"],
)
def test_a_return_address_in_a_debug_build_gives_the_calls_function_file_and_line(tmp_path, flags):
    binary = build(tmp_path, "app", *flags)
    # A return address one byte into the site's line: offset - 1 is the line's first instruction.
    offset = first_address_of_line(binary, SITE_LINE) + 1
    with Symbolizer() as symbolizer:
        frame = symbolizer.frame(str(binary), offset)
        # The address where the next line starts, as a return address, still belongs to the call before it.
        boundary = symbolizer.frame(str(binary), first_address_of_line(binary, NEXT_LINE))
    assert (frame.function, Path(frame.file).name, frame.line) == ("make_buffer", "app.c", SITE_LINE)
    assert Path(frame.file) == (tmp_path / "app.c").resolve()
    assert boundary.line == SITE_LINE


def test_a_build_without_g_gives_the_function_and_says_there_is_no_debug_info(tmp_path):
    binary = build(tmp_path, "app", "-g0")
    offset = function_address(binary, "make_buffer") + 5
    with Symbolizer() as symbolizer:
        frame = symbolizer.frame(str(binary), offset)
    assert (frame.function, frame.file, frame.line) == ("make_buffer", None, None)
    assert frame.where() == "make_buffer (no debug info; build with -g)"


def test_a_missing_or_unreadable_module_gives_its_name_and_offset(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file")
    with Symbolizer() as symbolizer:
        assert symbolizer.frame(str(tmp_path / "gone.so"), 0x1234).function == "gone.so+0x1234"
        assert symbolizer.frame(str(text), 0x10).function == "notes.txt+0x10"
        # and sentences say why there is no line, without asking for -g (a run analysed on another machine)
        assert symbolizer.frame(str(tmp_path / "gone.so"), 0x1234).where() == (
            "gone.so+0x1234 (not symbolised: the module is not on this machine, has no symbols, or changed after the run)"
        )


def test_a_run_places_each_allocation_on_its_site_line_past_the_cuda_runtime_frames(tmp_path):
    binary = build(tmp_path, "app", "-g")
    site = first_address_of_line(binary, SITE_LINE) + 1
    run = RunWriter()
    runtime = [{"module": "/usr/local/cuda/lib64/libcudart.so.13", "offset": 0x5000}]
    collector = [{"module": "/opt/reuselens/libreuselens_collector.so", "offset": 0x900}]
    caller = {"module": str(binary), "offset": first_address_of_line(binary, CALL_LINE) + 1}
    buffer = run.alloc(4096, [*collector, *runtime, {"module": str(binary), "offset": site}, caller])
    run.free(buffer)
    analysis = analyze_run(run.write(tmp_path / "run"))
    path = analysis.timeline.objects[buffer].call_path
    assert [(frame.function, frame.line) for frame in path] == [("make_buffer", SITE_LINE), ("main", CALL_LINE)]
    assert [f.pattern for f in analysis.findings] == ["unused_allocation"]
    assert f"app.c:{SITE_LINE}" in analysis.findings[0].fix


@pytest.mark.parametrize("built", ["before the run", "after the run"])
def test_a_binary_rebuilt_after_the_run_is_not_read_for_its_lines(tmp_path, built):
    # A rebuilt program (or another one at the same path) would put the run's allocations on its own lines.
    binary = build(tmp_path, "app", "-g")
    run = RunWriter()
    buffer = run.alloc(4096, [{"module": str(binary), "offset": first_address_of_line(binary, SITE_LINE) + 1}])
    run.free(buffer)
    manifest = run.manifest()
    started = binary.stat().st_mtime + (5 if built == "before the run" else -3600)
    manifest["start_time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    (frame,) = analyze_run(run.write(tmp_path / "run", manifest)).timeline.objects[buffer].call_path
    if built == "before the run":
        assert (frame.function, frame.line) == ("make_buffer", SITE_LINE)
    else:
        assert (frame.file, frame.line) == (None, None) and frame.function.startswith("app+0x")
        assert frame.where().endswith("(not symbolised: the module is not on this machine, has no symbols, or "
                                      "changed after the run)")  # fmt: skip


def test_a_binary_without_debug_aranges_is_still_symbolised_from_its_line_table(tmp_path):
    # clang emits no .debug_aranges by default: the symbolizer then decodes every unit's line program.
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.skip("no objcopy on PATH to remove .debug_aranges")
    binary = build(tmp_path, "app", "-g")
    subprocess.run([objcopy, "--remove-section=.debug_aranges", str(binary)], check=True, capture_output=True)
    with binary.open("rb") as stream:
        assert not ELFFile(stream).has_section(".debug_aranges")
    with Symbolizer() as symbolizer:
        frame = symbolizer.frame(str(binary), first_address_of_line(binary, SITE_LINE) + 1)
    assert (frame.function, frame.line) == ("make_buffer", SITE_LINE)


STATIC_RUNTIME = """#include <stdlib.h>
void *libcudart_static_0123abcd(size_t n) { return malloc(n); }
int cudaMalloc(void **p, size_t n) { *p = libcudart_static_0123abcd(n); return 0; }
"""
STATIC_MAIN = """#include <stddef.h>
int cudaMalloc(void **p, size_t n);
int main(void)
{
    void *p;
    cudaMalloc(&p, 64); /* allocation site */
    return 0;
}
"""


def test_the_cuda_runtime_linked_into_the_program_is_no_allocation_site(tmp_path):
    # nvcc links cudart statically: its frames lie in the program's own module, without debug info
    if COMPILER is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH to build the host binary")
    (tmp_path / "runtime.c").write_text(STATIC_RUNTIME)
    (tmp_path / "app.c").write_text(STATIC_MAIN)
    subprocess.run([COMPILER, "-O0", "-c", "-o", str(tmp_path / "runtime.o"), str(tmp_path / "runtime.c")], check=True)
    binary = tmp_path / "app"
    main = [str(tmp_path / "app.c"), str(tmp_path / "runtime.o")]
    subprocess.run([COMPILER, "-O0", "-g", "-o", str(binary), *main], check=True, capture_output=True)
    site_line = STATIC_MAIN.splitlines().index("    cudaMalloc(&p, 64); /* allocation site */") + 1
    frames = [
        {"module": str(binary), "offset": function_address(binary, "libcudart_static_0123abcd") + 8},
        {"module": str(binary), "offset": function_address(binary, "cudaMalloc") + 8},
        {"module": str(binary), "offset": first_address_of_line(binary, site_line) + 1},
    ]
    run = RunWriter()
    buffer = run.alloc(4096, frames)
    run.free(buffer)
    analysis = analyze_run(run.write(tmp_path / "run"))
    path = analysis.timeline.objects[buffer].call_path
    assert [(frame.function, frame.line) for frame in path] == [("main", site_line)]


@pytest.mark.parametrize("which", ["built", "interpreter"])
def test_the_fast_symbol_table_reader_agrees_with_pyelftools(tmp_path, which):
    """symbols._functions_of reads 64-bit tables in one pass over their bytes; every function pyelftools lists,
    with its size and name, and nothing else, in the static and the dynamic table."""
    import sys

    from reuselens.analyzer.memory.symbols import _functions_of

    binary = build(tmp_path, "app", "-g") if which == "built" else Path(sys.executable).resolve()
    with binary.open("rb") as stream:
        elf = ELFFile(stream)
        tables = [t for t in (elf.get_section_by_name(n) for n in (".dynsym", ".symtab")) if t is not None]
        assert tables
        for table in tables:
            expected = {
                s["st_value"]: (s["st_size"], s.name)
                for s in table.iter_symbols()
                if s["st_info"]["type"] in ("STT_FUNC", "STT_GNU_IFUNC") and s["st_value"] and s.name
            }
            assert _functions_of(elf, table) == expected
            if which == "built" and table.name == ".symtab":
                assert "make_buffer" in {name for _, name in expected.values()}


INLINE = Path(__file__).resolve().parents[1] / "data" / "host_inline"  # README.md there: how it was built


@pytest.mark.parametrize(
    "offset, function, line",
    [(0x10BD, "make_buffers", 10), (0x10CA, "make_buffers", 11), (0x10E2, "main", 18)],
    ids=["inlined-float", "inlined-int", "direct-void"],
)
def test_an_allocation_through_the_inlined_cudaMalloc_template_is_placed_on_the_programs_call(offset, function, line):
    """At -O3 cuda_runtime.h's cudaMalloc<T> leaves no frame: the line table puts the call on the header's line and
    only DWARF's inlined-call records name the program's line (and the function it was inlined into)."""
    source = (INLINE / "alloc_inline.cu").read_text().splitlines()
    assert "cudaMalloc(" in source[line - 1]
    with Symbolizer() as symbolizer:
        frame = symbolizer.frame(str(INLINE / "alloc_inline"), offset)
    assert (frame.function, Path(frame.file).name, frame.line) == (function, "alloc_inline.cu", line)


def test_a_module_opened_ahead_is_the_one_the_next_symbolizer_reads(tmp_path, monkeypatch):
    """`reuselens profile` opens the program while it runs (symbols.open_ahead): the report's symbolizer then takes
    that module instead of reading the file again, and gives the same frames."""
    from reuselens.analyzer.memory import symbols

    binary = tmp_path / "alloc_inline"
    shutil.copy(INLINE / "alloc_inline", binary)
    with Symbolizer() as fresh:
        expected = fresh.frame(str(binary), 0x10BD)
    opened = []
    real_module = symbols._Module
    monkeypatch.setattr(symbols, "_Module", lambda path: opened.append(path) or real_module(path))
    symbols.open_ahead(str(binary))
    assert opened == [str(binary.resolve())]
    with Symbolizer() as symbolizer:
        assert symbolizer.frame(str(binary), 0x10BD) == expected
    assert opened == [str(binary.resolve())], "the symbolizer read the file a second time"


def test_a_module_rebuilt_after_it_was_opened_ahead_is_read_again(tmp_path, monkeypatch):
    from reuselens.analyzer.memory import symbols

    binary = tmp_path / "app"
    shutil.copy(INLINE / "alloc_inline", binary)
    symbols.open_ahead(str(binary))
    binary.unlink()  # a rebuild writes a new file: another inode, other symbols
    binary.write_bytes(b"not an ELF file")
    with Symbolizer() as symbolizer:
        assert symbolizer.frame(str(binary), 0x10BD).function == "app+0x10bd"


def test_opening_ahead_a_missing_or_foreign_file_is_silent(tmp_path):
    from reuselens.analyzer.memory import symbols

    text = tmp_path / "script.sh"
    text.write_text("#!/bin/sh\n")
    symbols.open_ahead(str(text))
    symbols.open_ahead(str(tmp_path / "missing"))
    assert str(text) not in symbols._OPENED_AHEAD and str(tmp_path / "missing") not in symbols._OPENED_AHEAD


def test_a_call_path_ends_at_main_without_reading_the_c_librarys_start_up(tmp_path, monkeypatch):
    # GIVEN an allocation whose recorded call path goes on below main, into the C library's start-up
    from reuselens.analyzer.memory import symbols

    binary = build(tmp_path, "app", "-g")
    run = RunWriter()
    site = {"module": str(binary), "offset": first_address_of_line(binary, SITE_LINE) + 1}
    caller = {"module": str(binary), "offset": first_address_of_line(binary, CALL_LINE) + 1}
    libc = tmp_path / "libc.so.6"
    shutil.copy(binary, libc)  # any ELF: it must not be read at all
    start_up = [{"module": str(libc), "offset": 0x29D90}, {"module": str(binary), "offset": 0x1000}]
    buffer = run.alloc(4096, [site, caller, *start_up])
    run.free(buffer)
    opened = []
    real_module = symbols._Module
    monkeypatch.setattr(symbols, "_Module", lambda path: opened.append(Path(path).name) or real_module(path))
    # WHEN the run's memory is analysed
    path = analyze_run(run.write(tmp_path / "run")).timeline.objects[buffer].call_path
    # THEN the path stops at main, and the C library's symbols are never read
    assert [(frame.function, frame.line) for frame in path] == [("make_buffer", SITE_LINE), ("main", CALL_LINE)]
    assert opened == ["app"]
