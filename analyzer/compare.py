"""What changed between two reports: per kernel configuration, per pattern, and in the kernel's traffic.

Kernels are matched by mangled name and launch configuration; when a fix changed the configuration, a
kernel whose name is unique on both sides is still matched (and the change of configuration is reported).
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer import configurations
from reuselens.analyzer.reportview import short_kernel_name

TRAFFIC_KEYS = ("instructions", "bytes", "sectors", "wavefronts")


def _config(kernel: dict[str, Any]) -> str:
    return configurations.identity(kernel)


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


WASTE_KEYS = ("bytes", "instructions", "wavefronts")


def _pattern_waste(kernel: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per pattern: its finding count, the waste in the pattern's own unit (`unit`, `waste`) and every raw waste
    total. A bank conflict's unit is wavefronts, as `reuselens report` prints it: its waste.bytes is only a
    ranking proxy (128 bytes per wavefront), not traffic a fix removes."""
    per_pattern: dict[str, dict[str, Any]] = {}
    for finding in kernel.get("findings", []):
        waste = finding.get("waste", {})
        entry = per_pattern.setdefault(
            finding.get("pattern", "?"),
            # coalescing's "sectors" basis measures its share only; its waste is bytes (waste.bytes = sectors x 32)
            {"findings": 0, "unit": "wavefronts" if waste.get("basis") == "wavefronts" else "bytes", "waste": 0}
            | dict.fromkeys(WASTE_KEYS, 0),
        )
        entry["findings"] += 1
        for key in WASTE_KEYS:
            entry[key] += int(waste.get(key, 0))
        entry["waste"] = entry[entry["unit"]] if entry["unit"] in WASTE_KEYS else entry["bytes"]
    return per_pattern


def _empty_pattern(unit: str) -> dict[str, Any]:
    return {"findings": 0, "unit": unit, "waste": 0, **dict.fromkeys(WASTE_KEYS, 0)}


def _finding_ids(kernel: dict[str, Any] | None) -> set[str]:
    return {str(f.get("id")) for f in (kernel or {}).get("findings", [])}


def match_kernels(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[dict | None, dict | None]]:
    remaining = list(after.get("kernels", []))
    pairs: list[tuple[dict | None, dict | None]] = []
    unmatched_before = []
    for kernel in before.get("kernels", []):
        match = next(
            (k for k in remaining if k.get("mangled") == kernel.get("mangled") and _config(k) == _config(kernel)), None
        )
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
    """One entry per kernel configuration: traffic before/after and per-pattern waste before/after.

    A matched kernel's status is "changed" when its launch configuration, a traffic total, its set of finding
    ids or any per-pattern count or waste differs, and "unchanged" otherwise (a run compared with itself)."""
    result = []
    for old, new in match_kernels(before, after):
        reference = old or new
        entry: dict[str, Any] = {
            "kernel": short_kernel_name(reference),
            "mangled": reference.get("mangled"),
            "status": "",
            "config_before": list(_config(old)) if old else None,
            "config_after": list(_config(new)) if new else None,
            "traffic": {},
            "patterns": {},
        }
        before_traffic = kernel_traffic(old) if old else dict.fromkeys(TRAFFIC_KEYS, 0)
        after_traffic = kernel_traffic(new) if new else dict.fromkeys(TRAFFIC_KEYS, 0)
        for key in TRAFFIC_KEYS:
            entry["traffic"][key] = {
                "before": before_traffic[key],
                "after": after_traffic[key],
                "delta": after_traffic[key] - before_traffic[key],
            }
        old_patterns = _pattern_waste(old) if old else {}
        new_patterns = _pattern_waste(new) if new else {}
        for pattern in sorted(set(old_patterns) | set(new_patterns)):
            unit = (old_patterns.get(pattern) or new_patterns[pattern])["unit"]
            was = old_patterns.get(pattern, _empty_pattern(unit))
            now = new_patterns.get(pattern, _empty_pattern(unit))
            verdict = "removed" if now["findings"] == 0 else "added" if was["findings"] == 0 else "kept"
            entry["patterns"][pattern] = {"unit": unit, "before": was, "after": now, "verdict": verdict}
        entry["status"] = _status(old, new, entry)
        result.append(entry)
    return result


def _status(old: dict[str, Any] | None, new: dict[str, Any] | None, entry: dict[str, Any]) -> str:
    if new is None:
        return "removed"
    if old is None:
        return "added"
    same = (
        entry["config_before"] == entry["config_after"]
        and all(values["delta"] == 0 for values in entry["traffic"].values())
        and _finding_ids(old) == _finding_ids(new)
        and all(values["before"] == values["after"] for values in entry["patterns"].values())
    )
    return "unchanged" if same else "changed"
