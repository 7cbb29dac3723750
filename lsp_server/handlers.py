"""LSP features and commands of the ReuseLens server: each handler converts, delegates, returns.

The decorators below only record the handlers; register(server) hands them to a server, so this module
depends on server.py and never the other way round.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from lsprotocol import types

from reuselens.lsp_server import (
    actions,
    code_cache,
    diagnostics,
    graph,
    hover,
    lenses,
    memory_hover,
    memory_page,
    memory_views,
)
from reuselens.lsp_server import markdown as md
from reuselens.lsp_server import settings as settings_mod
from reuselens.lsp_server.paths import uri_to_path
from reuselens.lsp_server.server import ReuseLensServer
from reuselens.lsp_server.watcher import RunWatcher

FEATURES: list[tuple[str, Any, Callable]] = []  # (LSP method, its options, handler), in registration order
COMMANDS: list[tuple[str, Callable]] = []  # (workspace/executeCommand name, handler)


def feature(method: str, options: Any = None) -> Callable[[Callable], Callable]:
    def record(handler: Callable) -> Callable:
        FEATURES.append((method, options, handler))
        return handler

    return record


def command(name: str) -> Callable[[Callable], Callable]:
    def record(handler: Callable) -> Callable:
        COMMANDS.append((name, handler))
        return handler

    return record


def register(server: ReuseLensServer) -> None:
    """Give `server` every feature and command of this module."""
    for method, options, handler in FEATURES:
        server.feature(method, options)(handler)
    for name, handler in COMMANDS:
        server.command(name)(handler)


@feature(types.INITIALIZE)
def initialize(ls: ReuseLensServer, params: types.InitializeParams) -> None:
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    trusted = options.get("workspaceTrusted")
    ls.state.client_trusted = trusted if isinstance(trusted, bool) else None
    folders = params.workspace_folders or []
    root_uri = folders[0].uri if folders else params.root_uri
    ls.state.root = uri_to_path(root_uri) if root_uri else (params.root_path or "")
    ls.init_settings = options.get("settings")
    ls.state.settings, problems = settings_mod.parse(ls.init_settings, ls.state.root, ls.check_kernel_filter)
    # Only the client's launch options are user-level: workspace/configuration answers may carry a project's
    # own settings (.vscode/settings.json, .neoconf.json, ...), so a repository could trust itself.
    ls.state.user_allows_commands = (
        options.get("allowWorkspaceCommands") is True or ls.state.settings.allow_workspace_commands
    )
    if problems:
        ls.tell(types.MessageType.Warning, "ReuseLens: " + " ".join(problems))


@feature(types.INITIALIZED)
async def initialized(ls: ReuseLensServer, params: types.InitializedParams) -> None:
    ls.watcher = RunWatcher(asyncio.get_running_loop(), ls.reload)
    ls.watcher.watch(ls.state.settings.run_directory)
    await ls.refresh_settings(probe=ls.init_settings is None)
    ls.reload()
    code_cache.save_after_start_up()  # the generated code, for the next start (when this one compiled it)


@feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: ReuseLensServer, params: types.DidChangeConfigurationParams) -> None:
    pushed = params.settings.get("reuselens") if isinstance(params.settings, dict) else None
    await ls.refresh_settings(pushed)


@feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ReuseLensServer, params: types.DidOpenTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    ls.doc_uris[path] = params.text_document.uri
    ls.state.tracker.opened(path, params.text_document.text)
    ls.publish(path)


@feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ReuseLensServer, params: types.DidChangeTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    doc = ls.document(path)
    if doc is not None:
        ls.state.tracker.changed(path, params.content_changes, doc.source)
    ls.generation += 1  # related locations in other files may point into this one
    ls.publish(path)


@feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ReuseLensServer, params: types.DidCloseTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    ls.doc_uris.pop(path, None)
    ls.state.tracker.closed(path)
    ls.publish(path)


@feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
def did_save(ls: ReuseLensServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.profiler.on_save(uri_to_path(params.text_document.uri))


@feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: ReuseLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    results = ls.state.results
    if results is None:
        return []
    path = uri_to_path(params.text_document.uri)
    _, _, line_map, _ = ls.view(path)
    found = lenses.unresolved(results, path, params.text_document.uri, line_map)
    memory = ls.memory.surface()
    return found + (memory_views.lenses(memory, path, line_map) if memory is not None else [])


@feature(types.CODE_LENS_RESOLVE)
def code_lens_resolve(ls: ReuseLensServer, lens: types.CodeLens) -> types.CodeLens:
    if lens.command is not None:
        return lens  # a memory lens comes titled
    uri = (lens.data or {}).get("uri", "")
    return lenses.resolve(ls.state.results, uri_to_path(uri), lens)


@feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
def inlay_hint(ls: ReuseLensServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    results = ls.state.results
    if results is None:
        return []
    path = uri_to_path(params.text_document.uri)
    _, lines, line_map, _ = ls.view(path)
    encode = ls.encoder(lines)
    first, last = params.range.start.line, params.range.end.line
    end_of = lambda line0: encode(line0, len(lines[line0]))  # noqa: E731 - the same for both kinds of hint
    hints = lenses.inlay_hints(results, path, line_map, lines, first, last, end_of)
    memory = ls.memory.surface()
    if memory is not None:
        hints += memory_views.inlay_hints(memory, path, line_map, lines, first, last, end_of)
    return hints


@feature(types.TEXT_DOCUMENT_HOVER)
def on_hover(ls: ReuseLensServer, params: types.HoverParams) -> types.Hover | None:
    results = ls.state.results
    if results is None:
        return None
    path = uri_to_path(params.text_document.uri)
    _, lines, line_map, _ = ls.view(path)
    line = params.position.line + 1
    snapshot_line = line_map.to_snapshot(line) if line_map else line
    memory = ls.memory.surface()
    texts = [
        hover.markdown(results, path, snapshot_line) if snapshot_line else None,
        memory_hover.markdown(memory, path, snapshot_line) if snapshot_line and memory is not None else None,
    ]
    text = "\n\n---\n\n".join(t for t in texts if t) or None
    if text is None:
        return None
    text = md.with_link_references(text)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=ls.encode_range(lines, diagnostics.line_range(lines, line)),
    )


def _refs_for(ls: ReuseLensServer, params: types.CodeActionParams, path: str, line_map) -> list[tuple[Any, Any]]:
    """(FindingRef, Diagnostic) pairs: by the diagnostics' data when the client sent it back, else by line."""
    results = ls.state.results
    ids = [d.data.get("findingId") for d in params.context.diagnostics if isinstance(d.data, dict)]
    _, published, _ = ls.diagnostics_for(path)
    by_id = {d.data["findingId"]: d for d in published if isinstance(d.data, dict) and "findingId" in d.data}
    if not ids:
        lines = range(params.range.start.line, params.range.end.line + 1)
        ids = [i for i, d in by_id.items() if d.range.start.line in lines]
    return [
        (results.findings_by_id[i], by_id[i]) for i in dict.fromkeys(ids) if i in results.findings_by_id and i in by_id
    ]


@feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: ReuseLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    results = ls.state.results
    if results is None:
        return []
    path = uri_to_path(params.text_document.uri)
    uri, lines, line_map, version = ls.view(path)
    capacity = int(ls.state.settings.thresholds.get("constantCapacityBytes", 65536))
    out = []
    for ref, diagnostic in _refs_for(ls, params, path, line_map):
        out.extend(
            actions.for_diagnostic(
                results, ref, diagnostic, params.text_document.uri, version, lines, capacity, ls.encoder(lines)
            )
        )
    return out


# ----- commands -----------------------------------------------------------------------------------
# Every command takes *args: pygls checks a handler's declared parameters against the arguments sent and
# refuses shorter lists ("Expected 3 arguments, got 0"), while the documented forms have optional arguments.
def _arg(args: tuple, index: int, kind: type):
    """args[index] when it is a `kind` (bool is not an int here), else None."""
    value = args[index] if index < len(args) else None
    if kind is int and isinstance(value, bool):
        return None
    return value if isinstance(value, kind) else None


@command("reuselens.profile")
async def profile_command(ls: ReuseLensServer, *args: Any) -> dict[str, Any]:
    try:
        return await ls.profiler.start()
    except asyncio.CancelledError:
        return {"status": "cancelled"}


@command("reuselens.cancel")
def cancel_command(ls: ReuseLensServer, *args: Any) -> dict[str, Any]:
    return {"cancelled": ls.profiler.cancel()}


