"""Errors of the source mapper: every one is an analyzer.errors.MappingError with a one-line message.

Corrupt, truncated or hostile CUBINs, fatbinaries and line tables raise one of these; nothing else escapes
the parsers (a different exception type is a bug).
"""

from reuselens.analyzer.errors import MappingError


class ElfFormatError(MappingError):
    """The file is not a readable 64-bit little-endian ELF (CUBIN, executable, shared library or object)."""


class LineTableError(MappingError):
    """A `.debug_line` program (or its relocations) is malformed."""


class FatbinError(MappingError):
    """A fatbinary container or one of its entries is malformed or cannot be decompressed."""


class NoCubinError(MappingError):
    """The input holds no CUBIN at all, or none for the requested GPU architecture."""


class UnknownModuleError(MappingError):
    """The module hash is not part of the run directory the mapper was built from."""
