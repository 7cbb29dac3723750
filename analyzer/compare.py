"""What changed between two reports: per kernel configuration, per pattern, and in the kernel's traffic.

Kernels are matched by mangled name and launch configuration; when a fix changed the configuration, a
kernel whose name is unique on both sides is still matched (and the change of configuration is reported).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from reuselens.analyzer.reportview import short_kernel_name

TRAFFIC_KEYS = ("instructions", "bytes", "sectors", "wavefronts")


def _config(kernel: dict[str, Any]) -> tuple:
    return (tuple(kernel.get("grid", [])), tuple(kernel.get("block", [])), kernel.get("dynamic_shared_bytes", 0))


def _distribution_total(distribution: list[list[float]] | None) -> int:
    return int(sum(value * count for value, count in (distribution or [])))


def kernel_traffic(kernel: dict[str, Any]) -> dict[str, int]:
    """Totals a user compares against Nsight Compute: warp-level memory instructions, bytes, sectors, wavefronts."""
    totals = dict.fromkeys(TRAFFIC_KEYS, 0)
    for node in kernel.get("nodes", []):
        if not node.get("space"):
            continue
        totals["instructions"] += int(node.get("executions", 0))
        totals["bytes"] += int(node.get("bytes", 0))
        totals["sectors"] += _distribution_total(node.get("sectors"))
        totals["wavefronts"] += _distribution_total(node.get("wavefronts"))
    return totals


def _pattern_waste(kernel: dict[str, Any]) -> dict[str, dict[str, float]]:
    per_pattern: dict[str, dict[str, float]] = defaultdict(lambda: {"findings": 0, "bytes": 0, "instructions": 0,
                                                                    "wavefronts": 0})
    for finding in kernel.get("findings", []):
        entry = per_pattern[finding.get("pattern", "?")]
        waste = finding.get("waste", {})
        entry["findings"] += 1
        for key in ("bytes", "instructions", "wavefronts"):
            entry[key] += float(waste.get(key, 0))
    return dict(per_pattern)


def match_kernels(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[dict | None, dict | None]]:
    remaining = list(after.get("kernels", []))
    pairs: list[tuple[dict | None, dict | None]] = []
    unmatched_before = []
    for kernel in before.get("kernels", []):
        match = next((k for k in remaining if k.get("mangled") == kernel.get("mangled")
                      and _config(k) == _config(kernel)), None)
        if match is None:
            unmatched_before.append(kernel)
            continue
        remaining.remove(match)
        pairs.append((kernel, match))
    for kernel in unmatched_before:
        same_name_before = [k for k in unmatched_before if k.get("mangled") == kernel.get("mangled")]
        same_name_after = [k for k in remaining if k.get("mangled") == kernel.get("mangled")]
        if len(same_name_before) == 1 and len(same_name_after) == 1:
            remaining.remove(same_name_after[0])
            pairs.append((kernel, same_name_after[0]))
        else:
            pairs.append((kernel, None))
    pairs.extend((None, kernel) for kernel in remaining)
    return pairs


def diff_reports(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per kernel configuration: traffic before/after and per-pattern waste before/after."""
    result = []
    for old, new in match_kernels(before, after):
        reference = old or new
        entry: dict[str, Any] = {
            "kernel": short_kernel_name(reference),
            "mangled": reference.get("mangled"),
            "status": "removed" if new is None else "added" if old is None else "changed",
            "config_before": list(_config(old)) if old else None,
            "config_after": list(_config(new)) if new else None,
            "traffic": {},
            "patterns": {},
        }
        before_traffic = kernel_traffic(old) if old else dict.fromkeys(TRAFFIC_KEYS, 0)
        after_traffic = kernel_traffic(new) if new else dict.fromkeys(TRAFFIC_KEYS, 0)
        for key in TRAFFIC_KEYS:
            entry["traffic"][key] = {"before": before_traffic[key], "after": after_traffic[key],
                                     "delta": after_traffic[key] - before_traffic[key]}
        old_patterns = _pattern_waste(old) if old else {}
        new_patterns = _pattern_waste(new) if new else {}
        for pattern in sorted(set(old_patterns) | set(new_patterns)):
            was = old_patterns.get(pattern, {"findings": 0, "bytes": 0})
            now = new_patterns.get(pattern, {"findings": 0, "bytes": 0})
            verdict = "removed" if now["findings"] == 0 else "added" if was["findings"] == 0 else "kept"
            entry["patterns"][pattern] = {"before": was, "after": now, "verdict": verdict}
        result.append(entry)
    return result
