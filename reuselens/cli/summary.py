"""What analyze, profile and demo print after an analysis: run status, kernels, notes, top findings."""

from __future__ import annotations

from typing import Any, TextIO

from reuselens.analyzer.reporters.findings_rows import finding_rows
from reuselens.analyzer.reporters.findings_table import to_table
from reuselens.analyzer.reportview import kernel_title
from reuselens.analyzer.units import format_bytes, format_share
from reuselens.analyzer.values import approx_share, program_summary
from reuselens.cli.exit_status import app_failure


def kernel_bytes(kernel: dict[str, Any]) -> int:
    return int(sum(edge.get("bytes", 0) for edge in kernel.get("edges", [])))


def print_summary(report: dict[str, Any], out: TextIO, *, top: int = 10) -> None:
    run = report.get("run", {})
    if run.get("status") == "partial":
        print(
            f"warning: partial run ({run.get('partial_reason') or 'reason unknown'}); results cover what was "
            "recorded before it stopped",
            file=out,
        )
    failure = app_failure(run.get("exit_code"))
    if failure:
        print(f"warning: {failure}", file=out)
    for note in report.get("notes", []):
        print(f"note: {note}", file=out)
    kernels = report.get("kernels", [])
    print(f"{len(kernels)} kernel configuration(s) analysed", file=out)
    for kernel in kernels:
        launches = len(kernel.get("launches", []))
        memory_pcs = sum(1 for node in kernel.get("nodes", []) if node.get("space"))
        print(
            f"  {kernel.get('id', '?')} {kernel_title(kernel)}: {launches} launch(es), {memory_pcs} memory PCs, "
            f"{format_bytes(kernel_bytes(kernel))} accessed, {len(kernel.get('findings', []))} finding(s)",
            file=out,
        )
    values = program_summary(kernels)
    if values is not None:
        print(
            f"values: {format_share(values['redundant_loads'])} of loads returned what their location's last load "
            f"returned, {format_share(values['zero_loads'])} of loaded lanes were 0, "
            f"{format_share(values['silent_stores'])} of stored lanes wrote the value already there"
            + (
                f", {format_share(values['approximate_loads'])} of loads returned a float (double) within "
                f"{format_share(approx_share(kernels))} of their location's last loaded one"
                if "approximate_loads" in values
                else ""
            ),
            file=out,
        )
    rows = finding_rows(report)
    print("", file=out)
    if not rows:
        print("no findings", file=out)
        return
    shown = rows[:top]
    print(f"top {len(shown)} of {len(rows)} findings:", file=out)
    print(to_table(shown), file=out)
