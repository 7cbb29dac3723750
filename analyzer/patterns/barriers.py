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


def find(view: KernelView, settings: dict[str, float]) -> list[Draft]:
    drafts = []
    for barrier in sorted(view.barriers, key=lambda b: (str(b.get("function") or ""), int(b.get("pc") or 0))):
        kind = barrier.get("kind")
        executions = int(barrier.get("executions") or 0)
        if kind not in _NAMES or executions <= 0 or barrier.get("spanned_cross_thread_edges") != 0:
            continue
        key = (str(barrier.get("function") or ""), int(barrier.get("pc") or 0))
        message = (f"{_NAMES[kind]}{_location(barrier)} executed {count(executions)} times but no "
                   f"cross-thread reuse crosses it — it orders nothing and can be removed")
        drafts.append(Draft("removable-barrier", [], kind, "barrier-removal", _FIX, message,
                            instructions=executions, tier=TIER_PERFORMANCE, severity="information",
                            exempt_from_min_share=True, extra_keys=[key],
                            extra={"barrier": {"function": key[0], "pc": key[1], "kind": kind,
                                               "source": barrier.get("source")}},
                            metrics={"executions": executions}))
    return drafts
