"""The code that attrs and cattrs generate at the server's start-up, compiled once and kept between starts.

The LSP library's types are some 570 attrs classes, whose methods attrs writes as source and compiles while
`lsprotocol.types` is imported, and cattrs writes and compiles a structuring function for each message type the
first time one arrives (`initialize`'s client capabilities are a tree of some 70 types). Compiling that source
was most of the server's start: on the development machine, importing the types took 650 ms and structuring
`initialize` 55 ms, against 330-350 ms and 20-30 ms with the compiled code loaded from here (session 21).

Both libraries call the built-in `compile` by its global name in their modules; `install` gives those modules
a `compile` of their own that answers with the code object compiled earlier for the same file name, mode and
source, and compiles (and remembers) anything new. What they build is unchanged: the same source gives the same
code. A save writes what this process compiled or reused, so the file holds one start's worth and entries of
older library versions drop out: after the start-up's work when most of it was compiled afresh, and at exit.

File: $XDG_CACHE_HOME/reuselens/generated-code.marshal (default ~/.cache), written atomically: a marshal of
("reuselens-generated-code", 1, the interpreter's bytecode magic number, {key: code}), key = 16-byte BLAKE2b of
the compiler flags, file name, mode and source. A file of another format, version or interpreter, one that cannot
be read, or one another user owns is ignored and replaced at the next save: it is a cache, and without it the
server compiles as before.
"""

from __future__ import annotations
import __future__

import hashlib
import importlib
import importlib.util
import logging
import marshal
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

FORMAT = "reuselens-generated-code"
VERSION = 1
FILE_NAME = "generated-code.marshal"
# The modules that compile generated source (attrs: class methods; cattrs: (un)structuring functions).
GENERATING_MODULES = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")


def cache_file() -> Path | None:
    """$XDG_CACHE_HOME/reuselens/generated-code.marshal (default ~/.cache); None without a home directory. The
    launcher's cache (collector/library_cache.py) sits in the same folder by the same rule, written there again: the
    language server imports nothing of the collector (docs/architecture.md)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~":
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "reuselens" / FILE_NAME


class CodeCache:
    """Code objects by (file name, mode, source); `compile` stands in for the built-in in the generating modules."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._codes = self._read(path)
        self._used: dict[bytes, object] = {}
        self._new = 0
        self._lock = threading.Lock()

    @staticmethod
    def _read(path: Path | None) -> dict[bytes, object]:
        if path is None:
            return {}
        try:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_uid != os.getuid():  # code another user could have written: never run it
                    log.info("generated-code cache %s not used: owned by another user", path)
                    return {}
                data = marshal.load(f)
        except FileNotFoundError:
            return {}
        except Exception as error:  # damaged, truncated, another interpreter's marshal: compiled afresh
            log.info("generated-code cache %s not used: %s", path, error)
            return {}
        if (
            isinstance(data, tuple)
            and len(data) == 4
            and data[:3] == (FORMAT, VERSION, importlib.util.MAGIC_NUMBER)
            and isinstance(data[3], dict)
        ):
            return data[3]
        log.info("generated-code cache %s not used: another format, version or interpreter", path)
        return {}

    def compiler(self, inherited: int):
        """A stand-in for the built-in `compile` in a module whose `from __future__` flags are `inherited` (what the
        built-in inherits there); only source text compiled with default arguments is cached."""

        def compile_cached(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
            effective = flags | (0 if dont_inherit else inherited)  # what the built-in does in that module
            if flags or kwargs or optimize != -1 or not isinstance(source, str):  # ASTs, other flags: as ever
                return compile(source, filename, mode, effective, True, optimize, **kwargs)
            key = hashlib.blake2b(f"{effective}\0{filename}\0{mode}\0{source}".encode(), digest_size=16).digest()
            code = self._codes.get(key)
            if code is None:
                code = compile(source, filename, mode, effective, True)
                with self._lock:
                    self._codes[key] = code
                    self._new += 1
            self._used[key] = code
            return code

        return compile_cached

    @property
    def new_code(self) -> int:
        """Code objects compiled by this process (not found in the file)."""
        return self._new

    @property
    def used_code(self) -> int:
        """Distinct code objects this process asked for."""
        return len(self._used)

    @property
    def stale(self) -> bool:
        """Whether the file lacks code this process compiled, or holds code it never asked for."""
        return self._new > 0 or len(self._used) < len(self._codes)

    def save(self) -> None:
        """Write the code this process used, when that differs from the file (atomically; never raises)."""
        if self.path is None or not self.stale:
            return
        with self._lock:
            used = dict(self._used)
            self._codes = dict(used)
            self._new = 0
        import tempfile  # here, not at the server's start: only a save needs it

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".generated-code.")
            try:
                with os.fdopen(fd, "wb") as f:
                    marshal.dump((FORMAT, VERSION, importlib.util.MAGIC_NUMBER, used), f)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as error:
            log.info("generated-code cache %s not written: %s", self.path, error)


def future_flags(module) -> int:
    """The compiler flags of the `from __future__` imports in `module` (each binds its feature's name there)."""
    return sum(
        feature.compiler_flag
        for name in __future__.all_feature_names
        if isinstance(feature := getattr(module, name, None), __future__._Feature)
    )


_installed: CodeCache | None = None


def install(path: Path | None = None) -> CodeCache:
    """Load the cache and hand its `compile` to the generating modules; call it before `lsprotocol.types` is
    imported. Idempotent: later calls return the installed cache."""
    global _installed
    if _installed is None:
        _installed = CodeCache(path if path is not None else cache_file())
        for name in GENERATING_MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:  # a library version without that module compiles nothing there
                continue
            module.compile = _installed.compiler(future_flags(module))
    return _installed


def save() -> None:
    """Write the installed cache if it changed (at the server's exit)."""
    if _installed is not None:
        _installed.save()


def save_after_start_up() -> None:
    """Write the installed cache once the start-up's work is done when most of that work's code was compiled
    afresh (a first start, new library versions), so that the next start has it even if this server is killed;
    otherwise the exit's save writes what changed (attrs writes one cattrs class's methods differently in every
    process, so some code is new at every start)."""
    if _installed is not None and 2 * _installed.new_code > _installed.used_code:
        _installed.save()
