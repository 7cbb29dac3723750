"""SourceMapper: (module, function, PC offset) -> SourceLocation with file, line and inline chain.

The rest of ReuseLens calls only this module (and `cubins_from_binary`, `demangle`). Each CUBIN is parsed
once per process (cache keyed by the SHA-256 of its bytes); locations are built once per line-table row.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from reuselens.analyzer.lineinfo.cubin import MAX_INLINE_DEPTH, CubinLineTable, RowRef
from reuselens.analyzer.lineinfo.demangle import demangle
from reuselens.analyzer.lineinfo.errors import MappingError, UnknownModuleError
from reuselens.analyzer.lineinfo.paths import PathResolver
from reuselens.analyzer.lineinfo.sass import SassUnavailable, disassemble
from reuselens.analyzer.rundir import inside_run, open_run

INSTRUCTION_BYTES = 16  # every SASS instruction on sm_70 and later (research/dwarf.md, results)
_CACHE_SIZE = 64
_cache: OrderedDict[str, CubinLineTable] = OrderedDict()
_cache_lock = threading.Lock()
NO_LINE_INFO = ": no line info; rebuild with -lineinfo (nvcc -lineinfo) to see findings on source lines"


class InlineFrame(NamedTuple):
    """One level of an inline chain: code of `function` (demangled) at file:line."""

    function: str
    file: str
    line: int
    column: int = 0
    exists: bool = False

    def to_dict(self) -> dict:
        return {
            "function": self.function,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "exists": self.exists,
        }


class SourceLocation(NamedTuple):
    """Where an instruction comes from (immutable; one object is shared by every PC of a line-table row).

    `file`/`line` are the innermost location (inside the deepest inlined callee); `file` is absolute after
    the prefix map, `exists` says whether it is there. `inline` is empty when the instruction is not in
    inlined code; otherwise it holds every frame, innermost first: inline[0] is (callee, file, line) and
    inline[-1] is the call site in the function that owns the code (the kernel, or a `$kernel$callee`
    clone). `column` is 0 when the CUBIN records none (ptxas never does).
    """

    file: str
    line: int
    column: int
    exists: bool
    function: str  # demangled name of the function whose source this is (the innermost)
    inline: tuple[InlineFrame, ...] = ()
    recorded_file: str = ""  # the path as the CUBIN records it, before the prefix map

    @property
    def outermost(self) -> InlineFrame:
        """The location in the function that owns the code (equals file/line when nothing is inlined)."""
        if self.inline:
            return self.inline[-1]
        return InlineFrame(self.function, self.file, self.line, self.column, self.exists)

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "exists": self.exists,
            "function": self.function,
            "inline": [f.to_dict() for f in self.inline],
        }


@dataclass
class _Module:
    sha256: str
    source: Path | bytes
    table: CubinLineTable | None = None
    locations: dict[int, list[SourceLocation | None]] = field(default_factory=dict)  # per section, per interval
    chains: dict[tuple, list] = field(default_factory=dict)  # (sequence id, owner) -> chain per row
    frames: dict[tuple, InlineFrame] = field(default_factory=dict)
    sass: dict[tuple[str, int], str] = field(default_factory=dict)
    sass_sections: set[int] = field(default_factory=set)  # code sections disassembled into `sass`
    sass_unavailable: bool = False


class SourceMapper:
    """Maps PCs of the modules of one run (or of any set of CUBINs) to source locations.

    `modules` maps a module id (the SHA-256 in run.json) to the CUBIN's path or bytes. `prefix_map`
    rewrites build-tree prefixes to workspace prefixes; `build_dir` anchors relative paths.
    """

    def __init__(
        self,
        modules: Mapping[str, Path | str | bytes],
        prefix_map: Mapping[str, str] | None = None,
        build_dir: str | None = None,
    ):
        self._modules = {
            sha: _Module(sha, src if isinstance(src, bytes) else Path(src)) for sha, src in modules.items()
        }
        self._paths = PathResolver(prefix_map, build_dir)
        self._notes: list[str] = []
        self._noted: set[str] = set()
        self._entries: dict[tuple[str, str], tuple | bool] = {}

    @classmethod
    def from_run(
        cls, run_dir: str | Path, prefix_map: Mapping[str, str] | None = None, build_dir: str | None = None
    ) -> "SourceMapper":
        """Mapper over `run.json`'s `modules` (docs/run-directory.md); `build_dir` defaults to its `cwd`, and
        `prefix_map` adds to (and overrides) the run's `source_prefix_map`."""
        run_dir = Path(run_dir)
        run = open_run(run_dir)
        manifest = run.manifest
        # Where the run says its build tree is now, unless the caller maps the same prefix elsewhere.
        prefix_map = {**run.source_prefix_map, **(prefix_map or {})}
        modules = {}
        for i, entry in enumerate(manifest.get("modules") or []):
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
                rel = entry.get("path") or f"modules/{entry['sha256']}.cubin"
                modules[entry["sha256"]] = inside_run(run_dir, str(rel), f"modules[{i}].path")
        cwd = manifest.get("cwd")
        return cls(modules, prefix_map, build_dir if build_dir is not None else (cwd if isinstance(cwd, str) else None))

    # -- public API -----------------------------------------------------------------------------------
    @property
    def notes(self) -> list[str]:
        """One-line messages for the user, each said once: missing line info, files not found, ..."""
        return list(self._notes)

    @property
    def module_ids(self) -> list[str]:
        return list(self._modules)

    def table(self, module: str) -> CubinLineTable:
        """The parsed CUBIN (cached); raises MappingError for an unknown module or unreadable CUBIN."""
        mod = self._module(module)
        if mod.table is None:
            with _naming(mod):
                mod.table = _load_table(mod.source)
            if not mod.table.has_line_info:
                self._note(f"module {module[:12]}{NO_LINE_INFO}")
        return mod.table

    def lookup(self, module: str, function: str, pc: int) -> SourceLocation | None:
        """Location of the instruction containing byte `pc` of `function`'s code section: the offset the collector
        records (docs/report-format.md, a node's `pc`). For a kernel, and a function in a section of its own, that is
        the offset from the function's start; a non-inlined callee that ptxas places after its kernel in the
        kernel's section (`$kernel$callee`) starts at its symbol's value there. None without line info or outside
        the section's rows."""
        entry = self._entries.get((module, function))
        if entry is None:
            with _naming(self._module(module)):
                entry = self._entries[(module, function)] = self._entry(module, function)
        if not entry or pc < 0:
            return None
        mod, index, cache = entry
        offset = pc
        i = bisect.bisect_right(index.starts, offset) - 1
        if i < 0 or offset >= index.ends[i]:
            return None
        loc = cache[i]
        if loc is None:
            with _naming(mod):
                loc = cache[i] = self._build_location(mod, index.ref(i), index.owners[i] or function, index.contexts[i])
        return loc

    def _entry(self, module: str, function: str) -> tuple | bool:
        """What lookup needs for one function, found once: (module, section index, cache)."""
        mod = self._module(module)
        table = self.table(module)
        sym = table.function_symbol(function)
        if sym is None:
            if table.has_line_info:
                self._note(f"module {module[:12]}: has no function {function}")
            return False
        index = table.section_index(sym.shndx)
        if index is None:
            return False
        cache = mod.locations.get(sym.shndx)
        if cache is None:
            cache = mod.locations[sym.shndx] = [None] * len(index.starts)
        return mod, index, cache

    def kernel_location(self, module: str, function: str) -> SourceLocation | None:
        """Best single line for a kernel-level finding: the line of the function's first instruction with a
        location, as seen from the function itself (its outermost frame). None without line info."""
        table = self.table(module)
        sym = table.function_symbol(function)
        if sym is None or not table.has_line_info:
            return None
        with _naming(self._module(module)):
            index = table.section_index(sym.shndx)
            i = bisect.bisect_left(index.starts, sym.value) if index is not None else 0
            if index is None or i >= len(index.starts):
                return None
            frame = table.chain(index.ref(i), index.owners[i] or function)[-1]
        path, exists = self._resolve(frame.path, module)
        return SourceLocation(path, frame.line, frame.column, exists, demangle(frame.function), (), frame.path)

    def sass(self, module: str, function: str, pc: int) -> str | None:
        """SASS text of the instruction containing `pc`, when nvdisasm is available (else None + a note).
        Disassembles the function's code section on first use; prepare_sass does many in one go."""
        mod = self._module(module)
        table = self.table(module)
        found = table.section_offset(function, pc)
        if found is None:
            return None
        sym, offset = found
        if sym.shndx not in mod.sass_sections and not mod.sass_unavailable:
            self.prepare_sass({module: [function]})
        section = table.elf.sections[sym.shndx].name
        return mod.sass.get((section, offset - offset % INSTRUCTION_BYTES))

    def prepare_sass(self, functions_of: Mapping[str, Iterable[str]]) -> None:
        """Disassembles the code sections of the given functions for the sass() calls that follow: one nvdisasm
        run per module (its start-up reads the whole CUBIN, about 1 s for a 14 MB library module, against 25 s
        for all of that module's code), the modules' runs side by side. A module that is unknown or cannot be
        read is left out (lookup and sass() raise its MappingError); notes come in the order of `functions_of`."""
        jobs: list[tuple[_Module, dict[int, int]]] = []
        for module, functions in functions_of.items():
            try:
                mod = self._module(module)
                table = self.table(module)
            except MappingError:
                continue
            wanted: dict[int, int] = {}  # code section -> symbol-table index of a function in it
            for function in functions:
                sym = table.function_symbol(function)
                if sym is not None and sym.shndx not in mod.sass_sections:
                    wanted.setdefault(sym.shndx, table.symbols.index(sym))
            if wanted and not mod.sass_unavailable:
                jobs.append((mod, wanted))
        if not jobs:
            return

        def run(job: tuple[_Module, dict[int, int]]) -> dict | SassUnavailable:
            try:
                return disassemble(_read_bytes(job[0].source), list(job[1].values()))
            except SassUnavailable as reason:
                return reason
            except (OSError, MappingError) as error:  # no temporary file, or the CUBIN went away: no SASS
                return SassUnavailable(f"no SASS for module {job[0].sha256[:12]}: {error}")

        with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
            results = list(pool.map(run, jobs))
        for (mod, wanted), result in zip(jobs, results):
            if isinstance(result, SassUnavailable):
                mod.sass_unavailable = True
                self._note(str(result))
            else:
                mod.sass.update(result)
            mod.sass_sections.update(wanted)

    # -- internals ------------------------------------------------------------------------------------
    def _module(self, module: str) -> _Module:
        mod = self._modules.get(module)
        if mod is None:
            raise UnknownModuleError(f"module {module} is not part of this run")
        return mod

    def _build_location(self, mod: _Module, ref: RowRef, owner: str, context: tuple = ()) -> SourceLocation:
        row = ref.sequence.rows[ref.index]
        raw = mod.table.context_chain(ref, context, owner) if context and row[4] == 0 else None
        if raw is not None:  # -G: inlining recorded in .debug_info, not in the line table
            frames = tuple(self._raw_frame(mod, frame) for frame in raw)
        else:
            frames = self._frames_from(mod, ref, owner)
            declared = mod.table.declared_function(ref) if row[4] == 0 else None
            if declared and declared != owner:  # -G code of an inlined function whose chain is unknown
                frames = (frames[0]._replace(function=demangle(declared)),)
        inner = frames[0]
        raw_path = mod.table.file_path(ref.sequence.unit, row[1])
        return SourceLocation(
            inner.file,
            inner.line,
            inner.column,
            inner.exists,
            inner.function,
            frames if len(frames) > 1 else (),
            raw_path,
        )

    def _raw_frame(self, mod: _Module, raw) -> InlineFrame:
        path, exists = self._resolve(raw.path, mod.sha256)
        return InlineFrame(demangle(raw.function) if raw.function else "?", path, raw.line, raw.column, exists)

    def _frames_from(self, mod: _Module, ref: RowRef, owner: str) -> tuple[InlineFrame, ...]:
        """The inline chain from `ref` outwards (cubin.CubinLineTable.chain), memoized per row: rows inlined
        at the same call site share the tail of their chains, so each row's frame is built once. A chain
        that points out of range or loops ends where it breaks."""
        rows, unit = ref.sequence.rows, ref.sequence.unit
        memo = mod.chains.get((id(ref.sequence), owner))
        if memo is None:
            memo = mod.chains[(id(ref.sequence), owner)] = [None] * len(rows)
        pending = []  # rows from the innermost outwards whose chains are not known yet
        visited = None
        cur = ref.index
        while True:
            tail = memo[cur]
            if tail is not None:
                break
            row = rows[cur]
            if row[4] == 0:  # not inlined: the code of `owner`
                tail = memo[cur] = (self._frame(mod, unit, row, owner),)
                break
            target = row[4] - 1  # inlined_at is a 1-based row index
            if not target < cur:  # call sites precede their callees; anything else is checked for loops
                visited = visited if visited is not None else {ref.index}
                broken = target in visited or target >= len(rows)
                visited.add(target)
            else:
                broken = target < 0
            if broken or len(pending) >= MAX_INLINE_DEPTH:
                tail = memo[cur] = (self._frame(mod, unit, row, None), self._frame(mod, unit, row, owner))
                break
            pending.append(cur)
            cur = target
        for index in reversed(pending):
            tail = memo[index] = (self._frame(mod, unit, rows[index], None),) + tail
        return tail

    def _frame(self, mod: _Module, unit, row: tuple, owner: str | None) -> InlineFrame:
        """Frame of `row`: in its inlined callee (owner None) or in `owner`, the symbol holding the PC."""
        key = (unit.index, row[1], row[2], row[3], row[5] if owner is None else owner, owner is None)
        built = mod.frames.get(key)
        if built is None:
            table = mod.table
            raw = table.inlined_frame(unit, row) if owner is None else table.outer_frame(unit, row, owner)
            path, exists = self._resolve(raw.path, mod.sha256)
            built = mod.frames[key] = InlineFrame(
                demangle(raw.function) if raw.function else "?", path, raw.line, raw.column, exists
            )
        return built

    def _resolve(self, recorded: str, module: str) -> tuple[str, bool]:
        path, exists = self._paths.resolve(recorded)
        if not exists and path:
            self._note(
                f"source file {path} not found (recorded in module {module[:12]} as {recorded}); if "
                "the build tree moved, map it with a path prefix map (reuselens.pathPrefixMap, or "
                "--prefix-map OLD=NEW)"
            )
        return path, exists

    def _note(self, message: str) -> None:
        if message not in self._noted:
            self._noted.add(message)
            self._notes.append(message)


