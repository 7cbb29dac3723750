"""Findings -> push diagnostics: one per finding, on the line of its heaviest instruction.

severity comes from the report (the analyzer grades findings by waste) and falls back to the waste share;
code is the pattern id, linked to the packaged docs/patterns.md#<pattern-id>; relatedInformation points at the
reuse-origin lines; data carries what the quick fix needs, so no lookup depends on the diagnostic's text.

Streaming-access findings ("first touch, nothing to reuse") are information about every input and output a
kernel touches once: on real applications they are 10-47% of the findings and nothing can be fixed on them,
so they stay out of the Problems panel unless `reuselens.diagnostics.showStreaming` is on (lenses, hovers and
the report keep them). When findings of several kernels share a line (template instantiations, or one kernel
in several launch configurations) each diagnostic names its kernel.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from lsprotocol import types

from reuselens.analyzer.reportview import MIN_SHARE_EXEMPT_PATTERNS, kernel_title, short_kernel_name
from reuselens.lsp_server.format import LABEL_NAMES
from reuselens.lsp_server.model import FindingRef, RunResults
from reuselens.lsp_server.paths import path_to_uri
from reuselens.lsp_server.tracking import LineMap

SOURCE = "reuselens"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def default_docs_base() -> str:
    """file:// URI of the pattern docs shipped in this package (lsp_server/patterns.md, a link to
    docs/patterns.md in the checkout that the wheel stores as a file): the `reuselens.docs.baseUrl` default.
    Not resolved, so an installed server links its own copy, never a checkout that may not exist."""
    return (Path(__file__).absolute().parent / "patterns.md").as_uri()


def severity(finding: dict) -> types.DiagnosticSeverity:
    named = _SEVERITY.get(str(finding.get("severity")))
    if named:
        return named
    share = float((finding.get("waste") or {}).get("share", 0) or 0)
    if share >= 0.10:
        return types.DiagnosticSeverity.Warning
    return types.DiagnosticSeverity.Information if share >= 0.01 else types.DiagnosticSeverity.Hint


def line_range(lines: list[str], line: int) -> types.Range:
    """The text of 1-based `line`, from its first non-blank character to its end (character = code points;
    the server converts to the client's encoding)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = len(text) - len(text.lstrip())
    return types.Range(types.Position(line - 1, start), types.Position(line - 1, len(text)))


def _rel(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return os.path.relpath(path, root)
    return os.path.basename(path)


def _labels_by_origin(results: RunResults, ref: FindingRef) -> dict[Any, set]:
    """Origin node id -> the reuse labels of the finding's edges into it, in one walk of the finding's edges (a
    walk per origin cost hundreds of milliseconds on a sorting network's inlined comparators)."""
    labels: dict[Any, set] = {}
    for pc in ref.finding.get("pcs") or []:
        for edge in results.edges_from(ref.kernel, pc):
            labels.setdefault(edge.get("to"), set()).add(edge.get("label"))
    return labels


def _origin_message(ref: FindingRef, origin, labels: set) -> str:
    scope = ", ".join(LABEL_NAMES.get(l, l) for l in sorted(labels) if l) or ref.finding.get("scope") or "reuse"
    return f"reuse origin: {origin.node.get('space')} {origin.node.get('type')} at PC {origin.node.get('pc', 0):#06x} ({scope})"


def related(results: RunResults, ref: FindingRef, origin_lines: dict) -> list[types.DiagnosticRelatedInformation]:
    """Origins and other responsible lines, each placed only where its line could be mapped."""
    out = []
    labels = _labels_by_origin(results, ref) if ref.origins else {}
    for origin in ref.origins:
        rng = origin_lines.get((origin.path, origin.line))
        if rng is not None:
            message = _origin_message(ref, origin, labels.get(origin.node["id"], set()))
            out.append(types.DiagnosticRelatedInformation(types.Location(path_to_uri(origin.path), rng), message))
    for path, line in ref.also:
        rng = origin_lines.get((path, line))
        if rng is not None:
            out.append(
                types.DiagnosticRelatedInformation(
                    types.Location(path_to_uri(path), rng), "also responsible for this finding"
                )
            )
    return out


STREAMING = "streaming-access"


def _shown(ref: FindingRef, min_share: float, show_streaming: bool) -> bool:
    finding = ref.finding
    if finding.get("pattern") == STREAMING and not show_streaming:
        return False
    if finding.get("pattern") in MIN_SHARE_EXEMPT_PATTERNS:
        return True
    return not (
        float((finding.get("waste") or {}).get("share", 1) or 0) < min_share and finding.get("waste", {}).get("bytes")
    )


def kernel_names(refs: list[FindingRef]) -> dict[int, str]:
    """id(ref) -> the name of its kernel, for refs on a line that findings of several kernels share: the short
    name, or with the launch configuration when the short names alone do not tell the kernels apart."""
    by_line: dict[int, dict[str, dict]] = defaultdict(dict)
    for ref in refs:
        by_line[ref.line][str(ref.kernel.get("id"))] = ref.kernel
    names: dict[int, str] = {}
    for ref in refs:
        kernels = by_line[ref.line]
        if len(kernels) < 2:
            continue
        short = [short_kernel_name(k) for k in kernels.values()]
        unique = len(set(short)) == len(short)
        names[id(ref)] = short_kernel_name(ref.kernel) if unique else kernel_title(ref.kernel, 80)
    return names


def build(
    results: RunResults,
    path: str,
    lines: list[str],
    line_map: LineMap | None,
    docs_base: str,
    locate,
    min_share: float,
    root: str | None,
    show_streaming: bool = False,
) -> list[types.Diagnostic]:
    """Diagnostics for one file. `locate(path, line)` gives the current Range of another file's snapshot
    line (or None when that line changed); `line_map` shifts this file's lines."""
    out = []
    shown = [ref for ref in results.findings_by_file.get(path, []) if _shown(ref, min_share, show_streaming)]
    names = kernel_names(shown)
    for ref in shown:
        finding = ref.finding
        line = line_map.to_current(ref.line) if line_map else ref.line
        if line is None:
            continue
        origin_lines = {(o.path, o.line): locate(o.path, o.line) for o in ref.origins}
        origin_lines.update({(p, l): locate(p, l) for p, l in ref.also})
        message = finding.get("message") or finding.get("pattern", "finding")
        origins = [f"{_rel(o.path, root)}:{o.line}" for o in ref.origins if (o.path, o.line) != (ref.path, ref.line)]
        if origins:
            message += f" (reuse origin: {', '.join(dict.fromkeys(origins))})"
        if id(ref) in names:
            message += f" [kernel {names[id(ref)]}]"
        pattern = str(finding.get("pattern", ""))
        out.append(
            types.Diagnostic(
                range=line_range(lines, line),
                message=message,
                severity=severity(finding),
                source=SOURCE,
                code=pattern,
                code_description=types.CodeDescription(href=f"{docs_base}#{pattern}"),
                related_information=related(results, ref, origin_lines) or None,
                data={
                    "findingId": str(finding.get("id")),
                    "kernel": ref.kernel.get("id"),
                    "pattern": pattern,
                    "fixKind": (finding.get("fix") or {}).get("kind", "none"),
                    "run": results.digest[:16],
                    "line": ref.line,
                },
            )
        )
    return out
