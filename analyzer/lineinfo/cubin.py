"""One CUBIN's line table, attributed to its functions: PC offset -> row (file, line, inline chain).

How a row reaches a function (research/dwarf.md §1-2):
* ptxas emits one sequence per `.text.<mangled>` section; its DW_LNE_set_address operand is 0 and is
  relocated (R_CUDA_64, RELA on sm_90+, REL on sm_80/89) against the function's symbol. The relocation at the
  operand's offset gives the section, `st_value + addend` the base. Sequences without a relocation are
  nvlink's leftovers for kernels it dropped (-rdc) and are skipped: address 0 would alias a real kernel.
* Several rows at one address: the last is the innermost location, earlier ones are its call sites.
* A row covers [its address, next row's address); the last row before end_sequence covers the tail.
Function attribution inside a section (kernel vs `$kernel$callee` clones) uses the symtab FUNC symbols.
"""

from __future__ import annotations

import bisect
import posixpath
from dataclasses import dataclass
from typing import NamedTuple

from reuselens.analyzer.lineinfo.dieinfo import InlineRange, read_debug_info
from reuselens.analyzer.lineinfo.elf import EM_CUDA, SHT_NOBITS, STT_FUNC, ElfFile, Relocation, Section, Symbol
from reuselens.analyzer.lineinfo.errors import ElfFormatError, LineTableError
from reuselens.analyzer.lineinfo.lineprogram import LineProgram, Row, Sequence, parse_debug_line

R_CUDA_64 = 2
SHF_EXECINSTR = 0x4
# Field positions of a row tuple (lineprogram.Row).
_ADDRESS, _FILE, _LINE, _COLUMN, _INLINED_AT, _FUNC_NAME, _SEGMENT = range(7)
MAX_INLINE_DEPTH = 512  # deeper chains are corrupt (ptxas has no such limit documented; real ones are < 20)


def cuda_arch(elf: ElfFile) -> int | None:
    """SM version of a CUBIN (90 for sm_90): bits 8-15 of e_flags (research/dwarf.md §1)."""
    if elf.machine != EM_CUDA:
        return None
    return (elf.flags >> 8) & 0xFF or None


class RowRef(NamedTuple):
    """A row of one sequence; `index` is 0-based in `sequence.rows`."""

    sequence: Sequence
    index: int

    @property
    def row(self) -> Row:
        return Row(*self.sequence.rows[self.index])


class RawFrame(NamedTuple):
    """One level of an inline chain before paths are resolved and names demangled."""

    function: str  # mangled (or ptxas `$`-joined) name, '' when unknown
    path: str  # as recorded: directory joined with file name, normalized; may be relative
    line: int
    column: int


@dataclass
class _SectionIndex:
    """Sorted, non-overlapping intervals of one `.text.*` section."""

    starts: list[int]
    ends: list[int]
    sequences: list[Sequence]
    rows: list[int]  # row index in its sequence
    owners: list[str]  # the FUNC symbol (kernel or `$kernel$callee` clone) holding each interval
    contexts: list[tuple[InlineRange, ...]]  # -G: .debug_info inline ranges holding it, innermost first

    def ref(self, i: int) -> RowRef:
        return RowRef(self.sequences[i], self.rows[i])


