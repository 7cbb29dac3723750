"""Progress display for long CLI work (rich), silent when output is not a terminal."""

from __future__ import annotations

import contextlib
import os
import sys

TYPE_CHECKING = False  # typing itself is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from typing import Iterator

    from rich.progress import Progress

# What makes rich treat a pipe as a terminal (rich.console.Console.is_terminal); without one of them and without a
# terminal, rich is not imported at all (0.07 s of `reuselens analyze` in a script or in the editor).
_FORCING_ENVIRONMENT = ("FORCE_COLOR", "TTY_COMPATIBLE")


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
    if not enabled or not (_isatty(sys.stderr) or any(os.environ.get(name) for name in _FORCING_ENVIRONMENT)):
        yield StageProgress(None)
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    if not console.is_terminal:
        yield StageProgress(None)
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        yield StageProgress(progress)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False
