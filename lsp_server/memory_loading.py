"""Running the memory analysis of each loaded run in the background, and handing its result to the server.

The analysis reads run.json, object_touches.json and the host binaries' DWARF (seconds on a large program), so
it never runs on a request: the reuse diagnostics go out first, and the memory surface follows when ready. It
is a second analysis of the same run, so its failure must never cost the reuse results: an error is logged
and told once per run, and the server goes on. A run from a collector without memory records (no
`memory_operations` in run.json), or a report without run.json beside it, simply has no memory surface.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.rundir import MANIFEST
from reuselens.lsp_server.memory_model import MemorySurface, index
from reuselens.lsp_server.model import RunResults
from reuselens.lsp_server.paths import map_path
from reuselens.lsp_server.source_files import SourceFiles
from reuselens.lsp_server.tracking import disk_stamp, split_lines

if TYPE_CHECKING:
    from reuselens.analyzer.memory.analysis import MemoryAnalysis
    from reuselens.analyzer.memory.timeline import Frame

log = logging.getLogger("reuselens.lsp")

# Sent (params {run, status: "ready" | "none" | "failed"}) whenever the analysis of the loaded run ends, so that
# a client showing the memory timeline (reuselens.memoryTimeline) can ask for the new run's page.
ANALYSED_NOTIFICATION = "reuselens/memoryAnalysisDone"
NO_MEMORY_RECORDS = "this run has no memory records (recorded by an older collector, or no run.json beside report.json)"


@dataclass
class Outcome:
    surface: MemorySurface | None = None
    error: str | None = None
    analysis: MemoryAnalysis | None = None  # kept for the timeline page (memory_page.py), drawn only when asked
    page: str | None = None  # that page once drawn
    # Text of the allocation files not yet tracked, as they were when the run loaded (open documents) or as
    # read from disk in the background; with the disk files' stamps (tracking.Tracker).
    snapshots: dict[str, list[str]] = field(default_factory=dict)
    stamps: dict[str, Any] = field(default_factory=dict)


def site_mapper(results: RunResults):
    """Allocation frames to workspace paths exactly as kernel findings' paths are mapped (model.map_source),
    without touching RunResults' own cache from another thread."""

    def map_site(frame: Frame) -> tuple[str, int] | None:
        if not frame.file or not frame.line:
            return None
        return map_path(frame.file, results.prefix_map, results.base_dir), frame.line

    return map_site


def analyze(results: RunResults, tracked: set[str], open_texts: dict[str, str], sources: SourceFiles) -> Outcome:
    """The memory surface of the run whose report `results` holds (in the calling thread). The analysis and
    pyelftools load here, on first use, so that a server start does not wait for them."""
    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.memory.run_timeline import NoMemoryOperations

    run_dir = os.path.dirname(results.report_path)
    if not os.path.isfile(os.path.join(run_dir, MANIFEST)):
        return Outcome()
    try:
        analysis = analyze_run(run_dir)
    except NoMemoryOperations:
        return Outcome()
    except ReuseLensError as error:
        return Outcome(error=str(error))
    surface = index(analysis, results.digest, site_mapper(results))
    outcome = Outcome(surface, analysis=analysis)
    for path in sorted(surface.files() - tracked):
        text = open_texts.get(path)
        if text is None:
            outcome.stamps[path] = disk_stamp(path)
            text = sources.text(path)
            if text is None:
                continue
        outcome.snapshots[path] = split_lines(text)
    return outcome


