"""Tells the launcher the moment the tool library has written its exit files, while the app may still be tearing
down: the app's CUDA context and the Compute Sanitizer take their time to go after the tool library's last write
(docs/collector.md, "Launcher start-up"), and an analysis of those files need not wait for them.

Linux inotify (through the C library, no dependency): the run directory is watched for files renamed into it,
as the tool library writes each of its files, and at each rename run.json's collector member is read
(manifest.collector_finished). Without inotify there is no early notice, and the launcher waits for the exit.

Public API: :class:`FinishWatch`.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from reuselens.collector.manifest import collector_finished, read_back_members

IN_MOVED_TO = 0x00000080
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC


class FinishWatch:
    """Created before the app starts; fileno() is a descriptor that becomes readable at each file the tool
    library renames into the run directory (-1 without inotify); finished() says whether its exit files are
    all there."""

    def __init__(self, run_dir: Path) -> None:
        self._run_dir = run_dir
        self._fd = -1
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
        return renamed and collector_finished(self._run_dir)

    def final_manifest(self) -> tuple[dict, dict] | None:
        """run.json as the tool library finished it (read_back_members' pair), read now, while the app tears down,
        for the launcher's finish after the exit; None when unreadable."""
        return read_back_members(self._run_dir)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
