"""Assertions over a report of tests/gpu/pattern_suite.cu (issue #8): every implant found, controls clean.

Shared by the replay test (tests/patterns/test_pattern_suite.py, on the run recorded on the H200) and the live
GPU test (tests/gpu/patterns/test_gpu_programs.py). The source marks every line where an implant must be
reported with a trailing `// implant: <pattern-id>`; a finding counts as the implant only when every source
line it names (its PCs' lines, or the barrier's line for removable-barrier) is marked with its pattern.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reuselens.analyzer.patterns import PATTERNS

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "gpu" / "pattern_suite.cu"
SOURCE_NAME = SOURCE.name
NVCC_FLAGS = ["-O3", "-lineinfo", "-gencode", "arch=compute_90,code=sm_90"]  # as tests/gpu/Makefile

_MARKER = re.compile(r"//\s*implant:\s*([a-z-]+)\s*$")

# What a control may still show besides nothing. A kernel that reads an input or writes an output once touches
# those bytes for the first time: the paper's streaming test (cold share > 0.95, section 3.3 IV) holds for
# every such PC, so every control keeps streaming-access findings except control_streaming_access, which reads
# its data with on-chip reuse and updates it in place and must be free of findings of every pattern.
ALLOWED_IN_CONTROL: dict[str, frozenset[str]] = {
    pattern: frozenset() if pattern == "streaming-access" else frozenset({"streaming-access"}) for pattern in PATTERNS
}


def kernel_name(prefix: str, pattern: str) -> str:
    return f"{prefix}_{pattern.replace('-', '_')}"


def marked_lines(source: Path = SOURCE) -> dict[str, set[int]]:
    """pattern id -> 1-based lines of the source marked `// implant: <pattern-id>`."""
    marks: dict[str, set[int]] = {}
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        match = _MARKER.search(line)
        if match:
            marks.setdefault(match.group(1), set()).add(number)
    return marks


def find_kernel(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The report kernel whose mangled name is exactly the extern-free C++ function `name` (_Z<len><name>...)."""
    prefix = f"_Z{len(name)}{name}"
    matches = [k for k in report["kernels"] if str(k.get("mangled") or "").startswith(prefix)]
    names = sorted(str(k.get("mangled")) for k in report["kernels"])
    assert len(matches) == 1, (
        f"expected one launch configuration of {name} in the report, found {len(matches)} (kernels: {names})"
    )
    return matches[0]


def kernel_line(source: dict[str, Any] | None) -> tuple[str, int]:
    """(file name, line) in the kernel's own code: the call site for inlined code (atomicAdd lives in a CUDA
    header; its outermost inline frame is the line of the kernel that calls it), ('', 0) without line info."""
    if not source:
        return ("", 0)
    frame = (source.get("inline") or [source])[-1]
    if not frame.get("file") or not frame.get("line"):
        return ("", 0)
    return (Path(str(frame["file"])).name, int(frame["line"]))


def finding_lines(kernel: dict[str, Any], finding: dict[str, Any]) -> set[tuple[str, int]]:
    """kernel_line of every source position the finding names (its PCs, or the barrier of removable-barrier)."""
    nodes = {node["id"]: node for node in kernel["nodes"]}
    sources = [nodes[pc].get("source") for pc in finding["pcs"]]
    if finding["pattern"] == "removable-barrier":
        sources.append((finding.get("barrier") or {}).get("source"))
    return {kernel_line(source) for source in sources}


def describe(kernel: dict[str, Any]) -> str:
    parts = []
    for finding in kernel.get("findings", []):
        where = ", ".join(f"{name}:{line}" for name, line in sorted(finding_lines(kernel, finding)))
        parts.append(f"{finding['pattern']} at {where or 'no source'}")
    return "; ".join(parts) or "no findings"


def check_implant(report: dict[str, Any], pattern: str, marks: dict[str, set[int]] | None = None) -> None:
    marks = marked_lines() if marks is None else marks
    wanted = marks.get(pattern, set())
    assert wanted, f"{SOURCE_NAME} marks no line with '// implant: {pattern}'"
    name = kernel_name("implant", pattern)
    kernel = find_kernel(report, name)
    mine = [f for f in kernel.get("findings", []) if f["pattern"] == pattern]
    assert mine, f"{name}: no {pattern} finding ({describe(kernel)})"
    on_marks = [f for f in mine if finding_lines(kernel, f) <= {(SOURCE_NAME, line) for line in wanted}]
    assert on_marks, f"{name}: the {pattern} findings are not on the marked lines {sorted(wanted)} ({describe(kernel)})"


def check_control(report: dict[str, Any], pattern: str) -> None:
    name = kernel_name("control", pattern)
    kernel = find_kernel(report, name)
    found = {f["pattern"] for f in kernel.get("findings", [])}
    assert pattern not in found, f"{name}: the control triggers its own pattern ({describe(kernel)})"
    unexpected = found - ALLOWED_IN_CONTROL[pattern]
    assert not unexpected, (
        f"{name}: unexpected findings {sorted(unexpected)}; allowed only "
        f"{sorted(ALLOWED_IN_CONTROL[pattern])} ({describe(kernel)})"
    )
