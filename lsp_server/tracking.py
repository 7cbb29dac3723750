"""Keeping results on the right line while the user edits.

Results describe the text that was profiled. When a report is loaded, the text of every file it names is
kept as a snapshot (the open document's text if the file is open, else the file on disk).

- An open document is followed change by change (didChange): a line after an edited range moves by the
  number of lines the change added or removed; a line the change touched is dropped. A whole-document
  change (full sync) is aligned with difflib instead. Then every surviving line is checked against its
  snapshot text, so a finding is never shown on a line whose text is not the profiled one.
- A file that is not open is compared with the disk when its mtime or size changed since the snapshot
  (e.g. saved from another editor), with the same difflib alignment.

A result whose line has no counterpart is dropped until the next profile.
"""

from __future__ import annotations

import difflib
import os
from typing import Callable

from lsprotocol import types


class LineMap:
    """Snapshot line (1-based) <-> current line (1-based); None where a line changed."""

    def __init__(self, forward: dict[int, int] | None, count: int = 0):
        self.identity = forward is None
        self.count = count
        self.forward = forward or {}
        self.backward = {new: old for old, new in self.forward.items()}

    @classmethod
    def aligned(cls, snapshot: list[str], current: list[str]) -> "LineMap":
        if snapshot == current:
            return cls(None, len(current))
        return cls(_align(snapshot, current))

    def to_current(self, line: int) -> int | None:
        if self.identity:
            return line if 1 <= line <= self.count else None
        return self.forward.get(line)

    def to_snapshot(self, line: int) -> int | None:
        if self.identity:
            return line if 1 <= line <= self.count else None
        return self.backward.get(line)


def _align(snapshot: list[str], current: list[str]) -> dict[int, int]:
    if snapshot == current:  # a file opened as profiled, the usual case: no diff (20 ms on a 1,000-line file)
        return {k: k for k in range(1, len(current) + 1)}
    matcher = difflib.SequenceMatcher(None, snapshot, current, autojunk=False)
    return {block.a + k + 1: block.b + k + 1 for block in matcher.get_matching_blocks() for k in range(block.size)}


def split_lines(text: str) -> list[str]:
    """Lines without terminators, as an editor numbers them (a final newline opens no extra line here)."""
    return text.splitlines()


def shift(positions: dict[int, int], change: types.Range, text: str) -> dict[int, int]:
    """Apply one ranged content change (0-based LSP range) to snapshot line -> current line (1-based).

    Lines before the range stay; lines after it move by the change's line delta. A line whose content
    starts exactly where the range ends, on a fresh line, survives at its new place (whole lines inserted
    above or deleted). The first line of the range keeps its number as a candidate (text appended at its
    end); the caller's text check keeps it only if it still reads as profiled. Others are dropped."""
    start, end = change.start.line + 1, change.end.line + 1
    added = text.count("\n")
    delta = added - (end - start)
    fresh_line = change.end.character == 0 and (text.endswith("\n") or (text == "" and change.start.character == 0))
    out = {}
    for old, line in positions.items():
        if line < start:
            out[old] = line
        elif line > end:
            out[old] = line + delta
        elif line == end and fresh_line:
            out[old] = start + added
        elif line == start and (change.start.character > 0 or start == end):
            out[old] = start
    return out


class Tracker:
    """Snapshots per path, incremental positions of open documents, LineMaps cached per version. `read` gives a
    file's text on disk, or None when it may not be read (lsp_server.source_files)."""

    def __init__(self, read: Callable[[str], str | None] = lambda path: None):
        self.read = read
        self.snapshots: dict[str, list[str]] = {}
        self.stamps: dict[str, tuple[int, int] | None] = {}
        self.positions: dict[str, dict[int, int]] = {}
        self._maps: dict[str, tuple[object, LineMap]] = {}

    def reset(self, snapshots: dict[str, list[str]], stamps: dict[str, tuple[int, int] | None] | None = None) -> None:
        self.snapshots, self.stamps, self.positions, self._maps = snapshots, stamps or {}, {}, {}

    def add(self, snapshots: dict[str, list[str]], stamps: dict[str, tuple[int, int] | None]) -> None:
        """Track more files of the loaded run (the memory analysis names its allocation files later)."""
        for path, lines in snapshots.items():
            self.snapshots[path] = lines
            self.stamps[path] = stamps.get(path)
            self.positions.pop(path, None)
            self._maps.pop(path, None)

    def changed(self, path: str, changes, current_text: str) -> None:
        """Follow didChange content changes (applied in order) for an open document."""
        snapshot = self.snapshots.get(path)
        if snapshot is None:
            return
        positions = self.positions.get(path)
        current = split_lines(current_text)
        if positions is None or any(getattr(c, "range", None) is None for c in changes):
            positions = _align(snapshot, current)
        else:
            for change in changes:
                positions = shift(positions, change.range, change.text)
        # Whatever moved must still read as profiled; anything else is dropped.
        self.positions[path] = {
            old: new
            for old, new in positions.items()
            if 0 < new <= len(current) and current[new - 1] == snapshot[old - 1]
        }
        self._maps.pop(path, None)

    def opened(self, path: str, text: str) -> None:
        snapshot = self.snapshots.get(path)
        if snapshot is not None:
            self.positions[path] = _align(snapshot, split_lines(text))
            self._maps.pop(path, None)

    def closed(self, path: str) -> None:
        self.positions.pop(path, None)
        self._maps.pop(path, None)

    def disk_lines(self, path: str) -> list[str] | None:
        """The file's current lines on disk: the snapshot while the file is as it was when loaded."""
        snapshot = self.snapshots.get(path)
        stamp = disk_stamp(path)
        if snapshot is not None and (stamp is None or stamp == self.stamps.get(path)):
            return snapshot
        text = self.read(path) if stamp is not None else None
        return None if text is None else split_lines(text)

    def line_map(self, path: str, version: object, current_text: str | None) -> LineMap | None:
        """The map for `path` at `version` (current_text None: the file on disk); None without a snapshot."""
        snapshot = self.snapshots.get(path)
        if snapshot is None:
            return None
        if current_text is None:
            version = ("disk", disk_stamp(path))
        cached = self._maps.get(path)
        if cached and cached[0] == version:
            return cached[1]
        if current_text is not None and path in self.positions:
            line_map = LineMap(self.positions[path])
        elif current_text is not None:
            line_map = LineMap.aligned(snapshot, split_lines(current_text))
        elif version[1] == self.stamps.get(path) or version[1] is None:
            line_map = LineMap(None, len(snapshot))
        else:
            line_map = LineMap.aligned(snapshot, split_lines(self.read(path) or ""))
        self._maps[path] = (version, line_map)
        return line_map


def disk_stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