class CubinLineTable:
    """Parsed line info of one CUBIN. Immutable after construction, so it can be shared and cached."""

    def __init__(self, data: bytes):
        self.elf = ElfFile.parse(data)
        if self.elf.machine != EM_CUDA:
            raise ElfFormatError(f"not a CUBIN (ELF machine {self.elf.machine}, expected EM_CUDA {EM_CUDA})")
        self.arch = cuda_arch(self.elf)
        self.symbols = self.elf.symbols()
        self._functions = _functions_by_section(self.elf, self.symbols)
        self._by_name = _function_names(self.symbols, self._functions)
        self.units: list[LineProgram] = []
        self._debug_str = b""
        self._str_bases: dict[int, int] = {}
        self._index: dict[int, _SectionIndex] = {}
        self.orphan_sequences = 0
        self.comp_dir: str | None = None
        self._paths: dict[tuple[int, int], str] = {}
        self._strings: dict[tuple[int, int], str] = {}
        self._inlines: dict[int, list[InlineRange]] = {}
        self._debug_info = None
        self._load_line_info()

    # -- public queries -------------------------------------------------------------------------------
    @property
    def has_line_info(self) -> bool:
        return bool(self._index)

    def functions(self) -> list[str]:
        """Names of every FUNC symbol that has code, in section order."""
        return [sym.name for syms in self._functions.values() for sym in syms]

    def kernels(self) -> list[Symbol]:
        """The functions that own a `.text.<name>` section (kernels, and every device function at -G)."""
        return [
            s
            for syms in self._functions.values()
            for s in syms
            if s.value == 0 and self.elf.sections[s.shndx].name == ".text." + s.name
        ]

    def function_symbol(self, name: str) -> Symbol | None:
        return self._by_name.get(name)

    def section_offset(self, function: str, pc: int) -> tuple[Symbol, int] | None:
        """(symbol, offset in its section) for a PC as the collector records it: already the offset in `function`'s
        code section (mapper.lookup)."""
        sym = self._by_name.get(function)
        if sym is None or pc < 0:
            return None
        return sym, pc

    def row_at(self, shndx: int, offset: int) -> RowRef | None:
        """The innermost row covering byte `offset` of section `shndx` (any byte of an instruction)."""
        index = self._index.get(shndx)
        if index is None:
            return None
        i = bisect.bisect_right(index.starts, offset) - 1
        if i < 0 or offset >= index.ends[i]:
            return None
        return index.ref(i)

    def containing_function(self, shndx: int, offset: int) -> Symbol | None:
        """The FUNC symbol with the smallest [value, value+size) range holding `offset` in section shndx."""
        best = None
        for sym in self._functions.get(shndx, ()):
            if sym.value <= offset < sym.value + max(sym.size, 1):
                if best is None or sym.size < best.size:
                    best = sym
        return best

    def section_rows(self, shndx: int) -> list[tuple[int, int, RowRef]]:
        """Every (start, end, row) interval of a section, in address order."""
        index = self._index.get(shndx)
        if index is None:
            return []
        return [(index.starts[i], index.ends[i], index.ref(i)) for i in range(len(index.starts))]

    def section_index(self, shndx: int) -> _SectionIndex | None:
        """The interval arrays of a section (for bulk lookups); intervals never straddle a function start."""
        return self._index.get(shndx)

    def chain(self, ref: RowRef, outer_function: str) -> list[RawFrame]:
        """Frames from the innermost location outwards; the last frame is in `outer_function`.

        Follows `inlined_at` (1-based row index in the same sequence). A reference that is out of range or
        revisits a row ends the chain, so corrupt input cannot loop.
        """
        rows = ref.sequence.rows
        unit = ref.sequence.unit
        frames = []
        seen = set()
        row = rows[ref.index]
        while row[_INLINED_AT] and len(frames) < MAX_INLINE_DEPTH:
            frames.append(
                RawFrame(
                    self.debug_string(unit, row[_FUNC_NAME]), self.file_path(unit, row[_FILE]), row[_LINE], row[_COLUMN]
                )
            )
            target = row[_INLINED_AT] - 1
            if not 0 <= target < len(rows) or target in seen:
                break
            seen.add(target)
            row = rows[target]
        frames.append(RawFrame(outer_function, self.file_path(unit, row[_FILE]), row[_LINE], row[_COLUMN]))
        return frames

    def context_chain(
        self, ref: RowRef, context: tuple[InlineRange, ...], outer_function: str
    ) -> list[RawFrame] | None:
        """Frames of a -G row inside `.debug_info` inline ranges (innermost first): the row's own file:line in
        the innermost callee, then each range's call site in its caller, the last one in `outer_function`.

        ptxas's DIE ranges and line rows disagree at some boundaries (a row of sq() just past sq's range).
        A chain is used only if every level is consistent with the declarations: the function declared last
        at or before each frame's line must be the function the frame names. Otherwise None: no chain
        rather than a wrong one."""
        unit = ref.sequence.unit
        row = ref.sequence.rows[ref.index]
        info = self._debug_info
        if info is None or context[0].unit_offset != unit.offset:
            return None
        if info.function_at(unit.offset, row[_FILE], row[_LINE]) != context[0].function:
            return None
        frames = [RawFrame(context[0].function, self.file_path(unit, row[_FILE]), row[_LINE], row[_COLUMN])]
        for k, inline in enumerate(context):
            caller = context[k + 1].function if k + 1 < len(context) else outer_function
            if info.function_at(inline.unit_offset, inline.call_file, inline.call_line) != caller:
                return None
            frames.append(RawFrame(caller, self.file_path(unit, inline.call_file), inline.call_line, 0))
        return frames

    def declared_function(self, ref: RowRef) -> str | None:
        """-G: the function whose declaration holds the row's line (see context_chain), else None."""
        info = self._debug_info
        if info is None or not info.declarations:
            return None
        row = ref.sequence.rows[ref.index]
        return info.function_at(ref.sequence.unit.offset, row[_FILE], row[_LINE])

    def inlined_frame(self, unit: LineProgram, row: tuple) -> RawFrame:
        """The frame of a row inside inlined code: its callee's name and its own file:line."""
        return RawFrame(
            self.debug_string(unit, row[_FUNC_NAME]), self.file_path(unit, row[_FILE]), row[_LINE], row[_COLUMN]
        )

    def outer_frame(self, unit: LineProgram, row: tuple, function: str) -> RawFrame:
        """The frame of a row that is not inlined: code of `function` (the symbol holding the PC)."""
        return RawFrame(function, self.file_path(unit, row[_FILE]), row[_LINE], row[_COLUMN])

    def file_path(self, unit: LineProgram, number: int) -> str:
        """Path of file `number` as the line table records it: include dir joined with the name."""
        key = (unit.index, number)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = self._file_path(unit, number)
        return path

    def _file_path(self, unit: LineProgram, number: int) -> str:
        entry = unit.file_entry(number)
        if entry is None:
            return ""
        name = entry.name
        if not posixpath.isabs(name):
            directory = None
            if 1 <= entry.dir_index <= len(unit.include_dirs):
                directory = unit.include_dirs[entry.dir_index - 1]
            if directory is not None and not posixpath.isabs(directory) and self.comp_dir:
                directory = posixpath.join(self.comp_dir, directory)
            if directory is None:
                directory = self.comp_dir
            if directory:
                name = posixpath.join(directory, name)
        # ptxas records "<cwd>/../src" unnormalized; nvdisasm prints it so, users need it normalized.
        return posixpath.normpath(name)

    def debug_string(self, unit: LineProgram, offset: int) -> str:
        """Mangled name at `offset` of `.debug_str`, rebased for later units of an nvlink output."""
        key = (unit.index, offset)
        name = self._strings.get(key)
        if name is None:
            name = self._strings[key] = self._debug_string(unit, offset)
        return name

    def _debug_string(self, unit: LineProgram, offset: int) -> str:
        base = self._str_bases.get(unit.index, 0)
        start = base + offset
        data = self._debug_str
        if start >= len(data):
            return ""
        end = data.find(b"\0", start)
        return data[start : end if end >= 0 else len(data)].decode("utf-8", "backslashreplace")

    # -- construction ---------------------------------------------------------------------------------
    def _load_line_info(self) -> None:
        section = self.elf.section_by_name(".debug_line")
        if section is None:
            return
        debug_str = self.elf.section_by_name(".debug_str")
        if debug_str is not None:
            self._debug_str = self.elf.section_data(debug_str)
        self.units = parse_debug_line(self.elf.section_data(section))
        self._str_bases = _string_bases(self.units, self._debug_str)
        debug_info = read_debug_info(self.elf, self.symbols)
        self.comp_dir = debug_info.comp_dir
        self._inlines = debug_info.inlines
        self._debug_info = debug_info
        resolver = _AddressResolver(self.elf, section)
        intervals: dict[int, list[tuple[int, int, Sequence, int]]] = {}
        for unit in self.units:
            for sequence in unit.sequences:
                if not self._add_sequence(sequence, resolver, intervals):
                    self.orphan_sequences += 1
        for shndx, items in intervals.items():
            if not items:
                continue
            if any(items[j][0] > items[j + 1][0] for j in range(len(items) - 1)):
                items.sort(key=lambda item: item[0])
            self._index[shndx] = self._split_by_function(shndx, items)

    def _split_by_function(self, shndx: int, items: list[tuple[int, int, Sequence, int]]) -> _SectionIndex:
        """Cut intervals at function boundaries, so each has one owner (a row may run into a clone), and
        drop overlaps (the earlier sequence keeps its bytes)."""
        inlines = self._inlines.get(shndx, [])
        cuts = sorted(
            {b for sym in self._functions.get(shndx, ()) for b in (sym.value, sym.value + sym.size)}
            | {b for r in inlines for b in (r.low, r.high)}
        )
        lo, hi = items[0][0], max(item[1] for item in items)
        if not any(lo < c < hi for c in cuts) and all(items[j][1] <= items[j + 1][0] for j in range(len(items) - 1)):
            # One function owns every interval and none overlap: the usual kernel without clones.
            owner = self.containing_function(shndx, lo)
            context = _context(inlines, lo)
            return _SectionIndex(
                [i[0] for i in items],
                [i[1] for i in items],
                [i[2] for i in items],
                [i[3] for i in items],
                [owner.name if owner else ""] * len(items),
                [context] * len(items),
            )
        index = _SectionIndex([], [], [], [], [], [])
        for start, end, sequence, row in items:
            if index.ends and start < index.ends[-1]:
                start = index.ends[-1]
                if start >= end:
                    continue
            k = bisect.bisect_right(cuts, start)
            while start < end:
                stop = cuts[k] if k < len(cuts) and cuts[k] < end else end
                owner = self.containing_function(shndx, start)
                index.starts.append(start)
                index.ends.append(stop)
                index.sequences.append(sequence)
                index.rows.append(row)
                index.owners.append(owner.name if owner else "")
                index.contexts.append(_context(inlines, start))
                start, k = stop, k + 1
        return index

    def _add_sequence(
        self,
        sequence: Sequence,
        resolver: "_AddressResolver",
        intervals: dict[int, list[tuple[int, int, Sequence, int]]],
    ) -> bool:
        bases = [resolver.resolve(segment) for segment in sequence.segments]
        if not bases or all(b is None for b in bases):
            return False
        rows = sequence.rows
        if len(bases) == 1:
            self._add_single_segment(sequence, bases[0], intervals)
            return True
        placed = []
        shifts = [None if b is None else (b[0], b[1] - seg.value) for b, seg in zip(bases, sequence.segments)]
        for row in rows:
            shift = shifts[row[_SEGMENT]] if row[_SEGMENT] >= 0 else None
            placed.append(None if shift is None else (shift[0], shift[1] + row[_ADDRESS]))
        for i in range(len(rows) - 1):
            here, nxt = placed[i], placed[i + 1]
            if here is None:
                continue
            shndx, start = here
            if nxt is not None and nxt[0] == shndx:
                if nxt[1] == start:
                    continue  # a later row at the same address is more inner: it wins
                end = nxt[1]
            else:
                end = self.elf.sections[shndx].size if shndx < len(self.elf.sections) else start
            if end > start:
                intervals.setdefault(shndx, []).append((start, end, sequence, i))
        return True

    def _add_single_segment(
        self, sequence: Sequence, base: tuple[int, int], intervals: dict[int, list[tuple[int, int, Sequence, int]]]
    ) -> None:
        """The usual case (one DW_LNE_set_address per sequence), in one pass."""
        shndx, shift = base[0], base[1] - sequence.segments[0].value
        out = intervals.setdefault(shndx, [])
        rows = sequence.rows
        for i in range(len(rows) - 1):
            start, end = rows[i][0], rows[i + 1][0]
            if end > start:  # equal: a later row at the same address is more inner and wins
                out.append((start + shift, end + shift, sequence, i))


