"""Host call-path frames to function, file and line, from the host binaries' ELF symbols and DWARF line tables.

The collector records a frame as (module path, offset): the return address minus the module's load bias, which is
an ELF virtual address of that module for PIE executables, non-PIE executables and shared libraries alike. A return
address points after the call, so the call's own line is the one at `offset - 1`.

A real application allocates from hundreds of places in a few modules, some of them huge (libtorch's DWARF runs to
gigabytes), so each module is opened once, and its line table is decoded one compilation unit at a time, only for
the units `.debug_aranges` says hold a looked-up address (all units when the table is absent).

Public API: :class:`Symbolizer` (one per analysis; caches per module), :func:`open_ahead`.
"""

from __future__ import annotations

import os
import struct
import threading
from bisect import bisect_right
from pathlib import Path
from typing import Any, NamedTuple

from elftools.elf.elffile import ELFFile

from reuselens.analyzer.lineinfo.demangle import demangle
from reuselens.analyzer.memory.timeline import Frame
from reuselens.analyzer.toolkit_paths import is_toolkit_header


class _LineRanges:
    """[start, end) address ranges of the decoded units' line rows, sorted by start, each with its file and line.
    Sequences of functions the linker discarded start at address 0 in a linked binary; real code starts above
    them, so the range with the greatest start at or below an address is the one that holds it."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int, str | None, int]] = []
        self.starts: list[int] = []

    def add(self, ranges: list[tuple[int, int, str | None, int]]) -> None:
        self.ranges = sorted(self.ranges + ranges, key=lambda r: (r[0], r[1]))
        self.starts = [r[0] for r in self.ranges]

    def find(self, address: int) -> tuple[str | None, int] | None:
        at = bisect_right(self.starts, address) - 1
        if at < 0 or address >= self.ranges[at][1]:
            return None
        return self.ranges[at][2], self.ranges[at][3]


class _Module:
    """One host ELF: its function symbols, and its DWARF line rows decoded per compilation unit on demand."""

    def __init__(self, path: str):
        self.path = path
        self.stream = open(path, "rb")  # noqa: SIM115 - kept open while the analysis decodes units lazily
        self.elf = ELFFile(self.stream)
        self.function_starts, self.functions = self._function_symbols()
        self.dwarf = self.elf.get_dwarf_info() if self.elf.has_section(".debug_line") else None
        self.aranges = self.dwarf.get_aranges() if self.dwarf is not None else None
        self.decoded_units: set[int] = set()
        self.all_decoded = False
        self.lines = _LineRanges()
        self.inlined: dict[int, list[_Inlined]] = {}  # unit offset -> its inlined calls, decoded on demand

    def _function_symbols(self) -> tuple[list[int], list[tuple[int, str]]]:
        symbols: dict[int, tuple[int, str]] = {}
        for name in (".dynsym", ".symtab"):  # the full table wins where both name an address
            table = self.elf.get_section_by_name(name)
            if table is None or not hasattr(table, "iter_symbols"):
                continue
            symbols.update(_functions_of(self.elf, table))
        starts = sorted(symbols)
        return starts, [symbols[s] for s in starts]

    def function_at(self, address: int) -> str | None:
        at = bisect_right(self.function_starts, address) - 1
        if at < 0:
            return None
        size, name = self.functions[at]
        if size and address >= self.function_starts[at] + size:
            return None
        return demangle(name)

    def line_at(self, address: int) -> tuple[str | None, int] | None:
        if self.dwarf is None:
            return None
        unit = self.aranges.cu_offset_at_addr(address) if self.aranges is not None else None
        if unit is not None and unit not in self.decoded_units:
            self.decoded_units.add(unit)
            self.lines.add(_unit_ranges(self.dwarf, self.dwarf.get_CU_at(unit)))
        found = self.lines.find(address)
        if found is None and not self.all_decoded:  # no aranges, or they miss this unit: decode the rest once
            self.all_decoded = True
            rest: list[tuple[int, int, str | None, int]] = []
            for cu in self.dwarf.iter_CUs():
                if cu.cu_offset not in self.decoded_units:
                    self.decoded_units.add(cu.cu_offset)
                    rest += _unit_ranges(self.dwarf, cu)
            self.lines.add(rest)  # one sort for all units, not one per unit
            found = self.lines.find(address)
        return found

    def inline_calls(self, address: int) -> list[tuple[str | None, int, str | None]]:
        """The calls that inlined the code at `address`, innermost first: (file, line) of each call and the name
        of the function it was inlined into (None for the outermost: the symbol's function). At -O2 and above a
        call through an inline wrapper (cuda_runtime.h's cudaMalloc<T>) leaves no frame of its own: the line
        table puts its code on the wrapper's line, and only these calls name the program's line."""
        if self.dwarf is None:
            return []
        unit = self.aranges.cu_offset_at_addr(address) if self.aranges is not None else None
        units = [unit] if unit is not None else [cu.cu_offset for cu in self.dwarf.iter_CUs()]
        holding: list[_Inlined] = []
        for offset in units:
            if offset not in self.inlined:
                self.inlined[offset] = _inlined_calls(self.dwarf, self.dwarf.get_CU_at(offset))
            holding += [call for call in self.inlined[offset] if any(lo <= address < hi for lo, hi in call.ranges)]
        holding.sort(key=lambda call: -call.depth)
        return [
            (call.file, call.line, holding[k + 1].name if k + 1 < len(holding) else None)
            for k, call in enumerate(holding)
        ]


class _Inlined(NamedTuple):
    ranges: list[tuple[int, int]]
    depth: int  # DIE nesting: deeper is inlined into shallower
    file: str | None  # where the call is
    line: int
    name: str | None  # the inlined function


def _inlined_calls(dwarf: Any, cu: Any) -> list[_Inlined]:
    """Every DW_TAG_inlined_subroutine of the unit with an address range and a call line."""
    program = dwarf.line_program_for_CU(cu)
    names = _file_names(program, cu) if program is not None else {}
    top = cu.get_top_DIE()
    base_attr = top.attributes.get("DW_AT_low_pc")
    unit_base = base_attr.value if base_attr is not None else 0
    calls: list[_Inlined] = []
    depth_of: dict[int, int] = {top.offset: 0}
    for die in cu.iter_DIEs():
        parent = die.get_parent()
        depth = depth_of.get(parent.offset, 0) + 1 if parent is not None else 0
        if die.has_children:
            depth_of[die.offset] = depth
        if die.tag != "DW_TAG_inlined_subroutine":
            continue
        attrs = die.attributes
        if "DW_AT_call_line" not in attrs:
            continue
        ranges = _die_ranges(dwarf, cu, die, unit_base)
        if not ranges:
            continue
        call_file = attrs.get("DW_AT_call_file")
        calls.append(
            _Inlined(
                ranges,
                depth,
                names.get(call_file.value) if call_file is not None else None,
                attrs["DW_AT_call_line"].value,
                _origin_name(die),
            )
        )
    return calls


def _die_ranges(dwarf: Any, cu: Any, die: Any, unit_base: int) -> list[tuple[int, int]]:
    attrs = die.attributes
    if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
        low, high = attrs["DW_AT_low_pc"].value, attrs["DW_AT_high_pc"]
        return [(low, high.value if high.form == "DW_FORM_addr" else low + high.value)]
    if "DW_AT_ranges" not in attrs:
        return []
    try:
        entries = dwarf.range_lists().get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu)
    except Exception:  # noqa: BLE001 - a range list pyelftools cannot read: the call is not placed
        return []
    base, ranges = unit_base, []
    for entry in entries:
        if hasattr(entry, "base_address"):
            base = entry.base_address
        elif entry.is_absolute:
            ranges.append((entry.begin_offset, entry.end_offset))
        else:
            ranges.append((base + entry.begin_offset, base + entry.end_offset))
    return ranges


def _origin_name(die: Any) -> str | None:
    """The inlined function's name (demangled linkage name where there is one)."""
    try:
        origin = die.get_DIE_from_attribute("DW_AT_abstract_origin")
    except Exception:  # noqa: BLE001 - no or unreadable origin
        return None
    for key in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name"):
        if key in origin.attributes:
            return demangle(_text(origin.attributes[key].value))
    name = origin.attributes.get("DW_AT_name")
    return _text(name.value) if name is not None else None


_FUNCTION_TYPES = (2, 10)  # STT_FUNC, STT_GNU_IFUNC
_ELF64_SYMBOL = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size


def _functions_of(elf: ELFFile, table: Any) -> dict[int, tuple[int, str]]:
    """{address: (size, name)} of a symbol table's named functions. A 64-bit little-endian table (every CUDA host)
    is read in one pass over its bytes: pyelftools' per-symbol parsing took 0.3 s for a CUDA sample's 7,000
    symbols (static cudart), paid by every `reuselens memory` and object-level profile. Others go through it."""
    if not (elf.elfclass == 64 and elf.little_endian and table["sh_entsize"] == _ELF64_SYMBOL.size):
        return {
            symbol["st_value"]: (symbol["st_size"], symbol.name)
            for symbol in table.iter_symbols()
            if symbol["st_info"]["type"] in ("STT_FUNC", "STT_GNU_IFUNC") and symbol["st_value"] and symbol.name
        }
    data = table.data()
    strings = elf.get_section(table["sh_link"]).data()
    functions: dict[int, tuple[int, str]] = {}
    for name, info, _, _, value, size in _ELF64_SYMBOL.iter_unpack(data[: len(data) - len(data) % _ELF64_SYMBOL.size]):
        if info & 0xF in _FUNCTION_TYPES and value and name and strings[name : name + 1] not in (b"\0", b""):
            functions[value] = (size, strings[name : strings.index(b"\0", name)].decode("utf-8", "replace"))
    return functions


def _unit_ranges(dwarf: Any, cu: Any) -> list[tuple[int, int, str | None, int]]:
    """(start, end, file, line) of each row of the unit's line program up to the next row of its sequence."""
    program = dwarf.line_program_for_CU(cu)
    if program is None:
        return []
    names = _file_names(program, cu)
    ranges: list[tuple[int, int, str | None, int]] = []
    previous = None
    for entry in program.get_entries():
        state = entry.state
        if state is None:
            continue
        if previous is not None and state.address > previous.address:
            ranges.append((previous.address, state.address, names.get(previous.file), previous.line))
        previous = None if state.end_sequence else state
    return ranges


def _file_names(program: Any, cu: Any) -> dict[int, str]:
    """File register value -> path. DWARF 5 numbers files and directories from 0 (entry 0 is the unit itself);
    DWARF 2-4 number files from 1 and directory 0 is the unit's compilation directory."""
    header = program.header
    version = header["version"]
    top = cu.get_top_DIE()
    comp_dir_attr = top.attributes.get("DW_AT_comp_dir")
    comp_dir = _text(comp_dir_attr.value) if comp_dir_attr is not None else ""
    directories = [_text(d) for d in header["include_directory"]]
    names = {}
    for index, entry in enumerate(header["file_entry"]):
        number = index if version >= 5 else index + 1
        if version >= 5:
            directory = directories[entry.dir_index] if entry.dir_index < len(directories) else ""
        else:
            directory = comp_dir if entry.dir_index == 0 else _entry(directories, entry.dir_index - 1)
        path = os.path.join(comp_dir, directory, _text(entry.name))
        names[number] = os.path.normpath(path)
    return names


def _entry(items: list[str], index: int) -> str:
    return items[index] if 0 <= index < len(items) else ""


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# Modules opened before their Symbolizer exists (open_ahead): real path -> (the file's identity when opened, module).
_OPENED_AHEAD: dict[str, tuple[tuple[int, int, int, int], _Module]] = {}
_OPENED_AHEAD_LOCK = threading.Lock()


def _identity(path: str) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def open_ahead(path: str) -> None:
    """Open the module at `path` (its ELF headers, function symbols and DWARF index) for the next Symbolizer of
    this process to use: `reuselens profile` opens the program's binary while the program runs, so the memory
    report after its exit starts with the program's symbols read. Never raises: a module that cannot be opened
    here is tried again, and reported, by the Symbolizer."""
    try:
        real = os.path.realpath(path)
        identity = _identity(real)
        module = _Module(real)
    except Exception:  # noqa: BLE001 - missing, unreadable or not ELF: the Symbolizer says so later
        return
    with _OPENED_AHEAD_LOCK:
        previous = _OPENED_AHEAD.pop(real, None)
        _OPENED_AHEAD[real] = (identity, module)
    if previous is not None:
        previous[1].stream.close()


def _take_opened_ahead(path: str) -> _Module | None:
    """The module open_ahead opened for `path`, now owned by the caller, if the file is still the one it read."""
    with _OPENED_AHEAD_LOCK:
        entry = _OPENED_AHEAD.pop(os.path.realpath(path), None)
    if entry is None:
        return None
    identity, module = entry
    try:
        unchanged = _identity(module.path) == identity
    except OSError:
        unchanged = False
    if not unchanged:  # rebuilt or replaced since: read it afresh
        module.stream.close()
        return None
    return module


class Symbolizer:
    """Frames of one run; each module is read at most once, and a module that cannot be read is tried once.

    `run_started` (seconds since the epoch): a module modified after it is not read. It is not the binary the run
    executed (rebuilt since, or another program at the same path), and its lines would be wrong ones: its frames
    stay unsymbolised, named by offset, and `changed` lists it."""

    def __init__(self, run_started: float | None = None) -> None:
        self._modules: dict[str, _Module | None] = {}
        self._frames: dict[tuple[str, int], Frame] = {}
        self._run_started = run_started
        self.changed: set[str] = set()

    def frame(self, module: str, offset: int) -> Frame:
        """The function, file and line of the call whose return address is `offset` in `module`. A module
        without DWARF gives file and line None (sentences then say "no debug info"); a module that is missing or
        not a readable ELF gives the function `<basename>+0x<offset>`."""
        key = (module, offset)
        if key not in self._frames:
            self._frames[key] = self._symbolize(module, offset)
        return self._frames[key]

    def close(self) -> None:
        for loaded in self._modules.values():
            if loaded is not None:
                loaded.stream.close()
        self._modules.clear()

    def _symbolize(self, module: str, offset: int) -> Frame:
        fallback = Frame(f"{Path(module).name}+{offset:#x}", None, None)
        loaded = self._load(module)
        if loaded is None:
            return fallback
        call = max(offset - 1, 0)
        try:
            function = loaded.function_at(call)
            place = loaded.line_at(call)
        except Exception:  # noqa: BLE001 - corrupt DWARF makes pyelftools raise many types; keep the frame
            place = None
            function = None
        if place is None:
            return Frame(function or fallback.function, None, None)
        file, line = place
        if file is not None and is_toolkit_header(file):  # an inlined wrapper: the program's call that inlined it
            try:
                calls = loaded.inline_calls(call)
            except Exception:  # noqa: BLE001 - corrupt DWARF: keep the header's line (the frame is then skipped)
                calls = []
            for call_file, call_line, inlined_into in calls:
                if call_file is not None and not is_toolkit_header(call_file):
                    return Frame(inlined_into or function or fallback.function, call_file, call_line or None)
        return Frame(function or fallback.function, file, line or None)

    def _load(self, module: str) -> _Module | None:
        if module not in self._modules and self._changed_since_the_run(module):
            self.changed.add(module)
            self._modules[module] = None
        if module not in self._modules:
            try:
                self._modules[module] = _take_opened_ahead(module) or _Module(module)
            except Exception:  # noqa: BLE001 - missing, unreadable or not ELF: pyelftools has no single error type
                self._modules[module] = None
        return self._modules[module]

    def _changed_since_the_run(self, module: str) -> bool:
        if self._run_started is None:
            return False
        try:
            # run.json's start time has whole seconds; a binary built in the second the run started is the one
            return os.stat(module).st_mtime > self._run_started + 1.0
        except OSError:
            return False

    def __enter__(self) -> Symbolizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
