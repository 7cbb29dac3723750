"""What the CLI says of the profiled application's own exit, and what `reuselens profile` exits with.

Apart from the findings table (cli/summary.py), whose imports (the report view, the schema) took 16 ms of a
`profile --no-analyze` on the H200 host after the app had exited, only to word this sentence (session 21, call 1).
"""

from __future__ import annotations


def app_failure(exit_code: object) -> str | None:
    """The sentence for an application that exited with an error status itself (a signal, a timeout or a
    cancellation already makes the run partial, with its reason)."""
    if isinstance(exit_code, int) and exit_code > 0:
        return f"the application failed (exit status {exit_code}); results cover what it ran before it exited"
    return None


def app_exit_status(exit_code: int | None) -> int:
    """What `reuselens profile` exits with: the application's own status, passed through as `time` and
    `compute-sanitizer` do, and 128 + N for an application ended by signal N, as a shell reports it."""
    if exit_code is None:
        return 0
    return 128 - exit_code if exit_code < 0 else exit_code
