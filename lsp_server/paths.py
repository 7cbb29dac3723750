"""File paths and URIs: build-tree prefixes from the report onto workspace paths (reuselens.pathPrefixMap)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from urllib.parse import unquote, urlparse


@functools.lru_cache(maxsize=4096)
def uri_to_path(uri: str) -> str:
    """file:///a/b%20c.cu -> /a/b c.cu (normalized, not resolved through symlinks)."""
    return os.path.normpath(unquote(urlparse(uri).path))


@functools.lru_cache(maxsize=4096)
def path_to_uri(path: str) -> str:
    return Path(path).absolute().as_uri()


def map_path(path: str, prefix_map: dict[str, str], base_dir: str | None = None) -> str:
    """Rewrite the longest matching prefix of `prefix_map` (whole path components only); a relative result is
    taken relative to base_dir (the profiled command's cwd)."""
    best = None
    for prefix in prefix_map:
        stripped = prefix.rstrip("/") or "/"
        matches = path == stripped or path.startswith(stripped.rstrip("/") + "/")
        if matches and (best is None or len(stripped) > len(best[0])):
            best = (stripped, prefix_map[prefix])
    if best is not None:
        prefix, target = best
        path = target.rstrip("/") + path[len(prefix.rstrip("/")) :]
    if not os.path.isabs(path) and base_dir:
        path = os.path.join(base_dir, path)
    return os.path.normpath(path)
