"""Compiler messages in build output -> (file, line, column, severity, message).

Two forms cover nvcc's front end and the host compilers it drives:
  nvcc/EDG/MSVC style:  kernel.cu(42): error: identifier "x" is undefined
  gcc/clang style:      kernel.cu:42:7: error: expected ';' before '}' token
Continuation lines (source excerpts, carets, "detected during ...") are not messages of their own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_PAREN = re.compile(
    r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+)(?:,\s*(?P<col>\d+))?\)\s*:\s*"
    r"(?P<sev>fatal error|error|warning|remark|note)(?:\s*[#A-Za-z0-9-]*)?\s*:\s*(?P<msg>.*)$"
)
_COLON = re.compile(
    r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?P<sev>fatal error|error|warning|note)\s*:\s*(?P<msg>.*)$"
)


@dataclass(frozen=True)
class CompilerMessage:
    path: str
    line: int
    column: int  # 1-based; 0 when the compiler gave none
    severity: str  # error | warning | note
    message: str


def parse(output: str, cwd: str) -> list[CompilerMessage]:
    out = []
    for raw in output.splitlines():
        text = raw.rstrip()
        match = _PAREN.match(text) or _COLON.match(text)
        if not match:
            continue
        path = match.group("file").strip()
        severity = (
            "error" if "error" in match.group("sev") else ("warning" if match.group("sev") == "warning" else "note")
        )
        out.append(
            CompilerMessage(
                os.path.normpath(os.path.join(cwd, path)),
                int(match.group("line")),
                int(match.group("col") or 0),
                severity,
                match.group("msg").strip(),
            )
        )
    return out
