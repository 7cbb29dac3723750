"""Line ranges of the functions defined in the test sources, to check inlined-function names semantically:
a frame that says "code of f at file:line" must have line inside f's definition in file."""

from __future__ import annotations

import re
from pathlib import Path

_DEF = re.compile(r'^(?:extern "C" |namespace \{\s*)?(?:__global__|__device__)\b.*?\b([A-Za-z_]\w*)\s*\(')
_NAME = re.compile(r"([A-Za-z_]\w*)(?:<[^()]*>)?\(")


def function_ranges(directory: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """{(file name, function name): (first line, last line)} for top-level __global__/__device__ definitions."""
    ranges = {}
    for path in sorted(directory.glob("*.cu*")):
        lines = path.read_text().splitlines()
        for i, text in enumerate(lines):
            m = _DEF.match(text)
            if not m or text.split("//")[0].rstrip().endswith(";"):
                continue  # a declaration
            end = i
            if "}" not in text:
                while end + 1 < len(lines) and lines[end] != "}":
                    end += 1
            ranges[(path.name, m.group(1))] = (i + 1, end + 1)
    return ranges


def base_name(demangled: str) -> str:
    """`void tmpl_kernel<float, 256>(float*, ...)` -> tmpl_kernel; for a ptxas clone `a(...)$b(...)`, b."""
    last = demangled.split("$")[-1]
    m = _NAME.search(last)
    return m.group(1) if m else last


def check_frames(loc, ranges) -> list[str]:
    """Problems with the function names of a location's frames (empty list when all are right).

    Code of CUDA's internal helpers (`__internal_*`, `__cuda_*`) sits on the calling line.
    """
    problems = []
    frames = loc.inline or [loc.outermost]
    for frame in frames:
        if "__internal" in frame.function or "__cuda_" in frame.function:
            continue
        key = (Path(frame.file).name, base_name(frame.function))
        span = ranges.get(key)
        if span is None or not span[0] <= frame.line <= span[1]:
            problems.append(f"{frame.function} at {Path(frame.file).name}:{frame.line} (definition {span})")
    return problems
