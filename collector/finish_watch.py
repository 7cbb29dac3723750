"""Tells the launcher the moment the tool library has written its exit files, while the app may still be tearing
down: the app's CUDA context and the Compute Sanitizer take their time to go after the tool library's last write
(docs/collector.md, "Launcher start-up"), and an analysis of those files need not wait for them.

Linux inotify (through the C library, no dependency): the run directory is watched for files renamed into it,
as the tool library writes each of its files, and at each rename run.json's collector member is read
(manifest.collector_finished). Without inotify there is no early notice, and the launcher waits for the exit.
The run.json read that says the tool library finished is kept for the launcher's own finish after the exit
(final_if_unchanged), so the file is read and decoded once.

Public API: :class:`FinishWatch`.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from reuselens.collector.manifest import MANIFEST, collector_finished, members_of

IN_MOVED_TO = 0x00000080
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class FinishWatch:
    """Created before the app starts; fileno() is a descriptor that becomes readable at each file the tool
    library renames into the run directory (-1 without inotify); finished() says whether its exit files are
    all there."""

    def __init__(self, run_dir: Path) -> None:
        self._run_dir = run_dir
        self._fd = -1
        self._text: str | None = None  # run.json when it said finished, read while the file stayed the same
        self._identity: tuple[int, int, int, int] | None = None
        self._members: tuple[dict, dict] | None = None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd < 0:
                return
            if libc.inotify_add_watch(fd, os.fsencode(run_dir), IN_MOVED_TO) < 0:
                os.close(fd)
                return
            self._fd = fd
        except (OSError, AttributeError):  # no C library to ask, or no inotify in it
            self._fd = -1

    def fileno(self) -> int:
        return self._fd

    def finished(self) -> bool:
        """Drain the renames seen so far; True when run.json says the tool library has finished. Reads run.json
        only when something was renamed since the last call (the launcher asks at every wake-up)."""
        if self._fd < 0:
            return False
        renamed = False
        try:
            while os.read(self._fd, 4096):
                renamed = True
        except BlockingIOError:
            pass
        except OSError:
            return False
        if not renamed:
            return False
        path = self._run_dir / MANIFEST
        before = _identity(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return False
        if not collector_finished(text):
            return False
        if before is not None and _identity(path) == before:  # the text is the whole of that one file
            self._text, self._identity = text, before
        return True

    def decode_final(self) -> None:
        """Decode the run.json that said finished (while the app tears down: 4-8 ms after a thousand launches)."""
        if self._text is not None:
            try:
                self._members = members_of(self._text)
            except ValueError:
                self._members = None
            self._text = None

    def final_if_unchanged(self) -> tuple[dict, dict] | None:
        """manifest.read_back_members' pair for the run.json that said finished, while the file is still that
        one; None otherwise (the launcher then reads it again)."""
        if self._members is None or _identity(self._run_dir / MANIFEST) != self._identity:
            return None
        return self._members

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
