"""Which source lines a report says can lose their barrier together, and the edit that removes them.

A `removable-barrier` finding (docs/patterns.md) names one barrier line of a kernel; all the kernel's
removable-barrier findings of one launch configuration form one set that "can go together". This module reads
those sets out of a report.json, finds each barrier's line in the program's own sources (the innermost frame of
`barrier.source` and its inline chain that lies inside the source tree: a `cg::sync(cta)` is compiled from the
cooperative-groups header but written at its call site), and replaces each barrier call on those lines by
`(void)0` with a comment. The call, not the statement, is replaced, so `if (c) __syncthreads();` stays one
statement. A line without a recognisable barrier call, or whose barrier returns a value, is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from reuselens.lsp_server.edits import code_only

# Barrier calls a developer writes: __syncthreads(), __syncwarp(mask), __barrier_sync(id), cg::sync(group),
# group.sync() / this_thread_block().sync(). Each match is the whole call expression.
_BARRIER_CALL = re.compile(
    r"(?:\b__syncthreads|\b__syncwarp|\b__barrier_sync|\b(?:cg|cooperative_groups)\s*::\s*sync)\s*\("
    r"|(?:\b(?:\w+\s*::\s*)*[A-Za-z_]\w*\s*(?:\(\s*\))?\s*(?:\.|->)\s*sync\s*\()"
)
# __syncthreads_count/_and/_or return a block-wide reduction: the value is used, so the barrier cannot just go.
_VALUE_BARRIER = re.compile(r"\b__syncthreads_(?:count|and|or)\s*\(")


class EditRefused(Exception):
    """The line cannot be edited mechanically; the message says why."""


@dataclass(frozen=True)
class SourceLine:
    path: Path  # inside the source tree
    relative: str  # path relative to the source tree, for display and for the copy
    line: int

    def __str__(self) -> str:
        return f"{self.relative}:{self.line}"


@dataclass
class RemovalSet:
    """The removable barriers of one kernel (one launch configuration), as source lines."""

    kernel: str
    config: str
    lines: list[SourceLine] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # barriers that could not be placed in the sources
    kept_on_same_line: list[str] = field(default_factory=list)  # lines that also hold a barrier that stays


def _call_end(text: str, open_paren: int) -> int:
    """Index after the parenthesis that closes the one at open_paren, or -1 when it is not on this line."""
    depth = 0
    for index in range(open_paren, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def barrier_calls(code: str) -> list[tuple[int, int]]:
    """[start, end) of every barrier call on a line whose comments and strings are blanked (edits.code_only)."""
    spans = []
    for match in _BARRIER_CALL.finditer(code):
        end = _call_end(code, match.end() - 1)
        if end < 0:
            raise EditRefused("the barrier call continues on the next line")
        spans.append((match.start(), end))
    return spans


def remove_barriers(lines: list[str], line_numbers: list[int]) -> list[str]:
    """The file's lines (without line ends) with every barrier call on the given 1-based lines replaced by
    `(void)0 /* removed: <call> */`; raises EditRefused naming the first line that cannot be edited."""
    code = code_only(lines)
    edited = list(lines)
    for number in sorted(set(line_numbers)):
        if not 0 < number <= len(lines):
            raise EditRefused(f"line {number} is outside the file ({len(lines)} lines)")
        if _VALUE_BARRIER.search(code[number - 1]):
            raise EditRefused(
                f"line {number}: the barrier returns a block-wide value (__syncthreads_count/_and/_or) that the "
                f"code uses; it cannot simply be removed"
            )
        try:
            spans = barrier_calls(code[number - 1])
        except EditRefused as refusal:
            raise EditRefused(f"line {number}: {refusal}") from None
        if not spans:
            raise EditRefused(
                f"line {number} has no recognisable barrier call (__syncthreads, __syncwarp, __barrier_sync, "
                f"cg::sync, .sync()): {lines[number - 1].strip()[:80]!r}"
            )
        text = lines[number - 1]
        for start, end in reversed(spans):
            call = text[start:end].replace("*/", "* /")
            text = f"{text[:start]}(void)0 /* removed by barrier_safety: {call} */{text[end:]}"
        edited[number - 1] = text
    return edited


def _frames(source: dict[str, Any] | None) -> list[tuple[str, int]]:
    """(file, line) of the barrier's innermost location, then of each inline frame outwards."""
    if not isinstance(source, dict):
        return []
    frames = [(source.get("file"), source.get("line"))]
    frames += [(f.get("file"), f.get("line")) for f in source.get("inline") or [] if isinstance(f, dict)]
    return [(str(f), int(n)) for f, n in frames if f and n]


def locate(recorded: str, root: Path) -> Path | None:
    """The file of the source tree that a recorded (build-time, absolute) path names: the path itself when it
    lies inside the tree, else the longest tail of it that exists under the tree (the run was recorded on
    another machine or in another checkout)."""
    root = root.resolve()
    path = Path(recorded)
    try:
        path.resolve().relative_to(root)
        return path.resolve() if path.is_file() else None
    except ValueError:
        pass
    parts = PurePosixPath(recorded).parts
    for start in range(1, len(parts)):
        candidate = root.joinpath(*parts[start:])
        if candidate.is_file():
            return candidate.resolve()
    return None


def place(barrier: dict[str, Any], root: Path) -> SourceLine | None:
    """The innermost line of the barrier's inline chain that is in the program's sources."""
    for recorded, line in _frames(barrier.get("source")):
        found = locate(recorded, root)
        if found is not None:
            return SourceLine(found, str(found.relative_to(root.resolve())), line)
    return None


def _config(kernel: dict[str, Any]) -> str:
    grid, block = kernel.get("grid"), kernel.get("block")
    return f"grid {tuple(grid) if grid else '?'} block {tuple(block) if block else '?'}"


def removal_sets(report: dict[str, Any], root: Path) -> list[RemovalSet]:
    """One RemovalSet per kernel entry (kernel and launch configuration) with removable-barrier findings."""
    sets = []
    for kernel in report.get("kernels", []):
        findings = [f for f in kernel.get("findings", []) if f.get("pattern") == "removable-barrier"]
        if not findings:
            continue
        name = str(kernel.get("name") or kernel.get("mangled") or "?")
        removal = RemovalSet(name, _config(kernel))
        removable = set()  # (function, pc): a finding's copies are one line of one function
        for finding in findings:
            barrier = finding.get("barrier") or {}
            pcs = (finding.get("metrics") or {}).get("barrier_pcs") or [barrier.get("pc")]
            removable.update((barrier.get("function"), pc) for pc in pcs)
            placed = place(barrier, root)
            if placed is None:
                frames = ", ".join(f"{f}:{n}" for f, n in _frames(barrier.get("source"))) or "no line information"
                removal.refused.append(f"barrier at pc {barrier.get('pc')} is not in the program's sources ({frames})")
            elif placed not in removal.lines:
                removal.lines.append(placed)
        for barrier in kernel.get("barriers", []):
            if (barrier.get("function"), barrier.get("pc")) in removable:
                continue
            placed = place(barrier, root)
            if placed is not None and placed in removal.lines:
                removal.kept_on_same_line.append(
                    f"{placed} also holds the barrier at pc {barrier.get('pc')}, which stays"
                )
        sets.append(removal)
    return sets
