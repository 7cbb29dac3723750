"""The one exception family that reaches users as a single clear line.

Every module raises a subclass of ReuseLensError for problems a user can fix (missing file, not a run
directory, corrupt trace, no line info). The CLI prints str(error) and exits non-zero; the language server
shows it as a notification. Anything else is a bug and keeps its traceback. The collector, which imports
nothing of the analyzer, has a family of its own (reuselens.collector.errors.CollectorError).
"""


class ReuseLensError(Exception):
    """A problem the user can act on; str() is the one-line message shown to them."""


class RunDirectoryError(ReuseLensError):
    """The path is not a readable run directory (run.json missing, unreadable or of another version)."""


class TraceError(ReuseLensError):
    """A trace file is corrupt, truncated or of a version this build does not read."""


class ReportError(ReuseLensError):
    """report.json is missing, corrupt or of another version."""


class MappingError(ReuseLensError):
    """A CUBIN, fatbinary or line table could not be read."""


class SettingsError(ReuseLensError):
    """A setting or threshold has an invalid value."""
