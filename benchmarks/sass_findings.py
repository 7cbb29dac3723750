"""What the SASS's node facts change in a saved report: its findings before and after attaching them from CUBINs.

A suite report (report.json) carries every kernel's graph but no machine code; CUBINs built here from the same
sources with the same nvcc and flags as on the GPU machine (`nvcc -cubin -lineinfo -O3 -arch=sm_90`) have the same
PCs. This attaches `address_from` (analyzer/address_origin.py) and `strong` (analyzer/memory_order.py) to the
report's kernels from whichever CUBIN defines each kernel, re-derives the findings under the report's own settings, and prints every finding whose message or
severity changed, so a change to the def-use walk can be judged on real applications without a GPU.

    python benchmarks/sass_findings.py REPORT.json CUBIN... [--json OUT]

Session 53 (s51 call 1's reports, CUBINs built here with nvcc 13.0): SHOC BFS (UIUC) 18 findings changed (14
poor-coalescing findings of gathers and neighbour atomics now give the gather's advice and name bfs_kernel.cu:271,
275, 581, 584, 591; 4 volatile `cost` reloads lose the register and `__restrict__` advice); SHOC BFS 1
(BFS_kernel_warp's `levels[v]`, from line 69); cuda-samples mergeSort 10 (the merge scatters' bank conflicts no longer
told to pad, and `d_Limits[dstPos]`'s scatter advice); none in sortingNetworks, transpose, matrixMul, reduction or
SHOC sort; no finding added or removed (benchmarks/results/s53/offline).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

from reuselens.analyzer.address_origin import attach_address_origins
from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.memory_order import attach_strong_accesses
from reuselens.analyzer.patterns import find_report_findings
from reuselens.analyzer.rederive import recorded_settings


class _OneCubin:
    """The source mapper's CUBIN side, answering with one CUBIN whatever the module."""

    def __init__(self, table: CubinLineTable) -> None:
        self._table = table

    def table(self, module: Any) -> CubinLineTable:
        return self._table


def changed_findings(report: dict[str, Any], cubins: list[CubinLineTable]) -> list[dict[str, Any]]:
    """Per kernel whose nodes got `address_from` or `strong`: the findings whose message or severity changed."""
    settings = recorded_settings(report)
    gpu = (report.get("run") or {}).get("gpu")
    kernels = report["kernels"]
    before = find_report_findings(copy.deepcopy(kernels), settings, gpu)
    for kernel in kernels:
        table = next((t for t in cubins if t.function_symbol(kernel.get("mangled") or "") is not None), None)
        if table is not None:
            attach_address_origins(_OneCubin(table), [kernel])
            attach_strong_accesses(_OneCubin(table), [kernel])
    after = find_report_findings(kernels, settings, gpu)
    changes = []
    for kernel, old, new in zip(kernels, before, after):
        origins = sum(1 for node in kernel["nodes"] if node.get("address_from"))
        strong = sum(1 for node in kernel["nodes"] if node.get("strong"))
        if not origins and not strong:
            continue
        old_by_id, new_by_id = {f["id"]: f for f in old}, {f["id"]: f for f in new}
        changed = [
            {"id": key, "before": old_by_id.get(key), "after": new_by_id.get(key)}
            for key in sorted(old_by_id.keys() | new_by_id.keys())
            if (old_by_id.get(key) or {}).get("message") != (new_by_id.get(key) or {}).get("message")
            or (old_by_id.get(key) or {}).get("severity") != (new_by_id.get(key) or {}).get("severity")
        ]
        changes.append(
            {"kernel": kernel.get("name"), "nodes_with_origins": origins, "strong_nodes": strong, "changed": changed}
        )
    return changes


def _line(finding: dict[str, Any] | None) -> str:
    if finding is None:
        return "(none)"
    return f"{finding['pattern']} {finding['severity']}: {finding['message']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("cubins", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="also write the changes here")
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.report.read_text())
        cubins = [CubinLineTable(path.read_bytes()) for path in args.cubins]
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    changes = changed_findings(report, cubins)
    for kernel in changes:
        print(
            f"{kernel['kernel']}: {kernel['nodes_with_origins']} nodes with address_from, {kernel['strong_nodes']} "
            f"strong, {len(kernel['changed'])} findings changed"
        )
        for change in kernel["changed"]:
            print(f"  - {_line(change['before'])}\n  + {_line(change['after'])}")
    print(f"{sum(len(k['changed']) for k in changes)} findings changed in {len(changes)} kernels")
    if args.json:
        args.json.write_text(json.dumps(changes, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