@command(actions.EXPLAIN)
def explain_command(ls: ReuseLensServer, *args: Any) -> str | None:
    """Arguments: [findingId, why] (why optional)."""
    finding_id, why = _arg(args, 0, str), _arg(args, 1, str)
    results = ls.state.results
    ref = results.findings_by_id.get(finding_id) if results and finding_id else None
    if ref is None:
        return None
    text = actions.explanation(ref, why)
    ls.tell(types.MessageType.Info, text)
    return text


@command(lenses.EXPLAIN_LINE)
def explain_line_command(ls: ReuseLensServer, *args: Any) -> str | None:
    """Arguments: [uri, line0], what a code lens click sends: the reuse and the findings of that line."""
    uri, line0 = _arg(args, 0, str), _arg(args, 1, int)
    results = ls.state.results
    if results is None or uri is None or line0 is None:
        return None
    path = uri_to_path(uri)
    line_map = ls.view(path)[2]
    snapshot_line = line_map.to_snapshot(line0 + 1) if line_map else line0 + 1
    text = lenses.explain_line(results, path, snapshot_line) if snapshot_line else None
    if text is not None:
        ls.tell(types.MessageType.Info, text)
    return text


@command(lenses.NEXT_HOT_SPOT)
async def next_hot_spot(ls: ReuseLensServer, *args: Any):
    """Arguments: [] or [uri, line0]. Go to the hot spot after the one at (uri, line0) in waste order (the
    first when elsewhere or without arguments)."""
    uri, line = _arg(args, 0, str), _arg(args, 1, int)
    results = ls.state.results
    spots = []
    for ref in results.hot_spots() if results else []:
        rng = ls.locate(ref.path, ref.line)
        if rng is not None:
            spots.append((ls.view(ref.path)[0], rng, ref))
    if not spots:
        return None
    here = next(
        (i for i, (u, r, _) in enumerate(spots) if uri and uri_to_path(u) == uri_to_path(uri) and r.start.line == line),
        -1,
    )
    target_uri, rng, ref = spots[(here + 1) % len(spots)]
    if ls.capability("window", "show_document", "support"):
        await ls.window_show_document_async(types.ShowDocumentParams(uri=target_uri, take_focus=True, selection=rng))
    return {
        "uri": target_uri,
        "range": {
            "start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character},
        },
        "finding": ref.finding.get("id"),
    }


@command("reuselens.showGraph")
def show_graph(ls: ReuseLensServer, *args: Any) -> dict[str, Any]:
    """Arguments: [], [kernel id or mangled name], or [uri, line0] to take the kernel on that line."""
    target, line = _arg(args, 0, str), _arg(args, 1, int)
    results = ls.state.results
    if results is None:
        return {"error": "no run loaded yet"}
    if target is not None and not target.startswith("file:"):
        kernel = results.kernel(target)
        return graph.pc_dep_graph(results, kernel) if kernel else {"error": f"the run has no kernel {target!r}"}
    path = uri_to_path(target) if target is not None else None
    snapshot_line = None
    if path is not None and line is not None:
        line_map = ls.view(path)[2]
        snapshot_line = line_map.to_snapshot(line + 1) if line_map else line + 1
    kernel = graph.kernel_at(results, path, snapshot_line)
    return graph.pc_dep_graph(results, kernel) if kernel else {"error": "the run has no kernels"}


@command(memory_page.COMMAND)
async def memory_timeline(ls: ReuseLensServer, *args: Any) -> dict[str, Any]:
    """No arguments (a memory lens click sends none): the loaded run's memory timeline page, or why there is none."""
    return await memory_page.timeline_page(ls)


@command("reuselens.compare")
def compare_command(ls: ReuseLensServer, *args: Any) -> dict[str, Any]:
    return graph.compare(ls.state.previous, ls.state.results)
