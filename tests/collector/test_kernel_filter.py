"""The kernel filter (collector/native/src/kernel_filter.cpp and collector/kernel_regex.py), checked without a GPU:
the C++ harness tests/collector/native/kernel_filter_test.cpp is compiled against the collector's source."""

from __future__ import annotations

import subprocess

import pytest

import reuselens.collector.launcher as launcher
from reuselens.collector.errors import InvalidFilterError
from reuselens.collector.kernel_regex import kernel_regex_problem
from tests.native_build import COMPILER, NO_COMPILER, REPO, SANITIZER_ENV, build

SOURCES = [
    REPO / "tests/collector/native/kernel_filter_test.cpp",
    REPO / "collector/native/src/kernel_filter.cpp",
    REPO / "collector/native/src/support.cpp",
]
INCLUDES = [REPO / "collector/native/src"]

# Accepted and refused filters, including the corners of bracket expressions and escapes.
PATTERNS = [
    "gemm",
    "^softmax",
    "a|b",
    ".*kernel.*",
    "gemm_kernel\\(float\\*",
    "[0-9]+gemm",
    "^_Z.*Li3EE",
    "a{2}",
    "x\\w+\\b",
    "\\<gemm\\>",
    "[\\d]",
    "[]x]",
    "[^]x]+",
    "[[:alpha:]_]+",
    "[[.-.]]",
    "[[=a=]]",
    "\\\\",
    "\\(",
    ".*?x",
    "a**",
    "()",
    "a||b",
    "softmax(",
    "a)",
    "[[:alpha:]",
    "[x",
    "a{2,1}",
    "(?=x)",
    "[z-a]",
    "\\",
    "[[:nope:]]",
    "\\d+",
    "\\D",
    "\\1",
    "(a)\\1",
    "\\n",
    "caf\u00e9",
]


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("sanitizer", [None, "address,undefined"])
def test_ordinary_filters_and_30k_character_names(tmp_path, sanitizer):
    """Ordinary filters select what they did with std::regex; `.*gemm.*` on a 36,000-character name runs on a
    512 KiB stack (std::regex overflowed even an 8 MiB one: segmentation fault)."""
    exe = build(tmp_path / "kernel_filter_test", SOURCES, INCLUDES, sanitizer)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=SANITIZER_ENV)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (
        f"exit {run.returncode}: " + run.stdout + run.stderr[-4000:]
    )


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
def test_launcher_accepts_exactly_what_the_collector_accepts(tmp_path):
    exe = build(tmp_path / "kernel_filter_test", SOURCES, INCLUDES)
    run = subprocess.run([str(exe), "check", *PATTERNS], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    collector = run.stdout.splitlines()
    assert len(collector) == len(PATTERNS)
    for pattern, verdict in zip(PATTERNS, collector):
        expected = "ok" if verdict == "ok" else verdict.removeprefix(f"error: invalid kernel regex '{pattern}': ")
        assert (kernel_regex_problem(pattern) or "ok") == expected, pattern
    assert {"ok"} < set(collector), "the table must hold accepted and refused filters"


@pytest.mark.parametrize(
    "pattern, reason",
    [
        ("\\d+_gemm", "\\d is not POSIX extended syntax"),
        ("(gemm)_\\1", "back-reference \\1"),
        ("(?=gemm)", "Invalid preceding regular expression"),
    ],
)
def test_profile_refuses_what_the_collector_would_refuse(no_gpu_needed, fake_app, tmp_path, pattern, reason):
    app = fake_app("print('hi')\n")
    with pytest.raises(InvalidFilterError, match="not a valid regex") as info:
        launcher.profile([str(app)], run_dir=tmp_path / "run", kernel_filter=pattern)
    assert reason in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "run").exists()
