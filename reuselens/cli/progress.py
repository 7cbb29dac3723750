"""Progress display for long CLI work (rich), silent when output is not a terminal."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class StageProgress:
    """Callable handed to long operations: progress(stage, done, total). total None = indeterminate."""

    def __init__(self, progress: Progress | None):
        self._progress = progress
        self._tasks: dict[str, int] = {}

    def __call__(self, stage: str, done: float = 0, total: float | None = None) -> None:
        if self._progress is None:
            return
        task = self._tasks.get(stage)
        if task is None:
            task = self._progress.add_task(stage, total=total)
            self._tasks[stage] = task
        self._progress.update(task, completed=done, total=total)


@contextlib.contextmanager
def stage_progress(enabled: bool = True) -> Iterator[StageProgress]:
    console = Console(file=sys.stderr)
    if not enabled or not console.is_terminal:
        yield StageProgress(None)
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        yield StageProgress(progress)
