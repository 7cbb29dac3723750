"""Removable barriers, paper section 6.3: "a barrier spanned by no cross-thread reuse edge orders nothing".

A block (__syncthreads) or warp (__syncwarp) barrier that executed but whose `spanned_cross_thread_edges`
is 0 separated no pair of accesses by different threads in this profile, so removing it changes no result
that the profile can see. mbarriers are left out: they also wait for asynchronous copies and TMA
transfers. The finding has no memory PC; it names the barrier in its `barrier` field.
"""

from __future__ import annotations

from typing import Any

from analyzer.patterns.finding import TIER_PERFORMANCE, Draft
from analyzer.patterns.text import count
from analyzer.patterns.view import KernelView

PATTERNS = {"removable-barrier": "Barrier that orders no cross-thread reuse"}

_NAMES = {"block": "__syncthreads()", "warp": "__syncwarp()"}
_FIX = (
    "No access before this barrier is reused by another thread after it (no cross-thread reuse edge spans "
    "it), so it only makes warps wait. Remove it, or move it to where a shared buffer is actually handed "
    "from one thread to another. The profile covers one input: check that no other input or code path "
    "relies on it (e.g. a shared buffer reused in the next loop iteration) before deleting it."
)


def _location(barrier: dict[str, Any]) -> str:
    source = barrier.get("source") or {}
    if source.get("file"):
        return f" at {str(source['file']).rsplit('/', 1)[-1]}:{source.get('line')}"
    return f" at pc {int(barrier.get('pc') or 0):#x}"


def _line(barrier: dict[str, Any]) -> tuple:
    """Barrier copies (an unrolled loop's __syncthreads) share function, kind and source line; without line
    info every barrier stands alone."""
    source = barrier.get("source") or {}
    key = (str(barrier.get("function") or ""), int(barrier.get("pc") or 0))
    if not source.get("file") or not source.get("line"):
        return ("pc", key)
    return (key[0], barrier.get("kind"), source["file"], source["line"])


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for barrier in sorted(view.barriers, key=lambda b: (str(b.get("function") or ""), int(b.get("pc") or 0))):
        if barrier.get("kind") in _NAMES and int(barrier.get("executions") or 0) > 0 \
                and barrier.get("spanned_cross_thread_edges") == 0:
            groups.setdefault(_line(barrier), []).append(barrier)
    return [_draft(group) for group in sorted(groups.values(), key=lambda g: (str(g[0].get("function") or ""),
                                                                             int(g[0].get("pc") or 0)))]


def _draft(group: list[dict[str, Any]]) -> Draft:
    first = group[0]
    kind = first["kind"]
    keys = [(str(b.get("function") or ""), int(b.get("pc") or 0)) for b in group]
    executions = sum(int(b.get("executions") or 0) for b in group)
    copies = f" ({len(group)} copies)" if len(group) > 1 else ""
    message = (f"{_NAMES[kind]}{_location(first)}{copies} executed {count(executions)} times but no "
               f"cross-thread reuse crosses it — it orders nothing and can be removed")
    return Draft("removable-barrier", [], kind, "barrier-removal", _FIX, message,
                 instructions=executions, tier=TIER_PERFORMANCE, severity="information",
                 exempt_from_min_share=True, extra_keys=keys,
                 extra={"barrier": {"function": keys[0][0], "pc": keys[0][1], "kind": kind,
                                    "source": first.get("source")}},
                 metrics={"executions": executions, "barrier_pcs": [pc for _f, pc in keys]})
