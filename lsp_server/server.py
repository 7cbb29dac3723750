"""The ReuseLens language server: open documents, line tracking, diagnostics, settings and run loading.

All LSP traffic is sent from the asyncio loop thread (watchdog events are handed over with
call_soon_threadsafe). The profiling job is the ProfileController's (profile_controller.py); the features
and commands are registered by handlers.register (app.build_server puts the two together).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from reuselens.analyzer import __version__
from reuselens.analyzer.errors import ReportError
from reuselens.lsp_server import diagnostics, memory_views
from reuselens.lsp_server import settings as settings_mod
from reuselens.lsp_server.memory_loading import MemoryController
from reuselens.lsp_server.paths import path_to_uri
from reuselens.lsp_server.profile_controller import ProfileController
from reuselens.lsp_server.protocol import ReuseLensProtocol
from reuselens.lsp_server.state import State
from reuselens.lsp_server.tracking import split_lines
from reuselens.lsp_server.watcher import RunWatcher

log = logging.getLogger("reuselens.lsp")


class ReuseLensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "reuselens",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=ReuseLensProtocol,
        )
        self.state = State()
        self.watcher: RunWatcher | None = None
        self.profiler = ProfileController(self)
        self.memory = MemoryController(self)  # the memory findings of each loaded run, analysed in the background
        self.doc_uris: dict[str, str] = {}  # path -> uri of the open document, as the client spelled it
        self.init_settings: Any = None  # initializationOptions.settings, if the client sent them
        self.generation = 0  # bumped by every edit, settings change and build result
        self.check_kernel_filter = None  # settings.KernelFilterCheck the application hands in (app.build_server)
        self._diagnostics_cache: dict[str, tuple[tuple, tuple]] = {}
        self._last_published: dict[str, tuple[str, list]] = {}  # path -> (uri, the diagnostics list sent)

    def report_server_error(self, error: Exception, source) -> None:
        """Log instead of pygls' "Error in server" popup; real failures are reported where they happen."""
        log.error("internal error (%s): %r", getattr(source, "__name__", source), error, exc_info=error)

    # ----- messages to the user -------------------------------------------------------------------
    def tell(self, kind: types.MessageType, text: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))

    def log_text(self, kind: types.MessageType, text: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=text))

    def notify_client(self, method: str, params: Any) -> None:
        """A ReuseLens notification (docs/lsp.md); clients that do not know it ignore it."""
        self.protocol.notify(method, params)

    def capability(self, *names: str) -> Any:
        node: Any = self.client_capabilities
        for name in names:
            node = getattr(node, name, None) if node is not None else None
        return node

    # ----- documents and line tracking ------------------------------------------------------------
    def open_documents(self) -> dict[str, Any]:
        return {path: doc for path in self.doc_uris if (doc := self.document(path)) is not None}

    def document(self, path: str):
        uri = self.doc_uris.get(path)
        return self.workspace.text_documents.get(unquote(uri)) if uri else None

    def view(self, path: str) -> tuple[str, list[str], Any, Any]:
        """(uri, current lines, LineMap or None, version) of `path`: the open document, else the snapshot."""
        doc = self.document(path)
        if doc is not None:
            line_map = self.state.tracker.line_map(path, doc.version, doc.source)
            return doc.uri, split_lines(doc.source), line_map, doc.version
        line_map = self.state.tracker.line_map(path, "disk", None)
        lines = self.state.tracker.disk_lines(path) or []
        return path_to_uri(path), lines, line_map, None

    def encoder(self, lines: list[str]):
        """(line0, code point) -> Position in the negotiated encoding (utf-16 unless the client chose)."""
        encoding = str(getattr(self.workspace, "position_encoding", "utf-16") or "utf-16").lower()

        def encode(line0: int, column: int) -> types.Position:
            text = lines[line0][:column] if 0 <= line0 < len(lines) else ""
            if "8" in encoding:
                return types.Position(line0, len(text.encode("utf-8")))
            if "32" in encoding:
                return types.Position(line0, len(text))
            return types.Position(line0, len(text.encode("utf-16-le")) // 2)

        return encode

    def encode_range(self, lines: list[str], rng: types.Range) -> types.Range:
        encode = self.encoder(lines)
        return types.Range(encode(rng.start.line, rng.start.character), encode(rng.end.line, rng.end.character))

    def locate(self, path: str, line: int) -> types.Range | None:
        _, lines, line_map, _ = self.view(path)
        current = line_map.to_current(line) if line_map else line
        return None if current is None else self.encode_range(lines, diagnostics.line_range(lines, current))

    # ----- diagnostics ----------------------------------------------------------------------------
    def diagnostics_for(self, path: str) -> tuple[str, list[types.Diagnostic], Any]:
        """(uri, diagnostics, version), cached until the next edit, run, settings change or build result."""
        doc = self.document(path)
        key = (doc.version if doc else None, self.generation, self.state.results.digest if self.state.results else None)
        cached = self._diagnostics_cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        if cached is not None and doc is not None and cached[0] == (None, *key[1:]) and self._as_profiled(path, doc):
            # Opened as it was profiled (the usual case): what the closed file showed, now under the document's
            # version; recomputing it held the first hover after the open for ~25 ms on a real app's header.
            value = (doc.uri, cached[1][1], doc.version)
            self._diagnostics_cache[path] = (key, value)
            return value
        value = self._compute_diagnostics(path)
        self._diagnostics_cache[path] = (key, value)
        return value

    def _as_profiled(self, path: str, doc: Any) -> bool:
        """The open document's text and the file on disk are both the run's snapshot of the file."""
        tracker = self.state.tracker
        snapshot = tracker.snapshots.get(path)
        return snapshot is not None and tracker.disk_lines(path) is snapshot and split_lines(doc.source) == snapshot

    def _compute_diagnostics(self, path: str) -> tuple[str, list[types.Diagnostic], Any]:
        uri, lines, line_map, version = self.view(path)
        out = list(self.state.build_diagnostics.get(path, []))
        results = self.state.results
        if results is not None:
            s = self.state.settings
            found = diagnostics.build(
                results,
                path,
                lines,
                line_map,
                s.docs_base_url or diagnostics.default_docs_base(),
                self.locate,
                s.thresholds.get("minShare", 0.0),
                self.state.root,
                show_streaming=s.show_streaming,
            )
            memory = self.memory.surface()
            if memory is not None:
                found += memory_views.diagnostics(memory, path, lines, line_map, s.memory_warning_peak_share)
            for d in found:
                d.range = self.encode_range(lines, d.range)
            out.extend(found)
        return uri, out, version

    def publish(self, path: str) -> None:
        uri, found, version = self.diagnostics_for(path)
        last = self._last_published.get(path)
        if last is not None and last[0] == uri and last[1] is found:
            return  # the very list the client holds for this URI (a file opened as profiled): nothing to resend
        self._last_published[path] = (uri, found)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
        )
        (self.state.published.add if found else self.state.published.discard)(uri)

    def publish_all(self) -> None:
        """Publish every file of the run (open or not) and the build errors; clear what no longer applies.
        Files that cannot be read here get nothing (their lines cannot be checked), and one message says so."""
        paths = set(self.state.build_diagnostics)
        missing: list[str] = []
        if self.state.results is not None:
            for path in self.state.results.files():
                if path in self.state.tracker.snapshots or self.document(path) is not None:
                    paths.add(path)
                elif self.state.results.findings_by_file.get(path):
                    missing.append(path)
        memory = self.memory.surface()
        for path in memory.files() if memory is not None else ():
            if path in self.state.tracker.snapshots or self.document(path) is not None:
                paths.add(path)  # allocation lines in host code (files outside the workspace are never read)
        stale = set(self.state.published)
        for path in sorted(paths):
            self.publish(path)
            stale.discard(self.view(path)[0])
        for uri in stale:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            self.state.published.discard(uri)
        self._announce_missing(missing)
        self._announce_unplaced()
        self._warm_sass()
        self.memory.ensure()
        if self.capability("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)
        if self.capability("workspace", "inlay_hint", "refresh_support"):
            self.workspace_inlay_hint_refresh(None)

    def _warm_sass(self) -> None:
        """Disassemble the run's CUBINs in the background once its diagnostics are out (report.json has no SASS,
        analyzer/sass_lookup.py), so that the first hover on a line seldom waits for nvdisasm."""
        results = self.state.results
        if results is None or getattr(self, "_sass_warmed", None) is results:
            return
        self._sass_warmed = results

        def warm() -> None:
            try:
                results.sass.prepare_all()
            except Exception:  # a hover retries and reports nothing worse than no SASS
                log.exception("disassembling the run's modules failed")

        threading.Thread(target=warm, name="reuselens-sass", daemon=True).start()

    def _announce_unplaced(self) -> None:
        """Findings without a source line stay off the editor (never on a guessed line); say so once per run,
        with the report's notes (e.g. a module built without -lineinfo)."""
        results = self.state.results
        if results is None or not results.unplaced_findings or getattr(self, "_unplaced_for", None) == results.digest:
            return
        self._unplaced_for = results.digest
        notes = "; ".join(str(n) for n in results.report.get("notes", []) or [])
        self.tell(
            types.MessageType.Warning,
            f"ReuseLens: {results.unplaced_findings} finding(s) have no source line"
            + (f": {notes}" if notes else "; rebuild with -lineinfo to see them on your code")
            + ".",
        )

    def _announce_missing(self, missing: list[str]) -> None:
        key = (self.state.results.digest if self.state.results else None, tuple(sorted(missing)))
        if not missing or key == getattr(self, "_announced", None):
            return
        self._announced = key
        count = sum(len(self.state.results.findings_by_file[p]) for p in missing)
        self.tell(
            types.MessageType.Warning,
            f"ReuseLens: {count} finding(s) are in {len(missing)} source file(s) not found here "
            f"(e.g. {sorted(missing)[0]}); map the build tree onto the workspace with reuselens.pathPrefixMap.",
        )

    # ----- settings and run loading ---------------------------------------------------------------
    async def refresh_settings(self, pushed: Any = None, probe: bool = False) -> None:
        """Pull the `reuselens` section when the client declares workspace/configuration, or when `probe`
        (at start, with no settings in initializationOptions: Neovim 0.7 answers the pull without declaring
        it); otherwise use what was pushed with didChangeConfiguration, or keep the current settings."""
        raw = pushed
        if self.capability("workspace", "configuration") or probe:
            try:
                scope = path_to_uri(self.state.root) if self.state.root else None
                answer = await asyncio.wait_for(
                    self.workspace_configuration_async(
                        types.ConfigurationParams(items=[types.ConfigurationItem(section="reuselens", scope_uri=scope)])
                    ),
                    5,
                )
                if answer and answer[0] is not None:
                    raw = answer[0]
            except Exception as error:
                log.info("workspace/configuration failed (%r); using pushed settings", error)
        if raw is None:
            return
        self.apply_settings(raw)

    def apply_settings(self, raw: Any) -> None:
        new, problems = settings_mod.parse(raw, self.state.root, self.check_kernel_filter)
        if problems:
            self.tell(types.MessageType.Warning, "ReuseLens: " + " ".join(problems))
        old, self.state.settings = self.state.settings, new
        self.generation += 1
        if new.allow_workspace_commands and not self.state.user_allows_commands:
            self.log_text(
                types.MessageType.Info,
                "ReuseLens: reuselens.allowWorkspaceCommands is honoured only from "
                "initializationOptions (user level), not from workspace settings; asking instead.",
            )
        self.log_text(
            types.MessageType.Log,
            f"ReuseLens: settings applied (run directory {new.run_directory}, "
            f"profile command {new.profile_command or 'unset'})",
        )
        if (old.run_directory, old.path_prefix_map) != (new.run_directory, new.path_prefix_map):
            self.state.results = None
            if self.watcher is not None:
                self.watcher.watch(new.run_directory)
            self.reload(announce=False)
            if self.state.results is None:
                self.publish_all()  # no run at the new place: clear what the old one published
        else:
            self.publish_all()

    def reload(self, announce: bool = True) -> None:
        """Load the run directory's report if it changed; publish."""
        if self.profiler.running:
            return  # our own profile is writing it; the job loads the result when it ends
        if self.watcher is not None:
            self.watcher.ensure()
        try:
            changed = self.state.load_run(self.state.report_path, self.open_texts())
        except ReportError as error:
            if announce and "no report.json" not in str(error):
                self.tell(types.MessageType.Error, f"ReuseLens: {error}")
            return
        if changed:
            self.publish_all()
            self.log_text(types.MessageType.Info, f"ReuseLens: loaded {self.state.report_path}")

    def open_texts(self) -> dict[str, str]:
        return {path: doc.source for path, doc in self.open_documents().items()}
