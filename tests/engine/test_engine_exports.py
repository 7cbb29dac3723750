"""The engine is linked into two shared objects, the collector's tool library (injected into the app) and the replay
module, and neither exports it: a process holding both (an app that imports the module while the collector is
injected) must never call from one copy into the other, which may be another build. Each exports its entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from reuselens.analyzer import replay
from reuselens.collector import launcher
from reuselens.collector.errors import ToolLibraryMissingError


def exported(path: Path) -> set[str]:
    """Names of the functions and objects `path` defines with global binding (what another object can bind to)."""
    with open(path, "rb") as f:
        symbols = ELFFile(f).get_section_by_name(".dynsym").iter_symbols()
        return {
            s.name for s in symbols if s["st_info"]["bind"] == "STB_GLOBAL" and s["st_shndx"] != "SHN_UNDEF" and s.name
        }


def engine_symbols(names: set[str]) -> set[str]:
    """Those in namespace reuselens (template instantiations of the standard library over its types are weak)."""
    return {n for n in names if n.startswith(("_ZN9reuselens", "_ZNK9reuselens"))}


def test_the_replay_module_exports_its_entry_and_no_engine_symbol():
    names = exported(Path(replay._engine_module().__file__))
    assert "PyInit__engine" in names
    assert engine_symbols(names) == set()


def test_the_tool_library_exports_its_injection_entry_and_no_engine_symbol():
    try:
        library = launcher.find_tool_library()
    except ToolLibraryMissingError as error:
        pytest.skip(f"no tool library to read: {error}")
    names = exported(library)
    assert "InitializeInjection" in names
    assert engine_symbols(names) == set()