class _AddressResolver:
    """Maps a DW_LNE_set_address operand to (section index, address in that section)."""

    def __init__(self, elf: ElfFile, line_section: Section):
        self.elf = elf
        self.symbols = elf.symbols()
        self.relocs: dict[int, Relocation] = {}
        self.rela = False
        reloc_sections = elf.relocation_sections_for(line_section)
        self.has_relocations = bool(reloc_sections)
        for rs in reloc_sections:
            for reloc in elf.relocations(rs):
                self.relocs[reloc.offset] = reloc
        self.exec_sections = [s for s in elf.sections if s.flags & SHF_EXECINSTR and s.addr]

    def resolve(self, segment) -> tuple[int, int] | None:
        if not self.has_relocations:
            return self._by_address(segment.value)
        reloc = self.relocs.get(segment.operand_offset)
        if reloc is None:
            return None  # nvlink keeps line info of kernels it dropped, without relocation
        if reloc.type != R_CUDA_64 or segment.operand_size != 8:
            raise LineTableError(f"unsupported relocation type {reloc.type} on .debug_line")
        if not 0 < reloc.symbol < len(self.symbols):
            raise LineTableError(f"relocation on .debug_line names symbol {reloc.symbol}, which does not exist")
        sym = self.symbols[reloc.symbol]
        if not 0 < sym.shndx < len(self.elf.sections):
            return None
        addend = reloc.addend if reloc.addend is not None else segment.value  # REL: implicit addend
        return sym.shndx, sym.value + addend

    def _by_address(self, address: int) -> tuple[int, int] | None:
        """Unrelocated tables (not produced by nvcc 11-13): find the executable section by sh_addr."""
        for s in self.exec_sections:
            if s.addr <= address < s.addr + s.size:
                return s.index, address - s.addr
        return None


