"""Code actions for findings: a WorkspaceEdit where edits.py can prove the change mechanical and safe,
and always an "explain" action that shows the precise how-to (fix.explanation plus why no edit is offered)."""

from __future__ import annotations

from lsprotocol import types

from reuselens.lsp_server import edits
from reuselens.lsp_server.model import FindingRef, RunResults

EXPLAIN = "reuselens.explain"
FIX_TITLES = {
    "register-promotion": "keep the value in a register",
    "constant-promotion": "move to __constant__",
    "shared-demotion": "demote shared memory to registers",
    "padding": "pad against bank conflicts",
    "l2-window": "set an L2 access-policy window",
    "barrier-removal": "remove the barrier",
    "shared-promotion": "stage in shared memory",
    "coalescing": "coalesce the accesses",
    "warp-shuffle": "use warp shuffles",
}


def _barriers_removable(results: RunResults, ref: FindingRef) -> bool:
    """Every barrier compiled from the finding's line is spanned by no cross-thread edge."""
    on_line = results.barriers_by_line.get(ref.path, {}).get(ref.line, [])
    return bool(on_line) and all(int(b.get("spanned_cross_thread_edges", 1) or 0) == 0 for b in on_line)


def mechanical_edit(results: RunResults, ref: FindingRef, lines: list[str], line: int, capacity: int):
    """An edits.Edit, or a sentence saying why the fix is left to the developer."""
    kind = (ref.finding.get("fix") or {}).get("kind")
    if kind == "padding":
        return edits.padding(lines, line)
    if kind == "barrier-removal":
        return edits.barrier_removal(lines, line, _barriers_removable(results, ref))
    if kind == "constant-promotion":
        return edits.constant_promotion(lines, line, capacity)
    return "this change depends on the surrounding algorithm, so it is not made automatically"


def _text_edit(edit: edits.Edit, lines: list[str], encode) -> types.TextEdit:
    if edit.end is None:  # the whole line, with its line break
        rng = types.Range(types.Position(edit.line - 1, 0), types.Position(edit.line, 0))
    else:
        rng = types.Range(encode(edit.line - 1, edit.start), encode(edit.line - 1, edit.end))
    return types.TextEdit(range=rng, new_text=edit.text)


def for_diagnostic(
    results: RunResults,
    ref: FindingRef,
    diagnostic: types.Diagnostic,
    uri: str,
    version,
    lines: list[str],
    capacity: int,
    encode,
) -> list[types.CodeAction]:
    """encode(line0, codepoint) -> Position in the client's units."""
    line = diagnostic.range.start.line + 1
    outcome = mechanical_edit(results, ref, lines, line, capacity)
    kind = (ref.finding.get("fix") or {}).get("kind", "none")
    out = []
    if isinstance(outcome, edits.Edit):
        change = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=[_text_edit(outcome, lines, encode)],
        )
        out.append(
            types.CodeAction(
                title=f"ReuseLens: {outcome.title}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=True,
                edit=types.WorkspaceEdit(document_changes=[change]),
            )
        )
        why = None
    else:
        why = outcome
    title = f"ReuseLens: how to {FIX_TITLES.get(kind, 'fix this')} ({ref.finding.get('pattern')})"
    out.append(
        types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            command=types.Command(title=title, command=EXPLAIN, arguments=[str(ref.finding.get("id")), why]),
        )
    )
    return out


def explanation(ref: FindingRef, why: str | None) -> str:
    finding = ref.finding
    text = f"{finding.get('pattern')} in {ref.kernel.get('name') or ref.kernel.get('mangled')}: "
    text += (finding.get("fix") or {}).get("explanation") or finding.get("message", "")
    if why:
        text += f" (No automatic edit: {why}.)"
    return text
