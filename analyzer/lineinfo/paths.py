"""Source paths as users need them: absolute, normalized, and moved by a prefix map.

The line table records `<cwd at compile time>/<dir as given>` joined with the file name. When the build tree
is not where the editor has the sources (container, CI artefact, another machine), `prefix_map` rewrites the
longest matching leading directory: {"/build/": "/home/me/src/"} turns /build/k.cu into /home/me/src/k.cu.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping


class PathResolver:
    def __init__(self, prefix_map: Mapping[str, str] | None = None, build_dir: str | None = None):
        items = [(_strip(old), _strip(new)) for old, new in (prefix_map or {}).items() if old]
        self.prefix_map = sorted(items, key=lambda item: len(item[0]), reverse=True)
        self.build_dir = build_dir
        self._cache: dict[str, tuple[str, bool]] = {}

    def resolve(self, recorded: str) -> tuple[str, bool]:
        """(path to show, whether that file exists)."""
        hit = self._cache.get(recorded)
        if hit is None:
            path = recorded
            if path and not posixpath.isabs(path) and self.build_dir:
                path = posixpath.normpath(posixpath.join(self.build_dir, path))
            path = self.remap(path)
            hit = (path, bool(path) and os.path.isfile(path))
            self._cache[recorded] = hit
        return hit

    def remap(self, path: str) -> str:
        for old, new in self.prefix_map:
            if path == old or path.startswith(old + "/") or old == "/":
                rest = path[len(old) :] if old != "/" else path[1:]
                return posixpath.normpath(new.rstrip("/") + "/" + rest.lstrip("/")) if rest else new
        return path


def _strip(prefix: str) -> str:
    stripped = prefix.rstrip("/")
    return stripped or "/"
