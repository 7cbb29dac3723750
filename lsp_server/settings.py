"""Server settings: the `reuselens` section of workspace/configuration (docs/settings.md).

The names and defaults are those of docs/settings.md and vscode-extension/package.json; DEFAULTS is compared
with package.json by a test. The thresholds' defaults come from their one home, the analyzer's THRESHOLDS.
`parse(raw)` never raises: every invalid value is replaced by its default and described in one sentence, so
the server can show the problem and keep working.
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from reuselens.analyzer.patterns.settings import THRESHOLDS

# A kernel filter's syntax problem, or None. The collector's own check (POSIX extended syntax, the syntax its
# tool library matches with) is handed in by the application, which may import the collector; a server
# started on its own falls back to Python's re, which accepts a superset.
KernelFilterCheck = Callable[[str], "str | None"]

# Flat dotted names without the `reuselens.` prefix -> default. Client-only settings (server.path,
# server.python) are listed so the comparison with package.json is complete; the server ignores them.
DEFAULTS: dict[str, Any] = {
    "profile.command": [],
    "profile.cwd": "${workspaceFolder}",
    "profile.env": {},
    "build.command": [],
    "profileOnSave": False,
    "kernelFilter": "",
    "launchRange": "",
    "runDirectory": "${workspaceFolder}/.reuselens/run",
    "timeoutSeconds": 300,
    "pathPrefixMap": {},
    **{f"thresholds.{threshold.key}": threshold.default for threshold in THRESHOLDS},
    "allowWorkspaceCommands": False,
    "profiler.command": [],
    "docs.baseUrl": "",
    "diagnostics.showStreaming": False,
    "perConfiguration": False,
    "values": False,
    "valuesApproximation": 0.01,
    "memory.enabled": True,
    "memory.warningPeakShare": 0.05,
    "memory.objectLevel": False,
    "memory.intraObject": False,
    "server.path": "",
    "server.python": "",
}

_LAUNCH_RANGE = re.compile(r"^\d*:\d*$")


@dataclass(frozen=True)
class Settings:
    """Validated settings with ${workspaceFolder} expanded."""

    profile_command: list[str] = field(default_factory=list)
    profile_cwd: str = ""
    profile_env: dict[str, str] = field(default_factory=dict)
    build_command: list[str] = field(default_factory=list)
    profile_on_save: bool = False
    kernel_filter: str = ""
    launch_range: str = ""
    run_directory: str = ""
    timeout_seconds: float = 300.0
    path_prefix_map: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    allow_workspace_commands: bool = False  # honoured only from initializationOptions (State.user_allows_commands)
    profiler_command: list[str] = field(default_factory=list)
    docs_base_url: str = ""
    show_streaming: bool = False  # streaming-access findings in the Problems panel (lenses and hovers always)
    per_configuration: bool = False  # one graph per launch configuration instead of one per kernel
    values: bool = False  # profile with --values: value redundancy findings (not with the object-level modes)
    values_approximation: float = 0.01  # with values: --values-approx (approximate redundancy of floats; 0: off)
    memory_enabled: bool = True  # the memory findings on allocation lines (memory_loading.py)
    memory_warning_peak_share: float = 0.05  # a memory finding saving this share of the peak is a Warning
    memory_object_level: bool = False  # profile with --object-level: memory findings only, no reuse findings
    memory_intra_object: bool = False  # profile with --intra-object: --object-level plus element maps


def flatten(raw: Any, prefix: str = "") -> dict[str, Any]:
    """Nested {"profile": {"command": [...]}} or dotted {"profile.command": [...]} -> dotted keys."""
    out: dict[str, Any] = {}
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if name.startswith("reuselens."):
            name = name[len("reuselens.") :]
        if isinstance(value, dict) and name not in ("profile.env", "pathPrefixMap"):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _is_argv(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _python_regex_problem(text: str) -> str | None:
    try:
        re.compile(text)
    except re.error as error:
        return str(error)
    return None


def _check(name: str, value: Any, check_kernel_filter: KernelFilterCheck | None = None) -> str | None:
    """One sentence describing why `value` is invalid for `name`, or None when it is fine."""
    default = DEFAULTS[name]
    if isinstance(default, list):
        return None if _is_argv(value) else "must be a list of strings (an argv)"
    if isinstance(default, dict):
        return None if _is_str_map(value) else "must be an object mapping strings to strings"
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "must be true or false"
    if _is_number(default):
        if not _is_number(value):
            return "must be a number"
        if name == "timeoutSeconds" and value <= 0:
            return "must be positive"
        if name.startswith("thresholds.") and value < 0:
            return "must not be negative"
        if name == "memory.warningPeakShare" and not 0 <= value <= 1:
            return "must be a share of the peak between 0 and 1"
        if name == "valuesApproximation" and not 0 <= value <= 1:
            return "must be a share between 0 and 1 (0.01 = 1%)"
        return None
    if not isinstance(value, str):
        return "must be a string"
    if name == "kernelFilter" and value and (problem := (check_kernel_filter or _python_regex_problem)(value)):
        return f"is not a valid regular expression ({problem}; the collector reads POSIX extended syntax)"
    if name == "launchRange" and value and not _LAUNCH_RANGE.match(value):
        return 'must look like "A:B" (e.g. "0:10")'
    return None


def merged(raw: Any, check_kernel_filter: KernelFilterCheck | None = None) -> tuple[dict[str, Any], list[str]]:
    """Defaults overlaid with the valid values of `raw`; plus one message per rejected value."""
    values = copy.deepcopy(DEFAULTS)
    problems: list[str] = []
    if raw is not None and not isinstance(raw, dict):
        return values, ["The reuselens settings must be an object; using the defaults."]
    for name, value in flatten(raw or {}).items():
        if name not in DEFAULTS or value is None:
            continue
        reason = _check(name, value, check_kernel_filter)
        if reason:
            problems.append(f"Setting reuselens.{name} {reason}; using the default {DEFAULTS[name]!r}.")
        else:
            values[name] = value
    return values, problems


def _expand(text: str, folder: str) -> str:
    return text.replace("${workspaceFolder}", folder)


def _workspace_path(target: str, folder: str) -> str:
    """A pathPrefixMap target with ${workspaceFolder} expanded; a relative one is taken relative to the
    workspace folder (the report's own relative paths are relative to the profiled command's cwd instead)."""
    expanded = _expand(target, folder)
    return os.path.normpath(os.path.join(folder, expanded)) if folder and not os.path.isabs(expanded) else expanded


def parse(
    raw: Any, workspace_folder: str, check_kernel_filter: KernelFilterCheck | None = None
) -> tuple[Settings, list[str]]:
    """Validated Settings for one workspace folder, and the problems found (empty when all is well)."""
    v, problems = merged(raw, check_kernel_filter)
    thresholds = {k.split(".", 1)[1]: float(x) for k, x in v.items() if k.startswith("thresholds.")}
    settings = Settings(
        profile_command=[_expand(a, workspace_folder) for a in v["profile.command"]],
        profile_cwd=_expand(v["profile.cwd"], workspace_folder) or workspace_folder,
        profile_env={k: _expand(x, workspace_folder) for k, x in v["profile.env"].items()},
        build_command=[_expand(a, workspace_folder) for a in v["build.command"]],
        profile_on_save=v["profileOnSave"],
        kernel_filter=v["kernelFilter"],
        launch_range=v["launchRange"],
        run_directory=_expand(v["runDirectory"], workspace_folder),
        timeout_seconds=float(v["timeoutSeconds"]),
        path_prefix_map={
            prefix: _workspace_path(target, workspace_folder) for prefix, target in v["pathPrefixMap"].items()
        },
        thresholds=thresholds,
        allow_workspace_commands=v["allowWorkspaceCommands"],
        profiler_command=list(v["profiler.command"]),
        docs_base_url=v["docs.baseUrl"],
        show_streaming=v["diagnostics.showStreaming"],
        per_configuration=v["perConfiguration"],
        values=v["values"],
        values_approximation=float(v["valuesApproximation"]),
        memory_enabled=v["memory.enabled"],
        memory_warning_peak_share=float(v["memory.warningPeakShare"]),
        memory_object_level=v["memory.objectLevel"],
        memory_intra_object=v["memory.intraObject"],
    )
    return settings, problems