def _functions_by_section(elf: ElfFile, symbols: list[Symbol]) -> dict[int, list[Symbol]]:
    """FUNC symbols by section, for sections whose bytes are in the file: a function in a NOBITS section has no
    code, and its section's size (unchecked for NOBITS) must not set how far callers walk."""
    out: dict[int, list[Symbol]] = {}
    for sym in symbols:
        if (
            sym.type == STT_FUNC
            and sym.name
            and 0 < sym.shndx < len(elf.sections)
            and elf.sections[sym.shndx].type != SHT_NOBITS
        ):
            out.setdefault(sym.shndx, []).append(sym)
    for syms in out.values():
        syms.sort(key=lambda s: s.value)
    return out


def _function_names(symbols: list[Symbol], functions: dict[int, list[Symbol]]) -> dict[str, Symbol]:
    by_name: dict[str, Symbol] = {}
    for syms in functions.values():
        for sym in syms:
            # A GLOBAL definition wins over a LOCAL one of the same name.
            if sym.name not in by_name or sym.bind == 1:
                by_name[sym.name] = sym
    return by_name


def _context(inlines: list[InlineRange], offset: int) -> tuple[InlineRange, ...]:
    """The inline ranges holding `offset`, innermost (deepest) first."""
    holding = [r for r in inlines if r.low <= offset < r.high]
    return tuple(sorted(holding, key=lambda r: -r.depth))


