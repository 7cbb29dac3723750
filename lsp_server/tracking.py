"""Keeping results on the right line while the user edits.

Results describe the text that was profiled. When a report is loaded, the current text of every file it
names is kept as a snapshot (the open document's text if the file is open, else the file on disk). Later
text is aligned with the snapshot line by line (difflib's matching blocks, which follow insertions and
deletions made through didChange); a result whose line was edited has no counterpart and is dropped until
the next profile, so a finding is never shown on a line whose text is not the profiled one.
"""

from __future__ import annotations

import difflib


class LineMap:
    """Snapshot line (1-based) <-> current line (1-based) for one file; None where a line changed."""

    def __init__(self, snapshot: list[str], current: list[str]):
        self.forward: dict[int, int] = {}
        if snapshot == current:
            self.identity, self.count = True, len(current)
            return
        self.identity = False
        matcher = difflib.SequenceMatcher(None, snapshot, current, autojunk=False)
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                self.forward[block.a + k + 1] = block.b + k + 1
        self.backward = {new: old for old, new in self.forward.items()}

    def to_current(self, line: int) -> int | None:
        if self.identity:
            return line if 1 <= line <= self.count else None
        return self.forward.get(line)

    def to_snapshot(self, line: int) -> int | None:
        if self.identity:
            return line if 1 <= line <= self.count else None
        return self.backward.get(line)


def split_lines(text: str) -> list[str]:
    """Lines without terminators, as an editor numbers them (a final newline opens no extra line here)."""
    return text.splitlines()


class Tracker:
    """Snapshots per path and LineMaps cached per (path, document version)."""

    def __init__(self):
        self.snapshots: dict[str, list[str]] = {}
        self._maps: dict[str, tuple[object, LineMap]] = {}

    def reset(self, snapshots: dict[str, list[str]]) -> None:
        self.snapshots, self._maps = snapshots, {}

    def line_map(self, path: str, version: object, current_text: str | None) -> LineMap | None:
        """The map for `path` at `version`; None when there is no snapshot (the file was unreadable)."""
        snapshot = self.snapshots.get(path)
        if snapshot is None:
            return None
        cached = self._maps.get(path)
        if cached and cached[0] == version:
            return cached[1]
        current = snapshot if current_text is None else split_lines(current_text)
        line_map = LineMap(snapshot, current)
        self._maps[path] = (version, line_map)
        return line_map
