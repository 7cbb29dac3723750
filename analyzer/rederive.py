"""A saved report under other thresholds: its findings re-derived from the graph it carries.

report.json keeps every kernel's PCDepGraph (nodes with their distributions and metrics, edges, barriers) and
the `settings` its findings were made with; the pattern rules read nothing else (analyzer.patterns works on
one report.json kernel), so new thresholds need neither the traces nor the collector's analysis.json.
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.errors import ReportError, SettingsError
from reuselens.analyzer.patterns import find_report_findings
from reuselens.analyzer.patterns.settings import BY_KEY, resolve_settings


class NotRederivable(ReportError):
    """The report's kernels lack the graph the pattern rules need (nodes and edges)."""


def recorded_settings(report: dict[str, Any]) -> dict[str, float]:
    """The thresholds the report's findings were made with; a report without `settings` used the defaults."""
    try:
        return resolve_settings(report.get("settings") or {})
    except SettingsError as error:  # the report's fault, not the user's options
        raise ReportError(f"its recorded settings are invalid ({error})") from None


def changed_thresholds(report: dict[str, Any], requested: dict[str, float]) -> dict[str, float]:
    """The requested thresholds whose value differs from the report's recorded one (canonical keys)."""
    recorded = recorded_settings(report)
    wanted = resolve_settings({**recorded, **requested})
    return {key: value for key, value in wanted.items() if value != recorded[key]}


def with_thresholds(report: dict[str, Any], requested: dict[str, float]) -> dict[str, Any]:
    """`report` itself when `requested` changes no threshold; otherwise the report with every kernel's findings
    re-derived under the recorded settings overridden by `requested`, and `settings` saying so (in place).

    Raises NotRederivable when a kernel has no graph to re-derive from."""
    changed = changed_thresholds(report, requested)
    if not changed:
        return report
    settings = {**recorded_settings(report), **changed}
    for kernel in report.get("kernels", []):
        if (
            not isinstance(kernel, dict)
            or not isinstance(kernel.get("nodes"), list)
            or not isinstance(kernel.get("edges"), list)
        ):
            options = ", ".join(BY_KEY[key].option for key in changed)
            raise NotRederivable(
                f"cannot apply {options}: kernel {_name(kernel)} has no graph (nodes and edges) "
                "to re-derive its findings from; analyse the run directory again "
                "(reuselens analyze RUN_DIR with the options)"
            )
    findings = find_report_findings(report.get("kernels", []), settings, (report.get("run") or {}).get("gpu"))
    for kernel, kernel_findings in zip(report["kernels"], findings):
        kernel["findings"] = kernel_findings
    report["settings"] = settings
    return report


def _name(kernel: Any) -> str:
    if isinstance(kernel, dict):
        return str(kernel.get("id") or kernel.get("mangled") or "?")
    return "?"
