"""The launcher's memory of tool libraries that loaded (docs/collector.md, "Launcher start-up").

Checking that the collector library loads takes a child interpreter's dlopen (20-50 ms of every profile). A
success is kept in $XDG_CACHE_HOME/reuselens/loadable-libraries.json (default ~/.cache) with every file the
loader mapped for it, their modification times and sizes; while none of them changed, the answer stands. The
file is a cache: anything unreadable in it only means the library is probed again.

    {"format": "reuselens-loadable-libraries", "version": 1,
     "libraries": {"<key>": [["/path/lib.so", mtime_ns, size], ...]}}
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing itself is not imported at run time: 4-5 ms of every start on the H200 host
if TYPE_CHECKING:
    from typing import Any, Sequence

FORMAT = "reuselens-loadable-libraries"
VERSION = 1
FILE_NAME = "loadable-libraries.json"


def cache_file() -> Path | None:
    """$XDG_CACHE_HOME/reuselens (default ~/.cache/reuselens); None without a home directory."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~":
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "reuselens" / FILE_NAME


def loads(key: str) -> bool:
    """True when `key` loaded before and none of the files the loader mapped then has changed or gone since."""
    entry = _libraries().get(key)
    if not isinstance(entry, list) or not entry:
        return False
    try:
        return _stamps([str(item[0]) for item in entry]) == entry
    except (TypeError, IndexError):
        return False


def remember(key: str, mapped: Sequence[str]) -> None:
    """Best effort: a cache that cannot be written only means the next launcher probes again."""
    path, stamps = cache_file(), _stamps(mapped)
    if path is None or not stamps:
        return
    libraries = _libraries()
    libraries[key] = stamps
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps({"format": FORMAT, "version": VERSION, "libraries": libraries}))
        os.replace(temp, path)
    except OSError:
        pass


def _libraries() -> dict[str, Any]:
    path = cache_file()
    try:
        document = json.loads(path.read_text()) if path is not None and path.is_file() else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("version") != VERSION:
        return {}
    libraries = document.get("libraries")
    return libraries if isinstance(libraries, dict) else {}


def _stamps(paths: Sequence[str]) -> list[list[Any]] | None:
    stamps = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamps.append([path, st.st_mtime_ns, st.st_size])
    return stamps
