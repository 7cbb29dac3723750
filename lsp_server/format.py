"""Small text helpers shared by the lens, hover and diagnostic builders."""

from __future__ import annotations

from reuselens.analyzer.units import format_bytes  # decimal units, as everywhere a user reads ReuseLens numbers

__all__ = ["format_bytes", "mean", "grouped_shares", "lens_title", "SCOPE_GROUPS", "LABEL_NAMES"]

# Display groups for the Topological Distance labels (paper section 3.1); warp_same_inst is the
# broadcast case and warp_diff_inst a reuse between two instructions of one warp.
SCOPE_GROUPS = (
    ("thread", ("thread",)),
    ("warp", ("warp_same_inst", "warp_diff_inst")),
    ("block", ("block",)),
    ("grid", ("grid",)),
    ("cold", ("cold",)),
)
LABEL_NAMES = {
    "cold": "cold miss",
    "thread": "intra-thread",
    "warp_same_inst": "intra-warp same inst",
    "warp_diff_inst": "intra-warp diff inst",
    "block": "intra-block",
    "grid": "intra-grid",
}


def mean(distribution) -> float | None:
    """Weighted average E(x) of a [[value, count], ...] distribution (paper section 3.3, E(Sector_v))."""
    if not distribution:
        return None
    total = sum(count for _, count in distribution)
    return sum(value * count for value, count in distribution) / total if total else None


def grouped_shares(bytes_by_label: dict[str, int]) -> list[tuple[str, float]]:
    """[(group, share)] in descending share, groups below half a percent left out."""
    total = sum(bytes_by_label.values())
    if total <= 0:
        return []
    shares = [(g, sum(bytes_by_label.get(l, 0) for l in labels) / total) for g, labels in SCOPE_GROUPS]
    return sorted(((g, s) for g, s in shares if s >= 0.005), key=lambda item: -item[1])


def lens_title(bytes_by_label: dict[str, int], total_bytes: int) -> str:
    """ "reuse 71% thread · 20% block · 9% cold · 4.2 MB"."""
    parts = [f"{round(share * 100)}% {group}" for group, share in grouped_shares(bytes_by_label)]
    return "reuse " + " · ".join(parts + [format_bytes(total_bytes)])
