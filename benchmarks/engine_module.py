"""The engine module to benchmark: the installed one, or a `_engine*.so` built from another revision (e.g. by
benchmarks/build_revision.sh), loaded from its file under the installed module's name.

A process keeps one extension module per name: loading a second file under the same name hands back the first, so
a process measures one engine only (replay_speed.py forks a child per engine; engine.py takes one per run)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

from reuselens.analyzer import replay


def engine_module(path: str):
    """The engine module built at `path` (`installed`: the one `reuselens` imports). Once per process."""
    if path == "installed":
        return replay._engine_module()
    loader = importlib.machinery.ExtensionFileLoader("reuselens.analyzer._engine", path)
    spec = importlib.util.spec_from_file_location("reuselens.analyzer._engine", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    if Path(module.__file__).resolve() != Path(path).resolve():  # the process had loaded another engine before
        raise RuntimeError(f"{path} was not loaded: this process holds {module.__file__} under the same name")
    return module
