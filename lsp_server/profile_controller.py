"""The profiling job of the server: one job at a time, debounced saves, cancel, progress, and the workspace-trust
prompt before any workspace command runs.

The job is an asyncio task; a newer save or profile cancels the one in flight, and the new job waits for it to
end (its process group is gone) before building. lsp.md: executeCommand and notifications cannot be cancelled
by the client, so cancellation goes through reuselens.cancel or the progress' cancel button.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from reuselens.analyzer.errors import ReportError
from reuselens.lsp_server import diagnostics, profiling, progress
from reuselens.lsp_server.settings import Settings

log = logging.getLogger("reuselens.lsp")

SAVE_DEBOUNCE_S = 0.4
CUDA_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx")
BUILD_SOURCE = "reuselens-build"


class ProfileController:
    """Builds and profiles for `server` (the ReuseLensServer that owns it), then shows the run it wrote."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.job: asyncio.Task | None = None
        self.save_timer: asyncio.TimerHandle | None = None

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.done()

    def on_save(self, path: str) -> None:
        """With profileOnSave, a saved CUDA file stops the run in flight (and its process group) at once and
        starts a new one after a short pause, so that a burst of saves profiles once."""
        if not self.server.state.settings.profile_on_save or not path.endswith(CUDA_SUFFIXES):
            return
        self.cancel()
        self.save_timer = asyncio.get_running_loop().call_later(SAVE_DEBOUNCE_S, self.start)

    def start(self) -> asyncio.Task:
        previous = self.job
        if previous is not None and not previous.done():
            previous.cancel()
        self.job = asyncio.get_running_loop().create_task(self._job(previous))
        return self.job

    def cancel(self) -> bool:
        if self.save_timer is not None:
            self.save_timer.cancel()
        if self.running:
            self.job.cancel()
            return True
        return False

    async def may_run(self, s: Settings) -> bool:
        """Workspace trust: the client's verdict, else the user-level reuselens.allowWorkspaceCommands (read from
        initializationOptions only, docs/lsp.md), else ask the user. A "Run" answer holds only while everything
        that decides what runs (commands, cwd, environment) stays as it was shown."""
        state = self.server.state
        if state.client_trusted is True or (state.client_trusted is None and state.user_allows_commands):
            return True
        what = profiling.what_runs(s)
        if what in state.confirmed_commands:
            return True
        if await self._ask_to_run(what):
            state.confirmed_commands.add(what)
            return True
        return False

    async def _ask_to_run(self, what: tuple) -> bool:
        try:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=f"ReuseLens: this workspace asks to run: {profiling.describe(what)}. Run it?",
                    actions=[types.MessageActionItem("Run"), types.MessageActionItem("Do not run")],
                )
            )
        except Exception as error:
            log.info("window/showMessageRequest failed: %r", error)
            answer = None
        return answer is not None and answer.title == "Run"

    async def _job(self, previous: asyncio.Task | None) -> dict[str, Any]:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)  # its process group is gone first
        s = self.server.state.settings
        if not s.profile_command:
            self.server.tell(
                types.MessageType.Error, "ReuseLens: set reuselens.profile.command to the application to profile."
            )
            return {"status": "failed", "message": "no profile command"}
        if not await self.may_run(s):
            self.server.tell(
                types.MessageType.Warning, "ReuseLens: not profiling; the workspace's commands were not allowed."
            )
            return {"status": "refused"}
        token = await progress.begin(self.server, asyncio.current_task())
        try:
            return await self._run_stages(s, token)
        except asyncio.CancelledError:
            progress.end(self.server, token, "cancelled")
            raise
        except Exception as error:  # a bug must still end the progress and leave the server running
            log.exception("profile job failed")
            return self._failed(token, RuntimeError(f"profiling stopped by an internal error ({error!r})"))

    async def _run_stages(self, s: Settings, token: str | None) -> dict[str, Any]:
        server = self.server
        try:
            progress.stage(server, token, "build", 5)
            await profiling.build(s)
            self._set_build_diagnostics([])
            progress.stage(server, token, "run", 20)
            report_path = await profiling.profile(s, s.run_directory)
            progress.stage(server, token, "analyze", 80)
            server.state.load_run(report_path, server.open_texts())
        except profiling.BuildError as error:
            self._set_build_diagnostics(error.messages)
            return self._failed(token, error)
        except profiling.ProfileError as error:
            if error.report:  # the app failed but the profiler still analysed what ran: show it
                return self._partial(token, error)
            return self._failed(token, error)
        except ReportError as error:
            return self._failed(token, error)
        return self._show(report_path, token)

    def _show(self, report_path: str, token: str | None) -> dict[str, Any]:
        server = self.server
        progress.stage(server, token, "map", 90)
        server.publish_all()
        count = sum(len(f) for f in server.state.results.findings_by_file.values())
        progress.end(server, token, f"{count} finding(s)")
        if server.watcher is not None:
            server.watcher.ensure()
        return {"status": "ok", "report": report_path, "findings": count}

    def _partial(self, token: str | None, error: profiling.ProfileError) -> dict[str, Any]:
        server = self.server
        try:
            server.state.load_run(error.report, server.open_texts())
        except ReportError as load_error:
            return self._failed(token, load_error)
        server.publish_all()
        server.tell(
            types.MessageType.Warning,
            f"ReuseLens: {error}; showing the results of what ran." + (f"\n{error.tail}" if error.tail else ""),
        )
        progress.end(server, token, "partial")
        return {"status": "partial", "message": str(error), "tail": error.tail, "report": error.report}

    def _failed(self, token: str | None, error: Exception) -> dict[str, Any]:
        tail = getattr(error, "tail", "")
        self.server.tell(types.MessageType.Error, f"ReuseLens: {error}" + (f"\n{tail}" if tail else ""))
        self.server.log_text(types.MessageType.Error, f"ReuseLens: {error}\n--- output tail ---\n{tail}")
        progress.end(self.server, token, "failed")
        return {"status": "failed", "message": str(error), "tail": tail}

    def _set_build_diagnostics(self, messages) -> None:
        """The compiler errors of the last build as diagnostics (an empty list clears the previous ones)."""
        server = self.server
        by_path: dict[str, list[types.Diagnostic]] = {}
        for m in messages:
            _, lines, _, _ = server.view(m.path)
            rng = diagnostics.line_range(lines, m.line)
            if m.column:
                rng = types.Range(types.Position(m.line - 1, m.column - 1), rng.end)
            by_path.setdefault(m.path, []).append(
                types.Diagnostic(
                    range=server.encode_range(lines, rng),
                    message=m.message,
                    source=BUILD_SOURCE,
                    severity=types.DiagnosticSeverity.Error,
                )
            )
        old = set(server.state.build_diagnostics)
        server.state.build_diagnostics = by_path
        server.generation += 1
        for path in sorted(old | set(by_path)):
            server.publish(path)