@contextlib.contextmanager
def _naming(mod: _Module) -> Iterator[None]:
    """Prefix a parse error with the module's file, so a note about a corrupt module says which one it is."""
    where = str(mod.source) if isinstance(mod.source, Path) else f"module {mod.sha256[:12]}"
    try:
        yield
    except MappingError as error:
        if where in str(error):
            raise
        raise type(error)(f"{where}: {error}") from None


def _read_bytes(source: Path | bytes) -> bytes:
    if isinstance(source, bytes):
        return source
    if source.exists() and not source.is_file():  # a FIFO or device would block or never end
        raise MappingError(f"cannot read CUBIN {source}: not a regular file")
    try:
        return source.read_bytes()
    except OSError as error:
        raise MappingError(f"cannot read CUBIN {source}: {error.strerror or error}") from None


def _load_table(source: Path | bytes) -> CubinLineTable:
    """Parse a CUBIN, or reuse the parse of identical bytes (process-wide LRU cache)."""
    data = _read_bytes(source)
    digest = hashlib.sha256(data).hexdigest()
    with _cache_lock:
        table = _cache.get(digest)
        if table is not None:
            _cache.move_to_end(digest)
            return table
    try:
        table = CubinLineTable(data)
    except MappingError as error:
        if isinstance(source, Path):  # name the file: the message alone does not say which module it is
            raise type(error)(f"{source}: {error}") from None
        raise
    with _cache_lock:
        _cache[digest] = table
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return table


def clear_cache() -> None:
    """Forget every parsed CUBIN (tests, long-running servers after a rebuild)."""
    with _cache_lock:
        _cache.clear()
