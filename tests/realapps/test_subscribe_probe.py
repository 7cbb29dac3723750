"""benchmarks/subscribe_probe without a GPU: the probe tool library builds where the collector's build finds the
Sanitizer API and cuda.h (collector/native/CMakeLists.txt's order: REUSELENS_SANITIZER_ROOT, the wheel, a CUDA
toolkit's compute-sanitizer/), exports the injection entry point, and loaded into a process that never uses CUDA it
changes nothing, whatever it is asked to subscribe to (teardown.py's passive mode loads it into every app)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "benchmarks" / "subscribe_probe" / "build.sh"
sys.path.insert(0, str(REPO / "benchmarks"))
from native_build import cuda_include  # noqa: E402


def sanitizer_wheel() -> Path | None:
    """cu13/ of this interpreter's nvidia-cuda-sanitizer-api wheel, as the collector's build finds it."""
    try:
        import nvidia
    except ImportError:
        return None
    return next((Path(d) / "cu13" for d in nvidia.__path__ if (Path(d) / "cu13/include/sanitizer.h").is_file()), None)


WHEEL = sanitizer_wheel()
CUDA_H = cuda_include()
needs_wheel = pytest.mark.skipif(
    WHEEL is None or CUDA_H is None, reason="needs the nvidia-cuda-sanitizer-api wheel in this interpreter and cuda.h"
)


def build(out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env, timeout=300)


def linked_sanitizer(library: Path) -> str:
    ldd = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    return next(line.split("=>")[1].split("(")[0].strip() for line in ldd.splitlines() if "libsanitizer-public" in line)


def wheel_env(**extra: str) -> dict[str, str]:
    """This interpreter first on PATH (build.sh asks `python3` for the wheel), no Sanitizer root set."""
    env = {k: v for k, v in os.environ.items() if k != "REUSELENS_SANITIZER_ROOT"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env.update(extra)
    return env


def toolkit_like(root: Path) -> Path:
    """A CUDA_HOME laid out as a toolkit's (compute-sanitizer/ with include/ and the library, include/ with cuda.h)
    made of this machine's wheel and headers."""
    (root / "compute-sanitizer").mkdir(parents=True)
    (root / "compute-sanitizer/include").symlink_to(WHEEL / "include")
    (root / "compute-sanitizer/libsanitizer-public.so").symlink_to(WHEEL / "lib/libsanitizer-public.so")
    (root / "include").symlink_to(CUDA_H)
    return root


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Path:
    if WHEEL is None or CUDA_H is None:
        pytest.skip("needs the nvidia-cuda-sanitizer-api wheel in this interpreter and cuda.h")
    out = tmp_path_factory.mktemp("probe")
    done = build(out, wheel_env())
    assert done.returncode == 0, done.stderr[-2000:]
    library = Path(done.stdout.strip().splitlines()[-1])
    assert library.is_file()
    return library


def test_the_probe_exports_the_injection_entry_point(probe):
    with probe.open("rb") as f:
        assert ELFFile(f).get_section_by_name(".dynsym").get_symbol_by_name("InitializeInjection")


@pytest.mark.parametrize("domains", [None, "none", "all", "resource+api"])
def test_a_process_without_cuda_runs_unchanged_under_the_probe(probe, domains):
    env = dict(os.environ, LD_PRELOAD=str(probe))
    env.pop("RL_PROBE_DOMAINS", None)
    if domains is not None:
        env["RL_PROBE_DOMAINS"] = domains
    # The child says whether the probe is mapped into it: ld.so ignores a preload it cannot load and runs on.
    code = f"print('ran', {str(probe)!r} in open('/proc/self/maps').read())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout == "ran True\n", done.stderr[-2000:]
    # It subscribed as asked (the Sanitizer subscribes without a GPU too), and nothing it asked for failed.
    said = [line for line in done.stderr.splitlines() if line.startswith("subscribe_probe:")]
    assert said == ([] if domains is None else [f"subscribe_probe: subscribed ({domains})"]), done.stderr[-2000:]


@needs_wheel
def test_the_wheel_comes_before_a_toolkit(probe, tmp_path):
    done = build(tmp_path / "out", wheel_env(CUDA_HOME=str(toolkit_like(tmp_path / "cuda"))))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        Path(linked_sanitizer(Path(done.stdout.split()[-1]))).resolve()
        == (WHEEL / "lib/libsanitizer-public.so").resolve()
    )


def no_site_packages_python(tmp_path: Path) -> dict[str, str]:
    """An environment whose `python3` sees no site-packages (so no Sanitizer wheel), with nothing else set."""
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    (shims / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("REUSELENS_SANITIZER_ROOT", "PYTHONPATH", "CUDA_HOME")}
    tools = os.pathsep.join(str(Path(shutil.which(t)).parent) for t in ("cmake", "c++") if shutil.which(t))
    env["PATH"] = os.pathsep.join(p for p in (str(shims), tools, "/usr/bin", "/bin") if p)
    return env


@needs_wheel
def test_without_the_wheel_the_probe_builds_against_a_toolkits_sanitizer(tmp_path):
    """The GPU machine's case: its Python has no Sanitizer wheel, and the collector's build takes the CUDA toolkit's
    compute-sanitizer/."""
    home = toolkit_like(tmp_path / "cuda")
    done = build(tmp_path / "out", dict(no_site_packages_python(tmp_path), CUDA_HOME=str(home)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert linked_sanitizer(Path(done.stdout.split()[-1])) == str(home / "compute-sanitizer/libsanitizer-public.so")


@needs_wheel
def test_a_given_sanitizer_root_comes_first(tmp_path):
    root = tmp_path / "sanitizer"
    (root / "lib").mkdir(parents=True)
    (root / "include").symlink_to(WHEEL / "include")
    (root / "lib/libsanitizer-public.so").symlink_to(WHEEL / "lib/libsanitizer-public.so")
    home = toolkit_like(tmp_path / "cuda")  # a toolkit's Sanitizer too, which the root must win over
    env = dict(wheel_env(), CUDA_HOME=str(home), REUSELENS_SANITIZER_ROOT=str(root))
    done = build(tmp_path / "out", env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert linked_sanitizer(Path(done.stdout.split()[-1])) == str(root / "lib/libsanitizer-public.so")


def test_no_sanitizer_anywhere_is_one_clear_error(tmp_path):
    env = dict(no_site_packages_python(tmp_path), CUDA_HOME=str(tmp_path / "nothing"))
    if any(
        Path(d, "compute-sanitizer/include/sanitizer.h").is_file() for d in ("/usr/local/cuda", "/usr/local/cuda-13.0")
    ):
        pytest.skip("this machine's toolkit has a compute-sanitizer/: the build finds it")
    done = build(tmp_path / "out", env)
    assert done.returncode == 1 and done.stderr.strip().startswith("build.sh: no Sanitizer API found"), done.stderr