class MemoryController:
    """Starts one analysis per loaded run (when reuselens.memory.enabled) and installs what it finds."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.started_for: RunResults | None = None
        self.told_for: str | None = None  # digest of the run whose failure was told
        self.finished: tuple[RunResults, Outcome] | None = None  # the last analysis that arrived for the loaded run
        # The analysis running in the background and what its outcome will be set on, for a request that waits.
        self.running: tuple[RunResults, asyncio.Future[Outcome]] | None = None

    def surface(self) -> MemorySurface | None:
        """The memory surface to show now: enabled, and of the run on screen."""
        state = self.server.state
        memory = state.memory
        if not state.settings.memory_enabled or memory is None or state.results is None:
            return None
        return memory if memory.digest == state.results.digest else None

    def ensure(self) -> None:
        """Start the analysis of the loaded run unless it ran or runs already."""
        state = self.server.state
        results = state.results
        if results is None or not state.settings.memory_enabled or self.started_for is results:
            return
        self.started_for = results
        tracked, open_texts, sources = set(state.tracker.snapshots), self.server.open_texts(), state.sources

        def work() -> Outcome:
            try:
                return analyze(results, tracked, open_texts, sources)
            except Exception as error:  # a bug in the analysis: the reuse surface must stay
                log.exception("memory analysis failed")
                return Outcome(error=f"internal error in the memory analysis ({error!r})")

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a direct call from a test): nothing to keep responsive
            self._arrived(results, work())
            return

        arrival: asyncio.Future[Outcome] = loop.create_future()
        self.running = (results, arrival)

        def run() -> None:
            outcome = work()
            loop.call_soon_threadsafe(self._arrived, results, outcome, arrival)

        threading.Thread(target=run, name="reuselens-memory", daemon=True).start()

    async def outcome_of(self, results: RunResults) -> Outcome:
        """The analysis outcome of `results` (the loaded run, with reuselens.memory.enabled), waiting for it
        while it runs in the background; the event loop stays free meanwhile."""
        self.ensure()
        if self.finished is not None and self.finished[0] is results:
            return self.finished[1]
        if self.running is not None and self.running[0] is results:
            return await asyncio.shield(self.running[1])  # a cancelled request must not cancel other waiters
        return Outcome(error="the memory analysis of this run did not start")  # ensure() starts it: not expected

    def _arrived(self, results: RunResults, outcome: Outcome, arrival: asyncio.Future | None = None) -> None:
        server, state = self.server, self.server.state
        if arrival is not None and not arrival.done():
            arrival.set_result(outcome)  # waiters check themselves whether their run is still the loaded one
        if state.results is not results:
            return  # a newer run replaced it meanwhile
        self.finished = (results, outcome)
        server.notify_client(ANALYSED_NOTIFICATION, {"run": results.digest[:16], "status": _status(outcome)})
        server.log_text(types.MessageType.Log, f"ReuseLens: memory analysis: {_summary(outcome)}")
        if outcome.error is not None:
            log.error("memory analysis: %s", outcome.error)
            if self.told_for != results.digest:
                self.told_for = results.digest
                server.tell(
                    types.MessageType.Warning,
                    f"ReuseLens: no memory findings for this run: {outcome.error}. The reuse findings are shown.",
                )
            return
        if outcome.surface is None:
            return
        state.memory = outcome.surface
        state.tracker.add(outcome.snapshots, outcome.stamps)
        for path, doc in server.open_documents().items():
            if path in outcome.snapshots:
                state.tracker.opened(path, doc.source)  # edits made while the analysis ran
        server.generation += 1
        server.publish_all()


def _status(outcome: Outcome) -> str:
    if outcome.error is not None:
        return "failed"
    return "none" if outcome.surface is None else "ready"


def _summary(outcome: Outcome) -> str:
    """One line for the client's log (the Output panel): what the analysis found, or why there is nothing."""
    if outcome.error is not None:
        return f"failed: {outcome.error}"
    surface = outcome.surface
    if surface is None:
        return NO_MEMORY_RECORDS
    placed = sum(len(entry.findings) for lines in surface.lines.values() for entry in lines.values())
    text = f"{placed} finding(s) on {sum(len(lines) for lines in surface.lines.values())} allocation line(s)"
    if surface.unplaced_findings:
        # no call path, or host code without debug info: `reuselens memory` still lists them
        text += f"; {surface.unplaced_findings} finding(s) without an allocation line (build the host code with -g)"
    return text
