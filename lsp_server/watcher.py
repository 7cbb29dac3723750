"""Noticing a run directory that appears or changes (a profile made from a terminal or by CI).

watchdog watches the run directory itself when it exists, otherwise its nearest existing ancestor
(non-recursively) until the directory appears. Events arrive on watchdog's thread; the callback is handed
to the server's event loop, so every LSP message is still sent from one thread.
"""

from __future__ import annotations

import asyncio
import os
from typing import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

DEBOUNCE_S = 0.2


class RunWatcher(FileSystemEventHandler):
    def __init__(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[], None]):
        self.loop, self.on_change = loop, on_change
        self.run_dir: str | None = None
        self.watched: str | None = None
        self.observer = None
        self._pending: asyncio.TimerHandle | None = None

    def watch(self, run_dir: str) -> None:
        self.run_dir = os.path.normpath(run_dir)
        self._arm()

    def ensure(self) -> None:
        """Re-check which directory to watch (after a profile may have replaced the run directory)."""
        if self.run_dir is not None:
            self.watched = None if self.watched and not os.path.isdir(self.watched) else self.watched
            self._arm()

    def _arm(self) -> None:
        target = self.run_dir
        while target and not os.path.isdir(target):
            parent = os.path.dirname(target)
            if parent == target:
                return
            target = parent
        if target == self.watched:
            return
        self.stop()
        self.observer = Observer()
        self.observer.daemon = True
        self.observer.schedule(self, target, recursive=False)
        self.observer.start()
        self.watched = target

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer = None
        self.watched = None

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = {os.path.normpath(os.fsdecode(p)) for p in (event.src_path, getattr(event, "dest_path", "")) if p}
        if self.run_dir is None or event.event_type in ("opened", "closed_no_write"):
            return
        if self.watched != self.run_dir:
            # Waiting for the directory to appear: re-arm deeper when anything on its path shows up.
            if any(self.run_dir == p or self.run_dir.startswith(p + os.sep) for p in paths):
                self.loop.call_soon_threadsafe(self._rearm_and_notify)
            return
        if self.run_dir in paths and event.event_type in ("deleted", "moved"):
            self.loop.call_soon_threadsafe(self._rearm_and_notify)  # e.g. the profiler replaced the directory
        elif any(os.path.basename(p) == "report.json" or p == self.run_dir for p in paths):
            self.loop.call_soon_threadsafe(self._schedule)

    def _rearm_and_notify(self) -> None:
        self._arm()
        self._schedule()

    def _schedule(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        self._pending = self.loop.call_later(DEBOUNCE_S, self.on_change)
