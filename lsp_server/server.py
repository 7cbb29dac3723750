"""The ReuseLens language server: thin handlers over the builders in this package.

All LSP traffic is sent from the asyncio loop thread (watchdog events are handed over with
call_soon_threadsafe); profiling runs as asyncio subprocesses owned by one task, so a newer save or a
cancelled progress can stop it (lsp.md: executeCommand and notifications cannot be cancelled by the client).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from reuselens.analyzer import __version__
from reuselens.analyzer.errors import ReportError
from reuselens.lsp_server import diagnostics, profiling, settings as settings_mod
from reuselens.lsp_server.paths import path_to_uri
from reuselens.lsp_server.protocol import ReuseLensProtocol
from reuselens.lsp_server.state import State
from reuselens.lsp_server.tracking import split_lines
from reuselens.lsp_server.watcher import RunWatcher

log = logging.getLogger("reuselens.lsp")

SAVE_DEBOUNCE_S = 0.4
CUDA_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx")
BUILD_SOURCE = "reuselens-build"


class ReuseLensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("reuselens", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=ReuseLensProtocol)
        self.state = State()
        self.watcher: RunWatcher | None = None
        self.job: asyncio.Task | None = None
        self.save_timer: asyncio.TimerHandle | None = None
        self.doc_uris: dict[str, str] = {}      # path -> uri of the open document, as the client spelled it
        self.init_settings: Any = None          # initializationOptions.settings, if the client sent them
        self.generation = 0                     # bumped by every edit, settings change and build result
        self._diagnostics_cache: dict[str, tuple[tuple, tuple]] = {}

    def report_server_error(self, error: Exception, source) -> None:
        """Log instead of pygls' "Error in server" popup; real failures are reported where they happen."""
        log.error("internal error (%s): %r", getattr(source, "__name__", source), error, exc_info=error)

    # ----- messages to the user -------------------------------------------------------------------
    def tell(self, kind: types.MessageType, text: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))

    def log_text(self, kind: types.MessageType, text: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=text))

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
        value = self._compute_diagnostics(path)
        self._diagnostics_cache[path] = (key, value)
        return value

    def _compute_diagnostics(self, path: str) -> tuple[str, list[types.Diagnostic], Any]:
        uri, lines, line_map, version = self.view(path)
        out = list(self.state.build_diagnostics.get(path, []))
        results = self.state.results
        if results is not None:
            s = self.state.settings
            found = diagnostics.build(results, path, lines, line_map, s.docs_base_url or diagnostics.default_docs_base(),
                                      self.locate, s.thresholds.get("minShare", 0.0), self.state.root,
                                      show_streaming=s.show_streaming)
            for d in found:
                d.range = self.encode_range(lines, d.range)
            out.extend(found)
        return uri, out, version

    def publish(self, path: str) -> None:
        uri, found, version = self.diagnostics_for(path)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version))
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
        stale = set(self.state.published)
        for path in sorted(paths):
            self.publish(path)
            stale.discard(self.view(path)[0])
        for uri in stale:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            self.state.published.discard(uri)
        self._announce_missing(missing)
        self._announce_unplaced()
        if self.capability("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)
        if self.capability("workspace", "inlay_hint", "refresh_support"):
            self.workspace_inlay_hint_refresh(None)

    def _announce_unplaced(self) -> None:
        """Findings without a source line stay off the editor (never on a guessed line); say so once per run,
        with the report's notes (e.g. a module built without -lineinfo)."""
        results = self.state.results
        if results is None or not results.unplaced_findings or getattr(self, "_unplaced_for", None) == results.digest:
            return
        self._unplaced_for = results.digest
        notes = "; ".join(str(n) for n in results.report.get("notes", []) or [])
        self.tell(types.MessageType.Warning, f"ReuseLens: {results.unplaced_findings} finding(s) have no source line"
                  + (f": {notes}" if notes else "; rebuild with -lineinfo to see them on your code") + ".")

    def _announce_missing(self, missing: list[str]) -> None:
        key = (self.state.results.digest if self.state.results else None, tuple(sorted(missing)))
        if not missing or key == getattr(self, "_announced", None):
            return
        self._announced = key
        count = sum(len(self.state.results.findings_by_file[p]) for p in missing)
        self.tell(types.MessageType.Warning,
                  f"ReuseLens: {count} finding(s) are in {len(missing)} source file(s) not found here "
                  f"(e.g. {sorted(missing)[0]}); map the build tree onto the workspace with reuselens.pathPrefixMap.")

    # ----- settings and run loading ---------------------------------------------------------------
    async def refresh_settings(self, pushed: Any = None, probe: bool = False) -> None:
        """Pull the `reuselens` section when the client declares workspace/configuration, or when `probe`
        (at start, with no settings in initializationOptions: Neovim 0.7 answers the pull without declaring
        it); otherwise use what was pushed with didChangeConfiguration, or keep the current settings."""
        raw = pushed
        if self.capability("workspace", "configuration") or probe:
            try:
                scope = path_to_uri(self.state.root) if self.state.root else None
                answer = await asyncio.wait_for(self.workspace_configuration_async(types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="reuselens", scope_uri=scope)])), 5)
                if answer and answer[0] is not None:
                    raw = answer[0]
            except Exception as error:
                log.info("workspace/configuration failed (%r); using pushed settings", error)
        if raw is None:
            return
        self.apply_settings(raw)

    def apply_settings(self, raw: Any) -> None:
        new, problems = settings_mod.parse(raw, self.state.root)
        if problems:
            self.tell(types.MessageType.Warning, "ReuseLens: " + " ".join(problems))
        old, self.state.settings = self.state.settings, new
        self.generation += 1
        if new.allow_workspace_commands and not self.state.user_allows_commands:
            self.log_text(types.MessageType.Info, "ReuseLens: reuselens.allowWorkspaceCommands is honoured only from "
                          "initializationOptions (user level), not from workspace settings; asking instead.")
        self.log_text(types.MessageType.Log, f"ReuseLens: settings applied (run directory {new.run_directory}, "
                      f"profile command {new.profile_command or 'unset'})")
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
        if self.job is not None and not self.job.done():
            return  # our own profile is writing it; the job loads the result when it ends
        if self.watcher is not None:
            self.watcher.ensure()
        try:
            changed = self.state.load_run(self.state.report_path, self._open_texts())
        except ReportError as error:
            if announce and "no report.json" not in str(error):
                self.tell(types.MessageType.Error, f"ReuseLens: {error}")
            return
        if changed:
            self.publish_all()
            self.log_text(types.MessageType.Info, f"ReuseLens: loaded {self.state.report_path}")

    def _open_texts(self) -> dict[str, str]:
        return {path: doc.source for path, doc in self.open_documents().items()}

    # ----- profiling ------------------------------------------------------------------------------
    async def may_run(self, s: settings_mod.Settings) -> bool:
        """Workspace trust: the client's verdict, else the user-level reuselens.allowWorkspaceCommands (read from
        initializationOptions only, docs/lsp.md), else ask the user. A "Run" answer holds only while everything
        that decides what runs (commands, cwd, environment) stays as it was shown."""
        state = self.state
        if state.client_trusted is True or (state.client_trusted is None and state.user_allows_commands):
            return True
        what = profiling.what_runs(s)
        if what in state.confirmed_commands:
            return True
        try:
            answer = await self.window_show_message_request_async(types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"ReuseLens: this workspace asks to run: {profiling.describe(what)}. Run it?",
                actions=[types.MessageActionItem("Run"), types.MessageActionItem("Do not run")]))
        except Exception as error:
            log.info("window/showMessageRequest failed: %r", error)
            answer = None
        if answer is not None and answer.title == "Run":
            state.confirmed_commands.add(what)
            return True
        return False

    def start_profile(self) -> asyncio.Task:
        previous = self.job
        if previous is not None and not previous.done():
            previous.cancel()
        self.job = asyncio.get_running_loop().create_task(self._profile_job(previous))
        return self.job

    def cancel_profile(self) -> bool:
        if self.save_timer is not None:
            self.save_timer.cancel()
        if self.job is not None and not self.job.done():
            self.job.cancel()
            return True
        return False

    async def _begin_progress(self, task: asyncio.Task) -> str | None:
        if not self.capability("window", "work_done_progress"):
            return None
        token = str(uuid.uuid4())
        try:
            await self.work_done_progress.create_async(token)
        except Exception as error:
            log.info("progress not created: %r", error)
            return None
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="ReuseLens profile", cancellable=True, percentage=0))
        loop = asyncio.get_running_loop()
        future = self.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: f.cancelled() and loop.call_soon_threadsafe(task.cancel))
        return token

    def _stage(self, token: str | None, stage: str, percentage: int) -> None:
        log.info("profile stage: %s", stage)
        if token:
            self.work_done_progress.report(token, types.WorkDoneProgressReport(message=stage, percentage=percentage))

    def _end_progress(self, token: str | None, message: str) -> None:
        if token:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            self.work_done_progress.tokens.pop(token, None)

    async def _profile_job(self, previous: asyncio.Task | None) -> dict[str, Any]:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)  # its process group is gone first
        s = self.state.settings
        if not s.profile_command:
            self.tell(types.MessageType.Error, "ReuseLens: set reuselens.profile.command to the application to profile.")
            return {"status": "failed", "message": "no profile command"}
        if not await self.may_run(s):
            self.tell(types.MessageType.Warning, "ReuseLens: not profiling; the workspace's commands were not allowed.")
            return {"status": "refused"}
        token = await self._begin_progress(asyncio.current_task())
        try:
            return await self._run_stages(s, token)
        except asyncio.CancelledError:
            self._end_progress(token, "cancelled")
            raise
        except Exception as error:  # a bug must still end the progress and leave the server running
            log.exception("profile job failed")
            return self._failed(token, RuntimeError(f"profiling stopped by an internal error ({error!r})"))

    async def _run_stages(self, s, token: str | None) -> dict[str, Any]:
        try:
            self._stage(token, "build", 5)
            await profiling.build(s)
            self._set_build_diagnostics([])
            self._stage(token, "run", 20)
            report_path = await profiling.profile(s, s.run_directory)
            self._stage(token, "analyze", 80)
            self.state.load_run(report_path, self._open_texts())
        except profiling.BuildError as error:
            self._set_build_diagnostics(error.messages)
            return self._failed(token, error)
        except profiling.ProfileError as error:
            if error.report:  # the app failed but the profiler still analysed what ran: show it
                return self._partial(token, error)
            return self._failed(token, error)
        except ReportError as error:
            return self._failed(token, error)
        self._stage(token, "map", 90)
        self.publish_all()
        count = sum(len(f) for f in self.state.results.findings_by_file.values())
        self._end_progress(token, f"{count} finding(s)")
        if self.watcher is not None:
            self.watcher.ensure()
        return {"status": "ok", "report": report_path, "findings": count}

    def _partial(self, token: str | None, error: profiling.ProfileError) -> dict[str, Any]:
        try:
            self.state.load_run(error.report, self._open_texts())
        except ReportError as load_error:
            return self._failed(token, load_error)
        self.publish_all()
        self.tell(types.MessageType.Warning, f"ReuseLens: {error}; showing the results of what ran."
                  + (f"\n{error.tail}" if error.tail else ""))
        self._end_progress(token, "partial")
        return {"status": "partial", "message": str(error), "tail": error.tail, "report": error.report}

    def _failed(self, token: str | None, error: Exception) -> dict[str, Any]:
        tail = getattr(error, "tail", "")
        self.tell(types.MessageType.Error, f"ReuseLens: {error}" + (f"\n{tail}" if tail else ""))
        self.log_text(types.MessageType.Error, f"ReuseLens: {error}\n--- output tail ---\n{tail}")
        self._end_progress(token, "failed")
        return {"status": "failed", "message": str(error), "tail": tail}

    def _set_build_diagnostics(self, messages) -> None:
        by_path: dict[str, list[types.Diagnostic]] = {}
        for m in messages:
            _, lines, _, _ = self.view(m.path)
            rng = diagnostics.line_range(lines, m.line)
            if m.column:
                rng = types.Range(types.Position(m.line - 1, m.column - 1), rng.end)
            by_path.setdefault(m.path, []).append(types.Diagnostic(
                range=self.encode_range(lines, rng), message=m.message, source=BUILD_SOURCE,
                severity=types.DiagnosticSeverity.Error))
        old = set(self.state.build_diagnostics)
        self.state.build_diagnostics = by_path
        self.generation += 1
        for path in sorted(old | set(by_path)):
            self.publish(path)


SERVER = ReuseLensServer()
from reuselens.lsp_server import handlers  # noqa: E402,F401  (registers the features on SERVER)
