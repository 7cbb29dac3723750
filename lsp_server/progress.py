"""The profile's window/workDoneProgress: created only when the client supports it, cancellable, and a
cancel from the client cancels the task that owns the progress. `server` is the ReuseLensServer."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from lsprotocol import types

log = logging.getLogger("reuselens.lsp")


async def begin(server: Any, task: asyncio.Task) -> str | None:
    """The token of a new progress bound to `task`, or None when the client has no progress to show."""
    if not server.capability("window", "work_done_progress"):
        return None
    token = str(uuid.uuid4())
    try:
        await server.work_done_progress.create_async(token)
    except Exception as error:
        log.info("progress not created: %r", error)
        return None
    server.work_done_progress.begin(
        token, types.WorkDoneProgressBegin(title="ReuseLens profile", cancellable=True, percentage=0)
    )
    loop = asyncio.get_running_loop()
    future = server.work_done_progress.tokens.get(token)
    if future is not None:
        future.add_done_callback(lambda f: f.cancelled() and loop.call_soon_threadsafe(task.cancel))
    return token


def stage(server: Any, token: str | None, name: str, percentage: int) -> None:
    log.info("profile stage: %s", name)
    if token:
        server.work_done_progress.report(token, types.WorkDoneProgressReport(message=name, percentage=percentage))


def end(server: Any, token: str | None, message: str) -> None:
    if token:
        server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        server.work_done_progress.tokens.pop(token, None)