def _string_bases(units: list[LineProgram], debug_str: bytes) -> dict[int, int]:
    """Where each unit's `.debug_str` starts in an nvlink output (research/dwarf.md §3, pitfall).

    nvlink concatenates the units' `.debug_str` sections in unit order but does not relocate the name
    offsets of the 0x90 ops. Unit k's strings therefore start where the last string named by units < k
    ends. The guess is accepted only if every offset of unit k then lands on a string start; otherwise the
    names of that unit are left out (base past the end) rather than shown wrong.
    """
    if len(units) < 2:
        return {}
    bases = {}
    base = 0
    for unit in units:
        offsets = {row[_FUNC_NAME] for seq in unit.sequences for row in seq.rows if row[_INLINED_AT]}
        if not offsets:
            bases[unit.index] = base
            continue
        if all(_is_string_start(debug_str, base + off) for off in offsets):
            bases[unit.index] = base
            last = base + max(offsets)
            end = debug_str.find(b"\0", last)
            base = end + 1 if end >= 0 else len(debug_str)
        else:
            bases[unit.index] = len(debug_str)  # unknown: names come out empty, never wrong
    return bases


def _is_string_start(data: bytes, offset: int) -> bool:
    return 0 <= offset < len(data) and (offset == 0 or data[offset - 1] == 0)


__all__ = ["CubinLineTable", "RowRef", "RawFrame", "cuda_arch"]
