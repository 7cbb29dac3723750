"""Which tool library the launcher picks and whether it can load (issue #20, item 7): an editable install picked
the build tree's copy, whose RPATH named the Sanitizer wheel in pip's deleted build environment, and every
profiled app exited 127. Checked without a GPU: the RPATH is read with pyelftools, loading is the dynamic
loader's own answer for a stand-in library whose dependency is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

import reuselens.collector.launcher as launcher
from reuselens.collector import errors, library_cache
from tests.native_build import COMPILER, NO_COMPILER, REPO

SANITIZER_LIBRARY = "libsanitizer-public.so"


def _installed_library() -> Path:
    for lib in launcher._installed_libraries():
        if lib.is_file():
            return lib
    pytest.skip("collector library not built here (pip install needs nvcc and the Sanitizer wheel)")


def _search_path(lib: Path) -> list[str]:
    with lib.open("rb") as handle:
        dynamic = ELFFile(handle).get_section_by_name(".dynamic")
        assert isinstance(dynamic, DynamicSection)
        entries = [
            tag.rpath if tag.entry.d_tag == "DT_RPATH" else tag.runpath
            for tag in dynamic.iter_tags()
            if tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH")
        ]
    return [folder for entry in entries for folder in entry.split(":") if folder]


def test_installed_library_finds_the_sanitizer_of_its_own_environment():
    """The RPATH's first folder holding libsanitizer-public.so is the runtime environment's
    nvidia-cuda-sanitizer-api wheel, and no folder on it names a place that is gone (pip's build env)."""
    import nvidia  # the runtime dependency nvidia-cuda-sanitizer-api

    lib = _installed_library()
    folders = [
        Path(f.replace("$ORIGIN", str(lib.parent)).replace("${ORIGIN}", str(lib.parent))) for f in _search_path(lib)
    ]
    assert [f for f in folders if not f.is_dir()] == [], folders
    holding = [f.resolve() for f in folders if (f / SANITIZER_LIBRARY).is_file()]
    runtime_wheel = {(Path(p) / "cu13" / "lib").resolve() for p in nvidia.__path__}
    assert holding and holding[0] in runtime_wheel, (folders, runtime_wheel)


def test_launcher_picks_the_installed_library_not_the_build_tree(monkeypatch):
    monkeypatch.delenv("REUSELENS_COLLECTOR_LIB", raising=False)
    installed = _installed_library()
    picked = launcher.find_tool_library()
    assert picked == installed and (REPO / "build") not in picked.parents


def _stand_in_library(tmp_path: Path) -> tuple[Path, Path]:
    """A tool library stand-in (with its patch file) that needs libreuselens_missing_dep.so, which the loader
    finds only through LD_LIBRARY_PATH; returns (library, the dependency's folder)."""
    dep_dir, lib_dir = tmp_path / "dep", tmp_path / "lib"
    dep_dir.mkdir()
    lib_dir.mkdir()
    (dep_dir / "dep.cpp").write_text('extern "C" int reuselens_dep_answer() { return 42; }\n')
    (lib_dir / "tool.cpp").write_text(
        'extern "C" int reuselens_dep_answer();\n'
        'extern "C" int reuselens_stand_in() { return reuselens_dep_answer(); }\n'
    )
    dep = dep_dir / "libreuselens_missing_dep.so"
    lib = lib_dir / launcher.TOOL_LIBRARY
    for command in (
        [COMPILER, "-shared", "-fPIC", "-o", str(dep), str(dep_dir / "dep.cpp")],
        [
            COMPILER,
            "-shared",
            "-fPIC",
            "-o",
            str(lib),
            str(lib_dir / "tool.cpp"),
            f"-L{dep_dir}",
            "-Wl,--no-as-needed",
            "-lreuselens_missing_dep",
        ],
    ):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    (lib_dir / launcher.PATCH_FATBIN).write_bytes(b"")
    return lib, dep_dir


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
def test_profile_refuses_a_library_that_cannot_load_in_one_line(tmp_path, monkeypatch, fake_app):
    lib, dep_dir = _stand_in_library(tmp_path)
    monkeypatch.setattr(launcher, "check_gpu", lambda: "")
    monkeypatch.setattr(launcher, "require_driver", lambda: None)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    marker = tmp_path / "app-ran"
    app = fake_app(f"open({str(marker)!r}, 'w').close()\n")
    env = {"REUSELENS_COLLECTOR_LIB": str(lib)}
    with pytest.raises(errors.ToolLibraryUnloadableError) as info:
        launcher.profile([str(app)], run_dir=tmp_path / "run", env=env)
    message = str(info.value)
    assert "\n" not in message and "cannot be loaded" in message and "libreuselens_missing_dep.so" in message
    assert "pip install nvidia-cuda-sanitizer-api" in message
    assert isinstance(info.value, errors.ToolLibraryMissingError)  # the GPU tests' skip check still catches it
    assert not marker.exists() and not (tmp_path / "run").exists()
    # Where the loader can find the dependency, the app runs with the library preloaded.
    summary = launcher.profile([str(app)], run_dir=tmp_path / "run", env=env | {"LD_LIBRARY_PATH": str(dep_dir)})
    assert summary.exit_code == 0 and marker.exists()


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
def test_cli_says_one_line_when_the_library_cannot_load(tmp_path):
    lib, _ = _stand_in_library(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"} | {"REUSELENS_COLLECTOR_LIB": str(lib)}
    done = subprocess.run(
        [sys.executable, "-m", "reuselens", "profile", "--run-dir", str(tmp_path / "run"), "--", "true"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be loaded (libreuselens_missing_dep.so" in lines[0], done.stderr


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
def test_a_library_that_loaded_is_not_probed_again_until_a_file_the_loader_mapped_changes(tmp_path, monkeypatch):
    lib, dep_dir = _stand_in_library(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    env = {"LD_LIBRARY_PATH": str(dep_dir)}
    probes = []
    real_run = subprocess.run

    def counting_run(command, **kwargs):
        probes.append(command)
        return real_run(command, **kwargs)

    monkeypatch.setattr(launcher.subprocess, "run", counting_run)

    def check() -> None:
        launcher._LOADABLE.clear()  # a new launcher process: only the cache on disk remembers
        launcher.check_library_loads(lib, env)

    check()
    assert len(probes) == 1 and (tmp_path / "cache" / "reuselens" / library_cache.FILE_NAME).is_file()
    check()
    assert len(probes) == 1  # remembered
    dependency = dep_dir / "libreuselens_missing_dep.so"
    stamp = dependency.stat()
    os.utime(dependency, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    check()
    assert len(probes) == 2  # a mapped file changed: probed again, and remembered again
    check()
    assert len(probes) == 2
    dependency.unlink()
    with pytest.raises(errors.ToolLibraryUnloadableError, match="libreuselens_missing_dep.so"):
        check()
    assert len(probes) == 3
    with pytest.raises(errors.ToolLibraryUnloadableError):  # another LD_LIBRARY_PATH is another entry
        launcher.check_library_loads(lib, {})
    assert len(probes) == 4


def test_an_unreadable_cache_only_means_probing_again(tmp_path, monkeypatch):
    lib = _installed_library()
    cache = tmp_path / "cache" / "reuselens" / library_cache.FILE_NAME
    cache.parent.mkdir(parents=True)
    cache.write_text("not json")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    launcher._LOADABLE.clear()
    launcher.check_library_loads(lib, dict(os.environ))
    assert str(lib.resolve()) in cache.read_text()  # rewritten with this library's entry
