"""Reading files that workspace data names (report.json, the source files a report points at) without letting
that data hang or exhaust the server.

A report comes from the workspace, so even an untrusted one can name `/dev/stdin` (the server's own protocol
stream), a FIFO (blocks forever) or `/dev/zero` (never ends). Only regular files are read, opened without
blocking and checked on the open descriptor (no swap between check and read), and never past a size cap.
Source files must also lie under the workspace folder or a `reuselens.pathPrefixMap` target.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

MAX_SOURCE_BYTES = 16 << 20  # far above hand-written CUDA sources; a larger "source" is not read
MAX_REPORT_BYTES = 1 << 30  # report.json of a large application stays well below this


class UnreadableFile(OSError):
    """Not a regular file, or larger than the cap; str() says which (without the path)."""


def read_capped(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file `path`; UnreadableFile when it is something else or holds more than `limit`
    bytes, OSError when it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile("not a regular file")
        if info.st_size > limit:
            raise UnreadableFile(f"larger than {limit >> 20} MiB")
        chunks, size = [], 0
        while block := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(block)
            size += len(block)
            if size > limit:  # grew while being read
                raise UnreadableFile(f"larger than {limit >> 20} MiB")
        return b"".join(chunks)
    finally:
        os.close(fd)


class SourceFiles:
    """Which source files the server may read: regular files, below MAX_SOURCE_BYTES, whose real path (symlinks
    resolved) lies under one of `roots` (the workspace folder and the pathPrefixMap targets)."""

    def __init__(self, roots: Iterable[str]):
        self.roots = tuple(sorted({os.path.realpath(r) for r in roots if r}))

    def allowed(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def text(self, path: str) -> str | None:
        """The file's text, or None when it may not or cannot be read."""
        if not self.allowed(path):
            return None
        try:
            return read_capped(path, MAX_SOURCE_BYTES).decode(errors="replace")
        except OSError:
            return None
