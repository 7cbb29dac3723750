"""Source mapping for CUDA kernels: SASS PC offset -> file, line and inline chain, from CUBIN line tables.

See docs/lineinfo.md. Public API:

    mapper = SourceMapper.from_run(run_dir, prefix_map={"/build/": "/home/me/src/"})
    loc = mapper.lookup(module_sha256, function_mangled_name, pc_offset)   # SourceLocation | None
    mapper.kernel_location(module_sha256, function); mapper.sass(module_sha256, function, pc); mapper.notes
    cubins_from_binary(path_or_bytes) -> [(arch, cubin bytes)];  demangle(name) -> str

Every failure to read input raises a subclass of analyzer.errors.MappingError (see errors.py).
"""

from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.lineinfo.demangle import demangle
from reuselens.analyzer.lineinfo.errors import (
    ElfFormatError,
    FatbinError,
    LineTableError,
    NoCubinError,
    UnknownModuleError,
)
from reuselens.analyzer.lineinfo.fatbin import cubins_from_binary, select_cubins
from reuselens.analyzer.lineinfo.mapper import InlineFrame, SourceLocation, SourceMapper

__all__ = [
    "CubinLineTable",
    "ElfFormatError",
    "FatbinError",
    "InlineFrame",
    "LineTableError",
    "NoCubinError",
    "SourceLocation",
    "SourceMapper",
    "UnknownModuleError",
    "cubins_from_binary",
    "demangle",
    "select_cubins",
]
