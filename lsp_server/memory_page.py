"""reuselens.memoryTimeline: the loaded run's memory timeline as the self-contained HTML page that
`reuselens memory RUN --html` writes (analyzer/reporters/memory_html.py, the one renderer), for a client to show
in a webview.

The analysis behind it is the one memory_loading.py runs in the background for the editor's memory surface: a
request waits for it (without holding the event loop) instead of analysing the run again, and the page is drawn
in a worker thread the first time it is asked for, then kept with that analysis.
"""

from __future__ import annotations

import asyncio
from typing import Any

from reuselens.lsp_server.memory_loading import NO_MEMORY_RECORDS, Outcome

COMMAND = "reuselens.memoryTimeline"
# How long a request waits for a running analysis; the analysis of a large program takes seconds (DWARF reading).
WAIT_SECONDS = 300
# A run loaded while its predecessor was analysed restarts the wait; a directory rewritten faster than it can be
# analysed gets an error instead of an endless wait.
MAX_RUNS_WAITED = 3


async def timeline_page(server: Any) -> dict[str, Any]:
    """{"run", "html"} of the loaded run, or {"error"} saying why there is no page."""
    state = server.state
    for _ in range(MAX_RUNS_WAITED):
        results = state.results
        if results is None:
            return {"error": "no run loaded yet"}
        if not state.settings.memory_enabled:
            return {"error": "the memory analysis is off (reuselens.memory.enabled is false)"}
        try:
            outcome = await asyncio.wait_for(server.memory.outcome_of(results), WAIT_SECONDS)
        except asyncio.TimeoutError:
            return {"error": f"the memory analysis of this run is still running after {WAIT_SECONDS} s"}
        if state.results is not results:
            continue  # a newer run loaded meanwhile: show that one
        if outcome.error is not None:
            return {"error": f"the memory analysis of this run failed: {outcome.error}"}
        if outcome.analysis is None:
            return {"error": NO_MEMORY_RECORDS}
        return {"run": results.digest[:16], "html": await _page(outcome)}
    return {"error": "the run directory keeps changing before its memory analysis ends; ask again"}


async def _page(outcome: Outcome) -> str:
    """The page of the analysis, drawn once (thousands of operations and objects take a while to lay out)."""
    if outcome.page is None:
        from reuselens.analyzer.reporters.memory_html import render_memory_html

        outcome.page = await asyncio.to_thread(render_memory_html, outcome.analysis)
    return outcome.page
