"""Errors of the collector launcher: each is a CollectorError whose str() is one sentence for the user.

The collector imports nothing of the analyzer, so this family has its own base; the application (reuselens.cli)
prints both families the same way.
"""

from __future__ import annotations


class CollectorError(Exception):
    """Profiling could not start or the collector failed (no GPU, library missing, app not found)."""


class NoGpuError(CollectorError):
    """No NVIDIA driver could be loaded, or the driver sees no GPU."""


class ToolLibraryMissingError(CollectorError):
    """The collector's tool library or its device patch is not built or not installed."""


class ToolLibraryUnloadableError(ToolLibraryMissingError):
    """The tool library is installed but the dynamic loader cannot load it (a dependency does not resolve)."""


class AppNotFoundError(CollectorError):
    """The command to profile does not name an executable program."""


class RunDirectoryNotEmptyError(CollectorError):
    """The run directory exists and holds files that are not a previous run."""


class RunDirectoryWriteError(CollectorError):
    """The run directory cannot be cleared or written (read-only, disk full, file-size limit)."""


class InvalidFilterError(CollectorError):
    """The kernel filter (regex, list file or launch range) is malformed."""


class ProfileFailedError(CollectorError):
    """The application could not be started."""
