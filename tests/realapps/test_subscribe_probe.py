"""benchmarks/subscribe_probe without a GPU: the probe tool library builds where the collector's build finds the
Sanitizer API and cuda.h, exports the injection entry point, and loaded into a process that never uses CUDA it
changes nothing, whatever it is asked to subscribe to (teardown.py's passive mode loads it into every app)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "benchmarks" / "subscribe_probe" / "build.sh"


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe")
    # The build looks for the Sanitizer through this interpreter's packages, as the collector's CMake build does.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0 and "build.sh: no " in done.stderr:
        pytest.skip(done.stderr.strip().splitlines()[-1])  # no Sanitizer API or no cuda.h on this machine
    assert done.returncode == 0, done.stderr[-2000:]
    library = Path(done.stdout.strip().splitlines()[-1])
    assert library.is_file()
    return library


def test_the_probe_exports_the_injection_entry_point(probe):
    with probe.open("rb") as f:
        symbols = ELFFile(f).get_section_by_name(".dynsym")
        assert symbols.get_symbol_by_name("InitializeInjection")


@pytest.mark.parametrize("domains", [None, "none", "all", "resource+api"])
def test_a_process_without_cuda_runs_unchanged_under_the_probe(probe, domains):
    env = dict(os.environ, LD_PRELOAD=str(probe))
    env.pop("RL_PROBE_DOMAINS", None)
    if domains is not None:
        env["RL_PROBE_DOMAINS"] = domains
    done = subprocess.run(
        [sys.executable, "-c", "print('ran')"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr[-2000:]


def test_without_the_wheel_the_probe_builds_against_the_toolkits_sanitizer(probe, tmp_path):
    """The GPU machine's case: its Python has no Sanitizer wheel, and the collector's build takes the CUDA toolkit's
    compute-sanitizer/. A toolkit-like CUDA_HOME made of this machine's headers and library, and a `python3` that
    sees no site-packages, must give the same probe."""
    import nvidia  # the wheel that the probe fixture built against

    wheel = next(Path(d) / "cu13" for d in nvidia.__path__ if (Path(d) / "cu13/include/sanitizer.h").is_file())
    cuda_h = next(
        (Path(d) for d in ("/usr/local/cuda/include", "/usr/local/cuda-13.0/include") if Path(d, "cuda.h").is_file()),
        None,
    )
    if cuda_h is None and (wheel / "include/cuda.h").is_file():
        cuda_h = wheel / "include"
    if cuda_h is None:
        pytest.skip("no cuda.h on this machine to make a toolkit-like folder of")
    home = tmp_path / "cuda"
    (home / "compute-sanitizer").mkdir(parents=True)
    (home / "compute-sanitizer/include").symlink_to(wheel / "include")
    (home / "compute-sanitizer/libsanitizer-public.so").symlink_to(wheel / "lib/libsanitizer-public.so")
    (home / "include").symlink_to(cuda_h)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    (shims / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("REUSELENS_SANITIZER_ROOT", "PYTHONPATH")}
    env.update(CUDA_HOME=str(home), PATH=f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin")
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    library = Path(done.stdout.strip().splitlines()[-1])
    linked = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    assert str(home / "compute-sanitizer/libsanitizer-public.so") in linked
