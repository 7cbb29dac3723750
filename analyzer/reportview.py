"""Read-side helpers over a report dict (docs/report-format.md): where a finding sits in the source.

Shared by the CLI's report/diff/graph commands; a finding's lines are always derived from its nodes'
`source`, never guessed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Iterator

from reuselens.analyzer import configurations
from reuselens.analyzer.toolkit_paths import user_frame

SEVERITY_ORDER = {"error": 0, "warning": 1, "information": 2, "hint": 3}
# Findings that are not traffic (correctness and barrier findings): the analysis keeps them whatever their share of
# the kernel's traffic (analyzer/patterns/finding.py, finalize) and so does the editor when it applies minShare to a
# report (lsp_server/diagnostics.py); until session 45 it hid every race candidate below minShare.
MIN_SHARE_EXEMPT_PATTERNS = frozenset({"race-candidate", "removable-barrier"})


@dataclass(frozen=True)
class Place:
    file: str | None
    line: int | None

    def __str__(self) -> str:
        if self.file is None:
            return "?"
        return f"{self.file}:{self.line}" if self.line else self.file


def nodes_by_id(kernel: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(node["id"]): node for node in kernel.get("nodes", [])}


def places(kernel: dict[str, Any], pcs: list[int]) -> list[Place]:
    """Distinct source places of the given node ids, in first-seen order; kernel-level if none has a line. A
    place is the line a developer reads (toolkit_paths.user_frame)."""
    nodes = nodes_by_id(kernel)
    seen: list[Place] = []
    for node_id in pcs:
        source = (nodes.get(int(node_id)) or {}).get("source")
        if source and source.get("file"):
            source = user_frame(source)  # the app's line, not a toolkit header's it inlined (as the editor shows)
            place = Place(source["file"], source.get("line"))
            if place not in seen:
                seen.append(place)
    return seen


def finding_places(kernel: dict[str, Any], finding: dict[str, Any]) -> list[Place]:
    """Where a finding sits: its PCs' places, or for a finding without memory PCs (removable-barrier) the
    place of the instruction it names in `barrier`."""
    found = places(kernel, finding.get("pcs", []))
    barrier = finding.get("barrier")
    source = barrier.get("source") if isinstance(barrier, dict) else None
    if source and source.get("file"):
        source = user_frame(source)
        place = Place(source["file"], source.get("line"))
        if place not in found:
            found.append(place)
    return found


def iter_findings(report: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(kernel, finding) pairs ordered by rank within each kernel, kernels in report order."""
    for kernel in report.get("kernels", []):
        for finding in sorted(kernel.get("findings", []), key=lambda f: (f.get("rank", 1 << 30), f.get("id", ""))):
            yield kernel, finding


def ranked_findings(report: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """All findings of all kernels, most wasteful first (by bytes, then share), ties by id for stability."""
    pairs = list(iter_findings(report))
    pairs.sort(
        key=lambda kf: (
            -float(kf[1].get("waste", {}).get("bytes", 0)),
            -float(kf[1].get("waste", {}).get("share", 0)),
            kf[1].get("id", ""),
        )
    )
    return pairs


def kernel_label(kernel: dict[str, Any]) -> str:
    name = kernel.get("name") or kernel.get("mangled") or kernel.get("id", "?")
    return f"{name} {configurations.summary(kernel)}"


def kernel_title(kernel: dict[str, Any], width: int = 100) -> str:
    """Short name (at most `width` characters) and launch configuration, for lists on a terminal."""
    return f"{fit(short_kernel_name(kernel), width)} {configurations.summary(kernel)}"


def fit(text: str, width: int) -> str:
    """`text` in at most `width` characters, the middle replaced by "…" when longer: both ends of a template
    kernel name or of a path tell more than either alone."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def short_kernel_name(kernel: dict[str, Any]) -> str:
    """The kernel's demangled name without its parameter list and without a `void ` return type: the
    parameter list is the parenthesised group that closes the name, found from the end, because parentheses
    also occur inside it (`(anonymous namespace)::`, `operator()`, lambdas in template arguments)."""
    return _short_name(kernel.get("name") or kernel.get("mangled") or str(kernel.get("id", "?")))


@functools.lru_cache(maxsize=4096)
def _short_name(name: str) -> str:
    """short_kernel_name of one demangled name; cached: every diagnostic, lens and hover of a kernel asks again,
    and a template's name is hundreds of characters walked one by one."""
    head = name
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                head = name[:i].rstrip() or name
                break
    return head[5:] if head.startswith("void ") and len(head) > 5 else head
