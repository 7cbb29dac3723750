"""What the server knows between messages: settings, the loaded run (and the previous one, for compare), its
memory analysis, line snapshots, build diagnostics, and which URIs currently carry published diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from lsprotocol import types

from reuselens.analyzer.errors import ReportError
from reuselens.lsp_server.memory_model import MemorySurface
from reuselens.lsp_server.model import RunResults
from reuselens.lsp_server.report_source import load
from reuselens.lsp_server.settings import Settings
from reuselens.lsp_server.source_files import SourceFiles
from reuselens.lsp_server.tracking import Tracker, disk_stamp, split_lines


@dataclass
class State:
    root: str = ""
    settings: Settings = field(default_factory=Settings)
    results: RunResults | None = None
    previous: RunResults | None = None
    memory: MemorySurface | None = None  # the loaded run's memory analysis, once ready (memory_loading.py)
    tracker: Tracker = field(default_factory=Tracker)
    build_diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    published: set[str] = field(default_factory=set)
    client_trusted: bool | None = None  # initializationOptions.workspaceTrusted, None if not sent
    user_allows_commands: bool = False  # allowWorkspaceCommands from initializationOptions only
    confirmed_commands: set[tuple] = field(default_factory=set)  # profiling.what_runs() the user answered "Run" to

    def __post_init__(self) -> None:
        self.tracker.read = lambda path: self.sources.text(path)

    @property
    def sources(self) -> SourceFiles:
        """The source files a report may make the server read: under the workspace or a pathPrefixMap target."""
        return SourceFiles([self.root, *self.settings.path_prefix_map.values()])

    @property
    def report_path(self) -> str:
        return os.path.join(self.settings.run_directory, "report.json")

    def load_run(self, report_path: str, open_texts: dict[str, str]) -> bool:
        """Load report_path; False (nothing changed) when its bytes equal the loaded report's. Raises
        ReportError for a missing or invalid report."""
        report, digest = load(report_path, self.results.digest if self.results is not None else None)
        if report is None:  # the same bytes as the loaded report
            return False
        try:
            results = RunResults(report, report_path, digest, self.settings.path_prefix_map)
        except (TypeError, ValueError, KeyError, AttributeError) as error:  # valid header, malformed kernels
            raise ReportError(f"{report_path}: malformed report ({type(error).__name__}: {error})") from None
        snapshots, stamps = {}, {}
        sources = self.sources
        for path in results.files():
            text = open_texts.get(path)
            if text is None:
                stamps[path] = disk_stamp(path)
                text = sources.text(path)
                if text is None:
                    continue
            snapshots[path] = split_lines(text)
        self.previous, self.results = self.results, results
        self.memory = None  # the new run's is analysed in the background
        self.tracker.reset(snapshots, stamps)
        for path, text in open_texts.items():
            self.tracker.opened(path, text)
        return True
